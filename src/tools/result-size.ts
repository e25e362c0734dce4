/**
 * The longest text a tool result can be, in UTF-16 code units (what hosts count as characters), derived from the
 * ceilings of the policy's response limits (LIMIT_TABLE in src/policy/schema.ts) and the fixed bounds of ids and
 * titles. tools/list declares it to hosts as `_meta["anthropic/maxResultSizeChars"]` (docs/MCP.md §Typed results),
 * so a host that cuts long results at a default smaller than this figure is told it need not cut ours.
 *
 * The figure bounds the tool result's text block, which is the compact JSON of the answer; `structuredContent`
 * carries the same JSON as an object. Every bound counts the worst JSON form of one code point: a control
 * character written as `\u001f` takes 6 code units, more than any other code point (an astral one takes 2).
 */
import { MAX_TITLE_CHARS } from '../search/markdown.js';
import { LIMIT_TABLE } from '../policy/schema.js';
import { escapeOf } from '../text/visible.js';
import { LIMIT_CEILING, MAX_ID_CHARS, MAX_OUTLINE_HEADINGS, MAX_READ_IDS } from './schemas.js';
import type { ToolName } from './types.js';

/** Most JSON code units one returned code point can take (`\u0000`…`\u001f`). */
export const JSON_UNITS_PER_CODE_POINT = 6;
/** Room for the keys, quotes, braces, booleans and numbers of one answer or one hit, in code units (generous). */
const FRAME_UNITS = 200;
/** Room for an error answer: fixed message and hint texts (docs/TOOLS.md §Errors). */
export const ERROR_RESULT_UNITS = 1000;

function ceilingOf(key: string): number {
  const row = LIMIT_TABLE.find((r) => r.key === key);
  if (row === undefined) throw new Error(`no limit row for ${key}`);
  return row.ceiling;
}

/** A title is cut to MAX_TITLE_CHARS code points, then each hidden control may become an escape like `<U+E007F>`. */
const TITLE_UNITS = MAX_TITLE_CHARS * Math.max(JSON_UNITS_PER_CODE_POINT, escapeOf(0xe007f).length);
/** An id is at most MAX_ID_CHARS code points. */
const ID_UNITS = MAX_ID_CHARS * JSON_UNITS_PER_CODE_POINT;

/**
 * Longest search answer: `total_chars` (its ceiling) bounds the code points of every returned id, title and
 * snippet together (docs/TOOLS.md §Characters), plus the frame of each of at most LIMIT_CEILING hits.
 */
export const MAX_SEARCH_RESULT_UNITS =
  ceilingOf('total_chars') * JSON_UNITS_PER_CODE_POINT + (LIMIT_CEILING + 1) * FRAME_UNITS;

/**
 * Longest read answer: `read_chars` (its ceiling) code points of content, shared by every note of an `ids` read and
 * bounding an outline's heading texts too (src/tools/read.ts), plus per note (at most MAX_READ_IDS) the truncation
 * line (its numbers are at most 7 digits: a note is at most `max_file_bytes` bytes), a title, a section heading, an
 * id, the version and the frame, plus the frame of each of at most MAX_OUTLINE_HEADINGS outline entries.
 */
export const MAX_READ_RESULT_UNITS =
  ceilingOf('read_chars') * JSON_UNITS_PER_CODE_POINT +
  MAX_READ_IDS * (2 * TITLE_UNITS + ID_UNITS + 2 * FRAME_UNITS) +
  MAX_OUTLINE_HEADINGS * (FRAME_UNITS / 4);

/** What tools/list declares for each tool (the larger of its answer bound and the error bound). */
export const MAX_RESULT_SIZE_CHARS: Readonly<Record<ToolName, number>> = Object.freeze({
  memory_bridge_search: Math.max(MAX_SEARCH_RESULT_UNITS, ERROR_RESULT_UNITS),
  memory_bridge_read: Math.max(MAX_READ_RESULT_UNITS, ERROR_RESULT_UNITS),
});
