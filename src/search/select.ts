/**
 * The two steps after scoring that the built index (`NoteIndex`, index.ts) and the first call's ranking straight
 * from texts (`searchCold`, cold.ts) share, so that both answer alike by construction: choosing the best matches
 * and bounding the response (PRODUCT.md §2).
 */
import type { ResponseLimits, SearchHit } from './index.js';
import { countCodePoints, makeSnippet } from './snippet.js';

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
 * The best `max` of the notes `touched`, best first, by `order`.
 *
 * @param touched document numbers with at least one match (any order)
 * @param cover   query terms matched, by document number
 * @param total   summed BM25+ contributions, by document number
 * @param idOf    the note id of a document number
 *
 * Rounding to 12 significant digits moves a score by less than 1e-11 of itself, so a note whose raw score is
 * clearly below the last one kept cannot enter and is skipped without rounding or allocating.
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
 * Turns ranked matches (best first, at least `limit + 1` when more exist) into the §2 hits:
 * - at most `limit` hits; `truncated` when more notes matched;
 * - the sum over hits of code points of id + title + snippet stays ≤ `total_chars`; the first hit that would
 *   exceed it ends the list (later, smaller hits are not pulled forward, so order stays by rank) and sets
 *   `truncated`;
 * - each snippet is at most `snippet_chars` code points (clipping a snippet alone never sets `truncated`).
 * Hits carry `title` only when the note has a heading.
 *
 * @param noteOf the title (undefined without a heading) and body (snippet source) of a match's note
 */
export function boundedHits<M extends { id: string; terms: string[] }>(
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
    const snippet = makeSnippet(body, new Set(match.terms), limits.snippet_chars);
    const cost = countCodePoints(match.id) + (title === undefined ? 0 : countCodePoints(title)) + countCodePoints(snippet);
    if (used + cost > limits.total_chars) return { hits, truncated: true };
    used += cost;
    hits.push(title === undefined ? { id: match.id, snippet } : { id: match.id, title, snippet });
  }
  return { hits, truncated: false };
}
