/**
 * Appending one audit record (docs/AUDIT.md §Writing). Steps, all under an exclusive flock of the audit directory's
 * descriptor, so writers in any number of processes of one home (worker, `serve`, CLI) take turns:
 *
 * 1. `openAuditDir`: the policy's directory through the trusted walk from `/` (docs/TRUST.md); `audit/` is made
 *    there (0700) when missing, then opened through the same walk, so it is judged exactly like the policy's.
 * 2. `AppendStep.choose`: the newest audit file by name; a new one (next sequence, or the new UTC day) when the
 *    record would pass `max_file_bytes` or the day changed; files of days older than `retain_days` are removed
 *    only after the new file exists and holds its first record.
 * 3. The previous record's SHA-256: the last line of the newest file that has one (the first record of a file
 *    chains to the last record of the file before it).
 * 4. One write(2) of the whole line on an O_APPEND | O_NOFOLLOW descriptor opened relative to the judged directory
 *    and judged itself (regular, owned by the running user, mode 0600 or stricter, one link, no ACL write grant).
 *    A short or failed write is cut back off (ftruncate to the size before it), so the file never holds half a
 *    record.
 *
 * Any failure throws `AuditUnwritable`; the bridge then answers `unavailable` (fail closed).
 */
import fs from 'node:fs';
import { getNative } from '../../native/index.js';
import { NativeError, type Native } from '../../native/types.js';
import { getWriteNative, type WriteNative } from '../../native/write-linux.js';
import { descriptorAclReason, isRegularFile, runningUid } from '../trust/rule.js';
import { closeQuietly } from '../trust/walk.js';
import { openTrustedDir } from '../trust/path.js';
import type { AuditSettings } from '../policy/types.js';
import {
  AUDIT_DIR_NAME,
  auditDirOf,
  auditFilesOf,
  auditName,
  dayMinus,
  GENESIS,
  MAX_AUDIT_FILES,
  MAX_SEQUENCE,
  policyDirOf,
  utcDay,
  type AuditFileName,
} from './files.js';
import { homeKey } from './key.js';
import { lineHash, queryHmac, recordLine } from './record.js';
import { AuditUnwritable } from './writer-error.js';

export { AuditUnwritable };

/** Longest record line accepted, in bytes (a read of a 16-segment id from a long home stays far below it). */
export const MAX_RECORD_BYTES = 262_144;

const LOCK_EX = 2;
const LOCK_UN = 8;

/** Both binding sets, or AuditUnwritable. */
function bindings(): { native: Native; write: WriteNative } {
  const native = getNative();
  const write = getWriteNative();
  if (native === null || write === null) throw new AuditUnwritable('unsupported_platform');
  return { native, write };
}

/**
 * Opens `<home>/plugin-data/memory-bridge/audit` through the trusted walk, making `audit/` (0700) in the judged
 * policy directory first when it is missing.
 *
 * @returns the judged directory's descriptor (the caller closes it)
 * @throws AuditUnwritable with the trust reason code as `step` (e.g. `group_writable`, `symlink`)
 */
export function openAuditDir(home: string, native: Native, write: WriteNative): number {
  try {
    return openTrustedDir(auditDirOf(home), 'policy_dir', native);
  } catch (err) {
    if (!isReason(err, 'missing')) throw new AuditUnwritable(reasonOf(err));
  }
  let parent = -1;
  try {
    parent = openTrustedDir(policyDirOf(home), 'policy_dir', native);
    try {
      write.mkdirAt(parent, AUDIT_DIR_NAME, 0o700);
    } catch (err) {
      if (!(err instanceof NativeError && err.code === 'EEXIST')) throw new AuditUnwritable('mkdir');
    }
  } catch (err) {
    if (err instanceof AuditUnwritable) throw err;
    throw new AuditUnwritable(reasonOf(err));
  } finally {
    if (parent >= 0) closeQuietly(native, parent);
  }
  try {
    return openTrustedDir(auditDirOf(home), 'policy_dir', native);
  } catch (err) {
    throw new AuditUnwritable(reasonOf(err));
  }
}

function isReason(err: unknown, reason: string): boolean {
  return typeof err === 'object' && err !== null && (err as { reason?: unknown }).reason === reason;
}

function reasonOf(err: unknown): string {
  const r = typeof err === 'object' && err !== null ? (err as { reason?: unknown }).reason : undefined;
  return typeof r === 'string' ? r : 'io_error';
}

/**
 * Judges an open audit file: regular, owned by the running user, no permission bit for group or others, one link,
 * no ACL write grant (docs/AUDIT.md §Files). Other writers holding it open are expected: they are audit writers.
 *
 * @returns its size in bytes
 * @throws AuditUnwritable('audit_file_untrusted')
 */
export function judgeAuditFile(native: Native, fd: number): number {
  const st = native.fstat(fd);
  const uid = runningUid();
  if (!isRegularFile(st) || st.uid !== uid || (st.mode & 0o077) !== 0 || st.nlink !== 1)
    throw new AuditUnwritable('audit_file_untrusted');
  if (descriptorAclReason(native, fd, uid) !== null) throw new AuditUnwritable('audit_file_untrusted');
  return st.size;
}

/** The audit files of the open directory `dirFd`, in record order. */
export function listAuditFiles(native: Native, dirFd: number): AuditFileName[] {
  const listed = native.listDir(dirFd, MAX_AUDIT_FILES);
  if (listed === 'too_many') throw new AuditUnwritable('too_many_files');
  return auditFilesOf(listed.map((e) => e.name.toString('latin1')));
}

/**
 * The last complete line (bytes before its `\n`) of the file `fd` of `size` bytes, or null when it holds none.
 * Reads backwards from the end in growing windows, at most MAX_RECORD_BYTES + 1 bytes.
 */
export function lastLine(fd: number, size: number): Buffer | null {
  if (size === 0) return null;
  let window = Math.min(size, 4096);
  for (;;) {
    const buf = Buffer.alloc(window);
    const got = fs.readSync(fd, buf, 0, window, size - window);
    if (got !== window) throw new AuditUnwritable('short_read');
    // The file ends with "\n" (every record does); a file that does not was cut by hand: its chain is broken, and
    // the writer still chains to whatever its last line is, which `audit verify` reports.
    const end = buf[window - 1] === 0x0a ? window - 1 : window;
    const start = buf.lastIndexOf(0x0a, end - 1);
    if (start >= 0) return buf.subarray(start + 1, end);
    if (window === size) return buf.subarray(0, end);
    if (window > MAX_RECORD_BYTES) throw new AuditUnwritable('record_too_long');
    window = Math.min(size, window * 4);
  }
}

/** The hash of the last record before `files[upTo]` (searching back over empty files), or GENESIS. */
function chainHead(native: Native, dirFd: number, files: readonly AuditFileName[], upTo: number): string {
  for (let i = upTo - 1; i >= 0; i--) {
    const fd = openExisting(native, dirFd, files[i]!.name);
    try {
      const line = lastLine(fd, judgeAuditFile(native, fd));
      if (line !== null) return lineHash(line);
    } finally {
      closeQuietly(native, fd);
    }
  }
  return GENESIS;
}

function openExisting(native: Native, dirFd: number, name: string): number {
  try {
    return bindings().write.openAppend(dirFd, name, false, 0o600);
  } catch (err) {
    void native;
    throw new AuditUnwritable(err instanceof NativeError && err.code === 'ELOOP' ? 'symlink' : 'open');
  }
}

/**
 * Append one record to `home`'s audit trail (see the module comment for the steps).
 *
 * @param record the record object (`recordOf`); `prev` is added here
 * @param query  the search's query when `queries` is `hmac`: only its HMAC under the home's key is recorded
 * @param nowMs  the clock (ms since the epoch) that picks the file's UTC day and the retention cut
 * @throws AuditUnwritable on any failure; then nothing of the record is in any file
 */
export function appendRecord(
  home: string,
  settings: AuditSettings,
  record: Record<string, unknown>,
  query: string | undefined,
  nowMs: number,
): void {
  const { native, write } = bindings();
  const dirFd = openAuditDir(home, native, write);
  let locked = false;
  try {
    try {
      native.flock(dirFd, LOCK_EX);
      locked = true;
    } catch {
      throw new AuditUnwritable('lock');
    }
    if (query !== undefined && settings.queries === 'hmac')
      record['memory_bridge.query_hmac'] = queryHmac(homeKey(home, native, write), query);
    new AppendStep(native, write, dirFd, settings, nowMs).run(record);
  } finally {
    if (locked) {
      try {
        native.flock(dirFd, LOCK_UN);
      } catch {
        // Closing the descriptor releases the lock anyway.
      }
    }
    closeQuietly(native, dirFd);
  }
}

/** One append under the directory lock (steps 2–4 of the module comment). */
class AppendStep {
  private today: string;

  constructor(
    private readonly native: Native,
    private readonly write: WriteNative,
    private readonly dirFd: number,
    private readonly settings: AuditSettings,
    nowMs: number,
  ) {
    this.today = utcDay(nowMs);
  }

  run(record: Record<string, unknown>): void {
    const files = listAuditFiles(this.native, this.dirFd);
    const newest = files.length === 0 ? undefined : files[files.length - 1];
    // A writer whose clock lags another's keeps to the newest day, so name order stays record order.
    if (newest !== undefined && newest.day > this.today) this.today = newest.day;
    if (newest !== undefined && newest.day === this.today) {
      const fd = openExisting(this.native, this.dirFd, newest.name);
      try {
        const size = judgeAuditFile(this.native, fd);
        const last = lastLine(fd, size);
        const prev = last !== null ? lineHash(last) : chainHead(this.native, this.dirFd, files, files.length - 1);
        const line = this.line(record, prev);
        if (size + line.length <= this.settings.max_file_bytes || size === 0) {
          this.writeOnce(fd, size, line);
          return;
        }
        if (newest.sequence >= MAX_SEQUENCE) throw new AuditUnwritable('too_many_files');
        this.startFile(auditName(this.today, newest.sequence + 1), line, files);
        return;
      } finally {
        closeQuietly(this.native, fd);
      }
    }
    const prev = chainHead(this.native, this.dirFd, files, files.length);
    this.startFile(auditName(this.today, 1), this.line(record, prev), files);
  }

  private line(record: Record<string, unknown>, prev: string): Buffer {
    const line = recordLine(record, prev);
    if (line.length > MAX_RECORD_BYTES) throw new AuditUnwritable('record_too_long');
    return line;
  }

  /** Create `name` (0600, exclusive), write its first record, then apply retention. */
  private startFile(name: string, line: Buffer, files: readonly AuditFileName[]): void {
    let fd: number;
    try {
      fd = this.write.createExclusive(this.dirFd, name, 0o600);
    } catch {
      throw new AuditUnwritable('create');
    }
    try {
      fs.fchmodSync(fd, 0o600);
      this.writeOnce(fd, 0, line);
    } catch (err) {
      // An empty file breaks nothing (writers chain past it), but leave none behind when the first write failed.
      try {
        this.write.unlinkAt(this.dirFd, name);
      } catch {
        // Already reported as unwritable.
      }
      throw err instanceof AuditUnwritable ? err : new AuditUnwritable('write');
    } finally {
      closeQuietly(this.native, fd);
    }
    this.retain(files);
  }

  /** Remove files of days before the retention window (never the newest file, which holds the chain's head). */
  private retain(files: readonly AuditFileName[]): void {
    const oldest = dayMinus(this.today, this.settings.retain_days);
    for (const f of files) {
      if (f.day >= oldest) break;
      try {
        this.write.unlinkAt(this.dirFd, f.name);
      } catch {
        // A file that cannot be removed stays; the next new file tries again.
      }
    }
  }

  /** One write(2) of `line` at the end of `fd` (of `size` bytes); anything short is cut back off. */
  private writeOnce(fd: number, size: number, line: Buffer): void {
    let written = -1;
    try {
      written = fs.writeSync(fd, line, 0, line.length);
    } catch {
      written = -1;
    }
    if (written === line.length) return;
    try {
      fs.ftruncateSync(fd, size);
    } catch {
      // The half record stays; `audit verify` names it.
    }
    throw new AuditUnwritable('write');
  }
}
