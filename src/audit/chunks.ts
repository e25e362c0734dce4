/**
 * Reading one audit file a chunk at a time (docs/AUDIT.md §Asking the trail): fixed buffers of CHUNK_BYTES, each
 * byte read once and scanned for line ends about once, whole lines handed on, a trailing partial line (a write in
 * progress) left out, and a line longer than a chunk (longer than any record a writer makes, MAX_RECORD_BYTES in
 * src/audit/writer.ts) skipped to its newline and reported once, never buffered. No import of the platform
 * bindings: the verify threads (verify-worker.ts) read with this alone.
 */
import fs from 'node:fs';

/** Bytes read at a time; more than MAX_RECORD_BYTES, so every record fits in one chunk. */
export const CHUNK_BYTES = 4 << 20;

/** What a chunked reader of one file is told. */
export interface ChunkSink {
  /** `chunk[start..end)` holds whole lines, each ending in `\n`; the bytes are reused after the call returns. */
  lines(chunk: Buffer, start: number, end: number): void;
  /** A line longer than CHUNK_BYTES stood here (in line order); it was skipped, not read into memory. */
  overlong?(): void;
}

/**
 * The whole lines of `fd` into `sink`, through `buf` (CHUNK_BYTES long); the bytes after the last `\n` of a chunk
 * move to the front for the next read.
 *
 * @throws the system error of a failed read
 */
export function chunksOf(fd: number, buf: Buffer, sink: ChunkSink): void {
  let have = 0;
  // True while skipping the rest of an overlong line, up to its `\n`.
  let skipping = false;
  for (;;) {
    const got = fs.readSync(fd, buf, have, buf.length - have, null);
    if (got === 0) return;
    let from = 0;
    if (skipping) {
      const nl = buf.indexOf(0x0a, have);
      if (nl < 0 || nl >= have + got) {
        have = 0;
        continue;
      }
      skipping = false;
      from = nl + 1;
    }
    const filled = have + got;
    const last = buf.lastIndexOf(0x0a, filled - 1);
    if (last < from) {
      // No line end in the buffer's bytes since `from`: a full buffer is an overlong line.
      if (from === 0 && filled === buf.length) {
        sink.overlong?.();
        skipping = true;
        have = 0;
      } else {
        buf.copy(buf, 0, from, filled);
        have = filled - from;
      }
      continue;
    }
    sink.lines(buf, from, last + 1);
    buf.copy(buf, 0, last + 1, filled);
    have = filled - last - 1;
  }
}
