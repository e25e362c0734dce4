/**
 * Reading a profile's audit trail for the operator (`memory-bridge audit`, docs/AUDIT.md §Asking the trail): the
 * directory through the trusted walk, each file opened relative to it without following a link, read in 1 MiB
 * chunks and split into lines, so memory stays flat whatever the trail's size. No lock is taken: a writer's one
 * write(2) per record means a reader sees whole records, and a last line without its newline (a write in progress)
 * is not read.
 */
import fs from 'node:fs';
import { getNative } from '../../native/index.js';
import type { Native } from '../../native/types.js';
import { openTrustedDir } from '../trust/path.js';
import { closeQuietly } from '../trust/walk.js';
import { auditDirOf, GENESIS, type AuditFileName } from './files.js';
import { lineHash } from './record.js';
import { listAuditFiles } from './writer.js';

const CHUNK = 1 << 20;

/** Where one line is: the file's name and its 1-based line number. */
export interface LinePlace {
  file: string;
  line: number;
}

/**
 * Calls `each(chunk, start, end, file)` for the complete record lines of `home`'s trail, oldest first, a chunk at a
 * time: `chunk[start..end)` holds whole lines, each ending in `\n` (the bytes are reused after the call returns).
 * `files` filters the files (by name, e.g. by day) before they are opened.
 *
 * @returns the audit directory's path and the names of the files read
 * @throws BridgeError (the trust walk's reasons) when the directory is missing or untrusted; NativeError on I/O
 */
export function eachRecordChunk(
  home: string,
  each: (chunk: Buffer, start: number, end: number, file: string) => void,
  files: (f: AuditFileName) => boolean = () => true,
): { dir: string; files: string[] } {
  const native = requireNative();
  const dir = auditDirOf(home);
  const dirFd = openTrustedDir(dir, 'policy_dir', native);
  const read: string[] = [];
  try {
    for (const f of listAuditFiles(native, dirFd)) {
      if (!files(f)) continue;
      read.push(f.name);
      const fd = native.openFileAt(dirFd, f.name);
      try {
        chunksOf(fd, (chunk, start, end) => each(chunk, start, end, f.name));
      } finally {
        closeQuietly(native, fd);
      }
    }
  } finally {
    closeQuietly(native, dirFd);
  }
  return { dir, files: read };
}

/** `eachRecordChunk` a line at a time: `each(line, place)` for every complete line (without its `\n`). */
export function eachRecordLine(
  home: string,
  each: (line: Buffer, place: LinePlace) => void,
  files?: (f: AuditFileName) => boolean,
): { dir: string; files: string[] } {
  let file = '';
  let n = 0;
  return eachRecordChunk(
    home,
    (chunk, start, end, name) => {
      if (name !== file) {
        file = name;
        n = 0;
      }
      let at = start;
      while (at < end) {
        const nl = chunk.indexOf(0x0a, at);
        each(chunk.subarray(at, nl), { file, line: ++n });
        at = nl + 1;
      }
    },
    files,
  );
}

function requireNative(): Native {
  const native = getNative();
  if (native === null) throw new Error('memory-bridge audit needs the native bindings of Linux or macOS');
  return native;
}

/** The whole lines of `fd`, a chunk at a time; a trailing partial line (a write in progress) is left out. */
function chunksOf(fd: number, each: (chunk: Buffer, start: number, end: number) => void): void {
  let buf = Buffer.allocUnsafe(CHUNK);
  let have = 0;
  for (;;) {
    if (have === buf.length) {
      const bigger = Buffer.allocUnsafe(buf.length * 2);
      buf.copy(bigger, 0, 0, have);
      buf = bigger;
    }
    const got = fs.readSync(fd, buf, have, buf.length - have, null);
    if (got === 0) return;
    have += got;
    const last = buf.lastIndexOf(0x0a, have - 1);
    if (last < 0) continue;
    each(buf, 0, last + 1);
    buf.copy(buf, 0, last + 1, have);
    have -= last + 1;
  }
}

/** The `prev` of a record line: the fixed tail `,"prev":"<64 hex>"}` every writer ends a record with, or null. */
export function prevOf(line: Buffer): string | null {
  const tail = 75;
  if (line.length < tail + 1) return null;
  const t = line.toString('latin1', line.length - tail);
  if (!t.startsWith(',"prev":"') || !t.endsWith('"}')) return null;
  const hex = t.slice(9, 73);
  return /^[0-9a-f]{64}$/.test(hex) ? hex : null;
}

/** What `verifyTrail` found. */
export interface VerifyReport {
  dir: string;
  files: number;
  records: number;
  /** The `prev` of the first record read: GENESIS, or the hash of a record in a file retention has removed. */
  start: string | null;
  /** The first record whose `prev` is not the SHA-256 of the record before it (or is not a record at all). */
  broken?: LinePlace & { why: 'not_a_record' | 'chain' };
}

/**
 * Check every chain link of `home`'s trail (docs/AUDIT.md §Tamper evidence): each record's `prev` must be the
 * SHA-256 of the line before it, across file boundaries; the first record of the oldest file kept may chain to
 * a removed file (its `prev` is reported as `start`).
 */
export function verifyTrail(home: string): VerifyReport {
  let expected: string | null = null;
  let records = 0;
  let start: string | null = null;
  let broken: VerifyReport['broken'];
  const PREV = Buffer.from(',"prev":"', 'latin1');
  let expectedBytes = Buffer.alloc(64);
  const { dir, files } = eachRecordLine(home, (line, place) => {
    if (broken !== undefined) return;
    records++;
    const at = line.length - 75;
    const framed =
      at > 0 &&
      line[0] === 0x7b &&
      line[line.length - 1] === 0x7d &&
      line[line.length - 2] === 0x22 &&
      line.indexOf(PREV, at) === at;
    if (!framed) {
      broken = { ...place, why: 'not_a_record' };
      return;
    }
    if (expected === null) {
      // The first record: its prev only has to be 64 hex digits (it may chain to a removed file).
      const prev = prevOf(line);
      if (prev === null) {
        broken = { ...place, why: 'not_a_record' };
        return;
      }
      start = prev;
    } else if (line.compare(expectedBytes, 0, 64, at + 9, at + 73) !== 0) {
      broken = { ...place, why: 'chain' };
      return;
    }
    expected = lineHash(line);
    expectedBytes = Buffer.from(expected, 'latin1');
  });
  const report: VerifyReport = { dir, files: files.length, records, start };
  if (broken !== undefined) report.broken = broken;
  return report;
}

export { GENESIS };
