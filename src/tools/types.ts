/**
 * Tool-facing shapes: the caller record and the public results of docs/TOOLS.md.
 */
import type { CallContext, Transport } from '../audit/record.js';
import type { ErrorResult } from '../errors.js';
import type { SearchHit } from '../search/types.js';
import type { SearchSurface } from './search.js';
import type { WarmOutcome } from './warm.js';

/**
 * Who is calling (docs/POLICY.md). Comes from the host, never from tool arguments.
 * - `home`: absolute profile home, or null when none could be established (every call → unavailable).
 * - `cron` / `subagent`: run-kind signals. MCP mode's `unknown` is both true; `interactive` is both false.
 */
export interface Caller {
  home: string | null;
  cron: boolean;
  subagent: boolean;
  /** Hermes profile name when known (logs only). */
  profile?: string;
}

/** One search hit: defined once, beside the search code that builds it (src/search/types.ts). */
export type { SearchHit };

export interface SearchResult {
  ok: true;
  results: SearchHit[];
  /** Something was left out: more hits than `limit`, the `total_chars` budget, or a cut scan (docs/TOOLS.md §Results). */
  truncated: boolean;
  /**
   * Present (always `true`) only when the scan itself was cut: `max_entries` or `max_total_bytes` stopped it, or an
   * allowed trusted note lies deeper than `max_depth`, so notes this caller may see were not searched. Budgets count
   * only trusted, policy-matching notes, so it reveals nothing about hidden ones (docs/TRUST.md §Budgets).
   */
  incomplete?: true;
}

export interface ReadResult {
  ok: true;
  id: string;
  /** The note's title, as search shows it. */
  title: string;
  /** The text from `offset` on, at most read_chars code points (plus the truncation line when more follows). */
  content: string;
  /** True when text follows `content` (then `next_offset` is set). */
  truncated: boolean;
  /** The code point offset `content` starts at (the argument, default 0). */
  offset: number;
  /** Where the next read continues; only when text follows. */
  next_offset?: number;
  /** Opaque; changes whenever the note's identity (inode, size, times) changes (docs/DESIGN.md). */
  version: string;
  /** With the `section` argument: the text of the heading whose section `content` is (offsets count inside it). */
  section?: string;
}

/** memory_bridge_read with `outline: true`: the note's headings instead of its text (docs/TOOLS.md). */
export interface OutlineResult {
  ok: true;
  id: string;
  title: string;
  /** At most 200 headings in note order; `offset` is the code point offset of the heading's line in the note. */
  outline: { level: number; text: string; offset: number }[];
  /** True when the note has more headings than listed. */
  truncated: boolean;
  version: string;
}

/** memory_bridge_read with `ids`: each id's answer as a single read gives it, in the order asked. */
export interface ManyReadResult {
  ok: true;
  notes: (ReadResult | ErrorResult)[];
  /** True when some note's content was cut (by read_chars or the shared budget). */
  truncated: boolean;
}

export type ToolResult = SearchResult | ReadResult | OutlineResult | ManyReadResult | ErrorResult;

export const TOOL_NAMES = ['memory_bridge_search', 'memory_bridge_read'] as const;
export type ToolName = (typeof TOOL_NAMES)[number];

/** One operator log event: a short reason code, never a path or note content. */
export interface LogEvent {
  tool: ToolName | 'policy' | 'worker' | 'server';
  reason: string;
  profile?: string;
  /**
   * For reason `internal`: the exception's class name (never its message, which may hold a path). For an operator
   * notice on an answered call: a fixed sentence with the remedy (`no_candidate_names`), or a reason code, a count
   * and the doctor command that lists what a search could not consider (`hidden_notes`, `scan_cut`).
   */
  detail?: string;
  /** `root` when `reason` is about the policy's root, not a note (src/errors.ts `BridgeError.subject`). */
  subject?: 'root';
}

/**
 * The two tools over one caller. Every method is synchronous, never throws, and returns the tool JSON object (docs/TOOLS.md).
 * `args` is whatever the host sent (unvalidated); validation happens inside.
 */
export interface Bridge {
  /**
   * `context`: what the transport knows of the call (client name, protocol version, traceparent), for the audit trail
   * only. `surface`: what a Hermes surface adds to its search (src/tools/search.ts `SearchSurface`); tools never set it.
   */
  search(args: unknown, caller: Caller, context?: CallContext, surface?: SearchSurface): SearchResult | ErrorResult;
  read(args: unknown, caller: Caller, context?: CallContext): ReadResult | OutlineResult | ManyReadResult | ErrorResult;
  /** Dispatch by tool name; an unknown name is the caller's protocol problem and is not handled here. */
  call(tool: ToolName, args: unknown, caller: Caller, context?: CallContext): ToolResult;
  /** What the bridge holds in memory now (`serve --metrics`): views (search indexes) and the notes they hold. */
  held?(): { views: number; notes: number };
  /**
   * Build the caller's view ahead of its first call (src/tools/warm.ts); answers nothing of the notes. Optional:
   * only the Hermes worker asks for it (docs/HERMES.md, "Warm first call").
   */
  warm?(caller: Caller, settle?: boolean): WarmOutcome;
}

export interface BridgeOptions {
  /** How calls reach this bridge, written in each audit record (docs/AUDIT.md). Default 'library'. */
  transport?: Transport;
  /** The clock of audit records and their files' UTC day, in ms since the epoch. Default Date.now; tests inject one. */
  clock?: () => number;
  /** Where reason codes go (default: one line on stderr per refusal). */
  log?: (event: LogEvent) => void;
  /** Most profile indexes kept in memory at once (least recently used dropped first). Default 8. */
  maxIndexes?: number;
  /** Most memory (bytes, as IndexCache.bytes counts it) across the kept views; least recently used dropped first. Default 512 MiB. */
  maxIndexBytes?: number;
  /**
   * How long (ms) after a note's last change its identity key cannot vouch for it, so it is opened and verified
   * again on every call (kernel timestamps are coarse; see ScanLimits.racyMarginMs). Default 3000. Lowering it only
   * makes sense in tests that count opens of notes they have just written.
   */
  racyMarginMs?: number;
  /**
   * Raw directory entries one call may list (ScanLimits.rawEntryCeiling): only lowers the fixed ceiling of
   * 1,000,000. Tests lower it to reach the ceiling on a small tree; the CLI and servers never set it.
   */
  rawEntryCeiling?: number;
  /**
   * Change notification for warm searches (docs/DESIGN.md §Change notification): notes whose inotify watch
   * reported nothing since their last statx are not statted again. Default on, unless the environment variable
   * MEMORY_BRIDGE_WATCH is `0` (then every search stats every candidate note, as on platforms without inotify).
   */
  watch?: boolean;
  /**
   * Least time (ms) between two operator lines about hidden notes for one home and reason (docs/TRUST.md §Hidden
   * notes). Default 60,000.
   */
  noticeIntervalMs?: number;
}
