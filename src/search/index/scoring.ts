/**
 * How the index scores a match (docs/DESIGN.md, "The search index"): the indexed fields and their boosts, BM25+ of one
 * term in one field, the caps and order of prefix and typo expansions. Shared by the built index (note-index.ts) and
 * the first call's ranking straight from texts (src/search/cold.ts), which must give the same bits.
 *
 * Ranking: results that match more distinct query terms come first (so a multi-word query lists notes holding all its
 * words before notes holding some), then by score (rounded to 12 significant digits), then by id in ascending UTF-16
 * code-unit order. Score: per query term, BM25+ (k1 1.2, b 0.7, δ 0.5) of each field it occurs in, times the field's
 * boost — `title` (the note's own title: front matter `title` or first level-1 heading, 2.5), `body` (1), `meta` (front
 * matter tags and aliases, 1.5), `name` (the file name without `.md`, 2.5) and `headings` (every section heading, any
 * level, 1.5; docs/DESIGN.md "Titles and file names") — summed, then the sum over query terms times the number of query
 * terms matched. Every query term also matches as a prefix (weight 0.375 × len / (len + 0.3 × extra length); at most
 * PREFIX_SHORT_MAX_TERMS expansions per term under PREFIX_FULL_CHARS code points, PREFIX_MAX_TERMS otherwise); terms of
 * 5 or more code points also match terms one edit away (weight 0.45 × len / (len + 1); at most TYPO_MAX_TERMS; the
 * weights and the selection of the best matches are in src/search/select.ts).
 * Expansions are taken in lexicographic (UTF-16) order, which fixes the floating-point summation order, so equal inputs
 * give equal bits. These are the weights and parameters MiniSearch 7.2 used here before; tests hold the ranking to
 * MiniSearch's on real vaults.
 */
import { ownCopy } from '../../text/own-copy.js';
import { noteName, noteTitle, parseNote } from '../markdown.js';
import { countCodePoints } from '../snippet.js';

/** Most distinct query terms used (a 500-character query of one-letter words would otherwise fan out widely). */
export const MAX_QUERY_TERMS = 32;
/** Field boosts (title above front matter above body). */
export const FIELD_BOOST = Object.freeze({ title: 2.5, body: 1, meta: 1.5, name: 2.5, headings: 1.5 });
/** A query term of at least this many code points may expand to up to PREFIX_MAX_TERMS terms. */
export const PREFIX_FULL_CHARS = 3;
/** Most prefix expansions of a shorter query term (those with the most postings; see `NoteIndex.rank`). */
export const PREFIX_SHORT_MAX_TERMS = 64;
/** Most prefix expansions of a query term of PREFIX_FULL_CHARS or more code points (see `NoteIndex.rank`). */
export const PREFIX_MAX_TERMS = 512;
/** BM25+ parameters. */
const BM25_K = 1.2;
const BM25_B = 0.7;
const BM25_D = 0.5;

/** The cap on prefix expansions of a query term `term` (see `NoteIndex.rank`). */
export function prefixCap(term: string): number {
  return countCodePoints(term) >= PREFIX_FULL_CHARS ? PREFIX_MAX_TERMS : PREFIX_SHORT_MAX_TERMS;
}

/**
 * BM25+ of one term in one field of one note.
 *
 * @param termFreq    occurrences of the term in the field
 * @param matching    notes whose field holds the term
 * @param total       notes in the view
 * @param fieldLength distinct terms of the field in this note
 * @param avgFieldLength mean of fieldLength over the view
 */
export function bm25(
  termFreq: number,
  matching: number,
  total: number,
  fieldLength: number,
  avgFieldLength: number,
): number {
  return bm25Of(inverseDocumentFrequency(matching, total), termFreq, fieldLength, avgFieldLength);
}

/** The inverse document frequency part of `bm25`: the same for every posting of one (term, field) list. */
export function inverseDocumentFrequency(matching: number, total: number): number {
  return Math.log(1 + (total - matching + 0.5) / (matching + 0.5));
}

/** `bm25` from its list's `inverseDocumentFrequency` (the same operations in the same order, so the same bits). */
export function bm25Of(invDocFreq: number, termFreq: number, fieldLength: number, avgFieldLength: number): number {
  return (
    invDocFreq *
    (BM25_D + (termFreq * (BM25_K + 1)) / (termFreq + BM25_K * (1 - BM25_B + (BM25_B * fieldLength) / avgFieldLength)))
  );
}

/** Indexed fields, in scoring order (their index is the field number). */
export const FIELDS = ['title', 'body', 'meta', 'name', 'headings'] as const;
/** The field boosts in FIELDS order (by field number). */
export const FIELD_BOOSTS = FIELDS.map((f) => FIELD_BOOST[f]);

/**
 * The indexed texts of note `id`'s fields, in FIELDS order, from its text: its own title ('' without one), body,
 * front matter tags and aliases, file name without `.md`, section headings (`sectionHeadings`, one per line); and the
 * title a hit shows (`noteTitle`).
 */
export function fieldTexts(text: string, id: string): { texts: string[]; title: string; body: string } {
  const parsed = parseNote(text);
  return {
    texts: [parsed.title ?? '', parsed.body, parsed.meta.join('\n'), noteName(id), parsed.headings],
    // Kept for the life of the view: an own copy, so the title does not keep the note's whole text alive.
    title: ownCopy(noteTitle(parsed, id)),
    body: parsed.body,
  };
}

/**
 * The `cap` ids of `ids` (in lexicographic order of their terms) with the most postings, ties by term — that is,
 * by position — in their order; all of them when there are at most `cap`. Linear: the cap-th largest count splits
 * them, everything above it is kept, and the room left goes to the first ones with exactly that count.
 */
export function keepMostInOrder(ids: readonly number[], cap: number, postingsOf: (id: number) => number): number[] {
  const n = ids.length;
  if (n <= cap) return ids.slice();
  const counts = new Int32Array(n);
  for (let i = 0; i < n; i++) counts[i] = postingsOf(ids[i]!);
  const threshold = counts.slice().sort()[n - cap]!;
  let room = cap;
  for (let i = 0; i < n; i++) if (counts[i]! > threshold) room--;
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const c = counts[i]!;
    if (c > threshold || (c === threshold && room-- > 0)) out.push(ids[i]!);
  }
  return out;
}
