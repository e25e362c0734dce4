/**
 * `memory-bridge install [--home DIR] [--dry-run] [--force]`: put the Hermes plugin shim into a profile's
 * `plugins/memory-bridge/` (docs/HERMES.md, docs/CLI.md). The rules live in src/hermes/install.ts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pluginDataDirOf, resolveHermesHome } from '../../hermes/home.js';
import {
  applyInstall,
  InstallError,
  MAX_TIMEOUT_SECONDS,
  MIN_TIMEOUT_SECONDS,
  planInstall,
  type InstallPlan,
} from '../../hermes/install.js';
import { boolFlag, parseArgs, stringFlag, UsageError } from '../args.js';
import { shellWord } from '../../text/operator.js';
import { EXIT, packageRoot, packageVersion, type Command } from '../command.js';

/** `--timeout` → seconds within the shim's bounds, or a usage error. */
function timeoutFlag(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const n = /^[0-9]+(\.[0-9]+)?$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isFinite(n) || n < MIN_TIMEOUT_SECONDS || n > MAX_TIMEOUT_SECONDS) {
    throw new UsageError(`--timeout must be a number of seconds from ${MIN_TIMEOUT_SECONDS} to ${MAX_TIMEOUT_SECONDS}`);
  }
  return n;
}

function mode(m: number): string {
  return `0${m.toString(8)}`;
}

function describePlan(plan: InstallPlan, dryRun: boolean): string[] {
  const verb = dryRun ? 'would' : 'will';
  const lines: string[] = [];
  if (plan.action === 'unchanged') {
    lines.push(`${plan.target} is already this install; nothing to do.`);
    return lines;
  }
  lines.push(
    plan.action === 'create'
      ? `${dryRun ? 'Would create' : 'Creating'} ${plan.target} (mode 0700) with:`
      : `${dryRun ? 'Would replace' : 'Replacing'} the memory-bridge install in ${plan.target} with:`,
  );
  for (const f of plan.files) lines.push(`  ${f.name}  ${f.bytes.length} bytes, mode ${mode(f.mode)}`);
  lines.push(`  the shim ${verb} start: ${plan.record.node} ${plan.record.cli} worker`);
  if (plan.record.timeout_seconds !== undefined) lines.push(`  per-call timeout: ${plan.record.timeout_seconds} s`);
  if (plan.replacedChanges.length > 0)
    lines.push(`  local changes ${verb} be discarded (--force): ${plan.replacedChanges.join(', ')}`);
  return lines;
}

/**
 * The steps after a successful install (or dry run): policy, enable, restart, check. Every path in a command line
 * is quoted for a POSIX shell (`shellWord`), so a step pastes as printed even when the home holds a space or a quote.
 */
export function nextSteps(home: string, fromDefault: boolean): string[] {
  const dataDir = pluginDataDirOf(home);
  const policy = path.join(dataDir, 'policy.json');
  const example = path.join(packageRoot(), 'policy.example.json');
  const [h, d, p] = [home, dataDir, policy].map(shellWord);
  const envPrefix = fromDefault ? '' : `HERMES_HOME=${h} `;
  const policyStep = fs.existsSync(policy)
    ? [`  1. The policy ${policy} already exists; review it with: memory-bridge status --home ${h}`]
    : [
        '  1. Create the policy (owner-only: directories 0700, file 0600), then set "root" and "allow" in it:',
        `       mkdir -p ${d} && chmod 700 ${shellWord(path.dirname(dataDir))} ${d}`,
        `       cp ${shellWord(example)} ${p} && chmod 600 ${p}`,
      ];
  return [
    'Next steps:',
    ...policyStep,
    '     Cron jobs and delegated subagents are refused unless the policy sets "allow_cron" / "allow_subagents".',
    `  2. Enable the plugin for this profile:  ${envPrefix}hermes plugins enable memory-bridge`,
    '  3. Restart the Hermes session (or the gateway) so it loads the plugin.',
    `  4. Check the setup:  memory-bridge doctor --home ${h}`,
  ];
}

export const command: Command = {
  name: 'install',
  summary: 'install the Hermes plugin shim into a profile (plugins/memory-bridge/)',
  usage: `usage: memory-bridge install [--home DIR] [--dry-run] [--force] [--timeout SECONDS]

Copy the plugin (plugin.yaml, __init__.py) and an install record naming this node binary and CLI into
<home>/plugins/memory-bridge/ (directories 0700, files 0600). The home is --home, else $HERMES_HOME, else
~/.hermes, as Hermes resolves it. Reinstalling the same version does nothing; an older memory-bridge install is
replaced. A directory of that name that is not memory-bridge's is never touched, and a <home>/plugins that is a
symbolic link is refused.

  --home DIR   the Hermes profile home
  --dry-run    print what would be written and write nothing
  --force      also replace a memory-bridge install that has local changes (never another plugin)
  --timeout S  seconds one tool call may wait for the worker (${MIN_TIMEOUT_SECONDS}-${MAX_TIMEOUT_SECONDS}; default 10); a call that
               runs out answers "unavailable" but the worker keeps going, so the next call finds its index
               warm. MEMORY_BRIDGE_TIMEOUT in Hermes's environment overrides it.`,
  async run(argv) {
    const parsed = parseArgs(argv, {
      home: { type: 'string' },
      'dry-run': { type: 'boolean' },
      force: { type: 'boolean' },
      timeout: { type: 'string' },
    });
    if (parsed.positionals.length > 0)
      throw new UsageError(`unexpected argument ${JSON.stringify(parsed.positionals[0])}`);
    const dryRun = boolFlag(parsed, 'dry-run');
    const timeoutSeconds = timeoutFlag(stringFlag(parsed, 'timeout'));
    const resolved = resolveHermesHome(stringFlag(parsed, 'home'));
    for (const note of resolved.notes) process.stderr.write(`memory-bridge install: note: ${note}\n`);
    const root = packageRoot();
    let plan: InstallPlan;
    try {
      plan = planInstall(
        resolved.home,
        {
          pluginSourceDir: path.join(root, 'plugin'),
          node: process.execPath,
          cli: path.join(root, 'dist', 'src', 'cli', 'main.js'),
          version: packageVersion(),
          ...(timeoutSeconds === undefined ? {} : { timeoutSeconds }),
        },
        { force: boolFlag(parsed, 'force') },
      );
    } catch (err) {
      if (err instanceof InstallError) {
        process.stderr.write(`memory-bridge install: refused (${err.reason}): ${err.message}\n`);
        return EXIT.FAILURE;
      }
      throw err;
    }
    for (const warning of plan.warnings) process.stderr.write(`memory-bridge install: warning: ${warning}\n`);
    const out = [`Hermes home: ${resolved.home} (from ${resolved.source})`, ...describePlan(plan, dryRun)];
    if (!dryRun) {
      try {
        applyInstall(plan);
      } catch (err) {
        const why = err instanceof InstallError ? `${err.reason}: ${err.message}` : (err as Error).message;
        process.stderr.write(`memory-bridge install: failed: ${why}\n`);
        return EXIT.FAILURE;
      }
      if (plan.action !== 'unchanged') out.push('Done.');
    } else {
      out.push('Dry run: nothing was written.');
    }
    out.push('', ...nextSteps(resolved.home, resolved.source === 'default'));
    process.stdout.write(`${out.join('\n')}\n`);
    return EXIT.OK;
  },
};
