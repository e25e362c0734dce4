/**
 * The in-memory search index of one caller view (docs/DESIGN.md, "The search index"): BM25+ over the notes that
 * passed this call's policy and trust checks, and nothing else. Written for this project; no search library.
 *
 * Invariant: after `sync(notes)` the index holds exactly `notes` — a removed note's postings are deleted at once —
 * so every ranking statistic (note count, document frequency, average field length) is a function of the notes this
 * caller may see in this call only, and none depends on the history of syncs. A denied or untrusted note can
 * therefore never move another note's score, snippet or the `truncated` flag.
 *
 * Ranking: results that match more distinct query terms come first (so a multi-word query lists notes holding all its
 * words before notes holding some), then by score (rounded to 12 significant digits), then by id in ascending UTF-16
 * code-unit order. Score: per query term, BM25+ (k1 1.2, b 0.7, δ 0.5) of each field it occurs in, times the field's
 * boost — `title` (the note's own title: front matter `title` or first level-1 heading, 2.5), `body` (1), `meta` (front
 * matter tags and aliases, 1.5), `name` (the file name without `.md`, 2.5) and `headings` (every section heading, any
 * level, 1.5; docs/DESIGN.md "Titles and file names") — summed, then the sum over query terms times the number of query
 * terms matched. Every query term also matches as a prefix (weight 0.375 × len / (len + 0.3 × extra length); at most
 * PREFIX_SHORT_MAX_TERMS expansions per term under PREFIX_FULL_CHARS code points, PREFIX_MAX_TERMS otherwise); terms of
 * 5 or more code points also match terms one edit away (weight 0.45 × len / (len + 1); at most TYPO_MAX_TERMS).
 * Expansions are taken in lexicographic (UTF-16) order, which fixes the floating-point summation order, so equal inputs
 * give equal bits. These are the weights and parameters MiniSearch 7.2 used here before; tests hold the ranking to
 * MiniSearch's on real vaults.
 *
 * Storage (docs/DESIGN.md): terms are interned as ids (`TermTable`); each (term, field) has one `Postings` list of
 * (note number, term frequency) pairs in one Int32Array, note numbers ascending; field lengths live in one
 * Int32Array; a sorted array of term ids serves prefix ranges and typo neighbourhoods. Note texts are kept outside
 * the JavaScript heap in a `TextStore` and decoded only for the notes a search returns or a sync removes.
 */
import { carriesText, textBytesOf } from '../trust/note-text.js';
import type { IdentityKey, KnownNotes, ScannedNote } from '../trust/types.js';
import { noteName, noteTitle, parseNote } from './markdown.js';
import { noteTags } from './tags.js';
import { ownCopy } from '../text/own-copy.js';
import {
  bestMatches,
  boundedHits,
  matchedTerms,
  ScoreSheet,
  scoreQuery,
  TYPO_MAX_TERMS,
  type Scored,
  type TermSource,
} from './select.js';
import { countCodePoints, MAX_ANCHOR_SCAN } from './snippet.js';
import { TextStore } from './store.js';
import { TermTable, type TermTableState, termStateBuffers } from './terms.js';
import { tokenize } from './tokenize.js';
import type { IndexStats, NoteScope, RankedMatch, RankWork, ResponseLimits, SearchHit } from './types.js';

export { FUZZY_MIN_CHARS, FUZZY_WEIGHT, HIT_MAX_TERMS, PREFIX_WEIGHT, TYPO_MAX_TERMS } from './select.js';
export type { IndexStats, NoteFacts, NoteScope, RankedMatch, RankWork, ResponseLimits, SearchHit } from './types.js';

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
const F = FIELDS.length;
const BOOSTS = FIELDS.map((f) => FIELD_BOOST[f]);

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

/** Bits of a posting that hold the term frequency (the rest hold the note number). */
const TF_BITS = 10;
/** Largest term frequency a posting holds itself; this and larger ones are kept beside the list (`Postings.big`). */
const TF_MASK = (1 << TF_BITS) - 1;
/**
 * Note numbers a posting can hold (2^21). An index holds at most max_entries notes (ceiling 500,000) and renumbers
 * its notes when fewer than half of the numbers in use are live (`compactDocs`), so one sync starts below
 * 2 × 500,000 and adds at most 500,000 more.
 */
export const MAX_NOTE_NUMBERS = 1 << (31 - TF_BITS);

/** One posting: note number `doc` in the high bits, the term frequency (at most TF_MASK) in the low TF_BITS. */
function packed(doc: number, tf: number): number {
  return (doc << TF_BITS) | Math.min(tf, TF_MASK);
}

/**
 * Postings of one term in one field: note numbers ascending, each with its term frequency, one int32 per posting
 * (`packed`; a frequency of TF_MASK or more is kept in `big`, which real notes almost never need). A typed array
 * because the index lives long and everything it allocates survives: a typed array's backing store lives outside
 * the collected heap and is never copied by the young-generation collector, and a posting takes 4 bytes. Lists
 * written by a bulk build are views of one shared buffer (`adopt`) or grown to their exact size; a later growth
 * moves a list to a buffer of its own.
 */
export class Postings {
  /** Postings; the first `size` entries are in use. */
  private buf: Int32Array = EMPTY;
  private n = 0;
  /** Term frequencies of TF_MASK or more, by note number. */
  private big: Map<number, number> | undefined = undefined;

  get size(): number {
    return this.n;
  }

  /** Bytes this list holds (its buffer's length in use or reserved, plus its objects). */
  get memoryBytes(): number {
    return this.buf.length * 4 + POSTINGS_OBJECT_BYTES + (this.big === undefined ? 0 : this.big.size * 40);
  }

  /** Index of note number `doc`, or -1. */
  private find(doc: number): number {
    const buf = this.buf;
    let lo = 0;
    let hi = this.n - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const at = buf[mid]! >> TF_BITS;
      if (at === doc) return mid;
      if (at < doc) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  has(doc: number): boolean {
    return this.find(doc) >= 0;
  }

  /**
   * Remove the postings of every note number `doc` with `dead[doc] === 1`, in one pass over the list (the others
   * keep their order). Cost: the list's length, however many notes go.
   *
   * @returns how many postings were removed
   */
  dropDead(dead: Uint8Array): number {
    const buf = this.buf;
    const n = this.n;
    let w = 0;
    for (let r = 0; r < n; r++) {
      const p = buf[r]!;
      if (dead[p >> TF_BITS] === 1) {
        if ((p & TF_MASK) === TF_MASK) this.big?.delete(p >> TF_BITS);
        continue;
      }
      if (w !== r) buf[w] = p;
      w++;
    }
    this.n = w;
    return n - w;
  }

  /**
   * Make room for `more` postings after the held ones and return the buffer: the caller writes them (`packed`) from
   * index `size` on (numbers ascending and above every held one; not checked), then calls `commit(more)`. Without
   * `exact`, a non-empty list grows by half at least, so repeated small batches cost amortized O(1) per posting;
   * with it (a bulk build, which writes each list once per batch), to exactly the size needed.
   */
  reserve(more: number, exact = false): Int32Array {
    const used = this.n;
    const need = used + more;
    if (need > this.buf.length) {
      const buf = new Int32Array(
        used === 0 || exact ? need : Math.max(need, this.buf.length + (this.buf.length >>> 1) + 1),
      );
      buf.set(this.buf.subarray(0, used));
      this.buf = buf;
    }
    return this.buf;
  }

  /** Count `more` postings written after the held ones into the buffer `reserve` returned. */
  commit(more: number): void {
    this.n += more;
  }

  /** Take `postings` (`count` of them, numbers ascending) as the whole list of this empty Postings. */
  adopt(postings: Int32Array, count: number): void {
    this.buf = postings;
    this.n = count;
  }

  /** Copy the postings to `arena` from index `at` on, and keep them there (a view, exactly their size). */
  moveTo(arena: Int32Array, at: number): void {
    arena.set(this.buf.subarray(0, this.n), at);
    this.buf = arena.subarray(at, at + this.n);
  }

  /** The postings in use (a view of the list's buffer). */
  view(): Int32Array {
    return this.buf.subarray(0, this.n);
  }

  /** Term frequencies of TF_MASK or more, as [note number, frequency] pairs (usually none). */
  bigEntries(): [number, number][] {
    return this.big === undefined ? [] : [...this.big];
  }

  /** Keep term frequency `tf` (TF_MASK or more) of note number `doc`, whose posting holds TF_MASK. */
  keepBig(doc: number, tf: number): void {
    this.big ??= new Map();
    this.big.set(doc, tf);
  }

  /** Note number and term frequency of the `i`-th posting. */
  docAt(i: number): number {
    return this.buf[i]! >> TF_BITS;
  }
  tfAt(i: number): number {
    const tf = this.buf[i]! & TF_MASK;
    return tf !== TF_MASK ? tf : this.big!.get(this.buf[i]! >> TF_BITS)!;
  }

  /** Rewrite every note number through `map` (which must keep their order). */
  renumber(map: Int32Array): void {
    const buf = this.buf;
    for (let i = 0; i < this.n; i++) buf[i] = (map[buf[i]! >> TF_BITS]! << TF_BITS) | (buf[i]! & TF_MASK);
    if (this.big !== undefined) this.big = new Map(Array.from(this.big, ([doc, tf]) => [map[doc]!, tf]));
  }
}

/** Heap bytes of one list's objects (the Postings and its typed array view), for `memoryBytes`. */
const POSTINGS_OBJECT_BYTES = 112;

/** The shared empty buffer of a Postings without any posting yet. */
const EMPTY = new Int32Array(0);

/** What the index keeps per note. */
interface Entry {
  key: IdentityKey;
  /** Note number (its place in the per-note arrays and in postings). */
  doc: number;
  /** Title shown in hits (`noteTitle`: own title, else file name). */
  title: string;
  /** Handle of the note's text in the store (decoded for snippets and removal), with where its body starts. */
  text: number;
  /** Size of the note file in bytes when it was indexed (for the cache's byte bound). */
  bytes: number;
  /** Modification time (ms since the epoch) from the scan's statx (NoteFacts). */
  mtimeMs: number;
  /** The note's tags (`noteTags`), or undefined: none (NoteFacts). */
  tags: readonly string[] | undefined;
}

/**
 * Heap bytes per held note besides its text and postings, for `memoryBytes`: the entry object, its slot in the
 * id-keyed Map, the title string, and its places in the per-note arrays (a heap snapshot at 10,000 generated notes
 * shows about 190).
 */
const NOTE_BYTES = 200;
/** Heap bytes per interned term: its string and bytes in the TermTable (about 50 for a short term) and its slots. */
const TERM_BYTES = 80;

/**
 * Most postings staged before they are written (8 bytes each, so at most 32 MiB, released after the sync): enough
 * for the whole cold build of 10,000 notes (about 2 million postings) to write each list once, at its exact size, in
 * one shared buffer; a larger build writes in batches of this many, each list grown to its exact size per batch.
 */
const MAX_PENDING = 1 << 22;
/** New terms per note that `sync` makes room for before indexing new notes (a guess; arrays grow past it). */
const NEW_TERMS_PER_NOTE = 8;
/**
 * Notes removed or replaced in one sync above which their postings are taken out by one pass over every list instead
 * of finding each note's lists from its text (`dropRemoved`): a note's lists include those of the vault's commonest
 * words, so the lists a few dozen notes touch are already most of the postings, and finding them costs decoding and
 * tokenizing each text again (measured at 10,000 generated notes: 25 notes by their texts 60 ms, 111 notes by one
 * pass 26 ms).
 */
const BULK_REMOVAL_NOTES = 16;
/** Most narrowed selections (`NoteIndex.subsetOf`) kept between syncs that change nothing. */
const MAX_SUBSETS = 4;

/**
 * The held notes a `NoteScope` selects, over the index's note numbers as they are between two syncs that change
 * something (`NoteIndex.subsetOf`): membership, how many, and their field length sums (FIELDS order).
 */
interface Subset {
  member: Uint8Array;
  count: number;
  lengthSum: number[];
  /** Selected postings of the (term, field) lists rankings have reached, by slot (at most MAX_SUBSET_SLOTS). */
  selected: Map<number, number>;
}

/** Most list counts a selection keeps (then it starts over; 16 bytes or so each). */
const MAX_SUBSET_SLOTS = 1 << 16;

/** Most terms added since the last sort of the dictionary, searched by a scan meanwhile (see `TermDictionary`). */
const RECENT_MAX = 1024;

/**
 * The terms of an index in lexicographic (UTF-16) order, for prefix ranges and typo neighbourhoods: a sorted array
 * of term ids, plus the ids added since it was last sorted (`recent`, at most RECENT_MAX before they are merged in,
 * so a sync that brings a few new terms does not sort the whole vocabulary, and a reader scans at most RECENT_MAX).
 * Terms whose last posting went away stay until the next merge, and readers skip them (`isLive`).
 */
export class TermDictionary {
  sorted = new Int32Array(0);
  recent: number[] = [];

  constructor(
    private readonly termOf: (id: number) => string,
    private readonly isLive: (id: number) => boolean,
  ) {}

  add(id: number): void {
    this.recent.push(id);
  }

  /**
   * Merge `recent` into `sorted` once it holds more than RECENT_MAX ids (or always, with `force`), dropping dead
   * terms and telling `dropped` about each.
   */
  settle(dropped: (id: number) => void, force = false): void {
    if (!force && this.recent.length <= RECENT_MAX) return;
    const termOf = this.termOf;
    const fresh: number[] = [];
    for (const id of this.recent) {
      if (this.isLive(id)) fresh.push(id);
      else dropped(id);
    }
    const keys = fresh.map(termOf);
    const order = fresh.map((_, i) => i).sort((a, b) => (keys[a]! < keys[b]! ? -1 : keys[a]! > keys[b]! ? 1 : 0));
    const merged = new Int32Array(this.sorted.length + fresh.length);
    let n = 0;
    let j = 0;
    for (let i = 0; i < this.sorted.length; i++) {
      const id = this.sorted[i]!;
      if (!this.isLive(id)) {
        dropped(id);
        continue;
      }
      const t = termOf(id);
      while (j < order.length && keys[order[j]!]! < t) merged[n++] = fresh[order[j++]!]!;
      merged[n++] = id;
    }
    while (j < order.length) merged[n++] = fresh[order[j++]!]!;
    this.sorted = merged.slice(0, n);
    this.recent = [];
  }

  /** Index in `sorted` of the first term ≥ `key`. */
  private lowerBound(key: string): number {
    const { sorted, termOf } = this;
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (termOf(sorted[mid]!) < key) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /**
   * Live terms that start with `prefix` and are longer, in lexicographic order. They are one run of `sorted`, found
   * by two binary searches; cost log n + the run's length (no string work per term), plus a scan of `recent`.
   */
  extending(prefix: string): number[] {
    const { sorted, termOf, isLive } = this;
    let lo = this.lowerBound(prefix);
    if (lo < sorted.length && termOf(sorted[lo]!).length === prefix.length && termOf(sorted[lo]!) === prefix) lo++;
    // First index past the run: terms starting with `prefix` are contiguous, so `startsWith` is monotone on it.
    let hi = sorted.length;
    let from = lo;
    while (from < hi) {
      const mid = (from + hi) >>> 1;
      if (termOf(sorted[mid]!).startsWith(prefix)) from = mid + 1;
      else hi = mid;
    }
    const out: number[] = [];
    for (let i = lo; i < hi; i++) {
      const id = sorted[i]!;
      if (isLive(id)) out.push(id);
    }
    const recent = this.recent.filter((id) => {
      const t = termOf(id);
      return t.length > prefix.length && t.startsWith(prefix) && isLive(id);
    });
    return recent.length === 0 ? out : mergeByTerm(out, recent, termOf);
  }

  /**
   * Live terms at edit distance exactly 1 from `term` (one insertion, deletion or substitution of a UTF-16 code
   * unit), in lexicographic order. Each candidate is looked up by its spelling (`find`): deletions directly; for
   * substitutions and insertions at position i, the code units that follow term[0 .. i) in the sorted terms are
   * stepped through by binary search, one step per distinct unit. Cost: O(Σ_i distinct units after term[0 .. i) ×
   * log n), bounded by the view's alphabet, plus a scan of `recent`.
   */
  oneEditFrom(term: string, find: (t: string) => number): number[] {
    const { sorted, termOf, isLive } = this;
    const found = new Set<number>();
    const take = (t: string): void => {
      const id = find(t);
      if (id >= 0 && isLive(id)) found.add(id);
    };
    const L = term.length;
    for (let i = 0; i <= L; i++) {
      const head = term.slice(0, i);
      if (i < L) take(head + term.slice(i + 1));
      let at = this.lowerBound(head);
      while (at < sorted.length) {
        const t = termOf(sorted[at]!);
        if (!t.startsWith(head)) break;
        if (t.length === i) {
          at++;
          continue;
        }
        const c = t.charCodeAt(i);
        const unit = String.fromCharCode(c);
        if (i < L && c !== term.charCodeAt(i)) take(head + unit + term.slice(i + 1));
        take(head + unit + term.slice(i));
        if (c === 0xffff) break;
        at = this.lowerBound(head + String.fromCharCode(c + 1));
      }
    }
    for (const id of this.recent) if (isLive(id) && oneEditApart(termOf(id), term)) found.add(id);
    found.delete(find(term));
    return [...found].sort((a, b) => {
      const x = termOf(a);
      const y = termOf(b);
      return x < y ? -1 : x > y ? 1 : 0;
    });
  }

  /** Every id the dictionary holds (sorted and recent), for renumbering. */
  remap(map: Int32Array): void {
    const kept: number[] = [];
    for (const id of this.sorted) if (map[id]! >= 0) kept.push(map[id]!);
    this.sorted = Int32Array.from(kept);
    this.recent = this.recent.filter((id) => map[id]! >= 0).map((id) => map[id]!);
  }
}

/** Merge two id lists each in lexicographic order of their terms. */
function mergeByTerm(a: number[], b: number[], termOf: (id: number) => string): number[] {
  b.sort((x, y) => (termOf(x) < termOf(y) ? -1 : termOf(x) > termOf(y) ? 1 : 0));
  const out: number[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) out.push(termOf(a[i]!) <= termOf(b[j]!) ? a[i++]! : b[j++]!);
  while (i < a.length) out.push(a[i++]!);
  while (j < b.length) out.push(b[j++]!);
  return out;
}

/**
 * True when `a` and `b` are at Levenshtein distance exactly 1 in UTF-16 code units (one insertion, deletion or
 * substitution).
 */
export function oneEditApart(a: string, b: string): boolean {
  const la = a.length;
  const lb = b.length;
  if (la === lb) {
    let diff = 0;
    for (let i = 0; i < la; i++) if (a.charCodeAt(i) !== b.charCodeAt(i) && ++diff > 1) return false;
    return diff === 1;
  }
  if (la - lb !== 1 && lb - la !== 1) return false;
  const [long, short] = la > lb ? [a, b] : [b, a];
  let i = 0;
  while (i < short.length && long.charCodeAt(i) === short.charCodeAt(i)) i++;
  // Everything after the one extra unit of `long` must match the rest of `short`.
  for (let j = i; j < short.length; j++) if (long.charCodeAt(j + 1) !== short.charCodeAt(j)) return false;
  return true;
}

/**
 * An index built from note texts on another thread (the cold thread, src/search/cold-worker.ts; docs/DESIGN.md
 * "The first search of a view"), in the shape a structured clone moves cheaply: typed arrays (moved by the transfer
 * list, `builtBuffers`), the term strings, titles and tags. Notes are numbered 0 .. count-1 in the order they were
 * added (the scan's order). It holds no note text, no identity key and no stat: those are the scan's, and the
 * adopting thread takes them from its own scan result (`NoteIndex.adoptBuilt`).
 */
export interface BuiltIndex {
  count: number;
  ids: string[];
  table: TermTableState;
  /** Every posting, list after list (slot order). */
  postings: Int32Array<ArrayBuffer>;
  /** Per slot (term id × FIELDS.length + field): where its list starts in `postings` and its length (0: no list). */
  listAt: Int32Array<ArrayBuffer>;
  listSize: Int32Array<ArrayBuffer>;
  /** Term frequencies of TF_MASK or more: (slot, note number, frequency) triples. */
  big: Int32Array<ArrayBuffer>;
  listCount: Int32Array<ArrayBuffer>;
  liveTerms: number;
  /** The dictionary's term ids in lexicographic order (settled: nothing recent). */
  sorted: Int32Array<ArrayBuffer>;
  /** Field lengths by note number × FIELDS.length + field, and their sums. */
  fieldLength: Int32Array<ArrayBuffer>;
  lengthSum: number[];
  titles: string[];
  tags: (readonly string[] | undefined)[];
  /** Per note: bytes of its UTF-8 text before its body (what the store's `putBytes` takes). */
  bodyByte: Int32Array<ArrayBuffer>;
}

/** The buffers of a `BuiltIndex` a transfer list moves (none of them is used by the sender afterwards). */
export function builtBuffers(built: BuiltIndex): ArrayBuffer[] {
  return [
    ...termStateBuffers(built.table),
    ...[built.postings, built.listAt, built.listSize, built.big, built.listCount, built.sorted, built.fieldLength].map(
      (a) => a.buffer as ArrayBuffer,
    ),
    built.bodyByte.buffer as ArrayBuffer,
  ];
}

/**
 * Builds the index of a first call note by note as the scan accepts them, on the cold thread (src/search/cold-worker.ts):
 * the same steps `NoteIndex.sync` of a fresh index takes for each note (`fieldTexts`, term ids in order of first
 * sight, staged postings written in batches), without a text store or identity keys. `finish` hands over a
 * `BuiltIndex`, which `NoteIndex.adoptBuilt` turns into the index a fresh `sync` of the same notes gives.
 */
export class IndexBuilder {
  private readonly index = new NoteIndex();
  private readonly ids: string[] = [];
  private readonly titles: string[] = [];
  private readonly tags: (readonly string[] | undefined)[] = [];
  private bodyByte = new Int32Array(1024);
  private readonly seen = new Set<string>();

  /** Notes added so far. */
  get count(): number {
    return this.ids.length;
  }

  /**
   * Index the next note (note number `count`) from its text.
   *
   * @throws Error when the id repeats (what `sync` refuses)
   */
  add(id: string, text: string): void {
    if (this.seen.has(id)) throw new Error('IndexBuilder: duplicate id');
    this.seen.add(id);
    const n = this.ids.length;
    if (n >= this.bodyByte.length) this.bodyByte = copied(this.bodyByte, this.bodyByte.length * 2, n);
    const { texts, title, body } = fieldTexts(text, id);
    const bodyAt = text.length - body.length;
    this.index.addBuilt(id, texts);
    this.ids.push(id);
    this.titles.push(title);
    this.tags.push(noteTags(text));
    this.bodyByte[n] = bodyAt === 0 ? 0 : Buffer.byteLength(text.slice(0, bodyAt), 'utf8');
  }

  /** The built index (the builder is not used afterwards). */
  finish(): BuiltIndex {
    return this.index.exportBuilt(this.ids, this.titles, this.tags, this.bodyByte.slice(0, this.ids.length));
  }
}

export class NoteIndex implements KnownNotes {
  private readonly entries = new Map<string, Entry>();
  private readonly store = new TextStore();
  private table = new TermTable();
  /** By term id × F + field: the term's postings in that field, or undefined. */
  private lists: (Postings | undefined)[] = [];
  /** By term id: lists the term has (0 once no note holds it). */
  private listCount = new Int32Array(0);
  private dict: TermDictionary;
  /** Terms with at least one list (the others stay interned until `compactTerms`). */
  private liveTerms = 0;
  /** By term id: 1 while the dictionary holds the id (sorted or recent). */
  private inDict = new Uint8Array(0);
  /** By note number: the note's id (undefined once removed), and its field lengths at number × F + field. */
  private docIds: (string | undefined)[] = [];
  private fieldLength = new Int32Array(0);
  /** Exact integer sum of each field's length over the held notes. */
  private readonly lengthSum = new Array<number>(F).fill(0);
  private nextDoc = 0;
  private generation = 0;
  private heldBytes = 0;
  /** Heap bytes of the held notes' tag lists (`tagBytesOf`), for `memoryBytes`. */
  private tagBytes = 0;
  /** `memoryBytes`, as of the last sync that changed something. */
  private memory = 0;
  private work: RankWork = { lists: 0, postings: 0, checks: 0 };
  /** Field-pass scratch: per term id, the pass that last counted it and its count in that pass. */
  private stamp = new Int32Array(0);
  private count = new Int32Array(0);
  private pass = 0;
  /** Postings staged by `addDocument` and written by `flush`: slot (term id × F + field), posting (`packed`). */
  private pendingSlot = new Int32Array(0);
  private pendingPosting = new Int32Array(0);
  private pending = 0;
  /** Bulk writes of staged postings in the current sync (more than one: lists are repacked after it). */
  private bulkFlushes = 0;
  /**
   * Removals of the current sync whose postings are still in their lists (`dropRemoved` takes them out): the
   * removed note numbers, the slots of the lists holding their postings (each once, marked in `slotMarked`), and
   * how many postings they hold.
   */
  private removedDocs: number[] = [];
  private touchedSlots: number[] = [];
  private slotMarked = new Uint8Array(0);
  private removedPostings = 0;
  /** True when `dropRemoved` passes over every list (a bulk removal) instead of the touched ones. */
  private everyList = false;
  /** By slot: postings staged and not yet written. */
  private staged = new Int32Array(0);
  /** Ranking scratch, indexed by note number; all zero between calls. */
  private total = new Float64Array(0);
  private termScore = new Float64Array(0);
  private cover = new Uint8Array(0);
  private termMark = new Uint8Array(0);
  /**
   * The notes of the last `sync` (and in `lastDocs` the note number each one ended up with), by position. The scan hands back the very same
   * ScannedNote object for a note it found unchanged and known, call after call and in the same order, so on the
   * warm path `sync` recognises a note by object identity at the same position instead of a Map lookup by id.
   */
  private lastNotes: (ScannedNote | undefined)[] = [];
  /** The note number each of `lastNotes` was matched to (-1 where none is remembered). */
  private lastDocs = new Int32Array(0);
  /** By note number: the last `sync` generation that listed the note (cheaper than a Set of ids on the warm path). */
  private seenAt = new Int32Array(0);
  /** Narrowed selections by scope key, least recently used first; forgotten by any sync that changes a note. */
  private subsets = new Map<string, Subset>();

  constructor(private readonly maxPending = MAX_PENDING) {
    this.dict = this.newDictionary();
  }

  private newDictionary(): TermDictionary {
    return new TermDictionary(
      (id) => this.table.term(id),
      (id) => this.listCount[id]! > 0,
    );
  }

  /** Number of notes held. */
  get size(): number {
    return this.entries.size;
  }

  /** Summed file size, in bytes, of the notes held. */
  get bytes(): number {
    return this.heldBytes;
  }

  /**
   * What this index holds in memory, in bytes (what the per-view cache bounds; src/tools/index-cache.ts): the text
   * store's chunks, every postings list's buffer and objects, the per-term arrays and term table, and the per-note
   * record; the last two from the sizes a heap snapshot shows (TERM_BYTES, NOTE_BYTES). Kept up to date by `sync`
   * (recounted after a sync that changed anything: O(lists)).
   */
  get memoryBytes(): number {
    let subsets = 0;
    for (const subset of this.subsets.values()) subsets += subset.member.length + subset.selected.size * 16;
    return this.memory + subsets;
  }

  /** Recount `memory` (see `memoryBytes`). */
  private recount(): void {
    let lists = 0;
    for (const list of this.lists) if (list !== undefined) lists += list.memoryBytes;
    this.memory =
      this.store.memoryBytes +
      lists +
      this.lists.length * 4 +
      this.stamp.length * (13 + 4 * F) +
      this.table.size * TERM_BYTES +
      this.dict.sorted.length * 4 +
      (this.fieldLength.length + this.total.length * 5 + this.seenAt.length + this.lastDocs.length) * 4 +
      this.entries.size * NOTE_BYTES +
      this.tagBytes;
  }

  /**
   * KnownNotes: true when the index holds verified text for exactly this id and identity key. With the scan's hint
   * (`last`, `at`; see KnownNotes), when the last sync received `last` at position `at`, it matched it to the
   * record of note number `lastDocs[at]`, whose key then equalled `last.key` (a record's key only ever changes to a
   * string of equal value). While that number is in use the record is live and is the one held under `id` (numbers
   * are never reused before `compactDocs`, which forgets the positions), so comparing with `last.key` gives the
   * map's answer without the lookup by id or a read of the record.
   */
  has(id: string, key: IdentityKey, last?: ScannedNote, at = -1): boolean {
    if (last !== undefined && this.lastNotes[at] === last) {
      const doc = this.lastDocs[at]!;
      if (doc >= 0 && this.docIds[doc] !== undefined) return last.key === key;
    }
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
    // Notes seen in this sync carry this generation in seenAt.
    const generation = ++this.generation;
    let marked = 0;
    let changed = false;
    const lastNotes = this.lastNotes;
    const lastDocs = this.lastDocs;
    // Only notes without text are remembered (a note read in this call comes back as a new object next time, and
    // its text must not be kept alive by the memo).
    // A sync of as many notes as the last one (the warm case) rewrites the memo in place: position i is read before
    // it is written. A sync that throws forgets the memo (it may be half rewritten).
    const inPlace = lastNotes.length === notes.length;
    const nowNotes = inPlace ? lastNotes : new Array<ScannedNote | undefined>(notes.length);
    const nowDocs = inPlace ? lastDocs : new Int32Array(notes.length).fill(-1);
    this.everyList = false;
    let withText = 0;
    let replacing = 0;
    for (let i = 0; i < notes.length; i++) {
      if (!carriesText(notes[i]!)) continue;
      withText++;
      if (this.entries.size > 0 && this.entries.has(notes[i]!.id)) replacing++;
    }
    if (withText > 0) this.fitTerms(this.table.size + withText * NEW_TERMS_PER_NOTE);
    // Many held notes replaced at once: their postings go in one pass over every list (see `dropRemoved`).
    if (replacing > BULK_REMOVAL_NOTES) this.everyList = true;
    try {
      for (let i = 0; i < notes.length; i++) {
        const note = notes[i]!;
        if (lastNotes[i] === note) {
          // The last sync got this very object here, without text (only those are remembered, and a ScannedNote is
          // never changed), and matched it to the record of note number lastDocs[i] under the same key (a record's
          // key only ever changes to a string of equal value). While that number is in use, its record is live and
          // is the one held for the id: the note is unchanged and known, without reading the note or the record.
          const doc = lastDocs[i]!;
          // (this.seenAt, not a copy: indexing a new note may grow it.)
          if (doc >= 0 && this.docIds[doc] !== undefined) {
            if (this.seenAt[doc] === generation) throw new Error('NoteIndex.sync: duplicate id');
            marked++;
            this.seenAt[doc] = generation;
            if (!inPlace) {
              nowNotes[i] = note;
              nowDocs[i] = doc;
            }
            continue;
          }
        }
        const held = this.entries.get(note.id);
        if (held !== undefined && this.seenAt[held.doc] === generation) throw new Error('NoteIndex.sync: duplicate id');
        marked++;
        // Read once: a note read in this call decodes its text from the scan's bytes on every read.
        const text = note.text;
        if (text === undefined) {
          if (held === undefined || held.key !== note.key) throw new Error('NoteIndex.sync: unknown note without text');
          this.seenAt[held.doc] = generation;
          nowNotes[i] = note;
          nowDocs[i] = held.doc;
          continue;
        }
        nowNotes[i] = undefined;
        nowDocs[i] = -1;
        if (held !== undefined) this.removeEntry(note.id, held, this.everyList);
        const { texts, title, body } = fieldTexts(text, note.id);
        const doc = this.addDocument(note.id, texts);
        const bodyAt = text.length - body.length;
        const bytes = textBytesOf(note);
        const entry: Entry = {
          key: note.key,
          doc,
          title,
          text:
            bytes === undefined
              ? this.store.put(text, bodyAt)
              : this.store.putBytes(bytes, bodyAt === 0 ? 0 : Buffer.byteLength(text.slice(0, bodyAt), 'utf8')),
          bytes: note.stat.size,
          mtimeMs: Number(note.stat.mtimeNs / 1_000_000n),
          tags: noteTags(text),
        };
        this.tagBytes += tagBytesOf(entry.tags);
        this.entries.set(note.id, entry);
        this.seenAt[doc] = generation;
        this.heldBytes += entry.bytes;
        changed = true;
      }
    } catch (err) {
      this.subsets.clear();
      this.lastNotes = [];
      this.lastDocs = new Int32Array(0);
      // The notes replaced before the failure lose their postings now (in a pass over every list when some were
      // removed without finding their lists); a sync that completes does it once, below.
      this.dropRemoved();
      throw err;
    } finally {
      this.flush();
    }
    this.lastNotes = nowNotes;
    this.lastDocs = nowDocs;
    const gone: [string, Entry][] = [];
    if (marked < this.entries.size) {
      const seenAt = this.seenAt;
      for (const [id, entry] of this.entries) if (seenAt[entry.doc] !== generation) gone.push([id, entry]);
    }
    // Many notes gone at once (a policy edit that narrows the view, a folder moved away): their postings are taken
    // out by one pass over every list, without decoding their texts to find their terms again.
    const bulk = this.everyList || gone.length + this.removedDocs.length > BULK_REMOVAL_NOTES;
    for (const [id, entry] of gone) this.removeEntry(id, entry, bulk);
    if (bulk) this.everyList = true;
    // Replaced and gone notes alike: one pass over each list they touch.
    this.dropRemoved();
    if (changed || gone.length > 0) {
      // Note numbers, field lengths or the held set moved: every narrowed selection is recounted when next asked.
      this.subsets.clear();
      this.tidy();
    }
    if (this.bulkFlushes > 1) this.repackPostings();
    this.bulkFlushes = 0;
    if (withText > 0) this.trimTerms();
    if (changed || gone.length > 0) this.recount();
  }

  /** `IndexBuilder.add`'s step: index a note's field texts under the next note number (no entry, no text kept). */
  addBuilt(id: string, texts: readonly string[]): void {
    this.addDocument(id, texts);
  }

  /** `IndexBuilder.finish`'s step: write what is staged, settle the dictionary, and hand everything over. */
  exportBuilt(
    ids: string[],
    titles: string[],
    tags: (readonly string[] | undefined)[],
    bodyByte: Int32Array<ArrayBuffer>,
  ): BuiltIndex {
    this.flush();
    this.dict.settle(() => undefined, true);
    const slots = this.lists.length;
    let total = 0;
    for (const list of this.lists) if (list !== undefined) total += list.size;
    const postings = new Int32Array(total);
    const listAt = new Int32Array(slots);
    const listSize = new Int32Array(slots);
    const big: number[] = [];
    let at = 0;
    for (let slot = 0; slot < slots; slot++) {
      const list = this.lists[slot];
      if (list === undefined) continue;
      postings.set(list.view(), at);
      listAt[slot] = at;
      listSize[slot] = list.size;
      at += list.size;
      for (const [doc, tf] of list.bigEntries()) big.push(slot, doc, tf);
    }
    const n = ids.length;
    return {
      count: n,
      ids,
      table: this.table.exportState(),
      postings,
      listAt,
      listSize,
      big: Int32Array.from(big),
      listCount: this.listCount.slice(0, this.table.size),
      liveTerms: this.liveTerms,
      sorted: this.dict.sorted,
      fieldLength: this.fieldLength.slice(0, n * F),
      lengthSum: [...this.lengthSum],
      titles,
      tags,
      bodyByte,
    };
  }

  /**
   * Become the index a fresh `sync(notes)` gives, from `built` (made from exactly these notes' texts, in this order,
   * by `IndexBuilder` on the cold thread): the same note numbers, term ids, postings, field lengths, titles and tags;
   * keys, sizes and times from `notes` (this call's scan); texts stored from the notes' verified bytes. Afterwards
   * the index is in every respect one that synced `notes`: later syncs, searches and removals run as usual.
   *
   * @returns false, leaving the index unchanged, when it is not a fresh index or `built` does not describe `notes`
   *   (count or ids differ, a note carries no kept bytes): the caller then builds in its own thread
   */
  adoptBuilt(notes: readonly ScannedNote[], built: BuiltIndex): boolean {
    if (this.nextDoc !== 0 || this.entries.size !== 0) return false;
    const n = notes.length;
    if (built.count !== n || built.ids.length !== n || built.listAt.length !== built.listSize.length) return false;
    for (let i = 0; i < n; i++) if (built.ids[i] !== notes[i]!.id || textBytesOf(notes[i]!) === undefined) return false;
    const generation = ++this.generation;
    this.table = TermTable.fromState(built.table);
    const slots = built.listAt.length;
    const lists: (Postings | undefined)[] = new Array(slots);
    for (let slot = 0; slot < slots; slot++) {
      const size = built.listSize[slot]!;
      if (size === 0) continue;
      const list = new Postings();
      const at = built.listAt[slot]!;
      list.adopt(built.postings.subarray(at, at + size), size);
      lists[slot] = list;
    }
    for (let k = 0; k < built.big.length; k += 3) lists[built.big[k]!]!.keepBig(built.big[k + 1]!, built.big[k + 2]!);
    this.lists = lists;
    this.stamp = new Int32Array(0);
    this.count = new Int32Array(0);
    this.listCount = new Int32Array(0);
    this.staged = new Int32Array(0);
    this.inDict = new Uint8Array(0);
    this.fitTerms();
    this.listCount.set(built.listCount);
    this.liveTerms = built.liveTerms;
    this.dict = this.newDictionary();
    this.dict.sorted = built.sorted;
    for (const id of built.sorted) this.inDict[id] = 1;
    this.fitDocs(Math.max(0, n - 1));
    this.fieldLength.set(built.fieldLength);
    for (let f = 0; f < F; f++) this.lengthSum[f] = built.lengthSum[f]!;
    this.nextDoc = n;
    for (let doc = 0; doc < n; doc++) {
      const note = notes[doc]!;
      this.docIds[doc] = note.id;
      const tags = built.tags[doc];
      const entry: Entry = {
        key: note.key,
        doc,
        title: built.titles[doc]!,
        text: this.store.putBytes(textBytesOf(note)!, built.bodyByte[doc]!),
        bytes: note.stat.size,
        mtimeMs: Number(note.stat.mtimeNs / 1_000_000n),
        tags,
      };
      this.tagBytes += tagBytesOf(tags);
      this.heldBytes += entry.bytes;
      this.entries.set(note.id, entry);
      this.seenAt[doc] = generation;
    }
    this.lastNotes = [];
    this.lastDocs = new Int32Array(0);
    this.subsets.clear();
    this.recount();
    return true;
  }

  /**
   * Move every list into one buffer of exactly the postings held. After a build written in several batches, lists
   * sit in the shared buffers of earlier batches (kept whole by any list still viewing them) or in buffers of their
   * own; this leaves 4 bytes per posting and nothing else.
   */
  private repackPostings(): void {
    let total = 0;
    for (const list of this.lists) if (list !== undefined) total += list.size;
    const arena = new Int32Array(total);
    let at = 0;
    for (const list of this.lists) {
      if (list === undefined) continue;
      list.moveTo(arena, at);
      at += list.size;
    }
  }

  /** Upkeep after a sync that changed something: settle the dictionary, compact what removals left behind. */
  private tidy(): void {
    const deadTerms = this.table.size - this.liveTerms;
    if (deadTerms > 1024 && deadTerms > this.liveTerms) this.compactTerms();
    if (this.nextDoc > 1024 && this.nextDoc > 2 * this.entries.size) this.compactDocs();
    this.dict.settle((id) => {
      this.inDict[id] = 0;
    });
  }

  /** Grow the per-term arrays to at least `min` ids (and every id of the table). */
  private fitTerms(min = 0): void {
    const size = Math.max(this.table.size, min);
    if (this.stamp.length >= size) return;
    let cap = Math.max(16, this.stamp.length * 2);
    while (cap < size) cap *= 2;
    this.stamp = copied(this.stamp, cap, this.stamp.length);
    this.count = new Int32Array(cap);
    this.listCount = copied(this.listCount, cap, this.listCount.length);
    const inDict = new Uint8Array(cap);
    inDict.set(this.inDict);
    this.inDict = inDict;
    this.staged = copied(this.staged, cap * F, this.staged.length);
  }

  /**
   * Give back per-term room a sync reserved and did not use (it guesses NEW_TERMS_PER_NOTE new terms per new note
   * before indexing them; a first build of 10,000 notes reserves room for 80,000 terms and may bring 6,000): down to
   * the smallest power of two that holds every id, when that is at most half the room held. The staged counts are
   * all zero between syncs.
   */
  private trimTerms(): void {
    let cap = 16;
    while (cap < this.table.size) cap *= 2;
    if (cap * 2 > this.stamp.length) return;
    this.stamp = this.stamp.slice(0, cap);
    this.count = new Int32Array(cap);
    this.listCount = this.listCount.slice(0, cap);
    this.inDict = this.inDict.slice(0, cap);
    this.staged = new Int32Array(cap * F);
  }

  /** Grow the per-note arrays to hold note number `doc`. */
  private fitDocs(doc: number): void {
    if (this.fieldLength.length > doc * F) return;
    const cap = Math.max(64, (doc + 1) * 2);
    this.fieldLength = copied(this.fieldLength, cap * F, this.fieldLength.length);
    this.seenAt = copied(this.seenAt, cap, this.seenAt.length);
  }

  /**
   * Count the terms of `text`: afterwards `table.scratch[0 .. n)` holds the distinct term ids in order of first
   * occurrence (n returned) and `count[id]` each one's term frequency.
   */
  private countTerms(text: string): number {
    const total = this.table.ids(text);
    this.fitTerms();
    const ids = this.table.scratch;
    const { stamp, count } = this;
    const pass = ++this.pass;
    let distinct = 0;
    for (let k = 0; k < total; k++) {
      const id = ids[k]!;
      if (stamp[id] !== pass) {
        stamp[id] = pass;
        count[id] = 1;
        // In place: distinct ≤ k, so this never overwrites an id still to be read.
        ids[distinct++] = id;
      } else {
        count[id]!++;
      }
    }
    return distinct;
  }

  /** Index a note's field texts under a new note number; its postings are staged (written by `flush`). */
  private addDocument(id: string, texts: readonly string[]): number {
    if (this.nextDoc >= MAX_NOTE_NUMBERS) throw new Error('NoteIndex: note numbers exhausted');
    const doc = this.nextDoc++;
    this.fitDocs(doc);
    this.docIds[doc] = id;
    for (let f = 0; f < F; f++) {
      const distinct = this.countTerms(texts[f]!);
      this.fieldLength[doc * F + f] = distinct;
      this.lengthSum[f]! += distinct;
      this.makeRoom(distinct);
      const ids = this.table.scratch;
      const { count, lists, staged, pendingSlot, pendingPosting, listCount } = this;
      let at = this.pending;
      for (let k = 0; k < distinct; k++) {
        const term = ids[k]!;
        const slot = term * F + f;
        if (lists[slot] === undefined) {
          lists[slot] = new Postings();
          if (listCount[term]!++ === 0) this.termBorn(term);
        }
        staged[slot]!++;
        const tf = count[term]!;
        if (tf >= TF_MASK) lists[slot]!.keepBig(doc, tf);
        pendingSlot[at] = slot;
        pendingPosting[at] = packed(doc, tf);
        at++;
      }
      this.pending = at;
    }
    return doc;
  }

  /** A term got its first list: it is live, and enters the dictionary unless still there from an earlier life. */
  private termBorn(term: number): void {
    this.liveTerms++;
    if (this.inDict[term] === 0) {
      this.inDict[term] = 1;
      this.dict.add(term);
    }
  }

  /** Room for `more` staged postings: flushes first when the log would pass `maxPending`. */
  private makeRoom(more: number): void {
    if (this.pending + more <= this.pendingSlot.length) return;
    if (this.pending + more > this.maxPending && this.pending > 0) {
      this.flush();
      if (more <= this.pendingSlot.length) return;
    }
    let cap = Math.max(256, this.pendingSlot.length * 4);
    while (cap < this.pending + more) cap *= 4;
    cap = Math.max(Math.min(cap, this.maxPending), this.pending + more);
    this.pendingSlot = copied(this.pendingSlot, cap, this.pending);
    this.pendingPosting = copied(this.pendingPosting, cap, this.pending);
  }

  /**
   * Write every staged posting into its list. Staged postings of one slot come in ascending note numbers, above
   * every number held there, so each list is appended to. A large batch places each list first (lists that were
   * empty get exactly their size, as views of one new buffer; the others grow once) and then copies every posting
   * to its place; a small batch is appended entry by entry.
   */
  private flush(): void {
    const n = this.pending;
    if (n === 0) return;
    this.pending = 0;
    const { pendingSlot, pendingPosting, lists, staged } = this;
    const slots = lists.length;
    if (n * 4 < slots) {
      for (let k = 0; k < n; k++) {
        const slot = pendingSlot[k]!;
        const list = lists[slot]!;
        list.reserve(1)[list.size] = pendingPosting[k]!;
        list.commit(1);
        staged[slot] = 0;
      }
    } else {
      // Each loop is a function of its own: V8 optimizes a long loop while it runs (on-stack replacement), and code
      // after it in the same function would then run without type feedback and be thrown away.
      this.bulkFlushes++;
      const arena = new Int32Array(freshPostings(lists, staged, slots));
      const bufs = new Array<Int32Array>(slots);
      const next = new Int32Array(slots);
      placeLists(lists, staged, slots, arena, bufs, next);
      scatter(pendingSlot, pendingPosting, n, bufs, next);
      commitLists(lists, staged, slots, arena, next);
    }
    if (this.pendingSlot.length > 1 << 16) {
      this.pendingSlot = new Int32Array(0);
      this.pendingPosting = new Int32Array(0);
    }
  }

  /**
   * Remove a held note: its record, text and statistics at once; its postings by `dropRemoved` at the end of the
   * sync, which takes every removed note's postings out of each list in one pass. (Taking each note's postings out
   * one at a time moved every later posting of each of its lists, once per note: a sync that removed or replaced
   * 10,000 of 100,000 notes did on the order of 10^10 moves, about 47 s.) Cost here: the note's text, once.
   */
  private removeEntry(id: string, entry: Entry, bulk = false): void {
    this.tagBytes -= tagBytesOf(entry.tags);
    const doc = entry.doc;
    if (!bulk) this.touchSlotsOf(id, entry);
    for (let f = 0; f < F; f++) {
      // A note's field length is its number of distinct terms in the field: its postings in that field's lists.
      const length = this.fieldLength[doc * F + f]!;
      this.removedPostings += length;
      this.lengthSum[f]! -= length;
      this.fieldLength[doc * F + f] = 0;
    }
    this.removedDocs.push(doc);
    this.docIds[doc] = undefined;
    this.store.free(entry.text);
    this.entries.delete(id);
    this.heldBytes -= entry.bytes;
  }

  /** Mark the lists holding postings of a held note (found again from its stored text) for `dropRemoved`. */
  private touchSlotsOf(id: string, entry: Entry): void {
    const { texts } = fieldTexts(this.store.get(entry.text), id);
    for (let f = 0; f < F; f++) {
      const distinct = this.countTerms(texts[f]!);
      const ids = this.table.scratch;
      if (this.slotMarked.length < this.lists.length) {
        const grown = new Uint8Array(this.lists.length * 2);
        grown.set(this.slotMarked);
        this.slotMarked = grown;
      }
      const marked = this.slotMarked;
      for (let k = 0; k < distinct; k++) {
        const slot = ids[k]! * F + f;
        if (marked[slot] === 0) {
          marked[slot] = 1;
          this.touchedSlots.push(slot);
        }
      }
    }
  }

  /**
   * Take the postings of the notes `removeEntry` removed in this sync out of their lists: one pass over each list
   * that holds any of them, or, after a bulk removal (more than BULK_REMOVAL_NOTES notes gone in one sync), over
   * every list. A list left empty goes, and a term left without lists is dead. Cost: the removed notes' distinct
   * terms (their texts decoded again) plus the length of the lists they touch, at most every posting once; after a
   * bulk removal, every posting once and no text.
   *
   * @throws Error when the lists did not hold exactly the postings the removed notes' field lengths count (an index
   *   bug)
   */
  private dropRemoved(): void {
    if (this.removedDocs.length === 0) return;
    const dead = new Uint8Array(this.nextDoc);
    for (const doc of this.removedDocs) dead[doc] = 1;
    let dropped = 0;
    for (const slot of this.touchedSlots) this.slotMarked[slot] = 0;
    const drop = (slot: number): void => {
      const list = this.lists[slot];
      if (list === undefined) return;
      dropped += list.dropDead(dead);
      if (list.size === 0) {
        this.lists[slot] = undefined;
        const term = (slot - (slot % F)) / F;
        if (--this.listCount[term]! === 0) this.liveTerms--;
      }
    };
    if (this.everyList) for (let slot = 0; slot < this.lists.length; slot++) drop(slot);
    else for (const slot of this.touchedSlots) drop(slot);
    const expected = this.removedPostings;
    this.removedDocs = [];
    this.touchedSlots = [];
    this.removedPostings = 0;
    this.everyList = false;
    if (dropped !== expected) throw new Error('NoteIndex: a held note lost a posting');
  }

  /** Intern only the live terms again (ids renumbered in their old order) when dead ones outnumber them. */
  private compactTerms(): void {
    const old = this.table;
    const map = new Int32Array(old.size).fill(-1);
    const table = new TermTable();
    const lists: (Postings | undefined)[] = [];
    for (let id = 0; id < old.size; id++) {
      if (this.listCount[id] === 0) continue;
      const to = table.intern(old.term(id));
      map[id] = to;
      for (let f = 0; f < F; f++) lists[to * F + f] = this.lists[id * F + f];
    }
    const counts = new Int32Array(table.size);
    for (let id = 0; id < old.size; id++) if (map[id]! >= 0) counts[map[id]!] = this.listCount[id]!;
    this.dict.remap(map);
    this.table = table;
    this.lists = lists;
    this.listCount = new Int32Array(0);
    this.stamp = new Int32Array(0);
    this.count = new Int32Array(0);
    this.staged = new Int32Array(0);
    this.inDict = new Uint8Array(0);
    this.fitTerms();
    this.listCount.set(counts);
    for (const id of this.dict.sorted) this.inDict[id] = 1;
    for (const id of this.dict.recent) this.inDict[id] = 1;
  }

  /** Number the held notes 0, 1, 2, … again (in their old order) when removals left most numbers unused. */
  private compactDocs(): void {
    const map = new Int32Array(this.nextDoc).fill(-1);
    const docIds: string[] = [];
    const lengths = new Int32Array(Math.max(64, this.entries.size * 2) * F);
    for (let doc = 0; doc < this.nextDoc; doc++) {
      const id = this.docIds[doc];
      if (id === undefined) continue;
      const to = docIds.length;
      map[doc] = to;
      docIds.push(id);
      for (let f = 0; f < F; f++) lengths[to * F + f] = this.fieldLength[doc * F + f]!;
    }
    for (const list of this.lists) list?.renumber(map);
    for (const entry of this.entries.values()) entry.doc = map[entry.doc]!;
    this.docIds = docIds;
    this.fieldLength = lengths;
    this.nextDoc = docIds.length;
    this.lastNotes = [];
    this.lastDocs = new Int32Array(0);
    this.seenAt = new Int32Array(this.fieldLength.length / F);
  }

  /**
   * The best `max` matches of `query`, best first (order and scores in the module comment; all matches when `max`
   * is omitted). An empty query after tokenizing matches nothing.
   *
   * Bounded expansions (deterministic, so that no corpus can make one query cost more than a bounded multiple of a
   * plain term's postings; docs/DESIGN.md, "Bounded query cost"): each query term uses at most
   * PREFIX_SHORT_MAX_TERMS prefix expansions when shorter than PREFIX_FULL_CHARS code points, else at most
   * PREFIX_MAX_TERMS; each term at most TYPO_MAX_TERMS typo expansions; in each case those with the most postings
   * (summed over fields; ties by term in ascending UTF-16 order), kept in lexicographic order. The exact term always
   * counts. A match records at most HIT_MAX_TERMS matched terms (the first in scoring order). Scores accumulate in
   * typed arrays indexed by note number; only the best `max` become objects.
   *
   * With `scope` (memory_bridge_search `within`), only the held notes it selects are ranked, and every statistic —
   * note count, average field lengths, each list's document frequency, which terms exist for the exact match,
   * prefix and typo expansions and their caps — is counted over those notes alone: the answer is the one an index
   * holding exactly the selected notes gives (docs/DESIGN.md "Narrowing a search"). Extra cost: the selection,
   * once per scope until a sync changes a note (`subsetOf`), and one pass over each list the query reaches to count
   * its selected postings, kept with the selection (so at most every posting once per selection and sync).
   *
   * With `byModified` (memory_bridge_search `sort: "modified"`), the same matches are chosen by modification time
   * instead, newest first, ties by id (`newestOf`).
   */
  rank(query: string, max = Infinity, scope?: NoteScope, byModified = false): RankedMatch[] {
    const terms = [...new Set(tokenize(query))].slice(0, MAX_QUERY_TERMS);
    if (terms.length === 0 || this.entries.size === 0 || max <= 0) return [];
    const subset = scope === undefined ? undefined : this.subsetOf(scope);
    if (subset !== undefined && subset.count === 0) return [];
    const size = this.nextDoc;
    if (this.total.length < size) {
      const cap = Math.max(size, this.total.length * 2, 64);
      this.total = new Float64Array(cap);
      this.termScore = new Float64Array(cap);
      this.cover = new Uint8Array(cap);
      this.termMark = new Uint8Array(cap);
    }
    const sheet = new ScoreSheet(this.total, this.termScore, this.cover, this.termMark);
    const work: RankWork = { lists: 0, postings: 0, checks: 0 };
    this.work = work;
    /** Every term scored, with its id (for the chosen matches' matched terms). */
    const derived: [string, number][] = [];
    const { table, lists, fieldLength, dict } = this;
    const count = subset?.count ?? this.entries.size;
    const avg = (subset?.lengthSum ?? this.lengthSum).map((s) => s / count);
    const member = subset?.member;
    // Postings of one (term, field) list among the ranked notes (every list's own size without a scope), counted
    // once per selection until a sync changes a note.
    const sizeOf = (slot: number): number => {
      const list = lists[slot];
      if (list === undefined) return 0;
      if (subset === undefined) return list.size;
      let n = subset.selected.get(slot);
      if (n === undefined) {
        n = 0;
        for (let i = 0; i < list.size; i++) n += subset.member[list.docAt(i)]!;
        if (subset.selected.size >= MAX_SUBSET_SLOTS) subset.selected.clear();
        subset.selected.set(slot, n);
      }
      return n;
    };
    const postingsOf = (id: number): number => {
      let n = 0;
      for (let f = 0; f < F; f++) n += sizeOf(id * F + f);
      return n;
    };
    // Under a scope, expansions are those of the whole view: one with no selected posting scores nothing and
    // matches no hit, and keepMostInOrder keeps it only when fewer than the cap have selected postings, so the
    // expansions that count are exactly those an index of the selected notes alone would choose.
    const named = (ids: number[]): [string, number][] => ids.map((id) => [table.term(id), id]);
    const source: TermSource<number> = {
      exact: (term) => {
        const id = table.find(term);
        if (id < 0 || this.listCount[id]! === 0) return undefined;
        return member === undefined || postingsOf(id) > 0 ? id : undefined;
      },
      prefixes: (term) => named(keepMostInOrder(dict.extending(term), prefixCap(term), postingsOf)),
      typos: (term) =>
        keepMostInOrder(
          dict.oneEditFrom(term, (t) => table.find(t)),
          TYPO_MAX_TERMS,
          postingsOf,
        ).map((id) => [table.term(id), id, 1] as const),
      score: (id, weight, into) => {
        for (let f = 0; f < F; f++) {
          const slot = id * F + f;
          const list = lists[slot];
          if (list === undefined) continue;
          const matching = sizeOf(slot);
          if (matching === 0) continue;
          const scale = weight * BOOSTS[f]!;
          const fieldAvg = avg[f]!;
          const idf = inverseDocumentFrequency(matching, count);
          const n = list.size;
          work.lists++;
          work.postings += n;
          for (let i = 0; i < n; i++) {
            const doc = list.docAt(i);
            if (member !== undefined && member[doc] === 0) continue;
            into.add(doc, scale * bm25Of(idf, list.tfAt(i), fieldLength[doc * F + f]!, fieldAvg));
          }
        }
      },
    };
    try {
      scoreQuery(terms, source, sheet, (t, id) => derived.push([t, id]));
      const docIds = this.docIds;
      const best = byModified
        ? this.newestOf(sheet.touched, max)
        : bestMatches(sheet.touched, max, this.cover, this.total, (doc) => docIds[doc]!);
      return best.map((s) => ({
        id: s.id,
        coverage: s.coverage,
        score: s.score,
        terms: matchedTerms(derived, (id) => {
          work.checks++;
          for (let f = 0; f < F; f++) if (lists[id * F + f]?.has(s.docId) === true) return true;
          return false;
        }),
      }));
    } finally {
      sheet.clear();
    }
  }

  /**
   * Work of the last `rank` (for tests that bound it): postings lists scored, postings visited, and matched-term
   * checks made for the chosen matches' terms.
   */
  get lastWork(): Readonly<RankWork> {
    return this.work;
  }

  /**
   * Search and apply the response limits (docs/DESIGN.md; select.ts `boundedHits`): at most `limit` hits,
   * `truncated` when more notes matched or `total_chars` ended the list; snippets of at most `snippet_chars` code
   * points from the matches' bodies (decoded from the store for these notes only). Hits carry `title` only when the
   * note has a heading.
   */
  search(
    query: string,
    limit: number,
    limits: ResponseLimits,
    scope?: NoteScope,
    sort: 'relevance' | 'modified' = 'relevance',
  ): { hits: SearchHit[]; truncated: boolean } {
    // A snippet reads no more of a body than this (snippet.ts), so only that much is decoded.
    const read = MAX_ANCHOR_SCAN + 4 * limits.snippet_chars;
    const ranked = this.rank(query, limit + 1, scope, sort === 'modified');
    return boundedHits(ranked, limit, limits, (match) => {
      const entry = this.entries.get(match.id)!;
      return { title: entry.title, body: this.store.body(entry.text, read) };
    });
  }

  /**
   * A filter-only search (memory_bridge_search without `query`; docs/TOOLS.md §Filters): the held notes `scope`
   * selects (all of them without one), newest first by modification time, ties by id in ascending UTF-16 order, under
   * the same response limits as `search`; each snippet is the start of the note's body. Cost: one pass over the
   * selection keeping the best `limit + 1` (at most 11), then the snippets of the hits.
   */
  recent(limit: number, limits: ResponseLimits, scope?: NoteScope): { hits: SearchHit[]; truncated: boolean } {
    const subset = scope === undefined ? undefined : this.subsetOf(scope);
    const picked: { id: string; mtimeMs: number; terms: string[] }[] = [];
    const max = limit + 1;
    for (const [id, entry] of this.entries) {
      if (subset !== undefined && subset.member[entry.doc] === 0) continue;
      const item = { id, mtimeMs: entry.mtimeMs, terms: [] as string[] };
      if (picked.length === max && !newer(item, picked[max - 1]!)) continue;
      let i = picked.length;
      while (i > 0 && newer(item, picked[i - 1]!)) i--;
      picked.splice(i, 0, item);
      if (picked.length > max) picked.pop();
    }
    const read = MAX_ANCHOR_SCAN + 4 * limits.snippet_chars;
    return boundedHits(picked, limit, limits, (match) => {
      const entry = this.entries.get(match.id)!;
      return { title: entry.title, body: this.store.body(entry.text, read) };
    });
  }

  /**
   * The `max` newest of the matched notes `touched` (modification time, ties by id), for `sort: "modified"`, with
   * their coverage and score as `bestMatches` gives them. One pass keeping at most `max` (≤ 11 from `search`).
   */
  private newestOf(touched: readonly number[], max: number): Scored[] {
    const best: (Scored & { mtimeMs: number })[] = [];
    for (const docId of touched) {
      const id = this.docIds[docId]!;
      const item = { docId, id, mtimeMs: this.entries.get(id)!.mtimeMs, coverage: 0, score: 0 };
      if (best.length >= max && !newer(item, best[best.length - 1]!)) continue;
      let i = best.length;
      while (i > 0 && newer(item, best[i - 1]!)) i--;
      best.splice(i, 0, item);
      if (best.length > max) best.pop();
    }
    for (const b of best) {
      b.coverage = this.cover[b.docId]!;
      b.score = Number((this.total[b.docId]! * b.coverage).toPrecision(12));
    }
    return best;
  }

  /**
   * The held notes `scope` selects (see `rank`): asked of every held note once, then kept under `scope.key` until a
   * sync changes a note (at most MAX_SUBSETS selections, least recently used dropped first). Cost: one `matcher()`
   * pass over the held ids and their field lengths.
   */
  private subsetOf(scope: NoteScope): Subset {
    let subset = this.subsets.get(scope.key);
    if (subset !== undefined) {
      this.subsets.delete(scope.key);
      this.subsets.set(scope.key, subset);
      return subset;
    }
    const matches = scope.matcher();
    const member = new Uint8Array(this.nextDoc);
    const lengthSum = new Array<number>(F).fill(0);
    let count = 0;
    for (const [id, entry] of this.entries) {
      if (!matches(id, entry)) continue;
      const doc = entry.doc;
      member[doc] = 1;
      count++;
      for (let f = 0; f < F; f++) lengthSum[f]! += this.fieldLength[doc * F + f]!;
    }
    subset = { member, count, lengthSum, selected: new Map() };
    this.subsets.set(scope.key, subset);
    if (this.subsets.size > MAX_SUBSETS) this.subsets.delete(this.subsets.keys().next().value!);
    return subset;
  }

  /** Current ranking statistics. */
  stats(): IndexStats {
    const count = this.entries.size;
    return {
      documentCount: count,
      averageFieldLength: this.lengthSum.map((s) => (count === 0 ? 0 : s / count)),
      termCount: this.liveTerms,
    };
  }
}

/**
 * Heap bytes of one note's tag list (NoteFacts.tags) as `memoryBytes` counts them: the array and, per tag, its slot
 * and its string (a header and two bytes per UTF-16 unit). None for a note without tags.
 */
function tagBytesOf(tags: readonly string[] | undefined): number {
  if (tags === undefined) return 0;
  let n = 32;
  for (const tag of tags) n += 8 + 24 + 2 * tag.length;
  return n;
}

/** True when `a` comes before `b` newest first: a later modification time, or the same and a smaller id. */
function newer(a: { id: string; mtimeMs: number }, b: { id: string; mtimeMs: number }): boolean {
  return a.mtimeMs > b.mtimeMs || (a.mtimeMs === b.mtimeMs && a.id < b.id);
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

/** The first `used` entries of `a` in a new Int32Array of `cap` entries. */
function copied(a: Int32Array, cap: number, used: number): Int32Array<ArrayBuffer> {
  const next = new Int32Array(cap);
  next.set(a.subarray(0, used));
  return next;
}

/** Postings staged for lists that are empty now (they get their room in the flush's shared buffer). */
function freshPostings(lists: (Postings | undefined)[], staged: Int32Array, slots: number): number {
  let total = 0;
  for (let s = 0; s < slots; s++) {
    const c = staged[s]!;
    if (c !== 0 && lists[s]!.size === 0) total += c;
  }
  return total;
}

/**
 * Where the staged postings of each slot go: `bufs[s]` and `next[s]` (index of the next posting) — in `arena`, in
 * slot order, for a list that is empty now; at the end of the list's own buffer, grown to its exact new size,
 * otherwise.
 */
function placeLists(
  lists: (Postings | undefined)[],
  staged: Int32Array,
  slots: number,
  arena: Int32Array,
  bufs: Int32Array[],
  next: Int32Array,
): void {
  let at = 0;
  for (let s = 0; s < slots; s++) {
    const c = staged[s]!;
    if (c === 0) continue;
    const list = lists[s]!;
    if (list.size === 0) {
      bufs[s] = arena;
      next[s] = at;
      at += c;
    } else {
      next[s] = list.size;
      bufs[s] = list.reserve(c, true);
    }
  }
}

/** Copy each staged posting to the place `placeLists` gave its slot. */
function scatter(slotOf: Int32Array, postingOf: Int32Array, n: number, bufs: Int32Array[], next: Int32Array): void {
  for (let k = 0; k < n; k++) {
    const s = slotOf[k]!;
    const at = next[s]!;
    bufs[s]![at] = postingOf[k]!;
    next[s] = at + 1;
  }
}

/** Hand each list its staged postings (a list that was empty gets its view of `arena`) and clear the counts. */
function commitLists(
  lists: (Postings | undefined)[],
  staged: Int32Array,
  slots: number,
  arena: Int32Array,
  next: Int32Array,
): void {
  for (let s = 0; s < slots; s++) {
    const c = staged[s]!;
    if (c === 0) continue;
    const list = lists[s]!;
    if (list.size === 0) {
      const end = next[s]!;
      list.adopt(arena.subarray(end - c, end), c);
    } else {
      list.commit(c);
    }
    staged[s] = 0;
  }
}
