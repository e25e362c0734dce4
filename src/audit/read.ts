/**
 * Reading a profile's audit trail for the operator (`memory-bridge audit`, docs/AUDIT.md §Asking the trail): the
 * directory through the trusted walk, each file opened relative to it without following a link, read in fixed
 * 4 MiB chunks and split into lines (chunks.ts), so memory stays flat whatever the trail's size: one pass, each
 * byte read once. No lock is taken: a writer's one write(2) per record means a reader sees whole records, and a
 * last line without its newline (a write in progress) is not read.
 */
import { getNative } from '../../native/index.js';
import type { Native } from '../../native/types.js';
import { openTrustedDir } from '../trust/path.js';
import { closeQuietly } from '../trust/walk.js';
import { CHUNK_BYTES, type ChunkSink, chunksOf } from './chunks.js';
import { auditDirOf, type AuditFileName } from './files.js';
import { listAuditFiles } from './writer.js';

export { CHUNK_BYTES };

/** Where one line is: the file's name and its 1-based line number. */
export interface LinePlace {
  file: string;
  line: number;
}

/** What a chunked reader of the trail is told, file by file: a file's start, then its lines (chunks.ts). */
export interface TrailSink extends ChunkSink {
  /** A new file starts (its name), before any of its lines. */
  file?(name: string): void;
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
