/**
 * The in-memory search index of one caller view (docs/DESIGN.md, "The search index"): BM25+ over the notes that
 * passed this call's policy and trust checks, and nothing else. Written for this project; no search library.
 *
 * This module is the face of the folder src/search/index/, one module per structure:
 * - scoring.ts: the fields and their boosts, BM25+, the caps and order of prefix and typo expansions (the ranking
 *   rules; also what the first call's ranking straight from texts, src/search/cold.ts, uses);
 * - postings.ts: one (term, field) list of packed (note number, term frequency) pairs, and the batch write;
 * - term-dictionary.ts: the terms in lexicographic order, for prefix ranges and typo neighbourhoods;
 * - term-lists.ts: the term side (interned terms, their lists, the dictionary, staged postings);
 * - synced.ts: the held notes and `sync`, which keeps them equal to one call's notes (the invariant);
 * - built.ts: the transfer form the cold thread builds (`BuiltIndex`, `IndexBuilder`);
 * - note-index.ts: `NoteIndex`, the query side (`rank`, `search`, `recent`, narrowed selections).
 */
export { type BuiltIndex, builtBuffers, IndexBuilder, type TextFacts } from './index/built.js';
export { NoteIndex } from './index/note-index.js';
export { MAX_NOTE_NUMBERS, Postings } from './index/postings.js';
export {
  bm25,
  bm25Of,
  FIELD_BOOST,
  FIELDS,
  fieldTexts,
  inverseDocumentFrequency,
  keepMostInOrder,
  MAX_QUERY_TERMS,
  PREFIX_FULL_CHARS,
  PREFIX_MAX_TERMS,
  PREFIX_SHORT_MAX_TERMS,
  prefixCap,
} from './index/scoring.js';
export { oneEditApart, TermDictionary } from './index/term-dictionary.js';
export { FUZZY_MIN_CHARS, FUZZY_WEIGHT, HIT_MAX_TERMS, PREFIX_WEIGHT, TYPO_MAX_TERMS } from './select.js';
export type { IndexStats, NoteFacts, NoteScope, RankedMatch, RankWork, ResponseLimits, SearchHit } from './types.js';
