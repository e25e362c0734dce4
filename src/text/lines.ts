/**
 * Newline-delimited framing shared by the Hermes worker protocol and the MCP stdio transport (docs/DESIGN.md "Line
 * framing"): a byte stream split into lines, linear in the bytes received whatever the chunking, with a cap on
 * the bytes held for one line.
 */

/** One event from the splitter. An oversized line keeps only its first and last bytes (`prefix`, `suffix`). */
export type LineEvent = { kind: 'line'; bytes: Buffer } | { kind: 'oversized'; prefix: Buffer; suffix: Buffer };

/**
 * Splits a byte stream into lines of at most `maxBytes` bytes (without the newline; a trailing `\r` is dropped).
 *
 * Each chunk is searched for newlines once, from where the previous search ended, and a line's pieces are joined
 * once, when its newline arrives: total work is linear in the bytes received, however the stream is chunked (the
 * SDK's own read buffer joins the whole buffer again on every chunk, quadratic for one long line). A longer line is
 * never held whole: once it passes the limit only its first and last `keepBytes` are kept (to recover a request
 * id) and the rest is dropped as it arrives, until its newline, when one `oversized` event is emitted.
 */
export class LineSplitter {
  private parts: Buffer[] = [];
  private length = 0;
  private discarding = false;
  private prefix: Buffer = Buffer.alloc(0);
  private suffix: Buffer = Buffer.alloc(0);
  /** Bytes copied so far to join pieces and keep the ends of oversized lines (the cost the framing bounds). */
  bytesCopied = 0;

  /**
   * @param maxBytes  longest line kept, in bytes without its newline
   * @param keepBytes how many leading and trailing bytes of an oversized line its event carries
   */
  constructor(
    private readonly maxBytes: number,
    private readonly keepBytes: number,
  ) {}

  /** Feed one chunk; returns the events completed by it, in order. */
  push(chunk: Buffer): LineEvent[] {
    const events: LineEvent[] = [];
    let start = 0;
    while (start <= chunk.length) {
      const nl = chunk.indexOf(0x0a, start);
      const end = nl === -1 ? chunk.length : nl;
      this.take(chunk.subarray(start, end));
      if (nl === -1) break;
      events.push(this.finish());
      start = nl + 1;
    }
    return events;
  }

  /** End of input: a last line without a newline still counts. */
  end(): LineEvent[] {
    if (!this.discarding && this.length === 0) return [];
    return [this.finish()];
  }

  private take(piece: Buffer): void {
    if (piece.length === 0) return;
    if (this.discarding) {
      this.keepTail(piece);
      return;
    }
    if (this.length + piece.length > this.maxBytes + 1) {
      // +1 tolerates a `\r` before the newline at exactly the limit.
      // Buffer.concat with a total length copies only that many bytes.
      const list = [...this.parts, piece];
      this.prefix = Buffer.concat(list, Math.min(this.keepBytes, this.length + piece.length));
      this.bytesCopied += this.prefix.length;
      this.suffix = Buffer.alloc(0);
      // The tail so far: the end of the pieces already held, then this piece.
      for (let i = this.parts.length - 1, need = this.keepBytes + 1; i >= 0 && need > 0; i--) {
        const p = this.parts[i]!;
        this.suffix = Buffer.concat([p.subarray(Math.max(0, p.length - need)), this.suffix]);
        this.bytesCopied += this.suffix.length;
        need -= p.length;
      }
      this.keepTail(piece);
      this.parts = [];
      this.length = 0;
      this.discarding = true;
      return;
    }
    this.parts.push(piece);
    this.length += piece.length;
  }

  /** Keep the last `keepBytes` + 1 of what was dropped so far (one more for a `\r` before the newline). */
  private keepTail(piece: Buffer): void {
    const keep = this.keepBytes + 1;
    this.bytesCopied += Math.min(piece.length, keep) + (piece.length >= keep ? 0 : this.suffix.length);
    this.suffix =
      piece.length >= keep
        ? Buffer.from(piece.subarray(piece.length - keep))
        : Buffer.concat([this.suffix, piece]).subarray(Math.max(0, this.suffix.length + piece.length - keep));
  }

  private finish(): LineEvent {
    if (this.discarding) {
      let suffix = this.suffix;
      if (suffix.length > 0 && suffix[suffix.length - 1] === 0x0d) suffix = suffix.subarray(0, suffix.length - 1);
      suffix = suffix.subarray(Math.max(0, suffix.length - this.keepBytes));
      const event: LineEvent = { kind: 'oversized', prefix: this.prefix, suffix };
      this.discarding = false;
      this.prefix = Buffer.alloc(0);
      this.suffix = Buffer.alloc(0);
      return event;
    }
    let bytes = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts, this.length);
    if (this.parts.length > 1) this.bytesCopied += this.length;
    this.parts = [];
    this.length = 0;
    if (bytes.length > 0 && bytes[bytes.length - 1] === 0x0d) bytes = bytes.subarray(0, bytes.length - 1);
    if (bytes.length > this.maxBytes) {
      return {
        kind: 'oversized',
        prefix: bytes.subarray(0, this.keepBytes),
        suffix: bytes.subarray(Math.max(0, bytes.length - this.keepBytes)),
      };
    }
    return { kind: 'line', bytes };
  }
}
