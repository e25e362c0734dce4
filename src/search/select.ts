/**
 * What the built index (`NoteIndex`, index/) and the first call's ranking straight from texts (`searchCold`,
 * cold.ts) share, so that both answer alike by construction: the order and weights in which a query's terms and
 * their expansions are scored (`scoreQuery`), choosing the best matches (`bestMatches`), and bounding the response
 * (`boundedHits`, docs/TOOLS.md). The two differ only in where postings come from.
 */
import type { ResponseLimits, SearchHit } from './types.js';
import { countCodePoints, makeSnippet } from './snippet.js';
import { cutVisible, escapeHidden } from '../text/visible.js';

/** Shortest term, in code points, that also matches at edit distance 1. */
export const FUZZY_MIN_CHARS = 5;
/** Most typo expansions of one query term (those with the most postings; see `keepMost`). */
export const TYPO_MAX_TERMS = 64;
/**
 * Most matched terms recorded per hit (`RankedMatch.terms`, the snippet's anchors): the first ones in scoring order,
 * so a query's own terms come before their expansions. Bounds the per-hit work and the snippet's term set.
 */
export const HIT_MAX_TERMS = 64;
/** Weights of prefix and typo expansions (docs/DESIGN.md, "The search index"). */
export const PREFIX_WEIGHT = 0.375;
export const FUZZY_WEIGHT = 0.45;

/**
 * Score scratch of one ranking, indexed by document number: `total` and `cover` (query terms matched) across the
 * query, and the current query term's contributions, which `endTerm` folds into them. All zero before a ranking;
 * `clear` makes them zero again (a caller may keep the arrays between rankings).
 */
export class ScoreSheet {
  /** Documents with at least one contribution, in order of their first. */
  readonly touched: number[] = [];
  private termTouched: number[] = [];

  constructor(
    readonly total: Float64Array,
    private readonly termScore: Float64Array,
    readonly cover: Uint8Array,
    private readonly termMark: Uint8Array,
  ) {}

  /** Adds `amount` to document `docId` for the current query term. */
  add(docId: number, amount: number): void {
    if (this.termMark[docId] === 0) {
      this.termMark[docId] = 1;
      this.termTouched.push(docId);
    }
    this.termScore[docId] = this.termScore[docId]! + amount;
  }

  /** Ends a query term: its contributions join each document's total, and the document matched one more term. */
  endTerm(): void {
    const { total, termScore, cover, termMark, touched } = this;
    for (const docId of this.termTouched) {
      if (cover[docId] === 0) touched.push(docId);
      total[docId] = total[docId]! + termScore[docId]!;
      cover[docId] = cover[docId]! + 1;
      termScore[docId] = 0;
      termMark[docId] = 0;
    }
    this.termTouched = [];
  }

  /** Zeroes every entry this ranking touched (also after a ranking that threw midway). */
  clear(): void {
    for (const docId of this.touched) {
      this.total[docId] = 0;
      this.cover[docId] = 0;
    }
    for (const docId of this.termTouched) {
      this.termScore[docId] = 0;
      this.termMark[docId] = 0;
    }
  }
}

/** Where one ranking's postings come from (a built index, or texts just read). */
export interface TermSource<T> {
  /** The postings of exactly `term`, or undefined. */
  exact(term: string): T | undefined;
  /** Prefix expansions of `term` (not `term` itself), in lexicographic order, bounded as NoteIndex.rank says. */
  prefixes(term: string): Iterable<readonly [string, T]>;
  /** Terms at edit distance 1 of `term` with that distance, in lexicographic order, bounded as NoteIndex.rank says. */
  typos(term: string): Iterable<readonly [string, T, number]>;
  /** Adds weight × field boost × BM25+ of every posting of `data` to `sheet`, in FIELDS order (index/scoring.ts). */
  score(data: T, weight: number, sheet: ScoreSheet): void;
}

/**
 * Scores the distinct query `terms` into `sheet` in one fixed order, which fixes floating-point summation: per query
 * term, the exact term (weight 1), then its prefix expansions (weight PREFIX_WEIGHT × len / (len + 0.3 × extra length);
 * every query term expands, each capped on its own, docs/DESIGN.md "Bounded query cost"), then, for a term of at least
 * FUZZY_MIN_CHARS code points, its typo expansions at distance 1 not already used as a prefix expansion (weight
 * FUZZY_WEIGHT × len / (len + distance)); then `sheet.endTerm()`. `derived(term, data)` is told every term that was
 * scored (snippet terms).
 */
export function scoreQuery<T>(
  terms: readonly string[],
  source: TermSource<T>,
  sheet: ScoreSheet,
  derived: (term: string, data: T) => void,
): void {
  for (let q = 0; q < terms.length; q++) {
    const term = terms[q]!;
    const exact = source.exact(term);
    if (exact !== undefined) {
      derived(term, exact);
      source.score(exact, 1, sheet);
    }
    const prefixTerms = new Set<string>();
    for (const [t, data] of source.prefixes(term)) {
      prefixTerms.add(t);
      derived(t, data);
      source.score(data, (PREFIX_WEIGHT * t.length) / (t.length + 0.3 * (t.length - term.length)), sheet);
    }
    if (countCodePoints(term) >= FUZZY_MIN_CHARS) {
      for (const [t, data, distance] of source.typos(term)) {
        if (distance === 0 || prefixTerms.has(t)) continue;
        derived(t, data);
        source.score(data, (FUZZY_WEIGHT * t.length) / (t.length + distance), sheet);
      }
    }
    sheet.endTerm();
  }
}

/**
 * The `cap` items of `items` with the most postings (`postingsOf`), ties broken by term in ascending UTF-16 order,
 * in their original order; all of them when there are at most `cap`. Deterministic for a given set of items
 * whatever their order. Cost O(n log cap): a heap of the `cap` best so far, worst on top.
 */
export function keepMost<T>(
  items: readonly T[],
  cap: number,
  termOf: (item: T) => string,
  postingsOf: (item: T) => number,
): T[] {
  if (items.length <= cap) return items.slice();
  const n = items.map(postingsOf);
  /** True when item a ranks below item b (fewer postings, or as many and a later term). */
  const worse = (a: number, b: number): boolean => {
    if (n[a] !== n[b]) return n[a]! < n[b]!;
    const ta = termOf(items[a]!);
    const tb = termOf(items[b]!);
    return ta > tb;
  };
  const heap: number[] = [];
  const down = (i: number): void => {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let w = i;
      if (l < heap.length && worse(heap[l]!, heap[w]!)) w = l;
      if (r < heap.length && worse(heap[r]!, heap[w]!)) w = r;
      if (w === i) return;
      [heap[i], heap[w]] = [heap[w]!, heap[i]!];
      i = w;
    }
  };
  for (let i = 0; i < items.length; i++) {
    if (heap.length < cap) {
      heap.push(i);
      for (let j = heap.length - 1; j > 0; ) {
        const p = (j - 1) >> 1;
        if (!worse(heap[j]!, heap[p]!)) break;
        [heap[j], heap[p]] = [heap[p]!, heap[j]!];
        j = p;
      }
    } else if (worse(heap[0]!, i)) {
      heap[0] = i;
      down(0);
    }
  }
  heap.sort((a, b) => a - b);
  return heap.map((i) => items[i]!);
}

/**
 * The distinct terms of `derived` (every term scored, in scoring order) that hold the hit (`holds`), at most
 * HIT_MAX_TERMS of them (the first in scoring order), sorted. Linear in `derived`, which the expansion caps bound.
 */
export function matchedTerms<T>(derived: readonly (readonly [string, T])[], holds: (data: T) => boolean): string[] {
  const seen = new Set<string>();
  for (const [term, data] of derived) {
    if (seen.size >= HIT_MAX_TERMS) break;
    if (!seen.has(term) && holds(data)) seen.add(term);
  }
  return [...seen].sort();
}

/** One scored note: its document number in the caller's arrays, id, query terms matched and rounded score. */
export interface Scored {
  docId: number;
  id: string;
  coverage: number;
  /** total × coverage, rounded to 12 significant digits (so summation order cannot reorder ties). */
  score: number;
}

/** Order of results: more query terms matched first, then higher rounded score, then id in UTF-16 order. */
function order(a: Scored, b: Scored): number {
  return b.coverage - a.coverage || b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/**
 * The best `max` of the notes `touched`, best first, by `order`. Rounding to 12 significant digits moves a score
 * by less than 1e-11 of itself, so a note whose raw score is clearly below the last one kept cannot enter and is
 * skipped without rounding or allocating.
 *
 * @param touched document numbers with at least one match (any order)
 * @param cover   query terms matched, by document number
 * @param total   summed BM25+ contributions, by document number
 * @param idOf    the note id of a document number
 */
export function bestMatches(
  touched: readonly number[],
  max: number,
  cover: Uint8Array,
  total: Float64Array,
  idOf: (docId: number) => string,
): Scored[] {
  const scoredOf = (docId: number): Scored => ({
    docId,
    id: idOf(docId),
    coverage: cover[docId]!,
    score: Number((total[docId]! * cover[docId]!).toPrecision(12)),
  });
  if (max >= touched.length || max > 64) return touched.map(scoredOf).sort(order).slice(0, max);
  const best: Scored[] = [];
  for (const docId of touched) {
    if (best.length === max) {
      const last = best[max - 1]!;
      const coverage = cover[docId]!;
      if (coverage < last.coverage) continue;
      if (coverage === last.coverage && total[docId]! * coverage * (1 + 1e-11) < last.score) continue;
    }
    const item = scoredOf(docId);
    if (best.length === max && order(item, best[max - 1]!) >= 0) continue;
    let i = best.length;
    while (i > 0 && order(item, best[i - 1]!) < 0) i--;
    best.splice(i, 0, item);
    if (best.length > max) best.pop();
  }
  return best;
}

/**
 * The ranking score of each hit `boundedHits` made from a scored match, beside the hit rather than in it (the public
 * hit shape has no score, docs/TOOLS.md §Results). Hermes recall reads it for its `min_score` (src/hermes/recall.ts);
 * a hit of a filter-only search, or one that crossed from the cold thread, has none.
 */
const hitScores = new WeakMap<SearchHit, number>();

/** The score `boundedHits` recorded for `hit` (see `hitScores`), or undefined. */
export function scoreOfHit(hit: SearchHit): number | undefined {
  return hitScores.get(hit);
}

/**
 * Turns ranked matches (best first, at least `limit + 1` when more exist) into the search hits of docs/TOOLS.md §Results:
 * - at most `limit` hits; `truncated` when more notes matched;
 * - the sum over hits of code points of id + title + snippet stays ≤ `total_chars`; the first hit that would
 *   exceed it ends the list (later, smaller hits are not pulled forward, so order stays by rank) and sets
 *   `truncated`;
 * - each snippet is at most `snippet_chars` code points (clipping a snippet alone never sets `truncated`);
 * - titles and snippets are returned with hidden controls escaped (`src/text/visible.ts`), and every count above is
 *   of that returned form.
 * Hits carry `title` when `noteOf` gives one (both rankings always do: `noteTitle`).
 *
 * @param noteOf the title and body (snippet source) of a match's note
 */
export function boundedHits<M extends { id: string; terms: string[]; score?: number }>(
  matches: readonly M[],
  limit: number,
  limits: ResponseLimits,
  noteOf: (match: M) => { title: string | undefined; body: string },
): { hits: SearchHit[]; truncated: boolean } {
  const hits: SearchHit[] = [];
  let used = 0;
  for (const match of matches) {
    if (hits.length >= limit) return { hits, truncated: true };
    const { title, body } = noteOf(match);
    // The returned form (docs/DESIGN.md "Returned text"): hidden controls escaped, the snippet cut to
    // snippet_chars after escaping (never inside an escape), and the budget charged for what is returned.
    const snippet = cutVisible(
      makeSnippet(body, new Set(match.terms), limits.snippet_chars),
      limits.snippet_chars,
    ).text.trimEnd();
    const shownTitle = title === undefined ? undefined : escapeHidden(title);
    const cost =
      countCodePoints(match.id) +
      (shownTitle === undefined ? 0 : countCodePoints(shownTitle)) +
      countCodePoints(snippet);
    if (used + cost > limits.total_chars) return { hits, truncated: true };
    used += cost;
    const hit: SearchHit =
      shownTitle === undefined ? { id: match.id, snippet } : { id: match.id, title: shownTitle, snippet };
    if (match.score !== undefined) hitScores.set(hit, match.score);
    hits.push(hit);
  }
  return { hits, truncated: false };
}
