/**
 * `memory-bridge uninstall [--home DIR] [--dry-run]`: remove `<home>/plugins/memory-bridge/` when it is
 * memory-bridge's own install (docs/HERMES.md, docs/CLI.md). The policy in plugin-data/ is kept.
 */
import { resolveHermesHome } from '../../hermes/home.js';
import { InstallError, uninstall } from '../../hermes/install.js';
import { boolFlag, parseArgs, stringFlag, UsageError } from '../args.js';
import { EXIT, type Command } from '../command.js';

export const command: Command = {
  name: 'uninstall',
  summary: 'remove the Hermes plugin shim from a profile (only if it is ours)',
  usage: `usage: memory-bridge uninstall [--home DIR] [--dry-run]

Remove <home>/plugins/memory-bridge/ when it is a memory-bridge install (its plugin.yaml names memory-bridge and
it holds our install record). A directory of that name that belongs to anything else is left untouched. The
policy under <home>/plugin-data/memory-bridge/ is kept. The home is --home, else $HERMES_HOME, else ~/.hermes.

  --home DIR   the Hermes profile home
  --dry-run    say what would be removed and remove nothing`,
  async run(argv) {
    const parsed = parseArgs(argv, { home: { type: 'string' }, 'dry-run': { type: 'boolean' } });
    if (parsed.positionals.length > 0)
      throw new UsageError(`unexpected argument ${JSON.stringify(parsed.positionals[0])}`);
    const dryRun = boolFlag(parsed, 'dry-run');
    const resolved = resolveHermesHome(stringFlag(parsed, 'home'));
    for (const note of resolved.notes) process.stderr.write(`memory-bridge uninstall: note: ${note}\n`);
    try {
      const outcome = uninstall(resolved.home, { dryRun });
      const lines = [`Hermes home: ${resolved.home} (from ${resolved.source})`];
      if (!outcome.removed) lines.push(`${outcome.target} does not exist; nothing to remove.`);
      else {
        lines.push(`${dryRun ? 'Would remove' : 'Removed'} ${outcome.target}.`);
        if (outcome.modified.length > 0) lines.push(`  it had local changes: ${outcome.modified.join(', ')}`);
        if (!dryRun) lines.push('Restart the Hermes session (or gateway) so it stops offering the tools.');
      }
      process.stdout.write(`${lines.join('\n')}\n`);
      return EXIT.OK;
    } catch (err) {
      if (err instanceof InstallError) {
        process.stderr.write(`memory-bridge uninstall: refused (${err.reason}): ${err.message}\n`);
        return EXIT.FAILURE;
      }
      throw err;
    }
  },
};
