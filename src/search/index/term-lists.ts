/**
 * The term side of the index (docs/DESIGN.md, "The search index"): terms interned as ids (`TermTable`), one
 * `Postings` list per (term, field) at slot term id × FIELDS.length + field, how many lists each term has, the
 * dictionary of live terms in lexicographic order (`TermDictionary`), and the postings staged by a sync and written
 * in batches (`flush`). `SyncedIndex` (synced.ts) adds the held notes on top; this class has no notion of a note
 * beyond its number.
 */
import { TermTable } from '../terms.js';
import { FIELDS } from './scoring.js';
import { commitLists, copied, freshPostings, placeLists, type Postings, scatter } from './postings.js';
import { TermDictionary } from './term-dictionary.js';

const F = FIELDS.length;

/**
 * Most postings staged before they are written (8 bytes each, so at most 32 MiB, released after the sync): enough
 * for the whole cold build of 10,000 notes (about 2 million postings) to write each list once, at its exact size, in
 * one shared buffer; a larger build writes in batches of this many, each list grown to its exact size per batch.
 */
const MAX_PENDING = 1 << 22;

/** The term side's state and upkeep (extended by `SyncedIndex`; not used on its own). */
export class TermLists {
  protected table = new TermTable();
  /** By term id × F + field: the term's postings in that field, or undefined. */
  protected lists: (Postings | undefined)[] = [];
  /** By term id: lists the term has (0 once no note holds it). */
  protected listCount = new Int32Array(0);
  protected dict: TermDictionary;
  /** Terms with at least one list (the others stay interned until `compactTerms`). */
  protected liveTerms = 0;
  /** By term id: 1 while the dictionary holds the id (sorted or recent). */
  protected inDict = new Uint8Array(0);
  /** Field-pass scratch: per term id, the pass that last counted it and its count in that pass. */
  protected stamp = new Int32Array(0);
  protected count = new Int32Array(0);
  private pass = 0;
  /** Postings staged by `addDocument` and written by `flush`: slot (term id × F + field), posting (`packed`). */
  protected pendingSlot = new Int32Array(0);
  protected pendingPosting = new Int32Array(0);
  protected pending = 0;
  /** Bulk writes of staged postings in the current sync (more than one: lists are repacked after it). */
  protected bulkFlushes = 0;
  /** By slot: postings staged and not yet written. */
  protected staged = new Int32Array(0);

  constructor(private readonly maxPending = MAX_PENDING) {
    this.dict = this.newDictionary();
  }

  protected newDictionary(): TermDictionary {
    return new TermDictionary(
      (id) => this.table.term(id),
      (id) => this.listCount[id]! > 0,
    );
  }

  /** Grow the per-term arrays to at least `min` ids (and every id of the table). */
  protected fitTerms(min = 0): void {
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
  protected trimTerms(): void {
    let cap = 16;
    while (cap < this.table.size) cap *= 2;
    if (cap * 2 > this.stamp.length) return;
    this.stamp = this.stamp.slice(0, cap);
    this.count = new Int32Array(cap);
    this.listCount = this.listCount.slice(0, cap);
    this.inDict = this.inDict.slice(0, cap);
    this.staged = new Int32Array(cap * F);
  }

  /**
   * Count the terms of `text`: afterwards `table.scratch[0 .. n)` holds the distinct term ids in order of first
   * occurrence (n returned) and `count[id]` each one's term frequency.
   */
  protected countTerms(text: string): number {
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

  /** A term got its first list: it is live, and enters the dictionary unless still there from an earlier life. */
  protected termBorn(term: number): void {
    this.liveTerms++;
    if (this.inDict[term] === 0) {
      this.inDict[term] = 1;
      this.dict.add(term);
    }
  }

  /** Room for `more` staged postings: flushes first when the log would pass `maxPending`. */
  protected makeRoom(more: number): void {
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
  protected flush(): void {
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
   * Move every list into one buffer of exactly the postings held. After a build written in several batches, lists
   * sit in the shared buffers of earlier batches (kept whole by any list still viewing them) or in buffers of their
   * own; this leaves 4 bytes per posting and nothing else.
   */
  protected repackPostings(): void {
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

  /** Intern only the live terms again (ids renumbered in their old order) when dead ones outnumber them. */
  protected compactTerms(): void {
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
}
