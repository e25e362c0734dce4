/**
 * A term table: interns the terms of texts as small integer ids, so that indexing a note costs one hash probe per
 * token and no string for a term the table has seen before (docs/SEARCH.md terms; the rules are `tokenize`'s, and
 * `tokenize` stays the reference: tests/search/terms.test.ts checks that `ids` gives exactly its terms).
 *
 * Why: building the index of 2,000 notes tokenized 624,000 tokens, and each one cost a lowercased copy of its text,
 * a sliced string and a `Map` lookup that hashed that fresh string (together about half of the build).
 *
 * How: an ASCII text is copied to bytes (by `TextEncoder.encodeInto`, which also tells whether it is ASCII) and
 * scanned once: letters are lowercased on the fly, `tokenize`'s ASCII rules are applied (runs of a–z/0–9; an
 * apostrophe between two word characters joins them and is dropped; a term is cut to MAX_TERM_CHARS), and a hash
 * is computed as it goes. The term is looked up in an open-addressing table of its own (hash → id, verified by
 * comparing its bytes with the stored term's); a string is built only for a new term. In a text with non-ASCII
 * code units, only the whitespace-bounded pieces holding them take `tokenize`'s general rules (`fold`, then
 * `scanSpans`; `idsOfMixed` for why the pieces give the same terms), and each term is hashed and compared where it
 * lies in the piece (`internSpan`), again building a string only for a new term. A piece that `scansAsFolded` is
 * not folded at all (most Korean and Chinese text).
 *
 * Ids are 0, 1, 2, … in order of first sight and never change; the table only grows (a caller that wants to drop
 * dead terms builds a new table). Memory: per term its string, its hash, its code units (one byte each for an
 * ASCII term, two otherwise), two slots of two int32 and two int32 of `meta`; about 70 bytes for a short term.
 */
import { finish, HASH_SEED, hashOf, isSpace, samePool, sameWide, termString, WORD_LOWER } from './term-text.js';
import { fold, scansAsFolded, MAX_TERM_CHARS, type SpanSink, scanSpans } from './tokenize.js';

/**
 * The running hash's seed as a constant of this module: read once per term, an imported binding costs a check on
 * every read (measured: about 10 % of `ids` on the shipped corpora).
 */
const SEED = HASH_SEED;

const APOSTROPHE = 0x27;
/** The next non-ASCII code unit, and the next ASCII whitespace (global, so `lastIndex` says where to start). */
const NON_ASCII = /[\u0080-\uffff]/g;
const SPACE = /[\t\n\v\f\r ]/g;

/**
 * Starting capacity in ids. Small on purpose: every array of the table then grows within the first few notes,
 * while V8 still runs this code unoptimized, so the growth paths have type feedback by the time the hot loops are
 * optimized (a path first taken after that makes V8 throw the optimized code away and start over).
 */
const INITIAL_IDS = 16;

/** Int32 values per slot of the table (see `TermTable.slots`). */
const SLOT = 2;
/** Added to the length code of a term kept in `wide` (lengths are far below it). */
const WIDE = 1 << 30;

/**
 * Most slots a lookup walks before it asks `overflow` instead. The hash is not keyed, so someone who writes notes
 * can choose many terms with one hash; without a bound every such term would walk the whole cluster they form
 * (quadratic work). Past PROBE_LIMIT slots a term lives in a `Map`, whose string hashing V8 seeds per process, so
 * the worst case costs what a `Map` lookup per token cost before this table existed.
 */
const PROBE_LIMIT = 16;

/** Most code units of whitespace-separated pieces joined into one pass of the general path (see `idsOfMixed`). */
const MERGE_PIECES_UNITS = 2048;
/** Largest ASCII gap, in code units, between two non-ASCII pieces that are still joined. */
const MERGE_GAP_UNITS = 64;

/** Code units `ids` looks at for a non-ASCII one before it copies a text to bytes. */
const ASCII_PEEK = 64;

/** Longest text whose byte copy the table keeps for the next call (larger ones get a buffer of their own). */
const KEEP_BYTES = 1 << 20;
const encoder = new TextEncoder();

/** What `TermTable.exportState` hands over (see there). */
export interface TermTableState {
  terms: string[];
  hashes: Int32Array<ArrayBuffer>;
  meta: Int32Array<ArrayBuffer>;
  pool: Uint8Array<ArrayBuffer>;
  poolUsed: number;
  wide: Uint16Array<ArrayBuffer>;
  wideUsed: number;
  slots: Int32Array<ArrayBuffer>;
  overflow: [string, number][];
}

/** The typed arrays' buffers of a `TermTableState` (what a transfer list moves instead of copying). */
export function termStateBuffers(state: TermTableState): ArrayBuffer[] {
  return [state.hashes, state.meta, state.pool, state.wide, state.slots].map((a) => a.buffer as ArrayBuffer);
}

export class TermTable {
  /** Term string of each id. */
  private terms: string[] = [];
  /** Finished hash of each id's term (for probes and for rehashing on growth). */
  private hashes = new Int32Array(INITIAL_IDS);
  /**
   * Per id, two int32: where its term starts in `pool` (an ASCII term) or `wide` (a term with a non-ASCII code
   * unit), and its length code: its length in code units, with WIDE added for a term in `wide`. Ids are given in
   * order of first sight, so the commonest terms' entries (and code units) lie close together near the start.
   */
  private meta = new Int32Array(INITIAL_IDS * 2);
  /** The bytes of every ASCII term, back to back (what the ASCII scan compares a candidate with). */
  private pool = new Uint8Array(INITIAL_IDS * 8);
  private poolUsed = 0;
  /** The code units of every term with a non-ASCII code unit, back to back. */
  private wide = new Uint16Array(INITIAL_IDS * 8);
  private wideUsed = 0;
  /**
   * Open-addressing slots (linear probing), two int32 each: the term's hash and id + 1 (0 when the slot is empty).
   * A lookup reads the slot, the id's `meta` entry and the term's code units: with the vocabulary of a real vault
   * (tens of thousands of terms) each array read is a likely cache miss, so nothing else is read (not the term's
   * string). The slot count is a power of two, at most half of them used.
   */
  private slots = new Int32Array(INITIAL_IDS * 2 * SLOT);
  /**
   * Terms whose probe sequence held no empty slot within PROBE_LIMIT when they were placed. Slots are never
   * emptied, so such a term's sequence never gains an empty slot there later either (until a rehash, which places
   * every term again): a lookup that walks PROBE_LIMIT slots without an answer finds the term here or nowhere.
   */
  private overflow = new Map<string, number>();
  /** The text being scanned, as bytes (UTF-8, so one byte per code unit when the text is ASCII). */
  private bytes = new Uint8Array(256);
  /**
   * Term ids written by `ids` (valid until the next call; the table grows and reuses it). Callers may overwrite it
   * between calls.
   */
  scratch = new Int32Array(64);
  /** The folded piece `spanSink` reads spans of, and how many ids `scratch` holds while it runs. */
  private spanText = '';
  private spanCount = 0;
  /** Interns each term `scanSpans` finds in `spanText` and appends its id to `scratch`. */
  private readonly spanSink: SpanSink = (start, end, joined) => {
    if (this.spanCount >= this.scratch.length) this.roomFor(this.spanCount, 1);
    this.scratch[this.spanCount++] = this.internSpan(this.spanText, start, end, joined);
  };

  /**
   * Everything the table holds, for a table built on another thread (the cold thread's build,
   * src/search/cold-worker.ts): the term strings by id and the typed arrays, to be moved (`transferables`), not
   * copied. The table must not be used afterwards.
   */
  exportState(): TermTableState {
    return {
      terms: this.terms,
      hashes: this.hashes,
      meta: this.meta,
      pool: this.pool,
      poolUsed: this.poolUsed,
      wide: this.wide,
      wideUsed: this.wideUsed,
      slots: this.slots,
      overflow: [...this.overflow],
    };
  }

  /** A table holding exactly what `exportState` gave (ids, spellings, slots): the same answers to every lookup. */
  static fromState(state: TermTableState): TermTable {
    const table = new TermTable();
    table.terms = state.terms;
    table.hashes = state.hashes;
    table.meta = state.meta;
    table.pool = state.pool;
    table.poolUsed = state.poolUsed;
    table.wide = state.wide;
    table.wideUsed = state.wideUsed;
    table.slots = state.slots;
    table.overflow = new Map(state.overflow);
    return table;
  }

  /** Distinct terms interned so far; ids are 0 .. size-1 in order of first sight. */
  get size(): number {
    return this.terms.length;
  }

  /** The term string of `id` (undefined outside 0 .. size-1). */
  term(id: number): string {
    return this.terms[id]!;
  }

  /** Id of `term` (a string as `tokenize` returns it), or -1. */
  find(term: string): number {
    const h = hashOf(term);
    const { slots, terms } = this;
    const mask = (slots.length >> 1) - 1;
    for (let i = h & mask, k = 0; k < PROBE_LIMIT; i = (i + 1) & mask, k++) {
      const s = slots[(i << 1) + 1]!;
      if (s === 0) return -1;
      if (slots[i << 1] === h && terms[s - 1] === term) return s - 1;
    }
    return this.overflow.get(term) ?? -1;
  }

  /** Id of `term`, interning it when new. */
  intern(term: string): number {
    const h = hashOf(term);
    const { slots, terms } = this;
    const mask = (slots.length >> 1) - 1;
    for (let i = h & mask, k = 0; k < PROBE_LIMIT; i = (i + 1) & mask, k++) {
      const s = slots[(i << 1) + 1]!;
      if (s === 0) return this.add(term, h, i);
      if (slots[i << 1] === h && terms[s - 1] === term) return s - 1;
    }
    return this.overflow.get(term) ?? this.add(term, h, -1);
  }

  /**
   * Term ids of `text`, in text order: exactly one id per term of `tokenize(text)`, duplicates kept. Written into
   * `this.scratch` (grown when needed; valid until the next call); returns the count. Terms not seen before get
   * the next ids, in order of first occurrence.
   */
  ids(text: string): number {
    const n = text.length;
    // A non-ASCII code unit near the start (a Korean or Chinese note) makes the copy below pointless.
    for (let k = Math.min(n, ASCII_PEEK) - 1; k >= 0; k--) if (text.charCodeAt(k) >= 0x80) return this.idsOfMixed(text);
    const bytes = n <= this.bytes.length ? this.bytes : this.bytesFor(n);
    // One native copy that also tells whether the text is ASCII: then every code unit became one byte.
    const { read, written } = encoder.encodeInto(text, bytes);
    if (read !== n || written !== n) return this.idsOfMixed(text);
    // A term takes at least one code unit and is followed by a separator or the end: at most ceil(n / 2) terms.
    if (this.scratch.length <= n >>> 1) this.growScratch((n >>> 1) + 1);
    return this.idsOfBytes(bytes, n, 0);
  }

  /**
   * `ids` for a text with non-ASCII code units. Only the stretches around them take `tokenize`'s general path
   * (`fold` and `scanSpans`); the rest takes the ASCII path. The text is cut at ASCII whitespace (tab, line feed,
   * vertical tab, form feed, carriage return, space), which gives the same terms as `tokenize` of the whole text:
   * - no term spans whitespace (every rule of `scanSpans` works within one word);
   * - NFKC maps a piece the same way alone as inside the text: whitespace is a starter that composes with nothing,
   *   and no ASCII character is the second of a canonical composition;
   * - lowercasing depends on context only for the Greek final sigma (Unicode Final_Sigma), whose context stops at
   *   whitespace: whitespace is neither cased nor case-ignorable.
   * A stretch without non-ASCII code units is ASCII text, for which `tokenize`'s ASCII path applies unchanged.
   */
  private idsOfMixed(text: string): number {
    const n = text.length;
    if (scansAsFolded(text, 0, n)) {
      // The whole text scans as its fold does (most Korean and Chinese notes): one pass, no pieces.
      this.spanText = text;
      this.spanCount = 0;
      scanSpans(text, 0, n, this.spanSink);
      this.spanText = '';
      return this.spanCount;
    }
    let count = 0;
    let from = 0;
    while (from < n) {
      NON_ASCII.lastIndex = from;
      if (!NON_ASCII.test(text)) {
        count = this.idsOfAscii(text, from, n, count);
        break;
      }
      const at = NON_ASCII.lastIndex - 1;
      // The piece holding the non-ASCII code unit at `at`: from just after the whitespace before it to the
      // whitespace after it.
      let start = at;
      while (start > from && !isSpace(text.charCodeAt(start - 1))) start--;
      SPACE.lastIndex = at;
      let end = SPACE.test(text) ? SPACE.lastIndex - 1 : n;
      // Take in the following pieces while the next non-ASCII unit is close (a sentence of Korean or Greek words
      // separated by spaces): one general pass over the joined pieces costs far less than one per word, and the
      // terms are the same (the cut points are still whitespace).
      while (end < n && end - start < MERGE_PIECES_UNITS) {
        NON_ASCII.lastIndex = end;
        if (!NON_ASCII.test(text) || NON_ASCII.lastIndex - 1 - end > MERGE_GAP_UNITS) break;
        SPACE.lastIndex = NON_ASCII.lastIndex - 1;
        end = SPACE.test(text) ? SPACE.lastIndex - 1 : n;
      }
      if (start > from) count = this.idsOfAscii(text, from, start, count);
      // The terms of the folded piece, interned straight from their spans. NFKC can turn one code unit into several
      // words (U+FDFA into four), so room in `scratch` is made term by term.
      // A piece that scans as its fold does (most Korean and Chinese) is scanned in place; `internSpan`
      // lowercases A–Z.
      this.spanCount = count;
      if (scansAsFolded(text, start, end)) {
        this.spanText = text;
        scanSpans(text, start, end, this.spanSink);
      } else {
        this.spanText = fold(text.slice(start, end));
        scanSpans(this.spanText, 0, this.spanText.length, this.spanSink);
      }
      count = this.spanCount;
      this.spanText = '';
      from = end;
    }
    return count;
  }

  /** The ids of the ASCII text `text[from .. to)`, written into `scratch` from `count` on; returns the new count. */
  private idsOfAscii(text: string, from: number, to: number, count: number): number {
    const piece = from === 0 && to === text.length ? text : text.slice(from, to);
    // An ASCII term takes at least one code unit and is followed by a separator or the end.
    this.roomFor(count, (piece.length >>> 1) + 1);
    const bytes = piece.length <= this.bytes.length ? this.bytes : this.bytesFor(piece.length);
    encoder.encodeInto(piece, bytes);
    return this.idsOfBytes(bytes, piece.length, count);
  }

  /**
   * `ids` for an ASCII text copied into `bytes[0 .. n)`, written into `scratch` from `count` on (returns the new
   * count; the caller made room). Kept apart from `ids` (and every rare path in a method of
   * its own) so that this loop, which runs once per byte of every note, is compiled small and early by V8.
   */
  private idsOfBytes(bytes: Uint8Array, n: number, count: number): number {
    const out = this.scratch;
    const wordLower = WORD_LOWER;
    // The table's arrays, read again after every call that may grow them.
    let { slots, pool, meta } = this;
    let i = 0;
    while (i < n) {
      let lower = wordLower[bytes[i]!]!;
      if (lower === 0) {
        i++;
        continue;
      }
      // A word starts at i. Its term (lowercased, apostrophes dropped, clipped) is written over the word's own
      // bytes from `start` on: the write position never passes the read position.
      const start = i;
      const clip = start + MAX_TERM_CHARS;
      let end = start;
      let h = SEED;
      for (;;) {
        if (end < clip) {
          bytes[end++] = lower;
          h = (h * 31 + lower) | 0;
        }
        if (++i >= n) break;
        lower = wordLower[bytes[i]!]!;
        if (lower !== 0) continue;
        // An apostrophe followed by a word character joins the two runs and is dropped.
        if (bytes[i] === APOSTROPHE && i + 1 < n) {
          lower = wordLower[bytes[i + 1]!]!;
          if (lower !== 0) {
            i++;
            continue;
          }
        }
        break;
      }
      // finish(h), inline.
      h ^= h >>> 16;
      h = Math.imul(h, 0x85ebca6b);
      h ^= h >>> 13;
      // Most words are known and sit in their first slot: checked here, without a call; the rest (a collision
      // chain, or a new term) in internBytes.
      const len = end - start;
      const e = (h & ((slots.length >> 1) - 1)) * SLOT;
      const s = slots[e + 1]!;
      let id = -1;
      if (s !== 0 && slots[e] === h && meta[(s << 1) - 1] === len) {
        const at = meta[(s << 1) - 2]!;
        let k = 0;
        while (k < len && pool[at + k] === bytes[start + k]) k++;
        if (k === len) id = s - 1;
      }
      if (id < 0) {
        id = this.internBytes(bytes, start, len, h);
        ({ slots, pool, meta } = this);
      }
      out[count++] = id;
    }
    return count;
  }

  /** A byte buffer for a text of `n` code units (kept for the next call unless larger than KEEP_BYTES). */
  private bytesFor(n: number): Uint8Array {
    const bytes = new Uint8Array(Math.max(n, this.bytes.length * 2));
    if (bytes.length <= KEEP_BYTES) this.bytes = bytes;
    return bytes;
  }

  private growScratch(min: number): void {
    this.scratch = new Int32Array(Math.max(min, this.scratch.length * 2));
  }

  /** Makes `scratch` hold at least `count + more` ids, keeping the first `count`. */
  private roomFor(count: number, more: number): void {
    if (count + more <= this.scratch.length) return;
    const old = this.scratch;
    this.growScratch(count + more);
    this.scratch.set(old.subarray(0, count));
  }

  /**
   * Id of the term of span `text[start .. end)` (apostrophes dropped when `joined`, cut to MAX_TERM_CHARS code
   * points; see `SpanSink`), interning it when new. The hash and the comparison with a stored term read the span's
   * code units in place: a string is built only for a new term.
   */
  private internSpan(text: string, start: number, end: number, joined: boolean): number {
    let h = SEED;
    let len = 0;
    let stop = start;
    let lowered = false;
    let wideTerm = false;
    if (!joined && end - start <= MAX_TERM_CHARS) {
      // The common case: no apostrophe to drop, and short enough that no cut is possible (at most MAX_TERM_CHARS
      // code units, so at most that many code points).
      for (; stop < end; stop++) {
        let c = text.charCodeAt(stop);
        if (c >= 0x80) wideTerm = true;
        else if (c >= 0x41 && c <= 0x5a) {
          c += 0x20;
          lowered = true;
        }
        h = (h * 31 + c) | 0;
      }
      len = end - start;
    } else {
      let points = 0;
      for (; stop < end; stop++) {
        let c = text.charCodeAt(stop);
        if (joined && (c === 0x27 || c === 0x2019)) continue;
        // A low surrogate continues the code point its high surrogate started.
        if (c < 0xdc00 || c > 0xdfff) {
          if (points === MAX_TERM_CHARS) break;
          points++;
        }
        if (c >= 0x80) wideTerm = true;
        else if (c >= 0x41 && c <= 0x5a) c += 0x20;
        h = (h * 31 + c) | 0;
        len++;
      }
      lowered = true;
    }
    h = finish(h);
    const { slots, meta } = this;
    const code = wideTerm ? len + WIDE : len;
    const mask = (slots.length >> 1) - 1;
    let i = h & mask;
    let walked = 0;
    for (; walked < PROBE_LIMIT; i = (i + 1) & mask, walked++) {
      const e = i << 1;
      const s = slots[e + 1]!;
      if (s === 0) break;
      if (slots[e] !== h || meta[(s << 1) - 1] !== code) continue;
      const at = meta[(s << 1) - 2]!;
      if (
        wideTerm
          ? sameWide(this.wide, at, text, start, stop, joined)
          : samePool(this.pool, at, text, start, stop, joined)
      )
        return s - 1;
    }
    // A short slice is a copy in V8; a longer one would keep the whole text alive.
    const term = !lowered && len <= 12 ? text.slice(start, stop) : termString(text, start, stop, joined);
    if (walked < PROBE_LIMIT) return this.add(term, h, i);
    return this.overflow.get(term) ?? this.add(term, h, -1);
  }

  /** Id of the ASCII term `bytes[start .. start + len)` with finished hash `h`, interning it when new. */
  private internBytes(bytes: Uint8Array, start: number, len: number, h: number): number {
    const { slots, pool, meta } = this;
    const mask = (slots.length >> 1) - 1;
    let i = h & mask;
    let walked = 0;
    probe: for (; walked < PROBE_LIMIT; i = (i + 1) & mask, walked++) {
      const e = i << 1;
      const s = slots[e + 1]!;
      if (s === 0) break;
      if (slots[e] !== h || meta[(s << 1) - 1] !== len) continue;
      const at = meta[(s << 1) - 2]!;
      for (let k = 0; k < len; k++) if (pool[at + k] !== bytes[start + k]) continue probe;
      return s - 1;
    }
    // A fresh flat string, not a slice of some note text (which it would keep alive).
    const term = String.fromCharCode.apply(null, bytes.subarray(start, start + len) as unknown as number[]);
    if (walked < PROBE_LIMIT) return this.add(term, h, i);
    return this.overflow.get(term) ?? this.add(term, h, -1);
  }

  /**
   * Store `term` (hash `h`, known absent) in empty slot `at`, or in `overflow` when `at` is -1 (no empty slot within
   * PROBE_LIMIT); grows the table past half full.
   */
  private add(term: string, h: number, at: number): number {
    const id = this.terms.length;
    this.terms.push(term);
    if (id >= this.hashes.length) this.growIds();
    this.hashes[id] = h;
    const len = term.length;
    let ascii = true;
    for (let k = 0; k < len && ascii; k++) ascii = term.charCodeAt(k) < 0x80;
    this.meta[id << 1] = ascii ? this.pooled(term) : this.widened(term);
    this.meta[(id << 1) + 1] = ascii ? len : len + WIDE;
    if (at >= 0) this.place(this.slots, at, id);
    else this.overflow.set(term, id);
    if ((id + 1) * 2 > this.slots.length >> 2) this.rehash((this.slots.length >> 1) * 2);
    return id;
  }

  /** Copy the ASCII `term` to the end of `pool`; returns where it starts. */
  private pooled(term: string): number {
    const len = term.length;
    if (this.poolUsed + len > this.pool.length) this.growPool(len);
    const pool = this.pool;
    const from = this.poolUsed;
    for (let k = 0; k < len; k++) pool[from + k] = term.charCodeAt(k);
    this.poolUsed = from + len;
    return from;
  }

  /** Copy `term` (with a non-ASCII code unit) to the end of `wide`; returns where it starts. */
  private widened(term: string): number {
    const len = term.length;
    if (this.wideUsed + len > this.wide.length) {
      const wide = new Uint16Array(Math.max(this.wide.length * 2, this.wideUsed + len));
      wide.set(this.wide);
      this.wide = wide;
    }
    const wide = this.wide;
    const from = this.wideUsed;
    for (let k = 0; k < len; k++) wide[from + k] = term.charCodeAt(k);
    this.wideUsed = from + len;
    return from;
  }

  /** Write the slot of `id` at slot index `at` of `slots`. */
  private place(slots: Int32Array, at: number, id: number): void {
    const e = at << 1;
    slots[e] = this.hashes[id]!;
    slots[e + 1] = id + 1;
  }

  private growIds(): void {
    this.hashes = grown(this.hashes);
    this.meta = grown(this.meta);
  }

  private growPool(more: number): void {
    const pool = new Uint8Array(Math.max(this.pool.length * 2, this.poolUsed + more));
    pool.set(this.pool);
    this.pool = pool;
  }

  /**
   * Rebuild the slots at `capacity` (a power of two) from the stored hashes, placing every term again in id order
   * (so `overflow` is rebuilt too: a term goes there when its sequence has no empty slot within PROBE_LIMIT).
   */
  private rehash(capacity: number): void {
    const slots = new Int32Array(capacity * SLOT);
    const overflow = new Map<string, number>();
    const mask = capacity - 1;
    const hashes = this.hashes;
    for (let id = 0; id < this.terms.length; id++) {
      let i = hashes[id]! & mask;
      let walked = 0;
      while (slots[(i << 1) + 1] !== 0 && walked < PROBE_LIMIT) {
        i = (i + 1) & mask;
        walked++;
      }
      if (walked < PROBE_LIMIT) this.place(slots, i, id);
      else overflow.set(this.terms[id]!, id);
    }
    this.slots = slots;
    this.overflow = overflow;
  }
}

/** `a` copied into an Int32Array of twice its length. */
function grown(a: Int32Array): Int32Array<ArrayBuffer> {
  const b = new Int32Array(a.length * 2);
  b.set(a);
  return b;
}
