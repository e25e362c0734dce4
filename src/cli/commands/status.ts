/**
 * `memory-bridge status [--home DIR] [--json]`: the effective configuration of a profile and its view's persisted
 * index (docs/HERMES.md, docs/CLI.md §status and the persisted index). No side effects; the notes are walked only to
 * dry-load a persisted index that loads. Exit 0 when the policy loads, 1 when it does not (calls would be unavailable).
 */
import { resolveHermesHome } from '../../hermes/home.js';
import { collectStatus, formatStatus } from '../../hermes/status.js';
import { boolFlag, parseArgs, stringFlag, UsageError } from '../args.js';
import { EXIT, type Command } from '../command.js';

export const command: Command = {
  name: 'status',
  summary: 'show the effective configuration of a profile and its persisted index (no side effects)',
  usage: `usage: memory-bridge status [--home DIR] [--json]

Show the profile home, the installed plugin, the policy path and whether it loads, the run-kind rule (cron and
subagent opt-ins), the root, the names rule, the allow/deny patterns and every limit (marking defaults), and the
view's persisted index: whether it exists, whether it is trusted (else the reason code and what to do), when it
was built, its entries, a dry load (this command's own load now: entries revalidated, notes rebuilt) and the
command that refreshes it (memory-bridge index --home DIR, e.g. from a timer). Reads the install record, the
policy and the persisted index; walks the notes only to dry-load an index that loads, and writes nothing. The
home is --home, else $HERMES_HOME, else ~/.hermes.
Exit 0 when the policy loads, 1 when it does not.

  --home DIR   the Hermes profile home
  --json       print one JSON object instead of text`,
  async run(argv) {
    const parsed = parseArgs(argv, { home: { type: 'string' }, json: { type: 'boolean' } });
    if (parsed.positionals.length > 0)
      throw new UsageError(`unexpected argument ${JSON.stringify(parsed.positionals[0])}`);
    const resolved = resolveHermesHome(stringFlag(parsed, 'home'));
    const report = collectStatus(resolved.home);
    if (boolFlag(parsed, 'json')) {
      process.stdout.write(
        `${JSON.stringify({ ...report, homeSource: resolved.source, notes: resolved.notes }, null, 2)}\n`,
      );
    } else {
      const notes = resolved.notes.map((n) => `Note: ${n}`);
      process.stdout.write(`${[formatStatus(report, resolved.source), ...notes].join('\n')}\n`);
    }
    return report.policy.loads ? EXIT.OK : EXIT.FAILURE;
  },
};
