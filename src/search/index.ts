/**
 * The in-memory search index of one caller view (PRODUCT.md §6): MiniSearch (BM25+) over the notes that passed
 * this call's policy and trust checks, and nothing else.
 *
 * Invariant: after `sync(notes)` the index holds exactly `notes` — removed notes are taken out with
 * `MiniSearch.remove` (the original fields are kept for that), never with the lazy `discard`, whose stale postings
 * would still count in document frequencies — so every ranking statistic (document count, document frequency,
 * average field length) is a function of the notes this caller may see in this call only. A denied or untrusted
 * note can therefore never move another note's score, snippet or the `truncated` flag.
 *
 * Ranking: results that match more distinct query terms come first (so a multi-word query lists notes holding
 * all its words before notes holding some), then by BM25+ score (rounded to 12 significant digits so that
 * floating-point summation order, which depends on index history, cannot reorder ties), then by id in ascending
 * UTF-16 code-unit order. Fields: `title` (first heading, boost 2.5), `body` (1), `meta` (front matter title, tags
 * and aliases, 1.5). The last query term also matches as a prefix; terms of 5 or more code points also match at
 * edit distance 1.
 */
import MiniSearch from 'minisearch';
import type { IdentityKey, KnownNotes, ScannedNote } from '../trust/types.js';
import { parseNote } from './markdown.js';
import { countCodePoints, makeSnippet } from './snippet.js';
import { tokenize } from './tokenize.js';

/** Most distinct query terms used (a 500-character query of one-letter words would otherwise fan out widely). */
export const MAX_QUERY_TERMS = 32;
/** Field boosts (title above front matter above body). */
export const FIELD_BOOST = Object.freeze({ title: 2.5, body: 1, meta: 1.5 });
/** Shortest term, in code points, that also matches at edit distance 1. */
export const FUZZY_MIN_CHARS = 5;

const FIELDS = ['title', 'body', 'meta'] as const;

/** What the index keeps per note: its identity key and the fields it was indexed with (needed for `remove`). */
interface Entry {
  key: IdentityKey;
  /** First heading, or undefined. Indexed as '' when undefined (every field is always present). */
  title: string | undefined;
  /** Body without front matter: indexed, and the source of snippets. */
  body: string;
  /** Front matter title/tags/aliases joined by newlines. */
  meta: string;
  /** The last `sync` generation that listed this note. */
  seen: number;
}

/** The document given to MiniSearch (every field always a string, so field statistics count every note). */
export interface Doc {
  id: string;
  title: string;
  body: string;
  meta: string;
}

/** One search hit (the shape of PRODUCT.md §2 results; `title` only when the note has a heading). */
export interface SearchHit {
  id: string;
  title?: string;
  snippet: string;
}

/** The response limits search needs (PRODUCT.md §4 `limits`), in code points. */
export interface ResponseLimits {
  snippet_chars: number;
  total_chars: number;
}

/** One ranked match (before response limits). */
export interface RankedMatch {
  id: string;
  /** Distinct query terms this note matched. */
  coverage: number;
  /** MiniSearch's score (BM25+ × field boosts × matched query terms), rounded to 12 significant digits. */
  score: number;
  /** Document terms that matched (normalized, sorted), for snippets. */
  terms: string[];
}

/** Ranking statistics, for tests and diagnostics. */
export interface IndexStats {
  documentCount: number;
  /** Average field length (distinct terms per field) of title, body and meta, in that order. */
  averageFieldLength: number[];
  /** Distinct terms in the index. */
  termCount: number;
}

/** Postings of one term: field id → (short document id → term frequency). */
type TermData = Map<number, Map<number, number>>;

/**
 * MiniSearch 7.2 private state and methods this module uses. The version is pinned in package.json, and
 * tests/search/index.test.ts checks `addDocument` against MiniSearch's own `add` byte for byte (via `toJSON`), so
 * an upgrade that changes them fails a test instead of corrupting rankings.
 */
interface MiniSearchInternals {
  _documentCount: number;
  _idToShortId: Map<string, number>;
  _fieldLength: Map<number, number[]>;
  _avgFieldLength: number[];
  _fieldIds: Record<string, number>;
  _index: { size: number; fetch(term: string, initial: () => TermData): TermData };
  addDocumentId(id: string): number;
  addFieldLength(shortId: number, fieldId: number, count: number, length: number): void;
}

const newTermData = (): TermData => new Map();

/**
 * Add `doc` to `mini` exactly as `MiniSearch.add` would with `miniSearchOptions()` — same postings, term
 * frequencies, field lengths (distinct terms per field) and insertion order — but faster: term frequencies are
 * counted per field first, and `terms` caches each term's postings so a known term skips the walk down
 * MiniSearch's radix tree. This roughly halves cold indexing CPU time. `MiniSearch.remove` undoes it.
 *
 * `terms` may hold postings that `remove` has since detached from the tree; those are empty (MiniSearch drops a
 * term exactly when its postings become empty) and are refetched.
 *
 * @throws Error on a duplicate id
 */
export function addDocument(mini: MiniSearch<Doc>, doc: Doc, terms: Map<string, TermData>): void {
  const m = mini as unknown as MiniSearchInternals;
  if (m._idToShortId.has(doc.id)) throw new Error('NoteIndex: duplicate id');
  const shortId = m.addDocumentId(doc.id);
  for (const field of FIELDS) {
    const fieldId = m._fieldIds[field]!;
    const freq = new Map<string, number>();
    for (const term of tokenize(doc[field])) freq.set(term, (freq.get(term) ?? 0) + 1);
    m.addFieldLength(shortId, fieldId, m._documentCount - 1, freq.size);
    for (const [term, n] of freq) {
      let data = terms.get(term);
      if (data === undefined || data.size === 0) {
        data = m._index.fetch(term, newTermData);
        terms.set(term, data);
      }
      let postings = data.get(fieldId);
      if (postings === undefined) {
        postings = new Map();
        data.set(fieldId, postings);
      }
      postings.set(shortId, n);
    }
  }
}

/** The MiniSearch options of every NoteIndex (also used by the test that checks `addDocument`). */
export function miniSearchOptions(): ConstructorParameters<typeof MiniSearch<Doc>>[0] {
  return {
    fields: [...FIELDS],
    idField: 'id',
    tokenize: (text) => tokenize(text),
    processTerm: (term) => term,
    // Removal always passes the exact original fields; a warning would mean a bug, and MiniSearch's default
    // logger would print a note id, which is not ours to print.
    logger: () => undefined,
    autoVacuum: false,
  };
}

/** Removals after which detached entries are swept from the term cache. */
const PRUNE_AFTER_REMOVALS = 512;

export class NoteIndex implements KnownNotes {
  private readonly entries = new Map<string, Entry>();
  private readonly mini: MiniSearch<Doc>;
  /** Term → its postings inside `mini` (see `addDocument`). */
  private readonly terms = new Map<string, TermData>();
  private removals = 0;
  private generation = 0;

  constructor() {
    this.mini = new MiniSearch<Doc>(miniSearchOptions());
  }

  /** Number of notes held. */
  get size(): number {
    return this.entries.size;
  }

  /** KnownNotes: true when the index holds verified text for exactly this id and identity key. */
  has(id: string, key: IdentityKey): boolean {
    return this.entries.get(id)?.key === key;
  }

  /**
   * Make the index hold exactly `notes` (the notes of this call's scan, in any order):
   * - ids not in `notes` are removed;
   * - a note with `text` is (re)indexed from that text, replacing any older version;
   * - a note without `text` must already be held under the same key (the scan only omits text when `has` said
   *   so), and is kept as it is.
   *
   * @throws Error when a note without text is not held, or an id repeats (a caller bug; the bridge then drops the
   *   whole index).
   */
  sync(notes: readonly ScannedNote[]): void {
    // Entries seen in this sync carry this generation (cheaper than a Set of ids on the warm path).
    const generation = ++this.generation;
    let marked = 0;
    let changed = false;
    for (const note of notes) {
      const held = this.entries.get(note.id);
      if (held !== undefined && held.seen === generation) throw new Error('NoteIndex.sync: duplicate id');
      marked++;
      if (note.text === undefined) {
        if (held === undefined || held.key !== note.key) throw new Error('NoteIndex.sync: unknown note without text');
        held.seen = generation;
        continue;
      }
      if (held !== undefined) this.removeEntry(note.id, held);
      const parsed = parseNote(note.text);
      const entry: Entry = { key: note.key, title: parsed.title, body: parsed.body, meta: parsed.meta.join('\n'), seen: generation };
      addDocument(this.mini, docOf(note.id, entry), this.terms);
      this.entries.set(note.id, entry);
      changed = true;
    }
    const gone: [string, Entry][] = [];
    if (marked < this.entries.size) {
      for (const [id, entry] of this.entries) if (entry.seen !== generation) gone.push([id, entry]);
    }
    for (const [id, entry] of gone) this.removeEntry(id, entry);
    if (changed || gone.length > 0) this.exactAverages();
    if (this.removals >= PRUNE_AFTER_REMOVALS) {
      for (const [term, data] of this.terms) if (data.size === 0) this.terms.delete(term);
      this.removals = 0;
    }
  }

  /**
   * All matches of `query`, best first (order in the class comment). An empty query after tokenizing matches
   * nothing.
   */
  rank(query: string): RankedMatch[] {
    const terms = [...new Set(tokenize(query))].slice(0, MAX_QUERY_TERMS);
    if (terms.length === 0 || this.entries.size === 0) return [];
    const results = this.mini.search(terms.join(' '), {
      tokenize: (s) => s.split(' '),
      processTerm: (t) => t,
      combineWith: 'OR',
      boost: { ...FIELD_BOOST },
      prefix: (_term, i, all) => i === all.length - 1,
      fuzzy: (term) => (countCodePoints(term) >= FUZZY_MIN_CHARS ? 1 : false),
    });
    const ranked: RankedMatch[] = results.map((r) => ({
      id: String(r.id),
      coverage: r.queryTerms.length,
      score: Number(r.score.toPrecision(12)),
      terms: Object.keys(r.match).sort(),
    }));
    ranked.sort((a, b) => b.coverage - a.coverage || b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return ranked;
  }

  /**
   * Search and apply the response limits of PRODUCT.md §2:
   * - at most `limit` hits; `truncated` when more notes matched;
   * - the sum over hits of code points of id + title + snippet stays ≤ `total_chars`; the first hit that would
   *   exceed it ends the list (later, smaller hits are not pulled forward, so order stays by rank) and sets
   *   `truncated`;
   * - each snippet is at most `snippet_chars` code points (clipping a snippet alone never sets `truncated`).
   * Hits carry `title` only when the note has a heading.
   */
  search(query: string, limit: number, limits: ResponseLimits): { hits: SearchHit[]; truncated: boolean } {
    const hits: SearchHit[] = [];
    let used = 0;
    for (const match of this.rank(query)) {
      if (hits.length >= limit) return { hits, truncated: true };
      const entry = this.entries.get(match.id)!;
      const snippet = makeSnippet(entry.body, new Set(match.terms), limits.snippet_chars);
      const cost = countCodePoints(match.id) + (entry.title === undefined ? 0 : countCodePoints(entry.title)) + countCodePoints(snippet);
      if (used + cost > limits.total_chars) return { hits, truncated: true };
      used += cost;
      hits.push(entry.title === undefined ? { id: match.id, snippet } : { id: match.id, title: entry.title, snippet });
    }
    return { hits, truncated: false };
  }

  /** Current ranking statistics. */
  stats(): IndexStats {
    const m = this.mini as unknown as MiniSearchInternals;
    return {
      documentCount: m._documentCount,
      averageFieldLength: FIELDS.map((f) => m._avgFieldLength[m._fieldIds[f]!] ?? 0),
      termCount: m._index.size,
    };
  }

  private removeEntry(id: string, entry: Entry): void {
    this.mini.remove(docOf(id, entry));
    this.entries.delete(id);
    this.removals++;
  }

  /**
   * MiniSearch keeps average field lengths as a running mean, so after removals they carry rounding error that
   * depends on the order of past additions and removals. Recompute them as (exact integer sum) / count so they
   * depend on the current set of notes only.
   */
  private exactAverages(): void {
    const m = this.mini as unknown as MiniSearchInternals;
    const sums = new Array<number>(FIELDS.length).fill(0);
    for (const lengths of m._fieldLength.values()) {
      for (let f = 0; f < FIELDS.length; f++) sums[f]! += lengths[f] ?? 0;
    }
    const count = m._documentCount;
    for (let f = 0; f < FIELDS.length; f++) m._avgFieldLength[f] = count === 0 ? 0 : sums[f]! / count;
  }
}

function docOf(id: string, entry: Entry): Doc {
  return { id, title: entry.title ?? '', body: entry.body, meta: entry.meta };
}
