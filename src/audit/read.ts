/**
 * Reading a profile's audit trail for the operator (`memory-bridge audit`, docs/AUDIT.md §Asking the trail): the
 * directory through the trusted walk, each file opened relative to it without following a link, read in fixed
 * 4 MiB chunks and split into lines, so memory stays flat whatever the trail's size: one pass, each byte read once.
 * No lock is taken: a writer's one write(2) per record means a reader sees whole records, and a last line without
 * its newline (a write in progress) is not read. A line longer than a chunk (longer than any record a writer makes,
 * MAX_RECORD_BYTES) is skipped to its newline and reported once, never buffered.
 */
import fs from 'node:fs';
import { getNative } from '../../native/index.js';
import type { Native } from '../../native/types.js';
import { openTrustedDir } from '../trust/path.js';
import { closeQuietly } from '../trust/walk.js';
import { auditDirOf, type AuditFileName } from './files.js';
import { listAuditFiles } from './writer.js';

/** Bytes read at a time; more than MAX_RECORD_BYTES (src/audit/writer.ts), so every record fits in one chunk. */
export const CHUNK_BYTES = 4 << 20;

/** Where one line is: the file's name and its 1-based line number. */
export interface LinePlace {
  file: string;
  line: number;
}

/** What a chunked reader of the trail is told, file by file. */
export interface TrailSink {
  /** A new file starts (its name), before any of its lines. */
  file?(name: string): void;
  /** `chunk[start..end)` holds whole lines, each ending in `\n`; the bytes are reused after the call returns. */
  lines(chunk: Buffer, start: number, end: number): void;
  /** A line longer than CHUNK_BYTES stood here (in line order); it was skipped, not read into memory. */
  overlong?(): void;
}

/**
 * Feeds `sink` the complete record lines of `home`'s trail, oldest first, a chunk at a time. `files` filters the
 * files (by name, e.g. by day) before they are opened.
 *
 * @returns the audit directory's path and the names of the files read
 * @throws BridgeError (the trust walk's reasons) when the directory is missing or untrusted; NativeError on I/O
 */
export function readTrail(
  home: string,
  sink: TrailSink,
  files: (f: AuditFileName) => boolean = () => true,
): { dir: string; files: string[] } {
  const native = requireNative();
  const dir = auditDirOf(home);
  const dirFd = openTrustedDir(dir, 'policy_dir', native);
  const read: string[] = [];
  const buf = Buffer.allocUnsafe(CHUNK_BYTES);
  try {
    for (const f of listAuditFiles(native, dirFd)) {
      if (!files(f)) continue;
      read.push(f.name);
      sink.file?.(f.name);
      const fd = native.openFileAt(dirFd, f.name);
      try {
        chunksOf(fd, buf, sink);
      } finally {
        closeQuietly(native, fd);
      }
    }
  } finally {
    closeQuietly(native, dirFd);
  }
  return { dir, files: read };
}

/**
 * `readTrail` with a plain callback: `each(chunk, start, end, file)` for the whole lines of every file (overlong
 * lines are left out).
 */
export function eachRecordChunk(
  home: string,
  each: (chunk: Buffer, start: number, end: number, file: string) => void,
  files?: (f: AuditFileName) => boolean,
): { dir: string; files: string[] } {
  let name = '';
  return readTrail(
    home,
    {
      file: (n) => {
        name = n;
      },
      lines: (chunk, start, end) => each(chunk, start, end, name),
    },
    files,
  );
}

function requireNative(): Native {
  const native = getNative();
  if (native === null) throw new Error('memory-bridge audit needs the native bindings of Linux or macOS');
  return native;
}

/**
 * The whole lines of `fd` into `sink`, through `buf` (CHUNK_BYTES): each byte is read once and scanned for line
 * ends about once; the bytes after the last `\n` of a chunk move to the front for the next read. A trailing partial
 * line (a write in progress) is left out.
 */
function chunksOf(fd: number, buf: Buffer, sink: TrailSink): void {
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
