#!/usr/bin/env -S node --max-semi-space-size=2
/**
 * `memory-bridge <command> [options]` (docs/CLI.md).
 *
 * Dispatch only: each command lives in `src/cli/commands/<name>.ts` and exports `const command: Command`
 * (src/cli/command.ts); `COMMANDS` maps each name to a static, type-checked import of its module (adding a command
 * is one line there). Modules are imported lazily, so a command whose module is missing or fails to load prints
 * "memory-bridge: <name> is not available in this build" and exits 1 while every other command keeps working.
 *
 * Handled here for every command: `--help`/`-h` (before any `--`) prints the command's usage on stdout and exits
 * 0; a `UsageError` thrown by `run` prints the message and the usage on stderr and exits 2; any other exception
 * exits 1 with a one-line message on stderr.
 */
import { UsageError } from './args.js';
import { EXIT, packageVersion, type Command } from './command.js';

/** A command module: what `src/cli/commands/<name>.ts` exports. */
type CommandModule = { command: Command };

/**
 * Every command and the import of its module, in the order the top-level help lists them. The imports are static
 * (the compiler checks each module exports a `Command`) and lazy (a module loads only when its command runs).
 */
const COMMANDS = {
  mcp: () => import('./commands/mcp.js'),
  search: () => import('./commands/search.js'),
  read: () => import('./commands/read.js'),
  demo: () => import('./commands/demo.js'),
  init: () => import('./commands/init.js'),
  worker: () => import('./commands/worker.js'),
  install: () => import('./commands/install.js'),
  uninstall: () => import('./commands/uninstall.js'),
  status: () => import('./commands/status.js'),
  doctor: () => import('./commands/doctor.js'),
  'export-fleet': () => import('./commands/export-fleet.js'),
  index: () => import('./commands/index.js'),
  serve: () => import('./commands/serve.js'),
  clients: () => import('./commands/clients.js'),
  audit: () => import('./commands/audit.js'),
} as const satisfies Record<string, () => Promise<CommandModule>>;

type CommandName = keyof typeof COMMANDS;
const COMMAND_NAMES = Object.keys(COMMANDS) as CommandName[];

function isCommandName(name: string): name is CommandName {
  return Object.hasOwn(COMMANDS, name);
}

const PROG = 'memory-bridge';

function isCommand(value: unknown): value is Command {
  if (typeof value !== 'object' || value === null) return false;
  const c = value as Record<string, unknown>;
  return (
    typeof c.name === 'string' &&
    typeof c.summary === 'string' &&
    typeof c.usage === 'string' &&
    typeof c.run === 'function'
  );
}

/**
 * Import one command module; null when it is missing, fails to load, or does not export a valid `command`.
 * `why` receives a one-line cause for the operator.
 */
async function loadCommand(
  name: CommandName,
  why?: (cause: string, exhausted: boolean) => void,
): Promise<Command | null> {
  try {
    // Checked again at run time: a module replaced after the build must still not be run blindly.
    const mod: { command?: unknown } = await COMMANDS[name]();
    if (isCommand(mod.command)) return mod.command;
    why?.('the module does not export a valid command', false);
    return null;
  } catch (err) {
    // Loading a module opens files: with no descriptors or memory left the module is there but cannot be read.
    const code = (err as { code?: unknown } | null)?.code;
    const exhausted = code === 'EMFILE' || code === 'ENFILE' || code === 'ENOMEM';
    why?.(err instanceof Error ? (err.message.split('\n')[0] ?? err.name) : String(err), exhausted);
    return null;
  }
}

async function topUsage(): Promise<string> {
  const lines = [`usage: ${PROG} <command> [options]`, '', 'Commands:'];
  const width = Math.max(...COMMAND_NAMES.map((n) => n.length));
  for (const name of COMMAND_NAMES) {
    const cmd = await loadCommand(name);
    lines.push(`  ${name.padEnd(width)}  ${cmd?.summary ?? '(not available in this build)'}`);
  }
  lines.push(
    '',
    'Options:',
    "  --help     show this help (or a command's help: memory-bridge <command> --help)",
    '  --version  print the version',
    '',
    'Exit codes: 0 ok, 1 operational failure (including a tool answer with "ok": false), 2 usage error.',
  );
  return lines.join('\n');
}

/** True when `--help` or `-h` appears before any `--` separator. */
function wantsHelp(argv: readonly string[]): boolean {
  for (const word of argv) {
    if (word === '--') return false;
    if (word === '--help' || word === '-h') return true;
  }
  return false;
}

/**
 * Run the CLI with `argv` (without the node binary and script path) and return the exit code.
 * Output goes to process.stdout / process.stderr.
 */
async function main(argv: readonly string[]): Promise<number> {
  const [first, ...rest] = argv;
  if (first === undefined) {
    process.stderr.write(`${await topUsage()}\n`);
    return EXIT.USAGE;
  }
  if (first === '--help' || first === '-h' || first === 'help') {
    const topic = first === 'help' ? rest[0] : undefined;
    if (topic !== undefined) return main([topic, '--help']);
    process.stdout.write(`${await topUsage()}\n`);
    return EXIT.OK;
  }
  if (first === '--version') {
    process.stdout.write(`${packageVersion()}\n`);
    return EXIT.OK;
  }
  if (!isCommandName(first)) {
    process.stderr.write(`${PROG}: unknown command ${JSON.stringify(first)}\n\n${await topUsage()}\n`);
    return EXIT.USAGE;
  }
  let cause = '';
  let exhausted = false;
  const command = await loadCommand(first, (c, e) => {
    cause = c;
    exhausted = e;
  });
  if (command === null) {
    process.stderr.write(
      exhausted
        ? `${PROG}: ${first} could not be loaded: the process ran out of file descriptors or memory\n` +
            `  (${cause})\n  Raise the open-file limit (ulimit -n) or free memory, then run it again.\n`
        : `${PROG}: ${first} is not available in this build\n  (${cause})\n`,
    );
    return EXIT.FAILURE;
  }
  if (wantsHelp(rest)) {
    process.stdout.write(`${command.usage.trimEnd()}\n`);
    return EXIT.OK;
  }
  try {
    const code = await command.run(rest);
    return code === EXIT.OK || code === EXIT.FAILURE || code === EXIT.USAGE ? code : EXIT.FAILURE;
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`${PROG} ${first}: ${err.message}\n\n${command.usage.trimEnd()}\n`);
      return EXIT.USAGE;
    }
    process.stderr.write(`${PROG} ${first}: failed: ${err instanceof Error ? err.message : String(err)}\n`);
    return EXIT.FAILURE;
  }
}

/** Resolve once everything written to `stream` so far has been handed to the operating system. */
function drained(stream: NodeJS.WriteStream): Promise<void> {
  return new Promise((resolve) => {
    stream.write('', () => resolve());
  });
}

// This file is the executable, not a library: it runs on import. Exit explicitly once output is flushed, so a handle
// left open by a command (a timer, a child) cannot keep the process alive after its answer.
const code = await main(process.argv.slice(2));
await Promise.all([drained(process.stdout), drained(process.stderr)]);
process.exit(code);
