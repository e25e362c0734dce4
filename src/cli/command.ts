/**
 * The contract between `src/cli/main.ts` and the one-file-per-command modules under `src/cli/commands/`, plus the
 * small pieces every command shares: exit codes, the profile home and run-kind flags (docs/POLICY.md, docs/CLI.md), and the
 * package's own location and version.
 *
 * A command module exports `const command: Command`. main.ts imports it lazily, so a missing or broken module only
 * breaks its own command. `run` receives the arguments after the command name; it may throw `UsageError`
 * (src/cli/args.ts), which main.ts turns into the command's usage on stderr and exit code 2.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Caller } from '../tools/types.js';
import { UsageError } from './args.js';

/** Exit codes of every command (docs/CLI.md). */
export const EXIT = Object.freeze({
  /** The command did what was asked (a tool answer with `ok: true`). */
  OK: 0,
  /** Operational failure, including a tool answer with `ok: false`. */
  FAILURE: 1,
  /** The command line itself was wrong. */
  USAGE: 2,
});

/** One sub-command of `memory-bridge`. */
export interface Command {
  /** The word after `memory-bridge`, e.g. "search". */
  name: string;
  /** One line for the top-level help. */
  summary: string;
  /** The full `--help` text: synopsis line first, then flags. */
  usage: string;
  /** Run with the arguments after the command name; resolves to an exit code (0, 1 or 2). */
  run(argv: string[]): Promise<number>;
}

/** Run kinds an operator can name at launch (docs/POLICY.md). */
export const RUN_KINDS = ['interactive', 'cron', 'subagent', 'unknown'] as const;
export type RunKind = (typeof RUN_KINDS)[number];

/**
 * Map a run kind to the caller's signals (docs/POLICY.md): `unknown` counts as both cron and subagent, so it needs
 * both opt-ins; `interactive` needs none.
 */
export function runKindSignals(kind: RunKind): { cron: boolean; subagent: boolean } {
  switch (kind) {
    case 'interactive':
      return { cron: false, subagent: false };
    case 'cron':
      return { cron: true, subagent: false };
    case 'subagent':
      return { cron: false, subagent: true };
    case 'unknown':
      return { cron: true, subagent: true };
  }
}

/** Parse a `--run-kind` value; anything else is a usage error. */
export function parseRunKind(value: string | undefined): RunKind {
  if (value === undefined) return 'unknown';
  if ((RUN_KINDS as readonly string[]).includes(value)) return value as RunKind;
  throw new UsageError(`--run-kind must be one of ${RUN_KINDS.join(', ')}`);
}

/**
 * The profile home for MCP mode and the one-shot tool commands (docs/POLICY.md, docs/CLI.md): `--home DIR` (resolved against
 * the working directory, since the operator typed it), else `HERMES_HOME` when it is an absolute path, else null
 * (every tool call is then `unavailable`). No `~/.hermes` fallback here: that is only for install/status/doctor.
 *
 * @param flag the `--home` value, if given
 * @param env  the environment to read `HERMES_HOME` from (default `process.env`)
 * @returns an absolute path, or null; `warning` explains an ignored `HERMES_HOME` for the operator's stderr
 */
export function resolveCallerHome(
  flag: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): { home: string | null; warning?: string } {
  if (flag !== undefined) {
    if (flag === '') throw new UsageError('--home needs a directory');
    return { home: path.resolve(flag) };
  }
  const fromEnv = env.HERMES_HOME;
  if (fromEnv === undefined || fromEnv === '') return { home: null };
  // A relative HERMES_HOME would depend on whatever directory the host started us in: refuse it rather than guess.
  if (!path.isAbsolute(fromEnv)) return { home: null, warning: 'HERMES_HOME is not an absolute path; ignoring it' };
  return { home: fromEnv };
}

/** Build the caller record for MCP mode and the one-shot commands from `--home` and `--run-kind`. */
export function callerFromFlags(
  home: string | undefined,
  runKind: string | undefined,
): { caller: Caller; warning?: string } {
  const kind = parseRunKind(runKind);
  const resolved = resolveCallerHome(home);
  const caller: Caller = { home: resolved.home, ...runKindSignals(kind) };
  return resolved.warning === undefined ? { caller } : { caller, warning: resolved.warning };
}

let cachedRoot: string | undefined;

/**
 * The package's top directory (the one holding memory-bridge's package.json), found by walking up from this
 * compiled file (dist/src/cli/command.js). Used for the version and for the bundled examples.
 */
export function packageRoot(): string {
  if (cachedRoot !== undefined) return cachedRoot;
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = path.join(dir, 'package.json');
    try {
      const pkg = JSON.parse(fs.readFileSync(candidate, 'utf8')) as { name?: unknown };
      if (pkg.name === 'memory-bridge') {
        cachedRoot = dir;
        return dir;
      }
    } catch {
      // not here (or unreadable): keep walking up
    }
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('memory-bridge package.json not found above the CLI');
    dir = parent;
  }
}

/** The `version` field of memory-bridge's package.json. */
export function packageVersion(): string {
  const pkg = JSON.parse(fs.readFileSync(path.join(packageRoot(), 'package.json'), 'utf8')) as { version?: unknown };
  return typeof pkg.version === 'string' ? pkg.version : '0.0.0';
}
