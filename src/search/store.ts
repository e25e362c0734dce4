/**
 * The note texts an index holds, outside the JavaScript heap (docs/DESIGN.md, "The search index"): each text is
 * written once into large byte chunks, as Latin-1 when every code unit is below U+0100 (one byte each, like V8's
 * one-byte strings) and as UTF-16LE otherwise (two bytes, never more than a JavaScript string), and decoded again
 * only for the few notes a search returns (snippets) or removes (their terms). Chunks are plain ArrayBuffers, so
 * the collector never scans or copies the texts; a text freed leaves dead bytes that a chunk gives back once all its
 * texts are freed, and `compact` rewrites the live texts when dead bytes outnumber live ones.
 */

/** Bytes per chunk (a larger text gets a chunk of its own). */
const CHUNK_BYTES = 4 * 1024 * 1024;
/** A code unit above U+00FF (the text is then stored as UTF-16LE). */
const WIDE = /[\u0100-\uffff]/;

/** Where one text sits: chunk, byte offset, byte length, and whether it is UTF-16LE. */
export interface TextRef {
  chunk: number;
  at: number;
  bytes: number;
  wide: boolean;
}

export class TextStore {
  private chunks: (Buffer | undefined)[] = [];
  /** Per chunk: bytes written, and bytes of live texts. */
  private written: number[] = [];
  private live: number[] = [];
  private liveBytes = 0;
  /** Bytes written and since freed, in chunks still held. */
  private deadBytes = 0;

  /** Bytes of the live texts. */
  get size(): number {
    return this.liveBytes;
  }

  /** Store `text`; returns where it sits. */
  put(text: string): TextRef {
    const wide = WIDE.test(text);
    const bytes = wide ? text.length * 2 : text.length;
    let last = this.chunks.length - 1;
    const chunk = this.chunks[last];
    if (chunk === undefined || this.written[last]! + bytes > chunk.length) {
      this.chunks.push(Buffer.allocUnsafeSlow(Math.max(CHUNK_BYTES, bytes)));
      this.written.push(0);
      this.live.push(0);
      last++;
    }
    const at = this.written[last]!;
    this.chunks[last]!.write(text, at, bytes, wide ? 'utf16le' : 'latin1');
    this.written[last] = at + bytes;
    this.live[last]! += bytes;
    this.liveBytes += bytes;
    return { chunk: last, at, bytes, wide };
  }

  /** The text at `ref` (which must be live). */
  get(ref: TextRef): string {
    return this.chunks[ref.chunk]!.toString(ref.wide ? 'utf16le' : 'latin1', ref.at, ref.at + ref.bytes);
  }

  /** UTF-16 code units `from` to `to` (clamped to the text) of the text at `ref`. */
  slice(ref: TextRef, from: number, to: number): string {
    const unit = ref.wide ? 2 : 1;
    const start = ref.at + Math.min(from * unit, ref.bytes);
    const end = ref.at + Math.min(to * unit, ref.bytes);
    return this.chunks[ref.chunk]!.toString(ref.wide ? 'utf16le' : 'latin1', start, Math.max(start, end));
  }

  /** Forget the text at `ref`; a chunk whose texts are all freed is released (unless it is the one written to). */
  free(ref: TextRef): void {
    const c = ref.chunk;
    this.live[c]! -= ref.bytes;
    this.liveBytes -= ref.bytes;
    this.deadBytes += ref.bytes;
    if (this.live[c] === 0 && c !== this.chunks.length - 1) {
      this.chunks[c] = undefined;
      this.deadBytes -= this.written[c]!;
      this.written[c] = 0;
    }
  }

  /** True when dead bytes in held chunks outnumber live ones (a `compact` then at least halves the chunks). */
  get wasteful(): boolean {
    return this.deadBytes > this.liveBytes && this.deadBytes > CHUNK_BYTES;
  }

  /** Rewrite every live text into fresh chunks; `refs` must be every live ref, and are updated in place. */
  compact(refs: Iterable<TextRef>): void {
    const old = this.chunks;
    this.chunks = [];
    this.written = [];
    this.live = [];
    this.liveBytes = 0;
    this.deadBytes = 0;
    for (const ref of refs) {
      const text = old[ref.chunk]!.toString(ref.wide ? 'utf16le' : 'latin1', ref.at, ref.at + ref.bytes);
      const moved = this.put(text);
      ref.chunk = moved.chunk;
      ref.at = moved.at;
    }
  }
}
