/**
 * Verified note texts held outside the JavaScript heap for the rest of a call (docs/DESIGN.md, "Memory"): a scan
 * copies the bytes of each note it read and validated into a `TextArena` (a few large byte chunks) and returns a
 * `ReadNote`, whose `text` is decoded from those bytes when asked. A first call of a view reads every note; holding
 * them all as strings put the whole vault on the collected heap until the index was built, and the old generation
 * stayed that large (its pages fragmented by the per-note records allocated between the texts) long after.
 */
import type { FileStat } from '../../native/types.js';
import type { IdentityKey, ScannedNote } from './types.js';

/** First chunk size; each further chunk doubles, up to CHUNK_MAX (a larger text gets a chunk of its own). */
const CHUNK_MIN = 64 * 1024;
const CHUNK_MAX = 4 * 1024 * 1024;

/** Decodes validated bytes exactly as they are: a leading U+FEFF here is text (the signature was cut before). */
const verbatim = new TextDecoder('utf-8', { ignoreBOM: true });

/**
 * Byte chunks written once, front to back, by one scan. Nothing is ever freed piecemeal: the chunks go when the
 * last note viewing them does.
 */
export class TextArena {
  private chunk: Buffer;
  private used = 0;
  private next = CHUNK_MIN;

  /**
   * @param shared chunks in SharedArrayBuffers, so a second thread can read the kept bytes without a copy (the cold
   *   ranking thread, src/search/cold-thread.ts); nothing is written to a chunk's bytes after they are kept
   */
  constructor(private readonly shared = false) {
    this.chunk = this.allocate(0);
  }

  private allocate(size: number): Buffer {
    return this.shared ? Buffer.from(new SharedArrayBuffer(size)) : Buffer.allocUnsafeSlow(size);
  }

  /** A view of a copy of `bytes` in the arena. */
  keep(bytes: Uint8Array): Uint8Array {
    const n = bytes.length;
    if (this.used + n > this.chunk.length) {
      this.chunk = this.allocate(Math.max(this.next, n));
      this.used = 0;
      this.next = Math.min(this.next * 2, CHUNK_MAX);
    }
    const at = this.used;
    this.chunk.set(bytes, at);
    this.used = at + n;
    return this.chunk.subarray(at, at + n);
  }
}

/** UTF-8 encoding signature (byte order mark) at the start of a file. */
function hasSignature(bytes: Uint8Array): boolean {
  return bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
}

/**
 * A note this call read and validated (`noteBytesReason` accepted its bytes): its text is `bytes` decoded, the
 * same string `decodeNoteText` gives for the file's bytes (a leading signature dropped). `text` builds a new string
 * on every read; read it once per use.
 */
export class ReadNote implements ScannedNote {
  /** The text's UTF-8 bytes: the file's bytes without a leading signature, in a `TextArena`. */
  readonly bytes: Uint8Array;

  /**
   * @param file the note file's bytes, already validated (no NUL, valid UTF-8)
   * @param arena where the bytes are kept for the rest of the call
   */
  constructor(
    readonly id: string,
    readonly key: IdentityKey,
    readonly stat: FileStat,
    file: Uint8Array,
    arena: TextArena,
  ) {
    this.bytes = arena.keep(hasSignature(file) ? file.subarray(3) : file);
  }

  get text(): string {
    return decodeNoteBytes(this.bytes);
  }
}

/** The text of a `ReadNote`'s bytes: what `ReadNote.text` returns, for a thread that holds only the bytes. */
export function decodeNoteBytes(bytes: Uint8Array): string {
  return verbatim.decode(bytes);
}

/** The UTF-8 bytes of a scanned note's text when the scan kept them (a `ReadNote`), else undefined. */
export function textBytesOf(note: ScannedNote): Uint8Array | undefined {
  return note instanceof ReadNote ? note.bytes : undefined;
}

/** True when `note` carries its text (read in this call), without decoding it. */
export function carriesText(note: ScannedNote): boolean {
  return note instanceof ReadNote || note.text !== undefined;
}
