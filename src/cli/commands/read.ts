/**
 * `memory-bridge read ID`: one memory_bridge_read call from the command line, printing the tool's JSON.
 */
import { parseArgs, UsageError } from '../args.js';
import type { Command } from '../command.js';
import { CALLER_FLAGS, CALLER_FLAGS_HELP, runOneShot } from './search.js';

export const command: Command = {
  name: 'read',
  summary: 'run one memory_bridge_read and print its JSON',
  usage: `usage: memory-bridge read [--home DIR] [--run-kind KIND] [--] ID

Read one note by the id a search returned and print the same JSON the tool returns.
Exit 0 when "ok" is true, 1 when it is false, 2 on a usage error.

${CALLER_FLAGS_HELP}`,
  async run(argv) {
    const parsed = parseArgs(argv, CALLER_FLAGS);
    if (parsed.positionals.length !== 1) {
      throw new UsageError(parsed.positionals.length === 0 ? 'missing ID' : 'read takes exactly one ID');
    }
    return runOneShot('memory_bridge_read', { id: parsed.positionals[0] }, parsed, 'memory-bridge read');
  },
};
