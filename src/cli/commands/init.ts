/**
 * `memory-bridge init --home DIR --root DIR [--host NAME]`: write a policy for a notes folder, check the tree once the
 * way `doctor` does, and print the host configuration to paste (docs/CLI.md §init).
 *
 * Steps: resolve the home and the root to canonical paths (no symbolic link on the way: the trust walk follows
 * none); build the policy from the schema's defaults and the host's run-kind opt-ins (src/cli/host-config.ts);
 * write it owner-only, never over an existing one (src/cli/init-policy.ts); run doctor's checks on the profile
 * (src/hermes/doctor.ts `runDoctor`); print the host configuration. Exit 0 when the policy was written and doctor
 * says calls can be served, 1 when init refused or doctor found a problem (the policy then stays, for editing).
 */
import fs from 'node:fs';
import path from 'node:path';
import { formatDoctor, runDoctor } from '../../hermes/doctor.js';
import { shellWord } from '../../text/operator.js';
import { parseArgs, stringFlag, UsageError } from '../args.js';
import { EXIT, packageRoot, packageVersion, type Command } from '../command.js';
import { genericConfig, HOSTS, hostNamed, type HostSpec, type Launch } from '../host-config.js';
import {
  canonicalRoot,
  chooseNamesRule,
  InitError,
  initialPolicy,
  type NamesChoice,
  writeNewPolicy,
} from '../init-policy.js';

const PROG = 'memory-bridge init';

/**
 * The home as an absolute path with every symbolic link resolved: the nearest existing ancestor through realpath(3),
 * the rest (which init creates) appended. The plugin and the worker refuse a home reached through a link.
 */
function canonicalHome(given: string): string {
  const abs = path.resolve(given);
  const rest: string[] = [];
  let dir = abs;
  for (;;) {
    try {
      return path.join(fs.realpathSync(dir), ...rest);
    } catch {
      const parent = path.dirname(dir);
      if (parent === dir) return abs;
      rest.unshift(path.basename(dir));
      dir = parent;
    }
  }
}

/** The `--host` value as a host, or undefined when absent. */
function hostFlag(value: string | undefined): HostSpec | undefined {
  if (value === undefined) return undefined;
  const host = hostNamed(value);
  if (host === undefined) throw new UsageError(`--host must be one of ${HOSTS.map((h) => h.name).join(', ')}`);
  return host;
}

/** A required directory flag. */
function dirFlag(value: string | undefined, name: string, what: string): string {
  if (value === undefined || value === '') throw new UsageError(`--${name} ${what} is required`);
  return value;
}

export const command: Command = {
  name: 'init',
  summary: 'write a policy for a notes folder, check it like doctor, and print the host configuration',
  usage: `usage: memory-bridge init --home DIR --root DIR [--host ${HOSTS.map((h) => h.name).join('|')}]

Write <home>/plugin-data/memory-bridge/policy.json for the notes folder --root: the root as its real path (no
symbolic link), "allow": ["**"], the names rule the notes need (the default, unless another rule lets more of
them be seen), the default limits written out, and the run-kind opt-ins the host needs. Directories it creates
are 0700, the policy 0600. It never overwrites an existing policy. Then it checks the profile and the whole tree
once, as memory-bridge doctor does, and prints the configuration to paste for the host.
Exit 0 when the policy was written and tool calls can be served, 1 otherwise (a policy written stays).

  --home DIR    the profile home (a Hermes profile, or any directory; created when missing)
  --root DIR    the folder that holds the notes (must exist)
  --host NAME   print the configuration for this host:
${HOSTS.map((h) => `                  ${h.name.padEnd(14)} ${h.summary}`).join('\n')}
                without it: the command line any MCP host runs (run kind interactive)`,
  async run(argv) {
    const parsed = parseArgs(argv, { home: { type: 'string' }, root: { type: 'string' }, host: { type: 'string' } });
    if (parsed.positionals.length > 0)
      throw new UsageError(`unexpected argument ${JSON.stringify(parsed.positionals[0])}`);
    const host = hostFlag(stringFlag(parsed, 'host'));
    const home = canonicalHome(dirFlag(stringFlag(parsed, 'home'), 'home', 'DIR'));
    const rootGiven = dirFlag(stringFlag(parsed, 'root'), 'root', 'DIR');
    const optIns = host?.optIns ?? { allowCron: false, allowSubagents: false };
    let written: { file: string; created: string[] };
    let root: string;
    let names: NamesChoice;
    try {
      root = canonicalRoot(rootGiven);
      const doc = initialPolicy(root, optIns);
      names = chooseNamesRule(doc);
      written = writeNewPolicy(home, { ...doc, names: names.names });
    } catch (err) {
      if (!(err instanceof InitError)) throw err;
      process.stderr.write(`${PROG}: refused: ${err.message}\n  → ${err.remedy}\n`);
      return EXIT.FAILURE;
    }
    const out = [
      `Wrote ${written.file} (mode 0600${written.created.length > 0 ? `; created ${written.created.join(', ')} with mode 0700` : ''}):`,
      `  root ${root}, allow ["**"], names "${names.names}", allow_cron ${optIns.allowCron}, allow_subagents ${optIns.allowSubagents}`,
      ...(names.visible.length > 1
        ? [
            `  names rule chosen by the notes it lets you see: ${names.visible.map((v) => `"${v.names}" ${v.notes}`).join(', ')}`,
          ]
        : []),
      `  review it any time: memory-bridge status --home ${shellWord(home)}`,
      '',
    ];
    const result = runDoctor(home, { version: packageVersion() });
    out.push(formatDoctor(result, [`Profile home: ${home}`]), '');
    const launch: Launch = {
      node: process.execPath,
      cli: path.join(packageRoot(), 'dist', 'src', 'cli', 'main.js'),
      home,
    };
    out.push(...(host?.config(launch) ?? genericConfig(launch)));
    if (!result.report.ok)
      out.push(
        '',
        `The policy is written; fix what doctor marked FAIL, then run: memory-bridge doctor --home ${shellWord(home)}`,
      );
    process.stdout.write(`${out.join('\n')}\n`);
    return result.report.ok ? EXIT.OK : EXIT.FAILURE;
  },
};
