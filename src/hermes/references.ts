/**
 * `@memory:` context references (docs/HERMES.md §References): the worker's side of the shim's context-reference
 * provider with prefix `memory`.
 *
 * - Autocomplete: the notes of the caller's view whose id contains what the user typed (case-insensitive), newest
 *   first, at most 10, each as its id and title. It is a filter-only memory_bridge_search by the same caller
 *   through the same bridge, narrowed by a scope of ids: so the policy is reread, the tree re-verified, and only
 *   notes the index holds for this view (allowed, trusted, not denied) can be offered; a hidden name never is.
 * - Expansion: `@memory:<id>` is a memory_bridge_read of `{id}` (same limits; a cut note ends with the read's
 *   continuation line), framed as untrusted note text (src/hermes/framing.ts). A denied, missing or otherwise
 *   unreadable id expands to nothing, exactly as an id that never existed.
 */
import { idContainsScope } from '../tools/filters.js';
import type { Bridge, Caller } from '../tools/types.js';
import { frameNotes, type RandomSource } from './framing.js';

/** Most completions one autocomplete returns (Hermes asks for 10 by default). */
export const MAX_COMPLETIONS = 10;
/** Longest typed text matched, in UTF-16 code units (an id is at most 512). */
export const MAX_TYPED_CHARS = 512;

/** The first line of an expansion frame (fixed text). */
export const EXPAND_HEADING = '[memory-bridge] The note the user referenced with @memory:.';

/** One completion as Hermes shows it: `text` is what is inserted after `@memory:`, `display` and `meta` are shown. */
export interface Completion {
  text: string;
  display: string;
  meta: string;
}

/** What the worker answers an autocomplete with. */
export interface CompleteAnswer {
  ok: true;
  items: Completion[];
}

/** What the worker answers an expansion with: the framed note, or null (nothing to expand). */
export interface ExpandAnswer {
  ok: true;
  context: string | null;
}

/**
 * How an id is written after `@memory:` so that Hermes reads it back whole: as is when it holds no white space and
 * no quote character, else between backticks (a note id never holds a backtick and white space at once: the
 * reference then cannot be written, and the completion is left out).
 */
export function referenceText(id: string): string | undefined {
  if (!/[\s`'"]/u.test(id)) return id;
  if (id.includes('`')) return undefined;
  return `\`${id}\``;
}

/**
 * The completions for `typed` (docs/HERMES.md §References).
 *
 * @param limit most items wanted (1–MAX_COMPLETIONS)
 */
export function runComplete(bridge: Bridge, args: { query: string; limit: number }, caller: Caller): CompleteAnswer {
  const typed = args.query.slice(0, MAX_TYPED_CHARS);
  const limit = Math.max(1, Math.min(args.limit, MAX_COMPLETIONS));
  const result = bridge.search({ within: ['**'], limit }, caller, undefined, { scope: idContainsScope(typed) });
  if (!result.ok) return { ok: true, items: [] };
  const items: Completion[] = [];
  for (const hit of result.results) {
    const text = referenceText(hit.id);
    if (text !== undefined) items.push({ text, display: hit.id, meta: hit.title ?? '' });
  }
  return { ok: true, items };
}

/** The id a reference target names: the target without one pair of enclosing backticks or quotes. */
export function idOfTarget(target: string): string {
  const first = target[0];
  if (target.length >= 2 && (first === '`' || first === '"' || first === "'") && target.endsWith(first))
    return target.slice(1, -1);
  return target;
}

/** The expansion of `@memory:<target>` (docs/HERMES.md §References); null for anything but a readable note. */
export function runExpand(
  bridge: Bridge,
  args: { target: string },
  caller: Caller,
  random?: RandomSource,
): ExpandAnswer {
  const result = bridge.read({ id: idOfTarget(args.target) }, caller);
  if (!result.ok || !('content' in result)) return { ok: true, context: null };
  const framed = frameNotes(EXPAND_HEADING, [{ id: result.id, title: result.title, text: result.content }], random);
  return { ok: true, context: framed ?? null };
}
