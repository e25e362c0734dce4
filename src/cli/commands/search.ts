/**
 * `memory-bridge search QUERY`: one memory_bridge_search call from the command line, printing the tool's JSON.
 * Also holds the one-shot runner that `read` shares.
 */
import { createBridge, stderrLogger } from '../../tools/bridge.js';
import type { LogEvent, ToolName } from '../../tools/types.js';
import { integerFlag, parseArgs, listFlag, stringFlag, UsageError, type ParsedArgs } from '../args.js';
import { callerFromFlags, EXIT, type Command } from '../command.js';
import { CALLER_FLAGS, CALLER_FLAGS_HELP } from './caller-flags.js';

/** The one operator line for a call refused because its run kind is unknown (no `--run-kind`). */
export const UNKNOWN_RUN_KIND_LINE =
  'refused: the run kind is unknown (no --run-kind). Pass --run-kind interactive for a person at a terminal, or set both "allow_cron": true and "allow_subagents": true in the policy';

/**
 * Make one tool call as the caller named by `--home`/`--run-kind`, print the tool JSON (docs/TOOLS.md) on stdout (one
 * line) and return the exit code: 0 for `ok: true`, 1 for `ok: false` (docs/CLI.md). A refusal for an unknown run
 * kind (no `--run-kind`, and a policy that does not allow both cron and subagents) prints UNKNOWN_RUN_KIND_LINE on
 * stderr instead of the bare reason code; every other operator event is the usual line with its remedy
 * (`stderrLogger`).
 */
export function runOneShot(tool: ToolName, args: Record<string, unknown>, parsed: ParsedArgs, prog: string): number {
  const { caller, warning } = callerFromFlags(stringFlag(parsed, 'home'), stringFlag(parsed, 'run-kind'));
  if (warning !== undefined) process.stderr.write(`${prog}: ${warning}\n`);
  const other = stderrLogger(prog);
  const log = (event: LogEvent): void => {
    if (event.reason === 'run_kind_refused') process.stderr.write(`${prog}: ${UNKNOWN_RUN_KIND_LINE}\n`);
    else other(event);
  };
  const result = createBridge({ transport: 'cli', log }).call(tool, args, caller);
  process.stdout.write(`${JSON.stringify(result)}\n`);
  return result.ok ? EXIT.OK : EXIT.FAILURE;
}

export const command: Command = {
  name: 'search',
  summary: 'run one memory_bridge_search and print its JSON',
  usage: `usage: memory-bridge search [--limit N] [--within PATTERN]... [--home DIR] [--run-kind KIND] [--] QUERY...

Search the notes the profile's policy allows and print the same JSON the tool returns. The words of QUERY are
joined with single spaces. Exit 0 when "ok" is true, 1 when it is false, 2 on a usage error.

  --limit N          most results (an integer from 1 to 10; above the policy's max_results it is lowered to it)
  --within PATTERN   only search notes whose id matches PATTERN (the policy's glob dialect, e.g. "decisions/**");
                     repeat for up to 8 patterns. It only narrows what the policy allows
${CALLER_FLAGS_HELP.replace(/^Options:\n/, '')}`,
  async run(argv) {
    const parsed = parseArgs(argv, {
      ...CALLER_FLAGS,
      limit: { type: 'string' },
      within: { type: 'string', repeatable: true },
    });
    if (parsed.positionals.length === 0) throw new UsageError('missing QUERY');
    const args: Record<string, unknown> = { query: parsed.positionals.join(' ') };
    const limit = integerFlag(parsed, 'limit');
    if (limit !== undefined) args.limit = limit;
    const within = listFlag(parsed, 'within');
    if (within.length > 0) args.within = within;
    return runOneShot('memory_bridge_search', args, parsed, 'memory-bridge search');
  },
};
