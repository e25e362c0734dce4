/**
 * The note texts an index holds, outside the JavaScript heap (docs/DESIGN.md, "The search index"): each text is
 * written once into large byte chunks as UTF-8 (the bytes the note file holds: its text was decoded from valid UTF-8,
 * so it re-encodes to exactly those bytes), and decoded again only for the few notes a search returns (the start of
 * the body, for snippets) or a sync removes (the whole text, for its terms). A string that is not well-formed UTF-16
 * (a lone surrogate, which UTF-8 cannot hold; never a verified note's text) is kept as UTF-16LE instead, so every
 * text comes back exactly as it was put. Chunks are plain ArrayBuffers, so the collector never scans or copies the
 * texts; a text freed leaves dead bytes that a chunk gives back once all its texts are freed, and the store rewrites
 * the live texts when dead bytes outnumber them.
 *
 * Texts are named by handles (small integers, reused after `free`); where a handle's text sits is kept in typed
 * arrays, so a held text costs no JavaScript object at all.
 */

/** Bytes per chunk (a larger text gets a chunk of its own). */
const CHUNK_BYTES = 4 * 1024 * 1024;
/** `putBytes` takes over a buffer of at least this many bytes as a chunk instead of copying from it. */
const ADOPT_BYTES = CHUNK_BYTES / 4;
/** Most UTF-8 bytes one UTF-16 code unit takes (a code point above U+FFFF takes 4 bytes for 2 units). */
const MAX_UTF8_PER_UNIT = 3;

export class TextStore {
  private chunks: (Buffer | undefined)[] = [];
  /** Per chunk: bytes written, and bytes of live texts. */
  private written: number[] = [];
  private live: number[] = [];
  private liveBytes = 0;
  /** Bytes written and since freed, in chunks still held. */
  private deadBytes = 0;
  /** Bytes of the chunks held (what the store costs, beyond the few bytes per handle). */
  private heldBytes = 0;
  /** By handle: chunk (-1 when the handle is free), byte offset, byte length, body start (bytes into the text). */
  private chunkOf = new Int32Array(64).fill(-1);
  private atOf = new Int32Array(64);
  private lengthOf = new Int32Array(64);
  private bodyOf = new Int32Array(64);
  /** By handle: 1 when the text is stored as UTF-16LE. */
  private wideOf = new Uint8Array(64);
  /** Chunk number of each buffer taken over from a scan (`adopted`); checked against `chunks` before use. */
  private readonly adoptedChunks = new WeakMap<ArrayBufferLike, number>();
  /** Handles freed and not yet reused (a stack), and the first never used. */
  private freeHandles = new Int32Array(64);
  private freeCount = 0;
  private nextHandle = 0;

  /** Bytes of the live texts. */
  get size(): number {
    return this.liveBytes;
  }

  /** Bytes this store holds: its chunks (live and dead texts, and room not yet written) and its per-handle arrays. */
  get memoryBytes(): number {
    return this.heldBytes + this.chunkOf.length * 17 + this.freeHandles.length * 4;
  }

  /**
   * Store `text`, whose body (what snippets read, `body`) starts at UTF-16 code unit `bodyAt` (0 ≤ bodyAt ≤ length,
   * never between the two halves of a surrogate pair); returns its handle.
   */
  put(text: string, bodyAt = 0): number {
    const wide = !(text as unknown as WellFormed).isWellFormed();
    let room = wide ? text.length * 2 : text.length * MAX_UTF8_PER_UNIT;
    const tail = this.chunks.length - 1;
    const current = this.chunks[tail];
    if (current !== undefined && !wide && this.written[tail]! + room > current.length)
      room = Buffer.byteLength(text, 'utf8');
    const last = this.chunkWithRoom(room);
    const chunk = this.chunks[last]!;
    const at = this.written[last]!;
    const bytes = chunk.write(text, at, room, wide ? 'utf16le' : 'utf8');
    this.written[last] = at + bytes;
    this.live[last]! += bytes;
    this.liveBytes += bytes;
    const h = this.handle();
    this.chunkOf[h] = last;
    this.atOf[h] = at;
    this.lengthOf[h] = bytes;
    this.wideOf[h] = wide ? 1 : 0;
    this.bodyOf[h] =
      bodyAt <= 0 ? 0 : wide ? Math.min(bodyAt, text.length) * 2 : Buffer.byteLength(text.slice(0, bodyAt), 'utf8');
    return h;
  }

  /** The chunk with `room` bytes free after what is written: the last one, or a new one of at least CHUNK_BYTES. */
  private chunkWithRoom(room: number): number {
    const last = this.chunks.length - 1;
    const chunk = this.chunks[last];
    if (chunk !== undefined && this.written[last]! + room <= chunk.length) return last;
    const bytes = Math.max(CHUNK_BYTES, room);
    this.chunks.push(Buffer.allocUnsafeSlow(bytes));
    this.written.push(0);
    this.live.push(0);
    this.heldBytes += bytes;
    return last + 1;
  }

  /**
   * Store the text whose UTF-8 bytes are `bytes` (well-formed: what a note's verified text re-encodes to), its body
   * starting `bodyByte` bytes in (at a character boundary); returns its handle. The same as `put` of the decoded
   * text, without encoding it again.
   */
  putBytes(bytes: Uint8Array, bodyByte = 0): number {
    const n = bytes.length;
    if (bytes.buffer.byteLength >= ADOPT_BYTES) return this.adopted(bytes, bodyByte);
    const last = this.chunkWithRoom(n);
    const chunk = this.chunks[last]!;
    const at = this.written[last]!;
    chunk.set(bytes, at);
    this.written[last] = at + n;
    this.live[last]! += n;
    this.liveBytes += n;
    const h = this.handle();
    this.chunkOf[h] = last;
    this.atOf[h] = at;
    this.lengthOf[h] = n;
    this.wideOf[h] = 0;
    this.bodyOf[h] = bodyByte;
    return h;
  }

  /**
   * `putBytes` of bytes that lie in a large buffer (a scan's `TextArena` chunk, plain or shared with the cold
   * thread, which only reads it and is gone once the first answer is written): the buffer becomes a chunk of this
   * store as it is, read-only (nothing more is written into it), instead of the bytes being copied. A first call's
   * build thereby holds each text once, not once in the scan's chunks and once here. Bytes of the buffer no text
   * of this store uses count as dead and go at the next rewrite.
   */
  private adopted(bytes: Uint8Array, bodyByte: number): number {
    const buffer = bytes.buffer;
    let c = this.adoptedChunks.get(buffer);
    if (c === undefined || this.chunks[c]?.buffer !== buffer) {
      // Full as far as this store is concerned: nothing is appended to it, and bytes no text holds are dead.
      const chunk = Buffer.from(buffer);
      c = this.chunks.length;
      this.chunks.push(chunk);
      this.written.push(chunk.length);
      this.live.push(0);
      this.heldBytes += chunk.length;
      this.deadBytes += chunk.length;
      this.adoptedChunks.set(buffer, c);
    }
    const h = this.handle();
    this.chunkOf[h] = c;
    this.atOf[h] = bytes.byteOffset;
    this.lengthOf[h] = bytes.length;
    this.wideOf[h] = 0;
    this.bodyOf[h] = bodyByte;
    this.live[c]! += bytes.length;
    this.liveBytes += bytes.length;
    this.deadBytes -= bytes.length;
    return h;
  }

  /** A free handle, the arrays grown to hold it. */
  private handle(): number {
    if (this.freeCount > 0) return this.freeHandles[--this.freeCount]!;
    const h = this.nextHandle++;
    if (h >= this.chunkOf.length) {
      const cap = this.chunkOf.length * 2;
      const grow = <T extends Int32Array | Uint8Array>(a: T, make: (n: number) => T): T => {
        const b = make(cap);
        b.set(a);
        return b;
      };
      this.chunkOf = grow(this.chunkOf, (n) => new Int32Array(n).fill(-1));
      this.atOf = grow(this.atOf, (n) => new Int32Array(n));
      this.lengthOf = grow(this.lengthOf, (n) => new Int32Array(n));
      this.bodyOf = grow(this.bodyOf, (n) => new Int32Array(n));
      this.wideOf = grow(this.wideOf, (n) => new Uint8Array(n));
    }
    return h;
  }

  /** The whole text of handle `h` (which must be live). */
  get(h: number): string {
    const at = this.atOf[h]!;
    return this.chunks[this.chunkOf[h]!]!.toString(this.wideOf[h] ? 'utf16le' : 'utf8', at, at + this.lengthOf[h]!);
  }

  /**
   * The first `units` UTF-16 code units of the body of handle `h` (all of it when shorter): the same string as
   * `get(h).slice(bodyAt, bodyAt + units)`, decoding only the bytes those units can take (3 per unit, and 3 more so
   * that a character cut at the window's end lies past the units returned).
   */
  body(h: number, units: number): string {
    const start = this.atOf[h]! + this.bodyOf[h]!;
    const end = this.atOf[h]! + this.lengthOf[h]!;
    const chunk = this.chunks[this.chunkOf[h]!]!;
    if (this.wideOf[h]) return chunk.toString('utf16le', start, Math.min(end, start + units * 2));
    const text = chunk.toString('utf8', start, Math.min(end, start + (units + 1) * MAX_UTF8_PER_UNIT));
    return text.length > units ? text.slice(0, units) : text;
  }

  /** Forget the text of handle `h`; a chunk whose texts are all freed is released (unless it is the one written to). */
  free(h: number): void {
    const c = this.chunkOf[h]!;
    const bytes = this.lengthOf[h]!;
    this.chunkOf[h] = -1;
    this.freeHandles = this.freeCount < this.freeHandles.length ? this.freeHandles : grown(this.freeHandles);
    this.freeHandles[this.freeCount++] = h;
    this.live[c]! -= bytes;
    this.liveBytes -= bytes;
    this.deadBytes += bytes;
    if (this.live[c] === 0 && c !== this.chunks.length - 1) {
      this.heldBytes -= this.chunks[c]!.length;
      this.chunks[c] = undefined;
      this.deadBytes -= this.written[c]!;
      this.written[c] = 0;
    }
    if (this.deadBytes > this.liveBytes && this.deadBytes > CHUNK_BYTES) this.compact();
  }

  /** Rewrite every live text into fresh chunks (handles keep their texts); at least halves the chunks held. */
  private compact(): void {
    const old = this.chunks;
    this.chunks = [];
    this.written = [];
    this.live = [];
    this.liveBytes = 0;
    this.deadBytes = 0;
    this.heldBytes = 0;
    for (let h = 0; h < this.nextHandle; h++) {
      const c = this.chunkOf[h]!;
      if (c < 0) continue;
      const bytes = this.lengthOf[h]!;
      let last = this.chunks.length - 1;
      if (last < 0 || this.written[last]! + bytes > this.chunks[last]!.length) {
        const size = Math.max(CHUNK_BYTES, bytes);
        this.chunks.push(Buffer.allocUnsafeSlow(size));
        this.written.push(0);
        this.live.push(0);
        this.heldBytes += size;
        last++;
      }
      const at = this.written[last]!;
      old[c]!.copy(this.chunks[last]!, at, this.atOf[h]!, this.atOf[h]! + bytes);
      this.written[last] = at + bytes;
      this.live[last]! += bytes;
      this.liveBytes += bytes;
      this.chunkOf[h] = last;
      this.atOf[h] = at;
    }
  }
}

/** String.prototype.isWellFormed (ES2024, in every Node.js this project supports; not in the configured lib). */
interface WellFormed {
  isWellFormed(): boolean;
}

/** `a` in an Int32Array twice as long. */
function grown(a: Int32Array<ArrayBuffer>): Int32Array<ArrayBuffer> {
  const b = new Int32Array(a.length * 2);
  b.set(a);
  return b;
}
