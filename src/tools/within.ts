/**
 * memory_bridge_search's `within` (docs/DESIGN.md "Narrowing a search"): compiling a list once per distinct text
 * (a small cache of compiled lists, least recently used dropped first), and the `NoteScope` a list selects in the
 * profile's view. Narrowing never makes a view of its own: the profile's scan and index serve every `within`, and
 * the ranking counts its statistics over the selected notes (src/search/index/note-index.ts `rank`).
 */
import { PatternSet } from '../policy/glob.js';
import type { NoteScope } from '../search/types.js';

/**
 * Most compiled `within` lists kept (by their exact text). A crafted list of 8 patterns with 64 brace alternatives
 * each takes about 30–60 ms to compile; a model that repeats its list pays that once, and the cache holds at most
 * this many lists (each at most 8 × 64 compiled alternatives).
 */
export const WITHIN_CACHE_SIZE = 32;

/** Compiled lists by their JSON text, least recently used first (Map order). */
const compiled = new Map<string, { set: PatternSet; scope: NoteScope }>();

/**
 * The compiled form of a `within` list, from the cache when the same list (same strings, same order) was compiled
 * before in this process, else compiled now and cached (dropping the least recently used list past
 * WITHIN_CACHE_SIZE). A list that fails to compile is never cached, so it fails the same way every time.
 *
 * @param list the `within` strings as the arguments gave them (1–8 of them, already checked by the schema)
 * @returns the pattern set and the scope it selects (the same objects for the same text while cached)
 * @throws PatternError as `PatternSet.compile` (the caller turns it into `invalid_request` with a fixed hint)
 */
export function compileWithin(list: readonly string[]): { set: PatternSet; scope: NoteScope } {
  const key = JSON.stringify(list);
  let hit = compiled.get(key);
  if (hit !== undefined) {
    compiled.delete(key);
    compiled.set(key, hit);
    return hit;
  }
  const set = PatternSet.compile(list);
  hit = { set, scope: scopeOf(set, key) };
  compiled.set(key, hit);
  if (compiled.size > WITHIN_CACHE_SIZE) compiled.delete(compiled.keys().next().value!);
  return hit;
}

/**
 * The notes `set` selects, as a scope for the index's ranking: `matcher()` is `set.idMatcher()`, which answers
 * `set.matches(id)` exactly while matching each distinct directory of the view once (src/policy/glob.ts).
 */
function scopeOf(set: PatternSet, key: string): NoteScope {
  return Object.freeze({ key, matcher: () => set.idMatcher() });
}
