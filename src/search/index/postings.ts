/**
 * The postings lists of the index (docs/DESIGN.md, "The search index"): each (term, field) has one `Postings` list of
 * (note number, term frequency) pairs packed in one Int32Array, note numbers ascending; and the steps that write a
 * batch of staged postings into their lists at once (`freshPostings`, `placeLists`, `scatter`, `commitLists`, used
 * by `TermLists.flush`).
 */

/** Bits of a posting that hold the term frequency (the rest hold the note number). */
const TF_BITS = 10;
/** Largest term frequency a posting holds itself; this and larger ones are kept beside the list (`Postings.big`). */
export const TF_MASK = (1 << TF_BITS) - 1;
/**
 * Note numbers a posting can hold (2^21). An index holds at most max_entries notes (ceiling 500,000) and renumbers
 * its notes when fewer than half of the numbers in use are live (`compactDocs`), so one sync starts below
 * 2 × 500,000 and adds at most 500,000 more.
 */
export const MAX_NOTE_NUMBERS = 1 << (31 - TF_BITS);

/** One posting: note number `doc` in the high bits, the term frequency (at most TF_MASK) in the low TF_BITS. */
export function packed(doc: number, tf: number): number {
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

/** The first `used` entries of `a` in a new Int32Array of `cap` entries. */
export function copied(a: Int32Array, cap: number, used: number): Int32Array<ArrayBuffer> {
  const next = new Int32Array(cap);
  next.set(a.subarray(0, used));
  return next;
}

/** Postings staged for lists that are empty now (they get their room in the flush's shared buffer). */
export function freshPostings(lists: (Postings | undefined)[], staged: Int32Array, slots: number): number {
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
export function placeLists(
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
export function scatter(
  slotOf: Int32Array,
  postingOf: Int32Array,
  n: number,
  bufs: Int32Array[],
  next: Int32Array,
): void {
  for (let k = 0; k < n; k++) {
    const s = slotOf[k]!;
    const at = next[s]!;
    bufs[s]![at] = postingOf[k]!;
    next[s] = at + 1;
  }
}

/** Hand each list its staged postings (a list that was empty gets its view of `arena`) and clear the counts. */
export function commitLists(
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
