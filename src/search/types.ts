/**
 * Shapes the search modules share (the index, the first call's ranking, the selection and response bounds), kept
 * apart so that none of them imports another for a type: index.ts and cold.ts both build on select.ts, and
 * select.ts on nothing but these.
 */

/** One search hit (docs/TOOLS.md results). */
export interface SearchHit {
  id: string;
  /** Front matter title, else first level-1 heading, else file name without `.md` (docs/DESIGN.md). */
  title?: string;
  snippet: string;
}

/** The response limits search needs (the policy's `limits`), in code points. */
export interface ResponseLimits {
  snippet_chars: number;
  total_chars: number;
}

/** One ranked match (before response limits). */
export interface RankedMatch {
  id: string;
  /** Distinct query terms this note matched. */
  coverage: number;
  /** BM25+ × field boosts × expansion weights, summed, times coverage, rounded to 12 significant digits. */
  score: number;
  /** Document terms that matched (normalized, sorted; at most HIT_MAX_TERMS), for snippets. */
  terms: string[];
}

/** Ranking statistics, for tests and diagnostics. */
export interface IndexStats {
  documentCount: number;
  /** Average field length (distinct terms per field) of each field, in FIELDS order. */
  averageFieldLength: number[];
  /** Distinct terms held by at least one note. */
  termCount: number;
}

/** Work done by one ranking (see `NoteIndex.lastWork`). */
export interface RankWork {
  /** Postings lists (one term in one field) scored. */
  lists: number;
  /** Postings visited while scoring. */
  postings: number;
  /** Checks of a scored term against a chosen match (for its matched terms). */
  checks: number;
}

/**
 * A narrowing of a view's notes (memory_bridge_search `within`; src/tools/within.ts): the notes of the view whose id
 * the predicate accepts. `key` names the selection (equal keys select the same ids); `matcher()` gives a predicate
 * for one pass over the view's ids (it may keep per-directory answers for that pass).
 */
export interface NoteScope {
  readonly key: string;
  /** `facts` is given by the index (every held note); a scope that reads only ids (`within`) may go without. */
  matcher(): (id: string, facts?: NoteFacts) => boolean;
}

/**
 * What the index keeps per note for the search filters (memory_bridge_search `tags`, `modified_after`,
 * `modified_before`, `sort`; docs/TOOLS.md §Filters), computed once when the note is indexed.
 */
export interface NoteFacts {
  /** Modification time from the statx the trust check made, in milliseconds since 1970-01-01T00:00:00Z. */
  readonly mtimeMs: number;
  /** The note's tags (src/search/tags.ts `noteTags`: lowercased, parents included, sorted), or undefined: none. */
  readonly tags: readonly string[] | undefined;
}
