/**
 * Tool-facing shapes: the caller record and the public results of PRODUCT.md §2.
 */
import type { ErrorResult } from '../errors.js';

/**
 * Who is calling (PRODUCT.md §3). Comes from the host, never from tool arguments.
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

export interface SearchHit {
  id: string;
  title?: string;
  snippet: string;
}

export interface SearchResult {
  ok: true;
  results: SearchHit[];
  truncated: boolean;
}

export interface ReadResult {
  ok: true;
  id: string;
  content: string;
  truncated: boolean;
}

export type ToolResult = SearchResult | ReadResult | ErrorResult;

export const TOOL_NAMES = ['memory_bridge_search', 'memory_bridge_read'] as const;
export type ToolName = (typeof TOOL_NAMES)[number];
