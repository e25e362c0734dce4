/**
 * The chain check of one audit file (docs/AUDIT.md §Tamper evidence), the unit `audit verify` splits its work
 * into: each record's fixed tail `,"prev":"<64 hex>"}` checked in place, each later record's `prev` compared with
 * the SHA-256 of the line before it (64 bytes), each line hashed once (`lineHash`). Files are checked on their own,
 * on any thread, and `joinChains` links them: the first record of a file must chain to the last record of the
 * file before it. No line is copied, parsed or decoded. No import of the platform bindings (verify-worker.ts).
 */
import { CHUNK_BYTES, chunksOf } from './chunks.js';
import { lineHash } from './record.js';

/** What is wrong with a record. */
export type Break = 'not_a_record' | 'chain';

/** What the check of one file found. */
export interface FileChain {
  /** Lines of the file (complete ones, overlong ones included). */
  records: number;
  /** The `prev` of its first record (64 hex digits), or null (no record, or the first is not a record). */
  firstPrev: string | null;
  /** The SHA-256 (hex) of its last record, or null (no record, or the chain broke inside the file). */
  lastHash: string | null;
  /** The first record (1-based line) that is not a record or does not chain to the line before it in the file. */
  broken?: { line: number; why: Break };
}

/** The record tail: `,"prev":"` (9 bytes), 64 hex digits, `"}` (2 bytes). */
const PREV = Buffer.from(',"prev":"', 'latin1');
const TAIL = PREV.length + 64 + 2;

/** True when `b[from..from+64)` are lower-case hex digits. */
function isHex64(b: Buffer, from: number): boolean {
  for (let i = from; i < from + 64; i++) {
    const c = b[i]!;
    if (!((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66))) return false;
  }
  return true;
}

/** The check as it walks one file's lines; the first break ends the checking (later lines are only counted). */
class FileCheck {
  records = 0;
  firstPrev: string | null = null;
  broken: FileChain['broken'];
  /** The hex SHA-256 of the last record, as bytes; `hasExpected` is false before the first record. */
  private readonly expected = Buffer.alloc(64);
  private hasExpected = false;

  lines(chunk: Buffer, start: number, end: number): void {
    for (let at = start; at < end; ) {
      const nl = chunk.indexOf(0x0a, at);
      this.records++;
      if (this.broken === undefined) {
        const wrong = this.one(chunk, at, nl);
        if (wrong !== null) this.broken = { line: this.records, why: wrong };
      }
      at = nl + 1;
    }
  }

  overlong(): void {
    this.records++;
    if (this.broken === undefined) this.broken = { line: this.records, why: 'not_a_record' };
  }

  /** Check the record `chunk[at..nl)` and take its hash; what is wrong with it, or null. */
  private one(chunk: Buffer, at: number, nl: number): Break | null {
    const tail = nl - TAIL;
    const prevAt = tail + PREV.length;
    if (tail <= at || chunk[at] !== 0x7b || chunk[nl - 1] !== 0x7d || chunk[nl - 2] !== 0x22) return 'not_a_record';
    for (let i = 0; i < PREV.length; i++) if (chunk[tail + i] !== PREV[i]) return 'not_a_record';
    if (!this.hasExpected) {
      // The file's first record: its prev is the previous file's business (`joinChains`), so it only has to be 64
      // hex digits (each later prev must equal the hex digits of a hash, which the compare below checks).
      if (!isHex64(chunk, prevAt)) return 'not_a_record';
      this.firstPrev = chunk.toString('latin1', prevAt, prevAt + 64);
      this.hasExpected = true;
    } else if (chunk.compare(this.expected, 0, 64, prevAt, prevAt + 64) !== 0) {
      return 'chain';
    }
    this.expected.write(lineHash(chunk.subarray(at, nl)), 0, 64, 'latin1');
    return null;
  }

  result(): FileChain {
    const chain: FileChain = {
      records: this.records,
      firstPrev: this.firstPrev,
      lastHash: this.hasExpected && this.broken === undefined ? this.expected.toString('latin1') : null,
    };
    if (this.broken !== undefined) chain.broken = this.broken;
    return chain;
  }
}

/**
 * Check the open audit file `fd` from its start, reading through `buf` (CHUNK_BYTES; one per thread).
 *
 * @throws the system error of a failed read
 */
export function checkFile(fd: number, buf: Buffer = Buffer.allocUnsafe(CHUNK_BYTES)): FileChain {
  const check = new FileCheck();
  chunksOf(fd, buf, check);
  return check.result();
}

/** The trail's verdict from its files' checks, in record order. */
export interface JoinedChain {
  records: number;
  /** The `prev` of the trail's first record (GENESIS, or a record retention removed), or null. */
  start: string | null;
  /** The first broken record: the index of its file and its line. */
  broken?: { file: number; line: number; why: Break };
}

/**
 * Link the files' checks: each file's first record must chain to the last record of the nearest earlier file that
 * has one; the first break in record order is the trail's.
 */
export function joinChains(files: readonly FileChain[]): JoinedChain {
  let records = 0;
  let start: string | null = null;
  let seen = false;
  let expected: string | null = null;
  let broken: JoinedChain['broken'];
  files.forEach((f, file) => {
    records += f.records;
    if (broken !== undefined || f.records === 0) return;
    if (f.broken?.line === 1 && f.broken.why === 'not_a_record') {
      broken = { file, ...f.broken };
      return;
    }
    if (!seen) start = f.firstPrev;
    else if (f.firstPrev !== expected) {
      broken = { file, line: 1, why: 'chain' };
      return;
    }
    seen = true;
    if (f.broken !== undefined) broken = { file, ...f.broken };
    expected = f.lastHash;
  });
  const joined: JoinedChain = { records, start };
  if (broken !== undefined) joined.broken = broken;
  return joined;
}
