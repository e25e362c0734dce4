/**
 * The descriptor walk of docs/TRUST.md for absolute paths outside the root (the memory root itself, the policy
 * directory and file, a profile home, an export target): open `/`, then one component at a time with
 * openat(O_NOFOLLOW|O_DIRECTORY), checking every descriptor — `/` itself and the final one included — with
 * fstat and the ACL before going on. Never a multi-component path string, never realpath.
 */
import path from 'node:path';
import { NativeError, type FileStat, type Native } from '../../native/types.js';
import { BridgeError, type Reason } from '../errors.js';
import {
  checkDirDescriptor,
  fileDescriptorReason,
  isRegularFile,
  noteStatReason,
  readSettled,
  regularFileAtReason,
  requireNative,
  runningUid,
} from './rule.js';
import { NO_WRITERS, type Writers } from './writers.js';
import { closeQuietly, openFailureReason, walkDirs } from './walk.js';

/** What the directory is for; every role gets the same rule (the sticky-temp exception never covers the target). */
export type TrustedDirRole = 'root' | 'policy_dir' | 'out' | 'home';

/**
 * True when `absPath` is an absolute path equal to its normalised form: no `.` or `..` segment, no empty segment
 * (`//`), no trailing `/` (except `/` itself), no NUL. The one normal-form rule for every absolute path the bridge
 * is given: profile homes (the policy load, the worker protocol, the clients file), roots and policy paths.
 */
export function isNormalAbsolute(absPath: string): boolean {
  if (typeof absPath !== 'string' || !absPath.startsWith('/') || absPath.includes('\0')) return false;
  if (absPath === '/') return true;
  return !absPath.endsWith('/') && path.posix.normalize(absPath) === absPath;
}

/** True for `/proc` and anything below it (process-controlled, never trusted as memory or policy). */
function underProc(absPath: string): boolean {
  return absPath === '/proc' || absPath.startsWith('/proc/');
}

function refuse(reason: Reason): never {
  throw new BridgeError('unavailable', reason);
}

/**
 * The directories one call has already opened and judged as intermediates of a trusted walk, by absolute path, so
 * a second walk in the same call (the root after the policy file: both usually start with the same directories)
 * continues from the deepest one instead of opening and judging them again. A descriptor here passed exactly the
 * check that walk would make (`/`, or an intermediate directory, where the sticky-tmp exception applies), in this
 * call; the walk opens the next component relative to it, as it would relative to a descriptor it had just
 * judged itself. So a directory shared by both walks is judged once per call, like every directory of one walk: a
 * rename or chmod of it between the two walks is not seen by the second (only its owner or root can make one) and
 * the walk continues in the directory that was judged. Never kept across calls: `close` it when the call ends
 * (every descriptor it holds is closed).
 */
export class WalkMemo {
  private readonly dirs = new Map<string, number>();

  constructor(private readonly native: Native = requireNative()) {}

  /** The descriptor for `absPath` (`/` or an intermediate directory judged in this call), or undefined. */
  get(absPath: string): number | undefined {
    return this.dirs.get(absPath);
  }

  /** Keeps `fd` (judged as `/` or an intermediate directory at `absPath`); the memo now owns it. */
  keep(absPath: string, fd: number): void {
    const old = this.dirs.get(absPath);
    if (old !== undefined) closeQuietly(this.native, old);
    this.dirs.set(absPath, fd);
  }

  /** Closes every descriptor held. */
  close(): void {
    for (const fd of this.dirs.values()) closeQuietly(this.native, fd);
    this.dirs.clear();
  }
}

/**
 * Opens a trusted directory by walking from `/` (docs/TRUST.md).
 *
 * Every descriptor on the way — `/`, each intermediate, and the target — must be a directory owned by root or
 * the running user, not group- or world-writable, without an ACL write grant. A root-owned sticky directory at
 * exactly /tmp, /var/tmp, /private/tmp or /private/var/tmp passes only as an intermediate, never as the target.
 * Intermediate descriptors are closed as the walk moves on; on any failure every descriptor is closed.
 *
 * @param absPath absolute, normalised path (see `isNormalAbsolute`), not `/proc` or below
 * @param role    what the directory is for (documentation and logs; the rule is the same)
 * @param native  bindings (defaults to this platform's; tests may pass a counting wrapper)
 * @param memo    this call's directories already judged on earlier walks (see `WalkMemo`); the walk continues
 *   below the deepest one on this path and leaves the intermediates it opens there (the memo closes them)
 * @param writers named writers, applied to the target only (the memory root or an export target: a team folder
 *   may be owned by a writer and writable by a writer group); `/` and every intermediate keep the rule without
 *   them (docs/TRUST.md §Named writers). A target is never taken from the memo, so it is always judged with them.
 * @returns an open directory descriptor (O_DIRECTORY|O_NOFOLLOW|O_CLOEXEC); the caller closes it
 * @throws BridgeError('unavailable', reason) with reason `bad_name` (path syntax), `denied` (/proc),
 *   `symlink`, `missing`, `not_directory`, `untrusted_owner`, `group_writable`, `world_writable`, `sticky_tmp`,
 *   `acl_write`, `acl_unreadable`, `io_error`, or `unsupported_platform`
 */
export function openTrustedDir(
  absPath: string,
  role: TrustedDirRole,
  native: Native = requireNative(),
  memo?: WalkMemo,
  writers: Writers = NO_WRITERS,
): number {
  void role;
  if (!isNormalAbsolute(absPath)) refuse('bad_name');
  if (underProc(absPath)) refuse('denied');
  return walkToCheckedDir(absPath, native, memo, writers);
}

/**
 * `openTrustedDir` after its path checks, for a path known to pass them (`readTrustedFile` opens the parent of a
 * file path it has checked: the parent of a normal absolute path outside /proc is one too), so the normal-form rule
 * runs once per read.
 */
function walkToCheckedDir(absPath: string, native: Native, memo: WalkMemo | undefined, writers: Writers): number {
  const uid = runningUid();
  const segments = absPath === '/' ? [] : absPath.slice(1).split('/');

  // With a memo: start below the deepest directory of this path that the call already judged as `/` or as an
  // intermediate (never the target itself: a target is judged as a target, where the sticky-tmp exception does not
  // apply). `fd` is then the memo's and is not closed here; every directory opened here is judged as before, and
  // intermediates are handed to the memo instead of being closed.
  let start = 0;
  let fromMemo = -1;
  if (memo !== undefined) {
    let prefix = '';
    fromMemo = memo.get('/') ?? -1;
    for (let i = 0; i < segments.length - 1 && fromMemo >= 0; i++) {
      prefix += `/${segments[i]!}`;
      const known = memo.get(prefix);
      if (known === undefined) break;
      fromMemo = known;
      start = i + 1;
    }
  }

  let startFd = fromMemo;
  let owned = false;
  try {
    if (startFd < 0) {
      startFd = native.openRoot();
      owned = true;
      const top = checkDirDescriptor(native, startFd, uid);
      if (top.reason !== null) refuse(top.reason);
      if (memo !== undefined && segments.length > 0) {
        memo.keep('/', startFd);
        owned = false;
      }
    }
    if (segments.length === 0) {
      // The target is `/` itself, judged above as the walk's start; a memo's descriptor stays the memo's.
      if (!owned) {
        startFd = native.openRoot();
        owned = true;
        const top = checkDirDescriptor(native, startFd, uid);
        if (top.reason !== null) refuse(top.reason);
      }
      owned = false;
      return startFd;
    }
    const base = start === 0 ? '/' : `/${segments.slice(0, start).join('/')}`;
    const end = walkDirs(native, startFd, segments.slice(start), {
      uid,
      absolute: base,
      writers,
      writersLastOnly: true,
      ...(memo === undefined
        ? {}
        : {
            keep: (fd: number, _i: number, rel: string): boolean => {
              memo.keep(base === '/' ? `/${rel}` : `${base}/${rel}`, fd);
              return true;
            },
          }),
    });
    if (!end.ok) refuse(end.reason);
    return end.fd;
  } catch (err) {
    if (err instanceof NativeError) refuse('io_error');
    throw err;
  } finally {
    if (owned) closeQuietly(native, startFd);
  }
}

/**
 * Reads a small trusted file (the policy) by absolute path: its parent directory is opened with
 * `openTrustedDir` (so the parent can never be a sticky temp directory); a no-follow stat must show a regular file
 * (a device node, FIFO or socket is never opened); the file is opened with openat(O_NOFOLLOW|O_NONBLOCK), and on
 * that descriptor, before any byte is read: regular file, owner root or running user, no group/world write, no ACL
 * write grant, link count 1, size ≤ `maxBytes`. Then exactly `size` bytes are read, the end of file is confirmed,
 * and the descriptor and the name are confirmed unchanged (`readSettled`).
 *
 * @returns the file's bytes
 * @throws BridgeError('unavailable', reason): the reasons of `openTrustedDir`, and `not_regular`, `hard_link`,
 *   `too_large`, `io_error` (the file changed size while being read)
 */
export function readTrustedFile(
  absPath: string,
  maxBytes: number,
  native: Native = requireNative(),
  memo?: WalkMemo,
): Buffer {
  return readTrustedFileAndStat(absPath, maxBytes, native, memo).bytes;
}

/**
 * `readTrustedFile`, also giving the stat of the descriptor the bytes were read from (as `readSettled` confirmed
 * it), for a caller whose own rule looks at more than the trust rule does (the persisted index must also be
 * unreadable by others: src/tools/persisted-index.ts).
 *
 * @throws as `readTrustedFile`
 */
export function readTrustedFileAndStat(
  absPath: string,
  maxBytes: number,
  native: Native = requireNative(),
  memo?: WalkMemo,
): { bytes: Buffer; stat: FileStat } {
  if (!isNormalAbsolute(absPath) || absPath === '/') refuse('bad_name');
  if (underProc(absPath)) refuse('denied');
  const uid = runningUid();
  const name = path.posix.basename(absPath);
  const dirFd = walkToCheckedDir(path.posix.dirname(absPath), native, memo, NO_WRITERS);
  let fd = -1;
  try {
    const kind = regularFileAtReason(native, dirFd, name);
    if (kind !== null) refuse(kind);
    try {
      fd = native.openFileAt(dirFd, name);
    } catch (err) {
      refuse(openFailureReason(native, dirFd, name, err, false));
    }
    const st = native.fstat(fd);
    if (!isRegularFile(st)) refuse('not_regular');
    // Device is not judged here: the policy lives outside the memory root.
    const reason = noteStatReason(st, uid, st.dev, Number.MAX_SAFE_INTEGER) ?? fileDescriptorReason(native, fd, uid);
    if (reason !== null) refuse(reason);
    if (st.size > maxBytes) refuse('too_large');
    const bytes = readSettled(native, dirFd, name, fd, st);
    if (bytes === null) refuse('io_error');
    return { bytes, stat: st };
  } catch (err) {
    if (err instanceof NativeError) refuse('io_error');
    throw err;
  } finally {
    if (fd >= 0) closeQuietly(native, fd);
    closeQuietly(native, dirFd);
  }
}

/**
 * Runs `fn(fd)` and closes `fd` afterwards, whatever happens.
 *
 * @returns what `fn` returns
 */
export function withDescriptor<T>(fd: number, fn: (fd: number) => T, native: Native = requireNative()): T {
  try {
    return fn(fd);
  } finally {
    closeQuietly(native, fd);
  }
}
