/**
 * Shapes shared by the per-platform koffi bindings. Only `native/` touches FFI; everything above it sees these
 * types. Numbers that can exceed 2^53 (device and inode numbers, nanosecond times) are bigint.
 */

/** Metadata of one filesystem object, from statx/fstat on Linux or fstat/fstatat on macOS. */
export interface FileStat {
  /** Device id (Linux: makedev(major, minor) as returned by statx; macOS: st_dev). */
  dev: bigint;
  ino: bigint;
  /** Full st_mode: type bits and permission bits. */
  mode: number;
  nlink: number;
  uid: number;
  gid: number;
  /** Size in bytes. */
  size: number;
  mtimeNs: bigint;
  ctimeNs: bigint;
  /**
   * Mount id (Linux statx STATX_MNT_ID, kernel 5.8 and later): tells a bind mount from the filesystem it shows, which
   * `dev` cannot. Undefined where the platform or kernel does not report it (macOS, older Linux).
   */
  mntId?: bigint;
}

/**
 * Word layout of a raw stat record: a `Uint32Array` of `RAW_STAT_WORDS` words that a binding fills without allocating
 * (see `Native.statRawAt`). 64-bit fields are split into a low and a high word; times are seconds (signed 64-bit)
 * plus nanoseconds. The device word pair holds the same 64-bit value as `FileStat.dev`, so `fileStatFromRaw` of a
 * record equals the `FileStat` the binding's `statAt` would have returned for the same answer.
 * `FLAGS` bit 0: the mount id was reported (else `MNT_LO`/`MNT_HI` are 0 and `FileStat.mntId` is undefined).
 */
export const RAW = Object.freeze({
  FLAGS: 0,
  MODE: 1,
  NLINK: 2,
  UID: 3,
  GID: 4,
  DEV_LO: 5,
  DEV_HI: 6,
  INO_LO: 7,
  INO_HI: 8,
  SIZE_LO: 9,
  SIZE_HI: 10,
  MTIME_S_LO: 11,
  MTIME_S_HI: 12,
  MTIME_NS: 13,
  CTIME_S_LO: 14,
  CTIME_S_HI: 15,
  CTIME_NS: 16,
  MNT_LO: 17,
  MNT_HI: 18,
});
/** Words in one raw stat record. */
export const RAW_STAT_WORDS = 19;
/** `RAW.FLAGS` bit: the mount id is present. */
export const RAW_FLAG_MNT_ID = 1;

const NS_PER_S = 1_000_000_000n;

function u64Of(words: Uint32Array, lo: number): bigint {
  return (BigInt(words[lo + 1]!) << 32n) | BigInt(words[lo]!);
}

/** Nanoseconds since the epoch of a (seconds low, seconds high (signed), nanoseconds) triple. */
function timeNsOf(words: Uint32Array, lo: number): bigint {
  return BigInt.asIntN(64, u64Of(words, lo)) * NS_PER_S + BigInt(words[lo + 2]!);
}

/**
 * The last device and mount id built, reused while the words repeat: every note of a tree usually shares them, and
 * each `FileStat` a scan memo keeps would otherwise hold two more bigints of its own (48 bytes per note).
 */
let lastDev = { lo: -1, hi: -1, value: 0n };
let lastMnt = { lo: -1, hi: -1, value: 0n };

/** The u64 at `lo`, reusing `last.value` when the words are the same (bigints are immutable values). */
function sharedU64(words: Uint32Array, lo: number, last: { lo: number; hi: number; value: bigint }): typeof last {
  const l = words[lo]!;
  const h = words[lo + 1]!;
  return l === last.lo && h === last.hi ? last : { lo: l, hi: h, value: u64Of(words, lo) };
}

/** The `FileStat` a raw stat record describes (allocates; use it only for objects that are new or changed). */
export function fileStatFromRaw(words: Uint32Array): FileStat {
  lastDev = sharedU64(words, RAW.DEV_LO, lastDev);
  const dev = lastDev.value;
  const ino = u64Of(words, RAW.INO_LO);
  const mode = words[RAW.MODE]!;
  const nlink = words[RAW.NLINK]!;
  const uid = words[RAW.UID]!;
  const gid = words[RAW.GID]!;
  const size = words[RAW.SIZE_HI]! * 0x1_0000_0000 + words[RAW.SIZE_LO]!;
  const mtimeNs = timeNsOf(words, RAW.MTIME_S_LO);
  const ctimeNs = timeNsOf(words, RAW.CTIME_S_LO);
  if ((words[RAW.FLAGS]! & RAW_FLAG_MNT_ID) === 0) return { dev, ino, mode, nlink, uid, gid, size, mtimeNs, ctimeNs };
  lastMnt = sharedU64(words, RAW.MNT_LO, lastMnt);
  // One literal with every field: a property added after the literal lives in a separate property array (41 bytes).
  return { dev, ino, mode, nlink, uid, gid, size, mtimeNs, ctimeNs, mntId: lastMnt.value };
}

/** Writes `st` into `out` in the RAW layout (the inverse of `fileStatFromRaw`; for bindings without a raw stat). */
export function rawFromFileStat(st: FileStat, out: Uint32Array): void {
  const u64 = (lo: number, v: bigint): void => {
    const x = BigInt.asUintN(64, v);
    out[lo] = Number(x & 0xffff_ffffn);
    out[lo + 1] = Number(x >> 32n);
  };
  const time = (lo: number, ns: bigint): void => {
    let s = ns / NS_PER_S;
    let rest = ns - s * NS_PER_S;
    if (rest < 0n) {
      s -= 1n;
      rest += NS_PER_S;
    }
    u64(lo, s);
    out[lo + 2] = Number(rest);
  };
  out[RAW.FLAGS] = st.mntId === undefined ? 0 : RAW_FLAG_MNT_ID;
  out[RAW.MODE] = st.mode;
  out[RAW.NLINK] = st.nlink;
  out[RAW.UID] = st.uid;
  out[RAW.GID] = st.gid;
  u64(RAW.DEV_LO, st.dev);
  u64(RAW.INO_LO, st.ino);
  u64(RAW.SIZE_LO, BigInt(st.size));
  time(RAW.MTIME_S_LO, st.mtimeNs);
  time(RAW.CTIME_S_LO, st.ctimeNs);
  u64(RAW.MNT_LO, st.mntId ?? 0n);
}

/** `Native.findEntry` answered from a `listDir` result (for bindings without a faster way). */
export function findInListing(
  listed: DirEntry[] | 'too_many',
  name: Uint8Array,
): { count: number; found: boolean } | 'too_many' {
  if (listed === 'too_many') return listed;
  return { count: listed.length, found: listed.some((e) => e.name.equals(name)) };
}

/** d_type values as reported by the directory listing (Linux/macOS share them). */
export const DT = Object.freeze({ UNKNOWN: 0, FIFO: 1, CHR: 2, DIR: 4, BLK: 6, REG: 8, LNK: 10, SOCK: 12 });

/** One directory entry: the raw name bytes (never decoded here) and d_type. `.` and `..` are never returned. */
export interface DirEntry {
  name: Buffer;
  type: number;
}

/** A macOS extended ACL entry, already decoded from acl_get_entry & friends. */
export interface DarwinAclEntry {
  /** 1 = ACL_EXTENDED_ALLOW, 2 = ACL_EXTENDED_DENY, anything else = unknown (refuse). */
  tag: number;
  /** acl_get_permset_mask_np bits. */
  perms: bigint;
  /** Qualifier resolved with mbr_uuid_to_id: uid or gid, or null when it could not be resolved. */
  idType: 'uid' | 'gid' | null;
  id: number | null;
}

/**
 * Result of reading the access ACL of an open descriptor.
 * - `none`: the object has no extended ACL (Linux ENODATA, macOS ENOENT). Only this means "no ACL".
 * - `linux`: the raw `system.posix_acl_access` bytes, to be validated by `src/trust/acl-linux.ts`.
 * - `darwin`: the decoded entries of `acl_get_fd_np(fd, ACL_TYPE_EXTENDED)`.
 * - `error`: anything else (EOPNOTSUPP, ERANGE twice, EBADF, …): callers must refuse.
 */
export type AclRead =
  | { kind: 'none' }
  | { kind: 'linux'; bytes: Buffer }
  | { kind: 'darwin'; entries: DarwinAclEntry[] }
  | { kind: 'error'; errno: number };

/**
 * Portable names of the failures callers tell apart. The number behind each differs between platforms (ELOOP is 40
 * on Linux, 62 on macOS); the bindings translate (native/errno.ts), so nothing above `native/` sees an errno number.
 * 'EOTHER' is any errno without a name here.
 */
export type NativeCode =
  | 'EPERM'
  | 'ENOENT'
  | 'EINTR'
  | 'EIO'
  | 'ENXIO'
  | 'EBADF'
  | 'ENOMEM'
  | 'EACCES'
  | 'EEXIST'
  | 'ENOTDIR'
  | 'EISDIR'
  | 'EINVAL'
  | 'ENFILE'
  | 'EMFILE'
  | 'ENOSPC'
  | 'EROFS'
  | 'ERANGE'
  | 'EWOULDBLOCK'
  | 'ENAMETOOLONG'
  | 'ELOOP'
  | 'ENODATA'
  | 'EOPNOTSUPP'
  | 'EOTHER';

/**
 * A failed system call: `code` is the portable name callers test; `errno` is the platform's raw number, kept for
 * the bindings' own tests and never interpreted above `native/`. Neither is ever shown to the model.
 */
export class NativeError extends Error {
  override readonly name = 'NativeError';
  constructor(
    readonly call: string,
    readonly code: NativeCode,
    readonly errno: number,
  ) {
    super(`${call} failed: ${code} (errno ${errno})`);
  }
}

/**
 * A system call failed for lack of a resource the process or the system ran out of, not because of the object it
 * was asked about: EMFILE (no descriptor left in this process), ENFILE (the system's file table is full) or ENOMEM
 * (no kernel memory). Deliberately not a `NativeError`: code that turns a failed call on one file into a verdict on
 * that file (skip it, refuse it) catches `NativeError` only, so this one always travels up to the tool, which
 * answers `unavailable` with reason `resource_exhausted` instead of a partial answer (docs/DESIGN.md "Running out
 * of descriptors"). `code` is the portable name (see `NativeCode`), `errno` the raw value; never shown to the model.
 */
export class ResourceExhaustedError extends Error {
  override readonly name = 'ResourceExhaustedError';
  constructor(
    readonly call: string,
    readonly code: 'EMFILE' | 'ENFILE' | 'ENOMEM',
    readonly errno: number,
  ) {
    super(`${call} failed: ${code} (errno ${errno}, resource exhausted)`);
  }
}

/**
 * The system calls memory-bridge needs and Node's `fs` cannot do safely (descriptor-relative no-follow opens,
 * ACL reads from a descriptor, directory listing from a descriptor, flock). Every method is synchronous and throws
 * `NativeError` on failure, except where noted.
 */
export interface Native {
  readonly platform: 'linux' | 'darwin';
  readonly arch: string;
  /** False where the bindings were written from documentation and never run (macOS, Linux aarch64). */
  readonly verified: boolean;
  /** Open `/` as a directory descriptor (O_RDONLY|O_DIRECTORY|O_CLOEXEC). */
  openRoot(): number;
  /**
   * openat(dirfd, name, O_RDONLY|O_DIRECTORY|O_NOFOLLOW|O_NONBLOCK|O_CLOEXEC). `name` must be one path component
   * (no `/`, not `.` or `..`: the binding throws NativeError('openat', EINVAL) otherwise). A symlink gives
   * ELOOP or ENOTDIR.
   */
  openDirAt(dirfd: number, name: string): number;
  /**
   * openat(dirfd, name, O_RDONLY|O_NOFOLLOW|O_NONBLOCK|O_NOCTTY|O_CLOEXEC): never blocks on a FIFO, never follows
   * a final symlink (ELOOP). Same single-component rule as openDirAt.
   */
  openFileAt(dirfd: number, name: string): number;
  close(fd: number): void;
  /** fstat on an open descriptor. */
  fstat(fd: number): FileStat;
  /** Stat one component relative to dirfd without following a final symlink (statx/fstatat AT_SYMLINK_NOFOLLOW). */
  statAt(dirfd: number, name: string): FileStat;
  /**
   * Allocation-free `statAt` for hot loops: stat the component `cname` relative to dirfd without following a final
   * symlink and write the answer into `out` (RAW_STAT_WORDS words, layout `RAW`). `cname` is the component's raw
   * bytes followed by one NUL byte; the same single-component rule as statAt applies (no `/`, no other NUL, not
   * `.` or `..`: NativeError code EINVAL). Throws NativeError like statAt. A binding without a faster way fills
   * `out` from its own statAt (`rawFromFileStat`).
   */
  statRawAt(dirfd: number, cname: Uint8Array, out: Uint32Array): void;
  /** Read the access ACL of an open descriptor (never throws). */
  readAcl(fd: number): AclRead;
  /**
   * List a directory descriptor (without `.`/`..`), in kernel order. Does not consume or close `fd`
   * (the binding duplicates it or rewinds). Returns 'too_many' as soon as more than `maxEntries` entries
   * were seen, without listing the rest.
   */
  listDir(fd: number, maxEntries: number): DirEntry[] | 'too_many';
  /**
   * "List `fd` and look for one name": the same listing as `listDir` (rewound, without `.`/`..`, 'too_many' as soon
   * as more than `maxEntries` entries were seen), answering only how many raw entries it held and whether one of
   * them is named exactly `name` (byte comparison, no NUL). Every entry is counted even after a match, so the raw
   * entry ceiling is charged as `listDir` charges it. A binding without a faster way answers from its own listDir
   * (`findInListing`).
   */
  findEntry(fd: number, name: Uint8Array, maxEntries: number): { count: number; found: boolean } | 'too_many';
  /** Read up to `length` bytes at `position` (pread). Returns the count read; 0 at end of file. */
  pread(fd: number, buf: Buffer, offset: number, length: number, position: number): number;
  /** flock(fd, op) with LOCK_SH/EX/NB/UN = 1/2/4/8; throws NativeError (EWOULDBLOCK) when NB and held. */
  flock(fd: number, op: number): void;
  /**
   * Whether any open file description, in any process, has the regular file under `fd` (our own O_RDONLY
   * descriptor) open for writing (docs/DESIGN.md "Descriptors opened for writing before a chmod").
   *
   * Linux: a read lease is taken on `fd` and released at once (fcntl F_SETLEASE F_RDLCK, then F_UNLCK); the kernel
   * refuses a read lease with EAGAIN exactly when the inode is open for writing. Before it, F_SETSIG makes a lease
   * break in that instant send SIGURG (ignored by default) instead of SIGIO (terminates). Only on filesystems
   * where the kernel sees every writer (local ones: ext2/3/4, xfs, btrfs, tmpfs, f2fs, zfs, bcachefs, overlay, by
   * fstatfs f_type); elsewhere, and when the lease is refused for another reason (EACCES: not the file's owner and
   * no CAP_LEASE; EINVAL: leases disabled), the answer is 'unknown'.
   *
   * @returns 'yes' (open for writing), 'no', or 'unknown' (cannot be told here)
   * @throws ResourceExhaustedError on EMFILE/ENFILE/ENOMEM
   */
  openForWriting?(fd: number): 'yes' | 'no' | 'unknown';

  /**
   * Change notification (Linux inotify(7); docs/DESIGN.md §Change notification). The six methods below are present
   * together or not at all (absent on macOS). None throws: a failure is a value, and the caller then stats as it
   * would without notification.
   *
   * `watchOpen`: a new inotify instance (inotify_init1 with IN_NONBLOCK | IN_CLOEXEC); its descriptor, or -errno
   * (EMFILE: the per-user instance limit, /proc/sys/fs/inotify/max_user_instances).
   */
  watchOpen?(): number;
  /**
   * inotify_add_watch of the entry `cname` (raw name bytes and one terminating NUL) of the open directory `dirFd`,
   * through `/proc/self/fd/<dirFd>/<name>` with IN_DONT_FOLLOW, so the name is resolved in that very directory and
   * a symlink is watched as itself. The watch descriptor (≥ 1; the same one again when this instance already
   * watches the inode), or -errno: ENOSPC (the per-user watch limit, /proc/sys/fs/inotify/max_user_watches),
   * ENOENT (the name is gone), EINVAL (bad name).
   */
  watchAdd?(ifd: number, dirFd: number, cname: Uint8Array, mask: number): number;
  /** inotify_rm_watch; errors are ignored (the watch may already be gone, its IN_IGNORED on the queue). */
  watchRemove?(ifd: number, wd: number): void;
  /**
   * One read(2) of queued events into `buf` (struct inotify_event records): bytes read, 0 when none are queued
   * (EAGAIN), or -errno.
   */
  watchRead?(ifd: number, buf: Buffer): number;
  /**
   * True when this process's mount table changed since the previous call (poll(2) of an open /proc/self/mountinfo
   * reports POLLPRI | POLLERR once per change, proc_namespace.c); false when it did not; null when it cannot be
   * told (the file could not be opened or polled). The first call opens the file and answers false.
   */
  mountsChanged?(): boolean | null;
  /**
   * True when `fd` is on a filesystem whose changes all pass through this kernel's VFS, so inotify sees every one
   * of them (fstatfs f_type: ext2/3/4, xfs, btrfs, tmpfs, f2fs, zfs, bcachefs); false for any other (network,
   * FUSE, overlay, unknown) or when fstatfs fails.
   */
  localFilesystem?(fd: number): boolean;
}
