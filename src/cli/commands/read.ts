/**
 * `memory-bridge read ID`: one memory_bridge_read call from the command line, printing the tool's JSON.
 */
import { integerFlag, parseArgs, UsageError } from '../args.js';
import type { Command } from '../command.js';
import { CALLER_FLAGS, CALLER_FLAGS_HELP } from './caller-flags.js';
import { runOneShot } from './search.js';

export const command: Command = {
  name: 'read',
  summary: 'run one memory_bridge_read and print its JSON',
  usage: `usage: memory-bridge read [--offset N] [--home DIR] [--run-kind KIND] [--] ID

Read one note by the id a search returned and print the same JSON the tool returns. A long note comes in pieces:
the answer's "next_offset" is the --offset of the next piece.
Exit 0 when "ok" is true, 1 when it is false, 2 on a usage error.

${CALLER_FLAGS_HELP}
  --offset N         characters (code points) to skip before the returned text (default 0)`,
  async run(argv) {
    const parsed = parseArgs(argv, { ...CALLER_FLAGS, offset: { type: 'string' } });
    if (parsed.positionals.length !== 1) {
      throw new UsageError(parsed.positionals.length === 0 ? 'missing ID' : 'read takes exactly one ID');
    }
    const args: Record<string, unknown> = { id: parsed.positionals[0] };
    const offset = integerFlag(parsed, 'offset');
    if (offset !== undefined) args.offset = offset;
    return runOneShot('memory_bridge_read', args, parsed, 'memory-bridge read');
  },
};
