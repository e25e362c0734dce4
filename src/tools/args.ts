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
import { LIMIT_CEILING, MAX_ID_CHARS, MAX_QUERY_CHARS } from './schemas.js';

/** Fixed hints (public text). */
export const HINTS = Object.freeze({
  searchArguments: 'arguments: an object with query and optionally limit',
  searchKeys: 'arguments: only query and limit are accepted',
  query: `query: a non-empty string of at most ${MAX_QUERY_CHARS} characters`,
  limit: (max: number) => `limit: an integer from 1 to ${max}`,
  readArguments: 'arguments: an object with id',
  readKeys: 'arguments: only id is accepted',
  id: `id: a non-empty string of at most ${MAX_ID_CHARS} characters`,
});

function codePoints(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

const SEARCH_ARGS = z.strictObject({
  query: z.string().refine((q) => /\S/u.test(q) && (q.length <= MAX_QUERY_CHARS || codePoints(q) <= MAX_QUERY_CHARS)),
  limit: z.number().int().min(1).max(LIMIT_CEILING).optional(),
});

const READ_ARGS = z.strictObject({
  id: z.string().refine((id) => id.length > 0 && (id.length <= MAX_ID_CHARS || codePoints(id) <= MAX_ID_CHARS)),
});

export interface SearchArgs {
  /** 1–500 code points, at least one non-whitespace character. */
  query: string;
  /** 1–10 when given; the policy's max_results is checked later, once the policy is loaded. */
  limit?: number;
}

export interface ReadArgs {
  /** 1–512 code points; its syntax is checked by `validateId` next. */
  id: string;
}

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
  if (r.success)
    return r.data.limit === undefined ? { query: r.data.query } : { query: r.data.query, limit: r.data.limit };
  const hint = hintFor(
    r.error.issues,
    [
      ['query', HINTS.query],
      ['limit', HINTS.limit(LIMIT_CEILING)],
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
export function parseReadArgs(raw: unknown): ReadArgs {
  const r = READ_ARGS.safeParse(raw);
  if (r.success) return { id: r.data.id };
  const hint = hintFor(r.error.issues, [['id', HINTS.id]], HINTS.readArguments, HINTS.readKeys);
  throw new BridgeError('invalid_request', 'bad_arguments', hint);
}
