/**
 * `--home` and `--run-kind`, the caller flags shared by `mcp`, `search` and `read` (docs/CLI.md), in a module of
 * their own: `mcp` parses them without loading the bridge, which it loads while it already answers the host.
 */
import type { FlagSpecs } from '../args.js';

/** `--home` and `--run-kind`, shared by mcp, search and read. */
export const CALLER_FLAGS: FlagSpecs = Object.freeze({
  home: { type: 'string' },
  'run-kind': { type: 'string' },
});

export const CALLER_FLAGS_HELP = `Options:
  --home DIR         the calling profile's home (default: $HERMES_HOME; with neither, every call is unavailable)
  --run-kind KIND    interactive, cron or subagent. Without it the run kind is unknown, which the policy must
                     allow as both cron and subagent (allow_cron and allow_subagents)`;
