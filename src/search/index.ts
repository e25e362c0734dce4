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
 * and aliases, 1.5). The last query term also matches as a prefix (a last term under PREFIX_FULL_CHARS code points
 * expands to at most PREFIX_SHORT_MAX_TERMS terms, see `rank`); terms of 5 or more code points also match at edit
 * distance 1.
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
/** A last query term of at least this many code points expands to every indexed term it prefixes. */
export const PREFIX_FULL_CHARS = 3;
/** Most prefix expansions of a shorter last term (those with the most postings; see `NoteIndex.rank`). */
export const PREFIX_SHORT_MAX_TERMS = 64;
/** MiniSearch 7.2 defaults: weights of prefix and typo expansions, and the BM25+ parameters. */
export const PREFIX_WEIGHT = 0.375;
export const FUZZY_WEIGHT = 0.45;
const BM25_K = 1.2;
const BM25_B = 0.7;
const BM25_D = 0.5;

/** BM25+ of one term in one field of one document, the same expression MiniSearch 7.2 evaluates. */
export function bm25(termFreq: number, matching: number, total: number, fieldLength: number, avgFieldLength: number): number {
  const invDocFreq = Math.log(1 + (total - matching + 0.5) / (matching + 0.5));
  return invDocFreq * (BM25_D + (termFreq * (BM25_K + 1)) / (termFreq + BM25_K * (1 - BM25_B + (BM25_B * fieldLength) / avgFieldLength)));
}


/** Indexed fields, in the order MiniSearch assigns their field ids (0, 1, 2) and scores them. */
export const FIELDS = ['title', 'body', 'meta'] as const;

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
  /** Size of the note file in bytes when it was indexed (for the cache's byte bound). */
  bytes: number;
  /** False once removed from the index (so a positional memo of the last sync can never revive it). */
  live: boolean;
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
type TermData = Map<number, Postings>;

/**
 * Postings of one term in one field: short document ids with their term frequencies, in two parallel arrays,
 * ids ascending. Stands in for the `Map<number, number>` MiniSearch 7.2 keeps there and implements every part of
 * it that MiniSearch uses (`size`, `get`, `has`, `set`, `delete`, `keys`, `entries`, iteration, `forEach`), with the
 * same iteration order: MiniSearch never reuses a short id and a note's postings are added when it is added, so
 * insertion order is ascending id order. About a third of a Map's memory per posting, and cheaper to build.
 */
export class Postings {
  private readonly ids: number[] = [];
  private readonly tfs: number[] = [];

  get size(): number {
    return this.ids.length;
  }

  /** Index of `id`, or -(insertion point) - 1 when absent. */
  private find(id: number): number {
    const ids = this.ids;
    let lo = 0;
    let hi = ids.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const at = ids[mid]!;
      if (at === id) return mid;
      if (at < id) lo = mid + 1;
      else hi = mid - 1;
    }
    return -lo - 1;
  }

  get(id: number): number | undefined {
    const i = this.find(id);
    return i >= 0 ? this.tfs[i] : undefined;
  }

  has(id: number): boolean {
    return this.find(id) >= 0;
  }

  set(id: number, tf: number): this {
    const n = this.ids.length;
    if (n === 0 || id > this.ids[n - 1]!) {
      this.ids.push(id);
      this.tfs.push(tf);
      return this;
    }
    const i = this.find(id);
    if (i >= 0) {
      this.tfs[i] = tf;
    } else {
      this.ids.splice(-i - 1, 0, id);
      this.tfs.splice(-i - 1, 0, tf);
    }
    return this;
  }

  delete(id: number): boolean {
    const i = this.find(id);
    if (i < 0) return false;
    this.ids.splice(i, 1);
    this.tfs.splice(i, 1);
    return true;
  }

  /** Calls `fn(tf, id)` for each posting in order (on a snapshot, like the iterators). */
  forEach(fn: (tf: number, id: number, self: this) => void): void {
    const ids = this.ids.slice();
    const tfs = this.tfs.slice();
    for (let i = 0; i < ids.length; i++) fn(tfs[i]!, ids[i]!, this);
  }

  /** Ids in order (a snapshot: removing during iteration, as MiniSearch's lazy cleanup may, is safe). */
  keys(): IterableIterator<number> {
    return this.ids.slice()[Symbol.iterator]();
  }

  entries(): IterableIterator<[number, number]> {
    const tfs = this.tfs;
    return this.ids.map((id, i): [number, number] => [id, tfs[i]!])[Symbol.iterator]();
  }

  [Symbol.iterator](): IterableIterator<[number, number]> {
    return this.entries();
  }

  /** Scoring loop without iterator objects: calls `fn(id, tf)` for each posting in order. */
  each(fn: (id: number, tf: number) => void): void {
    const { ids, tfs } = this;
    for (let i = 0; i < ids.length; i++) fn(ids[i]!, tfs[i]!);
  }
}

/**
 * MiniSearch 7.2 private state and methods this module uses. The version is pinned in package.json, and
 * tests/search/index.test.ts checks `addDocument` against MiniSearch's own `add` byte for byte (via `toJSON`), so
 * an upgrade that changes them fails a test instead of corrupting rankings.
 */
interface MiniSearchInternals {
  _documentCount: number;
  _nextId: number;
  _documentIds: Map<number, string>;
  _idToShortId: Map<string, number>;
  _fieldLength: Map<number, number[]>;
  _avgFieldLength: number[];
  _fieldIds: Record<string, number>;
  _index: {
    size: number;
    fetch(term: string, initial: () => TermData): TermData;
    get(term: string): TermData | undefined;
    delete(term: string): void;
    atPrefix(prefix: string): Iterable<[string, TermData]>;
    fuzzyGet(term: string, maxDistance: number): Map<string, [TermData, number]>;
  };
  addDocumentId(id: string): number;
  addFieldLength(shortId: number, fieldId: number, count: number, length: number): void;
  removeFieldLength(shortId: number, fieldId: number, count: number, length: number): void;
  _storedFields: Map<number, unknown>;
}

const newTermData = (): TermData => new Map();

/**
 * What `addDocument` caches per term: the term's postings inside MiniSearch (may be detached by a removal; then
 * empty and refetched) and a scratch count for the field being added (`stamp` says which field pass it is for).
 */
export interface TermSlot {
  term: string;
  data: TermData | undefined;
  stamp: number;
  count: number;
}

/** Field passes of `addDocument` so far (process-wide; only equality with a slot's stamp matters). */
let passes = 0;

/**
 * Add `doc` to `mini` exactly as `MiniSearch.add` would with `miniSearchOptions()` — same postings, term
 * frequencies, field lengths (distinct terms per field) and insertion order (terms in order of first
 * occurrence) — but faster: each token costs one lookup in `terms`, which counts frequencies in place and caches
 * the term's postings so a known term skips the walk down MiniSearch's radix tree. `MiniSearch.remove` undoes it.
 *
 * `terms` may hold postings that `remove` has since detached from the tree; those are empty (MiniSearch drops a
 * term exactly when its postings become empty) and are refetched.
 *
 * @throws Error on a duplicate id
 */
export function addDocument(mini: MiniSearch<Doc>, doc: Doc, terms: Map<string, TermSlot>): void {
  const m = mini as unknown as MiniSearchInternals;
  if (m._idToShortId.has(doc.id)) throw new Error('NoteIndex: duplicate id');
  const shortId = m.addDocumentId(doc.id);
  for (const field of FIELDS) {
    const fieldId = m._fieldIds[field]!;
    const stamp = ++passes;
    const distinct: TermSlot[] = [];
    for (const term of tokenize(doc[field])) {
      let slot = terms.get(term);
      if (slot === undefined) {
        slot = { term, data: undefined, stamp: 0, count: 0 };
        terms.set(term, slot);
      }
      if (slot.stamp !== stamp) {
        slot.stamp = stamp;
        slot.count = 1;
        distinct.push(slot);
      } else {
        slot.count++;
      }
    }
    m.addFieldLength(shortId, fieldId, m._documentCount - 1, distinct.length);
    for (const slot of distinct) {
      let data = slot.data;
      if (data === undefined || data.size === 0) {
        data = m._index.fetch(slot.term, newTermData);
        slot.data = data;
      }
      let postings = data.get(fieldId);
      if (postings === undefined) {
        postings = new Postings();
        data.set(fieldId, postings);
      }
      postings.set(shortId, slot.count);
    }
  }
}

/**
 * Remove `doc` (with exactly the fields it was added with) from `mini`, leaving the same state `MiniSearch.remove`
 * leaves — postings, emptied field entries and terms dropped from the tree, document bookkeeping, running field
 * averages — but with one lookup in `terms` per token and one postings update per distinct term, instead of a walk
 * down the radix tree for every token. When a term of `doc` is not cached (which `addDocument` makes impossible),
 * it falls back to `MiniSearch.remove` before changing anything.
 *
 * @throws Error when `doc.id` is not in the index
 */
export function removeDocument(mini: MiniSearch<Doc>, doc: Doc, terms: Map<string, TermSlot>): void {
  const m = mini as unknown as MiniSearchInternals;
  const shortId = m._idToShortId.get(doc.id);
  if (shortId === undefined) throw new Error('NoteIndex: removing an unknown id');
  const perField: TermSlot[][] = [];
  for (const field of FIELDS) {
    const fieldId = m._fieldIds[field]!;
    const stamp = ++passes;
    const distinct: TermSlot[] = [];
    for (const term of tokenize(doc[field])) {
      const slot = terms.get(term);
      if (slot === undefined || slot.data?.get(fieldId)?.has(shortId) !== true) {
        mini.remove(doc);
        return;
      }
      if (slot.stamp !== stamp) {
        slot.stamp = stamp;
        distinct.push(slot);
      }
    }
    perField.push(distinct);
  }
  for (let f = 0; f < FIELDS.length; f++) {
    const fieldId = m._fieldIds[FIELDS[f]!]!;
    const distinct = perField[f]!;
    m.removeFieldLength(shortId, fieldId, m._documentCount, distinct.length);
    for (const slot of distinct) {
      const data = slot.data!;
      const postings = data.get(fieldId)!;
      if (postings.size <= 1) data.delete(fieldId);
      else postings.delete(shortId);
      if (data.size === 0) m._index.delete(slot.term);
    }
  }
  m._storedFields.delete(shortId);
  m._documentIds.delete(shortId);
  m._idToShortId.delete(doc.id);
  m._fieldLength.delete(shortId);
  m._documentCount -= 1;
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
  /** Term → its postings inside `mini` and scratch counts (see `addDocument`). */
  private readonly terms = new Map<string, TermSlot>();
  private removals = 0;
  private generation = 0;
  private heldBytes = 0;
  /** Ranking scratch, indexed by MiniSearch short document id; all zero between calls. */
  private total = new Float64Array(0);
  private termScore = new Float64Array(0);
  private cover = new Uint8Array(0);
  private termMark = new Uint8Array(0);
  /**
   * The notes of the last `sync` and the entry each one ended up in, by position. The scan hands back the very same
   * ScannedNote object for a note it found unchanged and known, call after call and in the same order, so on the
   * warm path `sync` recognises a note by object identity at the same position instead of a Map lookup by id.
   */
  private lastNotes: (ScannedNote | undefined)[] = [];
  private lastEntries: (Entry | undefined)[] = [];

  constructor() {
    this.mini = new MiniSearch<Doc>(miniSearchOptions());
  }

  /** Number of notes held. */
  get size(): number {
    return this.entries.size;
  }

  /** Summed file size, in bytes, of the notes held (what the per-view cache bounds; see tools/search.ts). */
  get bytes(): number {
    return this.heldBytes;
  }

  /** KnownNotes: true when the index holds verified text for exactly this id and identity key. */
  has(id: string, key: IdentityKey): boolean {
    const held = this.entries.get(id);
    if (held === undefined || held.key !== key) return false;
    // Keep the caller's string: the scan passes the same key object for an unchanged note on every call, so the
    // next comparison is a pointer check instead of a character compare.
    held.key = key;
    return true;
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
    const lastNotes = this.lastNotes;
    const lastEntries = this.lastEntries;
    // Only notes without text are remembered (a note read in this call comes back as a new object next time, and
    // its text must not be kept alive by the memo).
    const nowNotes = new Array<ScannedNote | undefined>(notes.length);
    const nowEntries = new Array<Entry | undefined>(notes.length);
    for (let i = 0; i < notes.length; i++) {
      const note = notes[i]!;
      // Same object at the same position as last time: the entry it was matched with, unless since removed (a
      // live entry is the one `entries` maps its id to, since an id is removed before it is added again).
      let held: Entry | undefined;
      if (note.text === undefined && lastNotes[i] === note) {
        held = lastEntries[i];
        if (held !== undefined && !held.live) held = undefined;
      }
      held ??= this.entries.get(note.id);
      if (held !== undefined && held.seen === generation) throw new Error('NoteIndex.sync: duplicate id');
      marked++;
      if (note.text === undefined) {
        if (held === undefined || held.key !== note.key) throw new Error('NoteIndex.sync: unknown note without text');
        held.seen = generation;
        nowNotes[i] = note;
        nowEntries[i] = held;
        continue;
      }
      if (held !== undefined) this.removeEntry(note.id, held);
      const parsed = parseNote(note.text);
      const bytes = note.stat.size;
      const entry: Entry = {
        key: note.key,
        title: parsed.title,
        body: parsed.body,
        meta: parsed.meta.join('\n'),
        seen: generation,
        bytes,
        live: true,
      };
      addDocument(this.mini, docOf(note.id, entry), this.terms);
      this.entries.set(note.id, entry);
      this.heldBytes += bytes;
      changed = true;
    }
    this.lastNotes = nowNotes;
    this.lastEntries = nowEntries;
    const gone: [string, Entry][] = [];
    if (marked < this.entries.size) {
      for (const [id, entry] of this.entries) if (entry.seen !== generation) gone.push([id, entry]);
    }
    for (const [id, entry] of gone) this.removeEntry(id, entry);
    if (changed || gone.length > 0) this.exactAverages();
    if (this.removals >= PRUNE_AFTER_REMOVALS) {
      for (const [term, slot] of this.terms) if (slot.data === undefined || slot.data.size === 0) this.terms.delete(term);
      this.removals = 0;
    }
  }

  /**
   * The best `max` matches of `query`, best first (order in the class comment; all matches when `max` is omitted).
   * An empty query after tokenizing matches nothing.
   *
   * Scores equal MiniSearch's `search` with this module's options to the last bit (see `rankByMiniSearch`, which
   * tests compare against): the same postings are visited, each contribution is computed with the same
   * floating-point expression, and contributions are added per document in the same order (query term by query
   * term; within one, the exact term, then prefix expansions in tree order, then typo expansions, each field in
   * title, body, meta order). The difference is memory: scores accumulate in typed arrays indexed by MiniSearch's
   * short document id instead of one result object with a `match` map per matching note, and only the best
   * `max` are turned into `RankedMatch` objects.
   *
   * Bounded prefix expansion (the only departure from plain MiniSearch, deterministic): when the last query term
   * is shorter than PREFIX_FULL_CHARS code points and has more than PREFIX_SHORT_MAX_TERMS prefix expansions, only
   * the PREFIX_SHORT_MAX_TERMS expansions with the most postings (summed over fields; ties by term in ascending
   * UTF-16 order) are used, so a one-letter query does not score every note through thousands of terms. The exact
   * term always counts. Scratch arrays grow with MiniSearch's next short id and are kept zeroed between calls.
   */
  rank(query: string, max = Infinity): RankedMatch[] {
    const terms = [...new Set(tokenize(query))].slice(0, MAX_QUERY_TERMS);
    if (terms.length === 0 || this.entries.size === 0 || max <= 0) return [];
    const m = this.mini as unknown as MiniSearchInternals;
    const size = m._nextId;
    if (this.total.length < size) {
      const cap = Math.max(size, this.total.length * 2, 64);
      this.total = new Float64Array(cap);
      this.termScore = new Float64Array(cap);
      this.cover = new Uint8Array(cap);
      this.termMark = new Uint8Array(cap);
    }
    const { total, termScore, cover, termMark } = this;
    const touched: number[] = [];
    /** Every derived term visited (for the snippet terms of the chosen matches). */
    const derived: [string, TermData][] = [];
    const fieldIds = FIELDS.map((f) => m._fieldIds[f]!);
    const boosts = FIELDS.map((f) => FIELD_BOOST[f]);
    try {
      for (let q = 0; q < terms.length; q++) {
        const term = terms[q]!;
        const termTouched: number[] = [];
        const visit = (weight: number, data: TermData | undefined): void => {
          if (data === undefined) return;
          for (let f = 0; f < FIELDS.length; f++) {
            const fieldId = fieldIds[f]!;
            const freqs = data.get(fieldId);
            if (freqs === undefined) continue;
            const matching = freqs.size;
            const avg = m._avgFieldLength[fieldId]!;
            const scale = weight * boosts[f]!;
            freqs.each((docId, tf) => {
              const fieldLength = m._fieldLength.get(docId)![fieldId]!;
              const raw = bm25(tf, matching, m._documentCount, fieldLength, avg);
              if (termMark[docId] === 0) {
                termMark[docId] = 1;
                termTouched.push(docId);
              }
              termScore[docId] = termScore[docId]! + scale * raw;
            });
          }
        };
        const exact = m._index.get(term);
        if (exact !== undefined) {
          derived.push([term, exact]);
          visit(1, exact);
        }
        const isLast = q === terms.length - 1;
        let prefixTerms: Set<string> | undefined;
        if (isLast) {
          prefixTerms = new Set();
          for (const [t, data] of this.prefixExpansions(term)) {
            prefixTerms.add(t);
            const distance = t.length - term.length;
            derived.push([t, data]);
            visit((PREFIX_WEIGHT * t.length) / (t.length + 0.3 * distance), data);
          }
        }
        if (countCodePoints(term) >= FUZZY_MIN_CHARS) {
          for (const [t, [data, distance]] of m._index.fuzzyGet(term, 1)) {
            if (distance === 0 || prefixTerms?.has(t)) continue;
            derived.push([t, data]);
            visit((FUZZY_WEIGHT * t.length) / (t.length + distance), data);
          }
        }
        for (const docId of termTouched) {
          if (cover[docId] === 0) touched.push(docId);
          total[docId] = total[docId]! + termScore[docId]!;
          cover[docId] = cover[docId]! + 1;
          termScore[docId] = 0;
          termMark[docId] = 0;
        }
      }
      // Best `max` by (coverage desc, rounded score desc, id asc). Rounding to 12 significant digits moves a
      // score by less than 1e-11 of itself, so a note whose raw score is clearly below the current last kept
      // one cannot enter and is skipped without rounding or allocating.
      type Scored = { docId: number; id: string; coverage: number; score: number };
      const order = (a: Scored, b: Scored): number =>
        b.coverage - a.coverage || b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
      const scoredOf = (docId: number): Scored => ({
        docId,
        id: m._documentIds.get(docId)!,
        coverage: cover[docId]!,
        score: Number((total[docId]! * cover[docId]!).toPrecision(12)),
      });
      let best: Scored[];
      if (max >= touched.length || max > 64) {
        best = touched.map(scoredOf).sort(order).slice(0, max);
      } else {
        best = [];
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
      }
      return best.map((s) => ({
        id: s.id,
        coverage: s.coverage,
        score: s.score,
        terms: derived
          .filter(([, data]) => fieldIds.some((f) => data.get(f)?.has(s.docId) === true))
          .map(([t]) => t)
          .filter((t, i, all) => all.indexOf(t) === i)
          .sort(),
      }));
    } finally {
      for (const docId of touched) {
        total[docId] = 0;
        cover[docId] = 0;
      }
      termScore.fill(0);
      termMark.fill(0);
    }
  }

  /**
   * Prefix expansions of the last query term (excluding the term itself), in MiniSearch's tree order, bounded
   * for short terms (see `rank`).
   */
  private prefixExpansions(term: string): [string, TermData][] {
    const m = this.mini as unknown as MiniSearchInternals;
    const all: [string, TermData][] = [];
    for (const [t, data] of m._index.atPrefix(term)) if (t.length !== term.length) all.push([t, data]);
    if (countCodePoints(term) >= PREFIX_FULL_CHARS || all.length <= PREFIX_SHORT_MAX_TERMS) return all;
    const postings = (data: TermData): number => {
      let n = 0;
      for (const freqs of data.values()) n += freqs.size;
      return n;
    };
    const ranked = all.map(([t, data], at) => ({ t, at, n: postings(data) }));
    ranked.sort((a, b) => b.n - a.n || (a.t < b.t ? -1 : a.t > b.t ? 1 : 0));
    const keep = new Set(ranked.slice(0, PREFIX_SHORT_MAX_TERMS).map((r) => r.at));
    return all.filter((_, at) => keep.has(at));
  }

  /**
   * Reference ranking through MiniSearch's own `search` (all matches, every prefix expansion). Slow (one result
   * object per match); kept so tests can prove `rank` equals it.
   */
  rankByMiniSearch(query: string): RankedMatch[] {
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
    for (const match of this.rank(query, limit + 1)) {
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
    removeDocument(this.mini, docOf(id, entry), this.terms);
    entry.live = false;
    this.entries.delete(id);
    this.heldBytes -= entry.bytes;
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
