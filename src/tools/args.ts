/**
 * Validation of the tools' arguments at the edge (docs/TOOLS.md), mirroring the JSON Schemas in `schemas.ts`:
 * strict objects (an unknown key is invalid), character counts in Unicode code points.
 *
 * Failures are `BridgeError('invalid_request', 'bad_arguments', hint)` where the hint is one of a few fixed
 * sentences naming the argument and what it must be. zod's own messages are never passed on: they can quote the
 * offending value back.
 */
import { z } from 'zod';
import { BridgeError } from '../errors.js';
import type { PatternSet } from '../policy/glob.js';
import type { NoteScope } from '../search/types.js';
import {
  LIMIT_CEILING,
  MAX_DATE_CHARS,
  MAX_FILTER_TAGS,
  MAX_ID_CHARS,
  MAX_QUERY_CHARS,
  MAX_READ_IDS,
  MAX_SECTION_CHARS,
  MAX_WITHIN_PATTERNS,
} from './schemas.js';
import { normalizeTag, MAX_TAG_CHARS } from '../search/tags.js';
import { hasFilters, parseInstant, type SearchFilters } from './filters.js';
import { compileWithin } from './within.js';

/** Fixed hints (public text). */
export const HINTS = Object.freeze({
  searchArguments:
    'arguments: an object with query and optionally limit, within, tags, modified_after, modified_before and sort (query may be left out when within, tags or a date is given)',
  searchKeys: 'arguments: only query, limit, within, tags, modified_after, modified_before and sort are accepted',
  tags: `tags: a list of 1 to ${MAX_FILTER_TAGS} tag names (letters, digits, _, - and /, not only digits, an optional leading #), e.g. ["pricing", "project/alpha"]`,
  modifiedAfter:
    'modified_after: an ISO 8601 date or date-time, e.g. "2026-11-30" or "2026-11-30T09:00:00+01:00" (UTC unless an offset is given)',
  modifiedBefore:
    'modified_before: an ISO 8601 date or date-time, e.g. "2026-12-01" or "2026-12-01T18:00:00Z" (UTC unless an offset is given)',
  sort: 'sort: "relevance" (the default) or "modified" (newest first)',
  within: `within: a list of 1 to ${MAX_WITHIN_PATTERNS} patterns in the policy's glob dialect, e.g. "decisions/**"`,
  query: `query: a non-empty string of at most ${MAX_QUERY_CHARS} characters (required unless within, tags, modified_after or modified_before is given)`,
  limit: (max: number) => `limit: an integer from 1 to ${max}`,
  readArguments:
    'arguments: an object with id (or ids) and optionally offset, section or outline (outline: true goes without offset and section; ids without any)',
  readKeys: 'arguments: only id, ids, offset, section and outline are accepted',
  ids: `ids: a list of 1 to ${MAX_READ_IDS} ids, given instead of id`,
  section: `section: a heading's text or its slug, 1 to ${MAX_SECTION_CHARS} characters, e.g. "Rollout plan" or "rollout-plan"`,
  outline: 'outline: true to list the headings instead of reading text',
  unknownSection:
    'section: this note has no heading with that text or slug; read it with outline: true to list its headings',
  offset: 'offset: an integer of at least 0 (characters to skip; a read answer gives next_offset)',
  id: `id: a non-empty string of at most ${MAX_ID_CHARS} characters`,
});

function codePoints(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

const DATE = z
  .string()
  .max(MAX_DATE_CHARS)
  .refine((d) => parseInstant(d) !== undefined)
  .optional();

const SEARCH_ARGS = z.strictObject({
  query: z
    .string()
    .refine((q) => /\S/u.test(q) && (q.length <= MAX_QUERY_CHARS || codePoints(q) <= MAX_QUERY_CHARS))
    .optional(),
  limit: z.number().int().min(1).max(LIMIT_CEILING).optional(),
  within: z.array(z.string()).min(1).max(MAX_WITHIN_PATTERNS).optional(),
  tags: z
    .array(
      z
        .string()
        .max(MAX_TAG_CHARS + 1)
        .refine((t) => normalizeTag(t) !== undefined),
    )
    .min(1)
    .max(MAX_FILTER_TAGS)
    .optional(),
  modified_after: DATE,
  modified_before: DATE,
  sort: z.enum(['relevance', 'modified']).optional(),
});

const ID = z.string().refine((id) => id.length > 0 && (id.length <= MAX_ID_CHARS || codePoints(id) <= MAX_ID_CHARS));

const READ_ARGS = z.strictObject({
  id: ID.optional(),
  ids: z.array(ID).min(1).max(MAX_READ_IDS).optional(),
  offset: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
  section: z
    .string()
    .refine((s) => /\S/u.test(s) && (s.length <= MAX_SECTION_CHARS || codePoints(s) <= MAX_SECTION_CHARS))
    .optional(),
  outline: z.literal(true).optional(),
});

export interface SearchArgs {
  /**
   * 1–500 code points, at least one non-whitespace character; undefined for a filter-only search (then `within` or
   * a filter is set: the matching notes newest first).
   */
  query: string | undefined;
  /** 1–10 when given; above the policy's max_results it is lowered to it, once the policy is loaded. */
  limit?: number;
  /**
   * 1–8 patterns in the policy's glob dialect, compiled (same validation and caps as `allow`; cached by their text,
   * `compileWithin`), and the scope they select in the profile's view: a note is searched only when the policy
   * allows it and one of them matches. Undefined when not given.
   */
  within?: { set: PatternSet; scope: NoteScope };
  /** `tags` (normalized, distinct), `modified_after` and `modified_before` (ms since the epoch) when given. */
  filters: SearchFilters;
  /** "relevance" (default) or "modified": newest first, ties by id. */
  sort: 'relevance' | 'modified';
}

export interface ReadArgs {
  /** 1–512 code points; its syntax is checked by `validateId` next. */
  id: string;
  /** Code points to skip before the returned window (an integer ≥ 0; default 0); inside the section with `section`. */
  offset?: number;
  /** A heading's text or slug (1–200 code points): read that heading's section only (src/search/sections.ts). */
  section?: string;
  /** List the note's headings instead of reading text. */
  outline?: true;
}

/** memory_bridge_read's arguments: one note (`ReadArgs`) or several (`ids`, each read as `{ id }` alone). */
export type ReadRequest = { one: ReadArgs } | { many: string[] };

type Issue = { code: string; path: PropertyKey[] };

/**
 * Pick the hint for a failed parse. Order is fixed so that one input always gives the same hint: not an object,
 * then unknown keys, then the fields in schema order.
 */
function hintFor(
  issues: readonly Issue[],
  order: readonly [string, string][],
  shapeHint: string,
  keysHint: string,
): string {
  if (issues.some((i) => i.path.length === 0 && i.code !== 'unrecognized_keys')) return shapeHint;
  if (issues.some((i) => i.code === 'unrecognized_keys')) return keysHint;
  for (const [field, hint] of order) if (issues.some((i) => i.path[0] === field)) return hint;
  return shapeHint;
}

/**
 * Validate memory_bridge_search arguments.
 * @throws BridgeError('invalid_request', 'bad_arguments', hint)
 */
export function parseSearchArgs(raw: unknown): SearchArgs {
  const r = SEARCH_ARGS.safeParse(raw);
  if (r.success) {
    const { query, tags, modified_after: after, modified_before: before, sort } = r.data;
    const filters: SearchFilters = {};
    if (tags !== undefined) filters.tags = [...new Set(tags.map((t) => normalizeTag(t)!))];
    if (after !== undefined) filters.after = parseInstant(after)!;
    if (before !== undefined) filters.before = parseInstant(before)!;
    // Without a query, something must narrow: a filter or within (else the whole view would be listed).
    if (query === undefined && !hasFilters(filters) && r.data.within === undefined)
      throw new BridgeError('invalid_request', 'bad_arguments', HINTS.query);
    const args: SearchArgs = { query, filters, sort: sort ?? 'relevance' };
    if (r.data.limit !== undefined) args.limit = r.data.limit;
    if (r.data.within !== undefined) {
      try {
        args.within = compileWithin(r.data.within);
      } catch {
        // Which pattern failed and why stays out of the answer: the hint is fixed (the dialect is documented).
        throw new BridgeError('invalid_request', 'bad_arguments', HINTS.within);
      }
    }
    return args;
  }
  const hint = hintFor(
    r.error.issues,
    [
      ['query', HINTS.query],
      ['limit', HINTS.limit(LIMIT_CEILING)],
      ['within', HINTS.within],
      ['tags', HINTS.tags],
      ['modified_after', HINTS.modifiedAfter],
      ['modified_before', HINTS.modifiedBefore],
      ['sort', HINTS.sort],
    ],
    HINTS.searchArguments,
    HINTS.searchKeys,
  );
  throw new BridgeError('invalid_request', 'bad_arguments', hint);
}

/**
 * Validate memory_bridge_read arguments (shape and length only; id syntax is `validateId`'s job).
 * @throws BridgeError('invalid_request', 'bad_arguments', hint)
 */
export function parseReadArgs(raw: unknown): ReadRequest {
  const r = READ_ARGS.safeParse(raw);
  if (r.success) {
    const { id, ids, offset, section, outline } = r.data;
    // Exactly one of id and ids; ids alone; outline neither with offset nor with section.
    const one = id !== undefined && ids === undefined;
    const many = ids !== undefined && id === undefined && offset === undefined && section === undefined && !outline;
    if (many) return { many: ids };
    if (!one || (outline === true && (offset !== undefined || section !== undefined)))
      throw new BridgeError('invalid_request', 'bad_arguments', HINTS.readArguments);
    const args: ReadArgs = { id };
    if (offset !== undefined) args.offset = offset;
    if (section !== undefined) args.section = section;
    if (outline === true) args.outline = true;
    return { one: args };
  }
  const hint = hintFor(
    r.error.issues,
    [
      ['id', HINTS.id],
      ['ids', HINTS.ids],
      ['offset', HINTS.offset],
      ['section', HINTS.section],
      ['outline', HINTS.outline],
    ],
    HINTS.readArguments,
    HINTS.readKeys,
  );
  throw new BridgeError('invalid_request', 'bad_arguments', hint);
}
