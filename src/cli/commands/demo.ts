/**
 * `memory-bridge demo [--interactive]`: the synthetic walk-through of src/cli/demo.ts (`npm run demo`).
 */
import { boolFlag, parseArgs, UsageError } from '../args.js';
import type { Command } from '../command.js';
import { runDemo } from '../demo.js';

export const command: Command = {
  name: 'demo',
  summary: 'walk through the tools on synthetic notes in a temporary directory',
  usage: `usage: memory-bridge demo [--interactive]

Copy the bundled synthetic notes (examples/memory) into a new owner-only temporary directory, create two
synthetic profiles with different policies, and call the real tool handlers, explaining each answer: allowed
search and read, a denied read, a narrower profile, a cron refusal, and a policy edit taking effect at once.
The temporary directory is removed at the end, also on Ctrl+C. Nothing outside it is read or written, apart from
the bundled examples. Exit 0 when every step behaved as described, 1 otherwise.

Options:
  --interactive   after setup, type your own queries ("read <id>" reads a note; an empty line quits)`,
  async run(argv) {
    const parsed = parseArgs(argv, { interactive: { type: 'boolean' } });
    if (parsed.positionals.length > 0)
      throw new UsageError(`unexpected argument ${JSON.stringify(parsed.positionals[0])}`);
    return runDemo({ interactive: boolFlag(parsed, 'interactive') });
  },
};
