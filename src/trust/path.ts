/**
 * The descriptor walk of PRODUCT.md §5 for absolute paths outside the root (the memory root itself, the policy
 * directory and file, a profile home, an export target): open `/`, then one component at a time with
 * openat(O_NOFOLLOW|O_DIRECTORY), checking every descriptor — `/` itself and the final one included — with
 * fstat and the ACL before going on. Never a multi-component path string, never realpath.
 */
import path from 'node:path';
import { NativeError, type Native } from '../../native/types.js';
import { BridgeError, type Reason } from '../errors.js';
import {
  checkDirDescriptor,
  descriptorAclReason,
  isRegularFile,
  isSymlink,
  noteStatReason,
  readSettled,
  regularFileAtReason,
  requireNative,
  runningUid,
} from './rule.js';

/** What the directory is for; every role gets the same rule (the sticky-temp exception never covers the target). */
export type TrustedDirRole = 'root' | 'policy_dir' | 'out' | 'home';

const ELOOP = 40;
const ENOENT = 2;
const ENOTDIR = 20;
const ENXIO = 6;
// macOS numbers for the same conditions (ELOOP 62, ENOTDIR 20, ENOENT 2, ENXIO 6).
const ELOOP_DARWIN = 62;

/**
 * Maps a failed openat of one component to a reason. ELOOP means the component is a symlink (O_NOFOLLOW);
 * ENOTDIR on a directory open means a symlink or a non-directory, told apart with a no-follow stat.
 */
export function openFailureReason(native: Native, dirfd: number, name: string, err: unknown, wantDir: boolean): Reason {
  if (!(err instanceof NativeError)) throw err;
  const loop = native.platform === 'darwin' ? ELOOP_DARWIN : ELOOP;
  if (err.errno === loop) return 'symlink';
  if (err.errno === ENOENT) return 'missing';
  if (err.errno === ENXIO && !wantDir) return 'not_regular'; // a socket opened with O_NONBLOCK
  if (err.errno === ENOTDIR && wantDir) {
    try {
      return isSymlink(native.statAt(dirfd, name)) ? 'symlink' : 'not_directory';
    } catch {
      return 'io_error';
    }
  }
  return 'io_error';
}

/**
 * True when `absPath` is an absolute path equal to its normalised form: no `.` or `..` segment, no empty segment
 * (`//`), no trailing `/` (except `/` itself), no NUL.
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
 * Opens a trusted directory by walking from `/` (PRODUCT.md §5).
 *
 * Every descriptor on the way — `/`, each intermediate, and the target — must be a directory owned by root or
 * the running user, not group- or world-writable, without an ACL write grant. A root-owned sticky directory at
 * exactly /tmp, /var/tmp, /private/tmp or /private/var/tmp passes only as an intermediate, never as the target.
 * Intermediate descriptors are closed as the walk moves on; on any failure every descriptor is closed.
 *
 * @param absPath absolute, normalised path (see `isNormalAbsolute`), not `/proc` or below
 * @param role    what the directory is for (documentation and logs; the rule is the same)
 * @param native  bindings (defaults to this platform's; tests may pass a counting wrapper)
 * @returns an open directory descriptor (O_DIRECTORY|O_NOFOLLOW|O_CLOEXEC); the caller closes it
 * @throws BridgeError('unavailable', reason) with reason `bad_name` (path syntax), `denied` (/proc),
 *   `symlink`, `missing`, `not_directory`, `untrusted_owner`, `group_writable`, `world_writable`, `sticky_tmp`,
 *   `acl_write`, `acl_unreadable`, `io_error`, or `unsupported_platform`
 */
export function openTrustedDir(absPath: string, role: TrustedDirRole, native: Native = requireNative()): number {
  void role;
  if (!isNormalAbsolute(absPath)) refuse('bad_name');
  if (underProc(absPath)) refuse('denied');
  const uid = runningUid();
  const segments = absPath === '/' ? [] : absPath.slice(1).split('/');

  let fd = -1;
  try {
    fd = native.openRoot();
    const top = checkDirDescriptor(native, fd, uid);
    if (top.reason !== null) refuse(top.reason);
    let prefix = '';
    for (let i = 0; i < segments.length; i++) {
      const name = segments[i]!;
      prefix += `/${name}`;
      let child: number;
      try {
        child = native.openDirAt(fd, name);
      } catch (err) {
        refuse(openFailureReason(native, fd, name, err, true));
      }
      native.close(fd);
      fd = child;
      const { reason } = checkDirDescriptor(native, fd, uid, undefined, {
        path: prefix,
        intermediate: i < segments.length - 1,
      });
      if (reason !== null) refuse(reason);
    }
    const result = fd;
    fd = -1;
    return result;
  } catch (err) {
    if (err instanceof NativeError) refuse('io_error');
    throw err;
  } finally {
    if (fd >= 0) closeQuietly(native, fd);
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
export function readTrustedFile(absPath: string, maxBytes: number, native: Native = requireNative()): Buffer {
  if (!isNormalAbsolute(absPath) || absPath === '/') refuse('bad_name');
  if (underProc(absPath)) refuse('denied');
  const uid = runningUid();
  const name = path.posix.basename(absPath);
  const dirFd = openTrustedDir(path.posix.dirname(absPath), 'policy_dir', native);
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
    const reason = noteStatReason(st, uid, st.dev, Number.MAX_SAFE_INTEGER) ?? descriptorAclReason(native, fd, uid);
    if (reason !== null) refuse(reason);
    if (st.size > maxBytes) refuse('too_large');
    const bytes = readSettled(native, dirFd, name, fd, st);
    if (bytes === null) refuse('io_error');
    return bytes;
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

/** Closes a descriptor on a cleanup path, where a close error must not hide the error being handled. */
export function closeQuietly(native: Native, fd: number): void {
  try {
    native.close(fd);
  } catch {
    // Nothing to recover: the descriptor is released or was never valid.
  }
}
