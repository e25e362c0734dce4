/**
 * The in-memory search index of one caller view (docs/SEARCH.md): MiniSearch (BM25+) over the notes that passed
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
 * UTF-16 code-unit order. Fields: `title` (the note's own title: front matter `title` or first level-1 heading, boost
 * 2.5), `body` (1), `meta` (front matter tags and aliases, 1.5) and `name` (the file name without `.md`, 2.5; docs/
 * DESIGN.md "Titles and file names"). The last query term also matches as a prefix (at most PREFIX_SHORT_MAX_TERMS expansions under
 * PREFIX_FULL_CHARS code points, PREFIX_MAX_TERMS otherwise, see `rank`); terms of 5 or more code points also match
 * at edit distance 1 (at most TYPO_MAX_TERMS terms). Bounds: docs/DESIGN.md, "Bounded query cost".
 */
import MiniSearch from 'minisearch';
import type { IdentityKey, KnownNotes, ScannedNote } from '../trust/types.js';
import { noteName, noteTitle, parseNote } from './markdown.js';
import {
  bestMatches,
  boundedHits,
  FUZZY_MIN_CHARS,
  keepMost,
  matchedTerms,
  ScoreSheet,
  scoreQuery,
  TYPO_MAX_TERMS,
  type TermSource,
} from './select.js';

export { FUZZY_MIN_CHARS, FUZZY_WEIGHT, HIT_MAX_TERMS, PREFIX_WEIGHT, TYPO_MAX_TERMS } from './select.js';
import { countCodePoints } from './snippet.js';
import { TermTable } from './terms.js';
import { tokenize } from './tokenize.js';

/** Most distinct query terms used (a 500-character query of one-letter words would otherwise fan out widely). */
export const MAX_QUERY_TERMS = 32;
/** Field boosts (title above front matter above body). */
export const FIELD_BOOST = Object.freeze({ title: 2.5, body: 1, meta: 1.5, name: 2.5 });
/** A last query term of at least this many code points expands to every indexed term it prefixes. */
export const PREFIX_FULL_CHARS = 3;
/** Most prefix expansions of a shorter last term (those with the most postings; see `NoteIndex.rank`). */
export const PREFIX_SHORT_MAX_TERMS = 64;
/** Most prefix expansions of a last term of PREFIX_FULL_CHARS or more code points (see `NoteIndex.rank`). */
export const PREFIX_MAX_TERMS = 512;

/** The cap on prefix expansions of a last query term `term` (see `NoteIndex.rank`). */
export function prefixCap(term: string): number {
  return countCodePoints(term) >= PREFIX_FULL_CHARS ? PREFIX_MAX_TERMS : PREFIX_SHORT_MAX_TERMS;
}

/** Postings of one term summed over its fields (what the expansion caps rank by). */
function postingCount(data: TermData): number {
  counted = 0;
  data.forEach(addSize);
  return counted;
}
let counted = 0;
const addSize = (freqs: Postings): void => {
  counted += freqs.size;
};
/** MiniSearch 7.2 defaults: the BM25+ parameters (the expansion weights are in select.ts). */
const BM25_K = 1.2;
const BM25_B = 0.7;
const BM25_D = 0.5;

/** BM25+ of one term in one field of one document, the same expression MiniSearch 7.2 evaluates. */
export function bm25(
  termFreq: number,
  matching: number,
  total: number,
  fieldLength: number,
  avgFieldLength: number,
): number {
  const invDocFreq = Math.log(1 + (total - matching + 0.5) / (matching + 0.5));
  return (
    invDocFreq *
    (BM25_D + (termFreq * (BM25_K + 1)) / (termFreq + BM25_K * (1 - BM25_B + (BM25_B * fieldLength) / avgFieldLength)))
  );
}

/** Indexed fields, in the order MiniSearch assigns their field ids (0, 1, 2, 3) and scores them. */
export const FIELDS = ['title', 'body', 'meta', 'name'] as const;

/** What the index keeps per note: its identity key and the fields it was indexed with (needed for `remove`). */
interface Entry {
  key: IdentityKey;
  /** The note's own title (front matter or level-1 heading), or undefined. Indexed as '' when undefined. */
  title: string | undefined;
  /** Body without front matter: indexed, and the source of snippets. */
  body: string;
  /** Front matter tags/aliases joined by newlines. */
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
  /** The file name without `.md` (`noteName`). */
  name: string;
}

/** One search hit (the shape of docs/TOOLS.md results; `title` as `noteTitle` gives it). */
export interface SearchHit {
  id: string;
  title?: string;
  snippet: string;
}

/** The response limits search needs (docs/POLICY.md `limits`), in code points. */
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

/** Work done by one ranking (see `NoteIndex.lastWork`). */
export interface RankWork {
  /** Postings lists (one term in one field) scored. */
  lists: number;
  /** Postings visited while scoring. */
  postings: number;
  /** Checks of a scored term against a chosen match (for its matched terms). */
  checks: number;
}

/** Ranking statistics, for tests and diagnostics. */
export interface IndexStats {
  documentCount: number;
  /** Average field length (distinct terms per field) of title, body, meta and name, in that order. */
  averageFieldLength: number[];
  /** Distinct terms in the index. */
  termCount: number;
}

/** Postings of one term: field id → (short document id → term frequency). */
type TermData = Map<number, Postings>;

/**
 * Postings of one term in one field: short document ids with their term frequencies, ids ascending, interleaved in
 * one Int32Array (id, tf, id, tf, …) that doubles when full. Stands in for the `Map<number, number>` MiniSearch 7.2
 * keeps there and implements every part of it that MiniSearch uses (`size`, `get`, `has`, `set`, `delete`, `keys`,
 * `entries`, iteration, `forEach`), with the same iteration order: MiniSearch never reuses a short id and a note's
 * postings are added when it is added, so insertion order is ascending id order.
 *
 * Why a typed array: the index is built once and then lives long, so everything it allocates survives; a JS array
 * of numbers would be copied by every young-generation collection it lives through (the launcher's young
 * generation is 2 MiB), while a typed array's backing store above 64 bytes lives outside the collected heap. It
 * also takes 8 bytes per posting instead of 16 (two arrays of tagged values).
 */
export class Postings {
  /** id, tf pairs; `2 * size` entries are in use. */
  private buf: Int32Array = EMPTY;
  private n = 0;

  get size(): number {
    return this.n;
  }

  /** Pair index of `id`, or -(insertion point) - 1 when absent. */
  private find(id: number): number {
    const buf = this.buf;
    let lo = 0;
    let hi = this.n - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const at = buf[mid << 1]!;
      if (at === id) return mid;
      if (at < id) lo = mid + 1;
      else hi = mid - 1;
    }
    return -lo - 1;
  }

  get(id: number): number | undefined {
    const i = this.find(id);
    return i >= 0 ? this.buf[(i << 1) + 1] : undefined;
  }

  has(id: number): boolean {
    return this.find(id) >= 0;
  }

  set(id: number, tf: number): this {
    const n = this.n;
    let buf = this.buf;
    if (n === 0 || id > buf[(n - 1) << 1]!) {
      if (n << 1 === buf.length) buf = this.grow();
      buf[n << 1] = id;
      buf[(n << 1) + 1] = tf;
      this.n = n + 1;
      return this;
    }
    const i = this.find(id);
    if (i >= 0) {
      buf[(i << 1) + 1] = tf;
      return this;
    }
    const at = -i - 1;
    if (n << 1 === buf.length) buf = this.grow();
    buf.copyWithin((at + 1) << 1, at << 1, n << 1);
    buf[at << 1] = id;
    buf[(at << 1) + 1] = tf;
    this.n = n + 1;
    return this;
  }

  delete(id: number): boolean {
    const i = this.find(id);
    if (i < 0) return false;
    this.buf.copyWithin(i << 1, (i + 1) << 1, this.n << 1);
    this.n--;
    return true;
  }

  /** Add a posting after every held one (`id` above all held ids; not checked). */
  append(id: number, tf: number): void {
    const n = this.n;
    const buf = n << 1 === this.buf.length ? this.grow() : this.buf;
    buf[n << 1] = id;
    buf[(n << 1) + 1] = tf;
    this.n = n + 1;
  }

  /**
   * Make room for `more` postings after the held ones and return the buffer: the caller writes them as id, tf pairs
   * from index `2 * size` on (ids ascending and above every held id; not checked), then calls `commit(more)`. An
   * empty list gets exactly that room; a non-empty one grows by half at least, so repeated small batches cost
   * amortized O(1) per posting.
   */
  reserve(more: number): Int32Array {
    const used = this.n << 1;
    const need = used + (more << 1);
    if (need > this.buf.length) {
      const buf = new Int32Array(
        used === 0 ? need : Math.max(need, (this.buf.length + (this.buf.length >>> 1) + 1) & ~1),
      );
      buf.set(this.buf.subarray(0, used));
      this.buf = buf;
    }
    return this.buf;
  }

  /**
   * Take `pairs` (`count` postings as id, tf pairs, ids ascending) as the whole list of this empty Postings. The
   * array may be a view of a larger buffer shared with other lists (the cold build's); a later growth moves the
   * list to a buffer of its own.
   */
  adopt(pairs: Int32Array, count: number): void {
    this.buf = pairs;
    this.n = count;
  }

  /** Count `more` postings written after the held ones into the buffer `reserve` returned. */
  commit(more: number): void {
    this.n += more;
  }

  /** Double the capacity (at least 2 pairs); returns the new buffer. */
  private grow(): Int32Array {
    const buf = new Int32Array(Math.max(4, this.buf.length * 2));
    buf.set(this.buf);
    this.buf = buf;
    return buf;
  }

  /** Calls `fn(tf, id)` for each posting in order (on a snapshot, like the iterators). */
  forEach(fn: (tf: number, id: number, self: this) => void): void {
    const pairs = this.buf.slice(0, this.n << 1);
    for (let i = 0; i < pairs.length; i += 2) fn(pairs[i + 1]!, pairs[i]!, this);
  }

  /** Ids in order (a snapshot: removing during iteration, as MiniSearch's lazy cleanup may, is safe). */
  keys(): IterableIterator<number> {
    const ids: number[] = [];
    for (let i = 0; i < this.n; i++) ids.push(this.buf[i << 1]!);
    return ids[Symbol.iterator]();
  }

  entries(): IterableIterator<[number, number]> {
    const pairs: [number, number][] = [];
    for (let i = 0; i < this.n; i++) pairs.push([this.buf[i << 1]!, this.buf[(i << 1) + 1]!]);
    return pairs[Symbol.iterator]();
  }

  [Symbol.iterator](): IterableIterator<[number, number]> {
    return this.entries();
  }

  /** Scoring loop without iterator objects: calls `fn(id, tf)` for each posting in order. */
  each(fn: (id: number, tf: number) => void): void {
    const buf = this.buf;
    const end = this.n << 1;
    for (let i = 0; i < end; i += 2) fn(buf[i]!, buf[i + 1]!);
  }
}

/** The shared empty buffer of a Postings without any posting yet (never written: the first `set` grows it). */
const EMPTY = new Int32Array(0);

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
    /** The radix tree: edge label → child node, and '' → the value of the key ending at that node. */
    _tree: TreeNode;
    /** Cached entry count; `undefined` after a change. */
    _size: number | undefined;
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

/** A node of MiniSearch 7.2's radix tree (SearchableMap): edge label → child, and LEAF → the key's value. */
type TreeNode = Map<string, TreeNode | TermData>;

/** The label under which a radix tree node holds its own key's value. */
const LEAF = '';

/** The value of a node that holds only its own key's value (most nodes of a large tree), else undefined. */
function onlyLeaf(node: TreeNode): TermData | undefined {
  return node.size === 1 ? (node.get(LEAF) as TermData | undefined) : undefined;
}

/**
 * Inserts keys into MiniSearch's radix tree exactly as `SearchableMap.fetch(key, () => new Map())` does — the same
 * node Maps, with the same `set` and `delete` calls in the same order, so the tree (and its iteration order, which
 * `toJSON`, prefix expansion and typo search follow) is identical — but finds the child edge of a node by its
 * first code unit in an index instead of scanning the node's labels in order. That scan made each insertion cost
 * the number of children of the nodes passed: the root has one child per distinct first character, which is
 * thousands once Japanese terms are indexed. Both ways find the same edge: no two labels of one node start with
 * the same code unit (an insertion that would create one splits the edge instead).
 *
 * The index of a node is built from its labels when first passed with more than INDEXED_FANOUT children (smaller
 * nodes are scanned, which allocates less) and kept up to date by this inserter only, so one inserter serves one
 * batch of insertions with no other change to the tree in between.
 */
class TreeInserter {
  /** Per node with more than INDEXED_FANOUT children when first passed: first code unit of each label → label. */
  private readonly edges = new Map<TreeNode, Map<number, string>>();

  constructor(private readonly index: MiniSearchInternals['_index']) {}

  /** The label of `node` that starts with code unit `c`, or undefined. */
  private labelOf(node: TreeNode, c: number): string | undefined {
    let edges = this.edges.get(node);
    if (edges === undefined) {
      // A small node is scanned, as MiniSearch does; only wide ones (the root above all) get an index.
      if (node.size <= INDEXED_FANOUT) {
        for (const label of node.keys()) if (label !== LEAF && label.charCodeAt(0) === c) return label;
        return undefined;
      }
      edges = new Map();
      for (const label of node.keys()) if (label !== LEAF) edges.set(label.charCodeAt(0), label);
      this.edges.set(node, edges);
    }
    return edges.get(c);
  }

  /** The value of `key` (a new empty TermData, inserted, when the key is not in the tree). */
  fetch(key: string): TermData {
    this.index._size = undefined;
    let node = this.index._tree;
    const keyLength = key.length;
    let pos = 0;
    while (pos < keyLength) {
      const label = this.labelOf(node, key.charCodeAt(pos));
      if (label === undefined) {
        // No edge shares the next code unit: a new leaf node under the rest of the key.
        const child: TreeNode = new Map();
        const rest = key.slice(pos);
        node.set(rest, child);
        this.edges.get(node)?.set(rest.charCodeAt(0), rest);
        node = child;
        break;
      }
      const len = Math.min(keyLength - pos, label.length);
      let offset = 1;
      while (offset < len && key.charCodeAt(pos + offset) === label.charCodeAt(offset)) ++offset;
      const child = node.get(label) as TreeNode;
      if (offset === label.length) {
        node = child;
      } else {
        // The key leaves the edge part way: split it with an intermediate node (MiniSearch's order of calls).
        const intermediate: TreeNode = new Map();
        intermediate.set(label.slice(offset), child);
        const head = key.slice(pos, pos + offset);
        node.set(head, intermediate);
        node.delete(label);
        this.edges.get(node)?.set(head.charCodeAt(0), head);
        node = intermediate;
      }
      pos += offset;
    }
    let value = node.get(LEAF) as TermData | undefined;
    if (value === undefined) {
      value = newTermData();
      node.set(LEAF, value);
    }
    return value;
  }
}

/** Children above which TreeInserter indexes a node's labels instead of scanning them. */
const INDEXED_FANOUT = 16;

const newTermData = (): TermData => new Map();

/**
 * Most postings staged before `TermCache.flush` writes them (12 bytes each, so at most 24 MiB, released after the
 * sync): enough for the whole cold build of 10,000 notes (1.9 million postings) to write each list once, at its
 * exact size, in one shared buffer; a build flushed part way leaves its earlier shared buffers partly dead.
 */
const MAX_PENDING = 1 << 21;

/**
 * What `addDocument` and `removeDocument` keep per term of one MiniSearch instance, by the term's id in `table`:
 * the term's postings inside MiniSearch (so a known term skips the walk down the radix tree), scratch counts for
 * the field being added, and postings staged but not yet written.
 *
 * Invariant (outside `stageDocument` .. `flush`): for every interned term, `data[id]` is the term's postings map in
 * MiniSearch's tree (undefined when the term is not there) and `postings[id × 3 + field]` that map's entry for the
 * field. Staging breaks it only by adding lists that `flush` then attaches.
 */
export class TermCache {
  private readonly m: MiniSearchInternals;

  /**
   * A cache for `mini`, which must not have been changed by anything but this cache's functions. `maxPending`: most
   * postings staged before they are written (12 bytes each; tests make it small to flush within a batch).
   */
  constructor(
    readonly mini: MiniSearch<Doc>,
    private readonly maxPending = MAX_PENDING,
  ) {
    this.m = mini as unknown as MiniSearchInternals;
  }

  /** Interned terms of every text added or removed so far. */
  table = new TermTable();
  /** By term id: the term's postings map inside MiniSearch, or undefined when the term is not in the tree. */
  data: (TermData | undefined)[] = [];
  /** By term id × FIELDS.length + field id: the term's postings in that field, or undefined. */
  postings: (Postings | undefined)[] = [];
  /**
   * Slots whose list `stageDocument` created since the last flush, in order of creation: `flush` puts the terms in
   * the tree and the lists in the terms' maps in this order, which is the order MiniSearch's `add` would have.
   */
  freshSlot = new Int32Array(0);
  fresh = 0;

  /** By term id: the field pass that last counted the term, and its count in that pass. */
  stamp = new Int32Array(0);
  count = new Int32Array(0);

  /**
   * Postings staged by `stageDocument` and not yet in their Postings: per entry the postings slot (term id ×
   * FIELDS.length + field id), the short document id and the term frequency; `pending` entries are in use, and
   * `staged[slot]` counts those of each slot. `flush` writes them. Internal to this module (not private only so
   * `stageDocument` can fill them inline).
   */
  pendingSlot = new Int32Array(0);
  pendingDoc = new Int32Array(0);
  pendingTf = new Int32Array(0);
  pending = 0;
  staged = new Int32Array(0);

  /**
   * Room for `more` staged postings: flushes first when the log would pass `maxPending` (a single field with more
   * distinct terms still gets its room), and grows the log when needed.
   */
  makeRoom(more: number): void {
    if (this.pending + more <= this.pendingSlot.length) return;
    if (this.pending + more > this.maxPending && this.pending > 0) {
      this.flush();
      if (more <= this.pendingSlot.length) return;
    }
    // Small at first (so this path runs early, see TermTable's INITIAL_IDS), then four times larger each step: a
    // cold build stages hundreds of thousands of postings.
    let cap = Math.max(256, this.pendingSlot.length * 4);
    while (cap < this.pending + more) cap *= 4;
    cap = Math.max(Math.min(cap, this.maxPending), this.pending + more);
    this.pendingSlot = copied(this.pendingSlot, cap, this.pending);
    this.pendingDoc = copied(this.pendingDoc, cap, this.pending);
    this.pendingTf = copied(this.pendingTf, cap, this.pending);
  }

  /** Record that `stageDocument` created the list of `slot` (see `freshSlot`). */
  created(slot: number): void {
    if (this.fresh === this.freshSlot.length)
      this.freshSlot = copied(this.freshSlot, Math.max(64, this.fresh * 2), this.fresh);
    this.freshSlot[this.fresh++] = slot;
  }

  /**
   * Put the lists created since the last flush into MiniSearch: each term into the radix tree (when not there yet)
   * and each list into its term's map under its field, in creation order.
   */
  private attach(): void {
    const n = this.fresh;
    this.fresh = 0;
    const { freshSlot, data, postings, table, m } = this;
    let inserter: TreeInserter | undefined;
    for (let k = 0; k < n; k++) {
      const slot = freshSlot[k]!;
      const id = (slot / FIELDS.length) | 0;
      let map = data[id];
      if (map === undefined) {
        inserter ??= new TreeInserter(m._index);
        map = inserter.fetch(table.term(id));
        data[id] = map;
      }
      map.set(slot - id * FIELDS.length, postings[slot]!);
    }
  }

  /**
   * Write every staged posting into its Postings. Staged postings of one slot are in ascending short id order
   * (documents are staged in the order MiniSearch numbers them) and above every id held there, so each list is
   * appended to. A large batch places each list first (the lists that were empty get exactly their size, all of
   * them as views of one new buffer; the others grow once) and then copies every posting straight to its place; a
   * small batch is appended entry by entry.
   */
  flush(): void {
    if (this.fresh !== 0) this.attach();
    const n = this.pending;
    if (n === 0) return;
    this.pending = 0;
    const { pendingSlot, pendingDoc, pendingTf, postings, staged } = this;
    const slots = postings.length;
    if (n * 4 < slots) {
      for (let k = 0; k < n; k++) {
        const slot = pendingSlot[k]!;
        postings[slot]!.append(pendingDoc[k]!, pendingTf[k]!);
        staged[slot] = 0;
      }
    } else {
      // Each loop is a function of its own: V8 optimizes a long loop while it runs (on-stack replacement), and
      // code after it in the same function would then run without type feedback and be thrown away.
      const arena = new Int32Array(freshPairs(postings, staged, slots) * 2);
      const bufs = new Array<Int32Array>(slots);
      const next = new Int32Array(slots);
      placeLists(postings, staged, slots, arena, bufs, next);
      scatter(pendingSlot, pendingDoc, pendingTf, n, bufs, next);
      commitLists(postings, staged, slots, arena, next);
    }
    // Keep only a small log between syncs.
    if (this.pendingSlot.length > 1 << 16) {
      this.pendingSlot = new Int32Array(0);
      this.pendingDoc = new Int32Array(0);
      this.pendingTf = new Int32Array(0);
    }
  }

  /**
   * Grow the per-id arrays to cover every id of `table`, and at least `min` ids (doubling from 16, for the reason
   * of `makeRoom`). `sync` reserves room for the terms its new notes may bring before it stages them: a growth
   * inside the staging loop after V8 optimized it would make V8 throw that code away (the growth path has no type
   * feedback when it first runs late).
   */
  fit(min = 0): void {
    const size = Math.max(this.table.size, min);
    if (this.stamp.length >= size) return;
    let cap = Math.max(16, this.stamp.length * 2);
    while (cap < size) cap *= 2;
    this.stamp = copied(this.stamp, cap, this.stamp.length);
    this.count = new Int32Array(cap);
    this.staged = copied(this.staged, cap * FIELDS.length, this.staged.length);
  }

  /** Read every interned term's postings from MiniSearch again (after a change this cache did not make). */
  resync(): void {
    this.data = [];
    this.postings = [];
    for (let id = 0; id < this.table.size; id++) {
      const map = this.m._index.get(this.table.term(id));
      this.data[id] = map;
      for (let f = 0; f < FIELDS.length; f++) this.postings[id * FIELDS.length + f] = map?.get(f);
    }
  }

  /** Terms whose postings are cached, i.e. that some indexed note holds. */
  live(): number {
    let n = 0;
    for (const d of this.data) if (d !== undefined) n++;
    return n;
  }

  /**
   * A cache holding only the live terms (ids renumbered in their old order, so still in order of first sight), for
   * when removals have left many dead ones.
   */
  compacted(): TermCache {
    const next = new TermCache(this.mini, this.maxPending);
    for (let id = 0; id < this.table.size; id++) {
      const data = this.data[id];
      if (data === undefined) continue;
      const to = next.table.intern(this.table.term(id));
      next.data[to] = data;
      for (let f = 0; f < FIELDS.length; f++)
        next.postings[to * FIELDS.length + f] = this.postings[id * FIELDS.length + f];
    }
    return next;
  }
}

/** The first `used` entries of `a` in a new Int32Array of `cap` entries. */
function copied(a: Int32Array, cap: number, used: number): Int32Array<ArrayBuffer> {
  const next = new Int32Array(cap);
  next.set(a.subarray(0, used));
  return next;
}

/** Postings staged for lists that are empty now (they get their room in the flush's shared buffer). */
function freshPairs(postings: (Postings | undefined)[], staged: Int32Array, slots: number): number {
  let total = 0;
  for (let s = 0; s < slots; s++) {
    const c = staged[s]!;
    if (c !== 0 && postings[s]!.size === 0) total += c;
  }
  return total;
}

/**
 * Where the staged postings of each slot go: `bufs[s]` and `next[s]` (index of the next pair) — in `arena`, in
 * slot order, for a list that is empty now; at the end of the list's own (grown) buffer otherwise.
 */
function placeLists(
  postings: (Postings | undefined)[],
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
    const list = postings[s]!;
    if (list.size === 0) {
      bufs[s] = arena;
      next[s] = at;
      at += c << 1;
    } else {
      next[s] = list.size << 1;
      bufs[s] = list.reserve(c);
    }
  }
}

/** Copy each staged posting to the place `placeLists` gave its slot. */
function scatter(
  slotOf: Int32Array,
  docOf: Int32Array,
  tfOf: Int32Array,
  n: number,
  bufs: Int32Array[],
  next: Int32Array,
): void {
  for (let k = 0; k < n; k++) {
    const s = slotOf[k]!;
    const at = next[s]!;
    const buf = bufs[s]!;
    buf[at] = docOf[k]!;
    buf[at + 1] = tfOf[k]!;
    next[s] = at + 2;
  }
}

/** Hand each list its staged postings (a list that was empty gets its view of `arena`) and clear the counts. */
function commitLists(
  postings: (Postings | undefined)[],
  staged: Int32Array,
  slots: number,
  arena: Int32Array,
  next: Int32Array,
): void {
  for (let s = 0; s < slots; s++) {
    const c = staged[s]!;
    if (c === 0) continue;
    const list = postings[s]!;
    if (list.size === 0) {
      const end = next[s]!;
      list.adopt(arena.subarray(end - (c << 1), end), c);
    } else {
      list.commit(c);
    }
    staged[s] = 0;
  }
}

/** Field passes of `addDocument` and `removeDocument` so far (process-wide; only equality with a stamp matters). */
let passes = 0;

/**
 * Count the terms of `text` into `cache`: afterwards `cache.table.scratch[0 .. n)` holds the distinct term ids in
 * order of first occurrence (n returned) and `cache.count[id]` each one's term frequency.
 */
function countTerms(cache: TermCache, text: string): number {
  const total = cache.table.ids(text);
  cache.fit();
  const ids = cache.table.scratch;
  const { stamp, count } = cache;
  // A pass number is never reused, so stamps left by earlier passes never match.
  const pass = ++passes;
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

/**
 * Add `doc` to `mini` exactly as `MiniSearch.add` would with `miniSearchOptions()` — same postings, term
 * frequencies, field lengths (distinct terms per field) and insertion order (fields in FIELDS order, within a field
 * terms in order of first occurrence; this order decides the radix tree's shape and `toJSON`) — except that new
 * terms and lists and all postings are only staged in `cache`: the index is complete after `cache.flush()`, which
 * makes the same changes to MiniSearch's structures in the same order.
 *
 * Faster than `MiniSearch.add`: the terms of a field are interned as ids by `cache.table` (no string per token)
 * and counted in typed arrays; a known term's postings come from `cache` without a walk down the radix tree; new
 * terms enter the tree through `TreeInserter`; and staged postings are written list by list at the flush instead
 * of one at a time.
 *
 * @throws Error on a duplicate id
 */
function stageDocument(mini: MiniSearch<Doc>, doc: Doc, cache: TermCache): void {
  const m = mini as unknown as MiniSearchInternals;
  if (m._idToShortId.has(doc.id)) throw new Error('NoteIndex: duplicate id');
  const shortId = m.addDocumentId(doc.id);
  for (let f = 0; f < FIELDS.length; f++) {
    const fieldId = m._fieldIds[FIELDS[f]!]!;
    const distinct = countTerms(cache, doc[FIELDS[f]!]);
    m.addFieldLength(shortId, fieldId, m._documentCount - 1, distinct);
    cache.makeRoom(distinct);
    const ids = cache.table.scratch;
    const { count, postings: postingsOf, staged, pendingSlot, pendingDoc, pendingTf } = cache;
    let at = cache.pending;
    for (let k = 0; k < distinct; k++) {
      const id = ids[k]!;
      const slot = id * FIELDS.length + fieldId;
      if (postingsOf[slot] === undefined) {
        // First posting of this term in this field (since a removal emptied it): a new list, which the flush puts
        // into MiniSearch (kept out of this loop: MiniSearch's tree code is the part V8 most often re-optimizes).
        postingsOf[slot] = new Postings();
        cache.created(slot);
      }
      staged[slot]!++;
      pendingSlot[at] = slot;
      pendingDoc[at] = shortId;
      pendingTf[at] = count[id]!;
      at++;
    }
    cache.pending = at;
  }
}

/**
 * Add `doc` to `mini` exactly as `MiniSearch.add` would with `miniSearchOptions()` (see `stageDocument`).
 * `removeDocument` undoes it.
 *
 * @throws Error on a duplicate id
 */
export function addDocument(mini: MiniSearch<Doc>, doc: Doc, cache: TermCache): void {
  try {
    stageDocument(mini, doc, cache);
  } finally {
    cache.flush();
  }
}

/**
 * Add `docs` in order, exactly as `MiniSearch.add` of each would; the postings are written once at the end (the
 * cold build's path).
 *
 * @throws Error on a duplicate id (the documents before it are added)
 */
export function addDocuments(mini: MiniSearch<Doc>, docs: readonly Doc[], cache: TermCache): void {
  try {
    for (const doc of docs) stageDocument(mini, doc, cache);
  } finally {
    cache.flush();
  }
}

/**
 * Remove `doc` (with exactly the fields it was added with) from `mini`, leaving the same state `MiniSearch.remove`
 * leaves — postings, emptied field entries and terms dropped from the tree, document bookkeeping, running field
 * averages — with one postings update per distinct term of each field instead of a walk down the radix tree per
 * token. When some term of `doc` is not in the index under this note (which `addDocument` makes impossible), it
 * falls back to `MiniSearch.remove` before changing anything, and `cache` is reset.
 *
 * @throws Error when `doc.id` is not in the index
 */
export function removeDocument(mini: MiniSearch<Doc>, doc: Doc, cache: TermCache): void {
  const m = mini as unknown as MiniSearchInternals;
  const shortId = m._idToShortId.get(doc.id);
  if (shortId === undefined) throw new Error('NoteIndex: removing an unknown id');
  cache.flush();
  // Distinct term ids of each field, checked before anything changes.
  const perField: Int32Array[] = [];
  for (let f = 0; f < FIELDS.length; f++) {
    const fieldId = m._fieldIds[FIELDS[f]!]!;
    const distinct = countTerms(cache, doc[FIELDS[f]!]);
    const ids = cache.table.scratch.slice(0, distinct);
    for (let k = 0; k < distinct; k++) {
      if (cache.postings[ids[k]! * FIELDS.length + fieldId]?.has(shortId) !== true) {
        mini.remove(doc);
        cache.resync();
        return;
      }
    }
    perField.push(ids);
  }
  for (let f = 0; f < FIELDS.length; f++) {
    const fieldId = m._fieldIds[FIELDS[f]!]!;
    const ids = perField[f]!;
    m.removeFieldLength(shortId, fieldId, m._documentCount, ids.length);
    for (let k = 0; k < ids.length; k++) {
      const id = ids[k]!;
      const data = cache.data[id]!;
      const postings = cache.postings[id * FIELDS.length + fieldId]!;
      if (postings.size <= 1) {
        data.delete(fieldId);
        cache.postings[id * FIELDS.length + fieldId] = undefined;
      } else {
        postings.delete(shortId);
      }
      if (data.size === 0) {
        m._index.delete(cache.table.term(id));
        cache.data[id] = undefined;
      }
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

/** New terms per note that `sync` makes room for before indexing new notes (see `TermCache.fit`). */
const NEW_TERMS_PER_NOTE = 8;

/** Removals after which the term cache is checked for dead terms (see `sync`). */
const PRUNE_AFTER_REMOVALS = 512;

export class NoteIndex implements KnownNotes {
  private readonly entries = new Map<string, Entry>();
  private readonly mini: MiniSearch<Doc>;
  /** Term ids, their postings inside `mini` and scratch counts (see `addDocument`). */
  private terms: TermCache;
  private removals = 0;
  private generation = 0;
  private work: RankWork = { lists: 0, postings: 0, checks: 0 };
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
    this.terms = new TermCache(this.mini);
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
    // New notes' postings are staged and written after the loop (or before a removal, which flushes first), so a
    // cold build writes each postings list once, at its final size.
    let withText = 0;
    for (let i = 0; i < notes.length; i++) if (notes[i]!.text !== undefined) withText++;
    // Room for the terms they may bring (a guess: 8 new terms a note; the vocabulary grows much slower than that).
    if (withText > 0) this.terms.fit(this.terms.table.size + withText * NEW_TERMS_PER_NOTE);
    try {
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
        stageDocument(this.mini, docOf(note.id, entry), this.terms);
        this.entries.set(note.id, entry);
        this.heldBytes += bytes;
        changed = true;
      }
    } finally {
      this.terms.flush();
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
      // Terms no note holds any more stay interned; once they outnumber the live ones, keep only the live ones
      // (so the cache stays within twice the index's own vocabulary, at an amortized O(1) cost per term).
      const live = this.terms.live();
      if (this.terms.table.size - live > live) this.terms = this.terms.compacted();
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
   * title, body, meta, name order). The difference is memory: scores accumulate in typed arrays indexed by MiniSearch's
   * short document id instead of one result object with a `match` map per matching note, and only the best
   * `max` are turned into `RankedMatch` objects.
   *
   * Bounded expansions (the only departures from plain MiniSearch, deterministic, so that no corpus can make one
   * query cost more than a bounded multiple of a plain term's postings): the last query term uses at most
   * PREFIX_SHORT_MAX_TERMS prefix expansions when shorter than PREFIX_FULL_CHARS code points, else at most
   * PREFIX_MAX_TERMS; each term at most TYPO_MAX_TERMS typo expansions; in each case those with the most postings
   * (summed over fields; ties by term in ascending UTF-16 order), kept in MiniSearch's order. The exact term always
   * counts. A match records at most HIT_MAX_TERMS matched terms (the first in scoring order). On the real vaults
   * the tests and benchmark use, no prefix of three or more code points has more than PREFIX_MAX_TERMS expansions
   * and no term more than TYPO_MAX_TERMS typo neighbours, so their rankings are MiniSearch's exactly. Scratch
   * arrays grow with MiniSearch's next short id and are kept zeroed between calls.
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
    const sheet = new ScoreSheet(this.total, this.termScore, this.cover, this.termMark);
    const work: RankWork = { lists: 0, postings: 0, checks: 0 };
    this.work = work;
    /** Every derived term visited (for the snippet terms of the chosen matches). */
    const derived: [string, TermData][] = [];
    const fieldIds = FIELDS.map((f) => m._fieldIds[f]!);
    const boosts = FIELDS.map((f) => FIELD_BOOST[f]);
    const source: TermSource<TermData> = {
      exact: (term) => m._index.get(term),
      prefixes: (term) => this.prefixExpansions(term),
      typos: (term) =>
        keepMost(
          Array.from(m._index.fuzzyGet(term, 1), ([t, [data, distance]]) => [t, data, distance] as const),
          TYPO_MAX_TERMS,
          (e) => e[0],
          (e) => postingCount(e[1]),
        ),
      score: (data, weight, into) => {
        for (let f = 0; f < FIELDS.length; f++) {
          const fieldId = fieldIds[f]!;
          const freqs = data.get(fieldId);
          if (freqs === undefined) continue;
          const matching = freqs.size;
          const avg = m._avgFieldLength[fieldId]!;
          const scale = weight * boosts[f]!;
          work.lists++;
          work.postings += matching;
          freqs.each((docId, tf) => {
            const fieldLength = m._fieldLength.get(docId)![fieldId]!;
            into.add(docId, scale * bm25(tf, matching, m._documentCount, fieldLength, avg));
          });
        }
      },
    };
    try {
      scoreQuery(terms, source, sheet, (t, data) => derived.push([t, data]));
      // Best `max` by (coverage desc, rounded score desc, id asc).
      const best = bestMatches(sheet.touched, max, this.cover, this.total, (docId) => m._documentIds.get(docId)!);
      return best.map((s) => ({
        id: s.id,
        coverage: s.coverage,
        score: s.score,
        terms: matchedTerms(derived, (data) => {
          work.checks++;
          return fieldIds.some((f) => data.get(f)?.has(s.docId) === true);
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
   * Prefix expansions of the last query term (excluding the term itself), in MiniSearch's tree order (the order
   * `atPrefix` iterates: each node's entries last inserted first), at most `prefixCap(term)` of them, chosen as
   * `keepMost` chooses (see `rank`). Cost linear in the subtree below the prefix, with a string built only for the
   * expansions kept:
   * 1. one walk counts each expansion's postings, in tree order;
   * 2. when more than the cap, the cap-th largest count T splits them: every expansion above T is kept, and the
   *    rest of the room goes to expansions with exactly T postings, smallest terms first, found by a walk in
   *    lexicographic order that stops once the room is filled;
   * 3. a last walk in tree order names the kept ones.
   */
  private prefixExpansions(term: string): [string, TermData][] {
    const m = this.mini as unknown as MiniSearchInternals;
    const view = m._index.atPrefix(term) as unknown as { _tree: TreeNode; _prefix: string };
    const skipRoot = view._prefix.length === term.length;
    const cap = prefixCap(term);
    // One walk in tree order: each expansion's postings and where it sits (its inner node and its own edge label).
    const leaves: TermData[] = [];
    const counts: number[] = [];
    const owner: number[] = [];
    const labelOf: string[] = [];
    const parents: number[] = [-1];
    const edge: string[] = [view._prefix];
    const leaf = (data: TermData, node: number, label: string): void => {
      leaves.push(data);
      counts.push(postingCount(data));
      owner.push(node);
      labelOf.push(label);
    };
    const walk = (node: TreeNode, at: number, depth: number): void => {
      const labels = Array.from(node.keys());
      for (let i = labels.length - 1; i >= 0; i--) {
        const label = labels[i]!;
        if (label === LEAF) {
          if (depth > 0 || !skipRoot) leaf(node.get(LEAF) as TermData, at, '');
          continue;
        }
        const child = node.get(label) as TreeNode;
        const only = onlyLeaf(child);
        if (only !== undefined) {
          leaf(only, at, label);
          continue;
        }
        parents.push(at);
        edge.push(label);
        walk(child, parents.length - 1, depth + 1);
      }
    };
    walk(view._tree, 0, 0);
    const name = (i: number): string => {
      let s = labelOf[i]!;
      for (let n = owner[i]!; n >= 0; n = parents[n]!) s = edge[n]! + s;
      return s;
    };
    const out: [string, TermData][] = [];
    if (leaves.length <= cap) {
      for (let i = 0; i < leaves.length; i++) out.push([name(i), leaves[i]!]);
      return out;
    }
    // The cap-th largest count splits them: everything above it is kept; the rest of the room goes to the
    // expansions with exactly that count whose terms are smallest, found by a walk in lexicographic order that
    // stops once the room is filled.
    const threshold = Float64Array.from(counts).sort()[counts.length - cap]!;
    let room = cap;
    for (const n of counts) if (n > threshold) room--;
    const ties = new Set<TermData>();
    const lexical = (node: TreeNode, depth: number): void => {
      for (const label of Array.from(node.keys()).sort()) {
        if (ties.size >= room) return;
        if (label !== LEAF) lexical(node.get(label) as TreeNode, depth + 1);
        else if (depth > 0 || !skipRoot) {
          const data = node.get(LEAF) as TermData;
          if (postingCount(data) === threshold) ties.add(data);
        }
      }
    };
    lexical(view._tree, 0);
    for (let i = 0; i < leaves.length; i++) {
      const n = counts[i]!;
      if (n > threshold || (n === threshold && ties.has(leaves[i]!))) out.push([name(i), leaves[i]!]);
    }
    return out;
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
   * Search and apply the response limits of docs/TOOLS.md:
   * - at most `limit` hits; `truncated` when more notes matched;
   * - the sum over hits of code points of id + title + snippet stays ≤ `total_chars`; the first hit that would
   *   exceed it ends the list (later, smaller hits are not pulled forward, so order stays by rank) and sets
   *   `truncated`;
   * - each snippet is at most `snippet_chars` code points (clipping a snippet alone never sets `truncated`).
   * Every hit carries the note's title (`noteTitle`).
   */
  search(query: string, limit: number, limits: ResponseLimits): { hits: SearchHit[]; truncated: boolean } {
    return boundedHits(this.rank(query, limit + 1), limit, limits, (match) => {
      const entry = this.entries.get(match.id)!;
      return { title: noteTitle(entry, match.id), body: entry.body };
    });
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
  return { id, title: entry.title ?? '', body: entry.body, meta: entry.meta, name: noteName(id) };
}
