/**
 * `memory-bridge audit verify` (docs/AUDIT.md §Tamper evidence): one linear pass over a home's trail that checks
 * every chain link, each record's `prev` against the SHA-256 of the line before it, across file boundaries. The
 * pass works on the raw chunks of `readTrail`: no line is copied, parsed or decoded; per record it costs one
 * newline search, a check of the fixed tail `,"prev":"<64 hex>"}` every writer ends a record with, one compare of
 * 64 bytes, and one SHA-256 of the line (`lineHash`, the one-shot hash where Node has it). Memory stays one chunk.
 */
import { GENESIS } from './files.js';
import { readTrail, type LinePlace } from './read.js';
import { lineHash } from './record.js';

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

/** The chain check as it walks the trail; the first broken record ends it (later lines are only counted). */
class ChainCheck {
  records = 0;
  start: string | null = null;
  broken: VerifyReport['broken'];
  private file = '';
  private line = 0;
  /** The hex SHA-256 of the last record, as bytes; `hasExpected` is false before the first record. */
  private readonly expected = Buffer.alloc(64);
  private hasExpected = false;

  enter(name: string): void {
    this.file = name;
    this.line = 0;
  }

  lines(chunk: Buffer, start: number, end: number): void {
    for (let at = start; at < end; ) {
      const nl = chunk.indexOf(0x0a, at);
      this.records++;
      this.line++;
      if (this.broken === undefined) {
        const wrong = this.one(chunk, at, nl);
        if (wrong !== null) this.breakHere(wrong);
      }
      at = nl + 1;
    }
  }

  overlong(): void {
    this.records++;
    this.line++;
    this.breakHere('not_a_record');
  }

  /** Check the record `chunk[at..nl)` and take its hash; what is wrong with it, or null. */
  private one(chunk: Buffer, at: number, nl: number): 'not_a_record' | 'chain' | null {
    const tail = nl - TAIL;
    const prevAt = tail + PREV.length;
    if (tail <= at || chunk[at] !== 0x7b || chunk[nl - 1] !== 0x7d || chunk[nl - 2] !== 0x22) return 'not_a_record';
    for (let i = 0; i < PREV.length; i++) if (chunk[tail + i] !== PREV[i]) return 'not_a_record';
    if (!this.hasExpected) {
      // The first record: its prev may name a record retention removed, so it only has to be 64 hex digits (each
      // later prev must equal the hex digits of a hash, which the compare below checks).
      if (!isHex64(chunk, prevAt)) return 'not_a_record';
      this.start = chunk.toString('latin1', prevAt, prevAt + 64);
      this.hasExpected = true;
    } else if (chunk.compare(this.expected, 0, 64, prevAt, prevAt + 64) !== 0) {
      return 'chain';
    }
    this.expected.write(lineHash(chunk.subarray(at, nl)), 0, 64, 'latin1');
    return null;
  }

  private breakHere(why: 'not_a_record' | 'chain'): void {
    if (this.broken === undefined) this.broken = { file: this.file, line: this.line, why };
  }
}

/**
 * Check every chain link of `home`'s trail: each record's `prev` must be the SHA-256 of the line before it, across
 * file boundaries; the first record of the oldest file kept may chain to a removed file (its `prev` is reported as
 * `start`). Linear in the trail's bytes; memory is one read chunk.
 *
 * @returns the report; `broken` names the first record (file, 1-based line) that is not a record or not chained
 * @throws what `readTrail` throws (a missing or untrusted audit directory)
 */
export function verifyTrail(home: string): VerifyReport {
  const check = new ChainCheck();
  const { dir, files } = readTrail(home, {
    file: (name) => check.enter(name),
    lines: (chunk, start, end) => check.lines(chunk, start, end),
    overlong: () => check.overlong(),
  });
  const report: VerifyReport = { dir, files: files.length, records: check.records, start: check.start };
  if (check.broken !== undefined) report.broken = check.broken;
  return report;
}

export { GENESIS };
