/**
 * The trust rule of docs/TRUST.md as small checks over fstat results and open descriptors. Each check returns an
 * operator reason code (src/errors.ts) or null when the object passes; callers decide whether a failure skips
 * the object (below the root) or refuses the call (root and policy chain).
 */
import { isUtf8 } from 'node:buffer';
import { getNative } from '../../native/index.js';
import { NativeError, type AclRead, type FileStat, type Native } from '../../native/types.js';
import { BridgeError, type Reason } from '../errors.js';
import { darwinAclGrantsForeignWrite } from './acl-darwin.js';
import { AclParseError, linuxAclGrantsForeignWrite, parseLinuxAcl } from './acl-linux.js';
import { NO_WRITERS, type Writers } from './writers.js';

const S_IFMT = 0o170000;
const S_IFDIR = 0o040000;
const S_IFREG = 0o100000;
const S_IFLNK = 0o120000;
const S_ISVTX = 0o001000;
const S_IWGRP = 0o000020;
const S_IWOTH = 0o000002;

/**
 * Root-owned sticky directories accepted as intermediate ancestors only (docs/TRUST.md): the sticky bit stops
 * other users from replacing the next entry, and that entry is owner-checked in turn.
 */
export const STICKY_TEMP_PATHS: ReadonlySet<string> = new Set(['/tmp', '/var/tmp', '/private/tmp', '/private/var/tmp']);

export const isDirectory = (st: FileStat): boolean => (st.mode & S_IFMT) === S_IFDIR;
export const isRegularFile = (st: FileStat): boolean => (st.mode & S_IFMT) === S_IFREG;
export const isSymlink = (st: FileStat): boolean => (st.mode & S_IFMT) === S_IFLNK;

/** The running user's uid (process.getuid); trust means "owned by this uid or by root". */
export function runningUid(): number {
  const uid = process.getuid?.();
  if (uid === undefined) throw new BridgeError('unavailable', 'unsupported_platform');
  return uid;
}

/** The platform bindings, or BridgeError('unavailable', 'unsupported_platform') where there are none. */
export function requireNative(): Native {
  const native = getNative();
  if (native === null) throw new BridgeError('unavailable', 'unsupported_platform');
  return native;
}

/**
 * Owner and mode part shared by directories and notes: owner root, `uid` or a named writer user; the group write
 * bit only when the object's group is a named writer group; never the world write bit (docs/DESIGN.md, "Team
 * memory: named writers"). With NO_WRITERS: owner root or `uid`, no group or world write bit.
 */
function ownerModeReason(st: FileStat, uid: number, writers: Writers): Reason | null {
  if (st.uid !== 0 && st.uid !== uid && !writers.uids.has(st.uid)) return 'untrusted_owner';
  if ((st.mode & S_IWGRP) !== 0 && !writers.gids.has(st.gid)) return 'group_writable';
  if ((st.mode & S_IWOTH) !== 0) return 'world_writable';
  return null;
}

/**
 * Directory trust on an fstat result (docs/TRUST.md), without the ACL (see `aclReason`).
 *
 * @param st        fstat of the open directory descriptor
 * @param uid       running uid
 * @param stickyTemp when the directory's absolute path is known and it is an intermediate ancestor, that path;
 *   a root-owned sticky directory at exactly one of STICKY_TEMP_PATHS is then accepted despite its write bits.
 * @param writers   named writers: only for the root and below it (never the policy chain or the root's ancestors)
 * @returns `not_directory`, `untrusted_owner`, `sticky_tmp` (a sticky temp directory where only an intermediate
 *   is allowed), `group_writable`, `world_writable`, or null
 */
export function dirStatReason(
  st: FileStat,
  uid: number,
  stickyTemp?: { path: string; intermediate: boolean },
  writers: Writers = NO_WRITERS,
): Reason | null {
  if (!isDirectory(st)) return 'not_directory';
  const reason = ownerModeReason(st, uid, writers);
  if (reason === null || reason === 'untrusted_owner') return reason;
  if (stickyTemp !== undefined && st.uid === 0 && (st.mode & S_ISVTX) !== 0 && STICKY_TEMP_PATHS.has(stickyTemp.path)) {
    return stickyTemp.intermediate ? null : 'sticky_tmp';
  }
  return reason;
}

/**
 * Where the memory root lives: its device and, where the platform reports one, its mount id. Everything below the
 * root must live there too: another filesystem has another device, and a bind mount (of a directory or a single
 * file from elsewhere, even on the same filesystem) has another mount id.
 */
export interface RootPlace {
  dev: bigint;
  mntId?: bigint;
}

/** The place of an fstat result of the root descriptor. */
export function placeOf(st: FileStat): RootPlace {
  return st.mntId === undefined ? { dev: st.dev } : { dev: st.dev, mntId: st.mntId };
}

/**
 * True when `st` is on the root's device and, when the root's mount id is known, on the root's mount. A bare
 * device number (callers that judge no mount) compares the device only.
 */
export function onRootPlace(st: FileStat, root: bigint | RootPlace): boolean {
  if (typeof root === 'bigint') return st.dev === root;
  return st.dev === root.dev && (root.mntId === undefined || st.mntId === root.mntId);
}

/**
 * Note metadata on a stat result (docs/TRUST.md), in this order: not a regular file → `not_regular`; owner →
 * `untrusted_owner`; group/world write → `group_writable`/`world_writable`; link count other than 1 →
 * `hard_link`; another device or mount than the root's (`onRootPlace`) → `other_device`; larger than
 * `maxFileBytes` → `too_large`. `writers` widens the owner and group checks below the root only (see
 * `ownerModeReason`); the policy file is judged without them.
 */
export function noteStatReason(
  st: FileStat,
  uid: number,
  rootDev: bigint | RootPlace,
  maxFileBytes: number,
  writers: Writers = NO_WRITERS,
): Reason | null {
  if (!isRegularFile(st)) return 'not_regular';
  const reason = ownerModeReason(st, uid, writers);
  if (reason !== null) return reason;
  if (st.nlink !== 1) return 'hard_link';
  if (!onRootPlace(st, rootDev)) return 'other_device';
  if (st.size > maxFileBytes) return 'too_large';
  return null;
}

/**
 * The ACL part of the trust rule over an `AclRead`: no ACL → null; unreadable (any errno but "no ACL") or a
 * Linux ACL that fails structural validation → `acl_unreadable`; a write grant to anyone but the owner, `uid`,
 * root, a named writer user or a named writer group (Linux: `linuxAclGrantsForeignWrite`; macOS:
 * `darwinAclGrantsForeignWrite`) → `acl_write`.
 *
 * @param writers  named writers (below the root only; NO_WRITERS elsewhere)
 * @param ownerGid the object's group (st_gid): its owning-group and mask entries may carry write only when it is
 *   a named writer group; -1 when unknown (then they never may)
 */
export function aclReason(acl: AclRead, uid: number, writers: Writers = NO_WRITERS, ownerGid = -1): Reason | null {
  switch (acl.kind) {
    case 'none':
      return null;
    case 'error':
      return 'acl_unreadable';
    case 'linux': {
      let entries: ReturnType<typeof parseLinuxAcl>;
      try {
        entries = parseLinuxAcl(acl.bytes);
      } catch (err) {
        if (err instanceof AclParseError) return 'acl_unreadable';
        throw err;
      }
      return linuxAclGrantsForeignWrite(entries, uid, writers, ownerGid) ? 'acl_write' : null;
    }
    case 'darwin':
      return darwinAclGrantsForeignWrite(acl.entries, uid, writers) ? 'acl_write' : null;
  }
}

/**
 * The descriptor part of the trust rule for a regular file (a note, the policy file), after its fstat passed: the
 * ACL (`descriptorAclReason`, with `writers` and the file's group below the root), then `open_for_write` when some
 * open file description, in any process, has the file open for writing (`Native.openForWriting`; docs/DESIGN.md
 * "Descriptors opened for writing before a chmod"). A descriptor opened while the file was writable by others keeps
 * its write access after a chmod; this refuses the file for as long as such a descriptor exists. Where the check
 * cannot be made ('unknown') the file is judged by the rest of the rule alone (docs/THREAT-MODEL.md, "A chmod does
 * not revoke a descriptor that is already open").
 *
 * @throws ResourceExhaustedError on EMFILE/ENFILE/ENOMEM
 */
export function fileDescriptorReason(
  native: Native,
  fd: number,
  uid: number,
  writers: Writers = NO_WRITERS,
  ownerGid = -1,
): Reason | null {
  return (
    descriptorAclReason(native, fd, uid, writers, ownerGid) ??
    (native.openForWriting?.(fd) === 'yes' ? 'open_for_write' : null)
  );
}

/** Reads the ACL of an open descriptor and applies `aclReason` (same parameters). */
export function descriptorAclReason(
  native: Native,
  fd: number,
  uid: number,
  writers: Writers = NO_WRITERS,
  ownerGid = -1,
): Reason | null {
  return aclReason(native.readAcl(fd), uid, writers, ownerGid);
}

/** One byte to probe for end of file after an exact read (calls are synchronous, so one buffer serves all). */
const EOF_PROBE = Buffer.alloc(1);

const utf8Fatal = new TextDecoder('utf-8', { fatal: true });

/**
 * Content validation (docs/TRUST.md): a NUL byte → `binary`; invalid UTF-8 (WHATWG decoder in fatal mode:
 * overlongs, surrogates and truncated sequences all fail) → `invalid_utf8`. A leading UTF-8 byte order mark is
 * an encoding signature and is dropped from the text.
 *
 * @returns the decoded text, or the reason it was refused
 */
export function decodeNoteText(bytes: Uint8Array): { text: string } | { reason: Reason } {
  const reason = noteBytesReason(bytes);
  if (reason !== null) return { reason };
  try {
    return { text: utf8Fatal.decode(bytes) };
  } catch {
    return { reason: 'invalid_utf8' };
  }
}

/**
 * The validation of `decodeNoteText` without building the text: `binary` for a NUL byte, `invalid_utf8` unless
 * the bytes are well-formed UTF-8 (Node's `isUtf8`: overlongs, surrogates, code points past U+10FFFF and truncated
 * sequences fail, as in the WHATWG decoder's fatal mode; tests/trust/note-text.test.ts compares the two), else null.
 */
export function noteBytesReason(bytes: Uint8Array): Reason | null {
  if (bytes.indexOf(0) !== -1) return 'binary';
  return isUtf8(bytes) ? null : 'invalid_utf8';
}

/**
 * The identity key of DESIGN.md: device, inode, size, mtime and ctime (ns), decimal, joined by ':'. Built by
 * `join`, which gives one flat string (about 80 bytes); a template literal gave a tree of 8 concatenations over 9
 * pieces (about 550 bytes), and every held note keeps its key.
 */
export function identityKey(st: FileStat): string {
  return [st.dev, st.ino, st.size, st.mtimeNs, st.ctimeNs].join(':');
}

/**
 * Judges the entry `name` in `dirFd` by a no-follow stat before anything opens it: a device node, FIFO or socket is
 * never opened (opening some devices has side effects, such as starting a watchdog or rewinding a tape, even with
 * O_NONBLOCK), and a symlink never reaches openat. The descriptor is still judged after the open; this only keeps
 * non-regular objects from being opened at all.
 *
 * @returns null for a regular file; `missing`, `symlink`, `not_regular` or `io_error` otherwise
 */
export function regularFileAtReason(native: Native, dirFd: number, name: string): Reason | null {
  let st: FileStat;
  try {
    st = native.statAt(dirFd, name);
  } catch (err) {
    if (!(err instanceof NativeError)) throw err;
    return err.code === 'ENOENT' ? 'missing' : 'io_error';
  }
  if (isRegularFile(st)) return null;
  return isSymlink(st) ? 'symlink' : 'not_regular';
}

/**
 * True when two stat results describe the same object in the same state: device, inode, size, mtime, ctime, link
 * count, mode and owner. A link, unlink, rename, chmod, chown, ACL change or write moves ctime; a replacement
 * moves the inode.
 */
export function sameState(a: FileStat, b: FileStat): boolean {
  // Field by field: the same comparison as equal identity keys, without building two strings from bigints.
  return (
    a.dev === b.dev &&
    a.ino === b.ino &&
    a.size === b.size &&
    a.mtimeNs === b.mtimeNs &&
    a.ctimeNs === b.ctimeNs &&
    a.nlink === b.nlink &&
    a.mode === b.mode &&
    a.uid === b.uid
  );
}

/**
 * Reads a file opened as `name` in `dirFd` whose descriptor passed every check with the fstat result `checked`, then
 * confirms that nothing moved while it was judged and read: fstat of the descriptor after the read equals
 * `checked`, and the name still refers to that object in that state (statx no-follow on the name). Without this,
 * a hard link to an outside file swapped in and back out passes (its link count drops to 1 while the descriptor is
 * open), and so does a note made writable and written between the check and the read.
 *
 * @returns the bytes (exactly `checked.size`), or null when the file changed or the name moved (callers refuse it
 *   as `io_error`)
 * @throws NativeError when pread or fstat fails
 */
export function readSettled(native: Native, dirFd: number, name: string, fd: number, checked: FileStat): Buffer | null {
  const bytes = readExactly(native, fd, checked.size);
  if (bytes === null || !sameState(native.fstat(fd), checked)) return null;
  let byName: FileStat;
  try {
    byName = native.statAt(dirFd, name);
  } catch (err) {
    if (err instanceof NativeError) return null;
    throw err;
  }
  return sameState(byName, checked) ? bytes : null;
}

/**
 * Full directory check on an open descriptor: fstat → `dirStatReason` → same device (and mount, when known) as
 * `rootDev` (when given, else `other_device`) → ACL (`aclReason`, with the directory's group). Runs on the
 * descriptor, so it judges the object actually opened. `writers` only for the root and directories below it.
 *
 * @returns the fstat result and the first failing reason (null when trusted)
 * @throws NativeError when fstat fails
 */
export function checkDirDescriptor(
  native: Native,
  fd: number,
  uid: number,
  rootDev?: bigint | RootPlace,
  stickyTemp?: { path: string; intermediate: boolean },
  writers: Writers = NO_WRITERS,
): { stat: FileStat; reason: Reason | null } {
  const stat = native.fstat(fd);
  let reason = dirStatReason(stat, uid, stickyTemp, writers);
  if (reason === null && rootDev !== undefined && !onRootPlace(stat, rootDev)) reason = 'other_device';
  if (reason === null) reason = descriptorAclReason(native, fd, uid, writers, stat.gid);
  return { stat, reason };
}

/**
 * Reads exactly `size` bytes from offset 0 of `fd` with pread, then checks that the file ends there
 * (one more pread returns 0). A file that shrank or grew since its fstat gives null: its bytes are not the
 * object that was judged.
 *
 * @throws NativeError when pread fails
 */
export function readExactly(native: Native, fd: number, size: number): Buffer | null {
  // Not from Node's shared 8 KiB pool: a note's bytes live only until they are validated and copied, and a pooled
  // slice would keep its whole pool slab alive as long as any long-lived slice beside it (a scan memo's raw name)
  // lives: 2.6 MB of slabs pinned per 10,000 notes, measured.
  const buf = Buffer.allocUnsafeSlow(size);
  let got = 0;
  while (got < size) {
    const n = native.pread(fd, buf, got, size - got, got);
    if (n === 0) return null;
    got += n;
  }
  if (native.pread(fd, EOF_PROBE, 0, 1, size) !== 0) return null;
  return buf;
}
