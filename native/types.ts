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

/** A failed system call. `errno` is the raw value; never shown to the model. */
export class NativeError extends Error {
  override readonly name = 'NativeError';
  constructor(
    readonly call: string,
    readonly errno: number,
  ) {
    super(`${call} failed: errno ${errno}`);
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
  /** Read the access ACL of an open descriptor (never throws). */
  readAcl(fd: number): AclRead;
  /**
   * List a directory descriptor (without `.`/`..`), in kernel order. Does not consume or close `fd`
   * (the binding duplicates it or rewinds). Returns 'too_many' as soon as more than `maxEntries` entries
   * were seen, without listing the rest.
   */
  listDir(fd: number, maxEntries: number): DirEntry[] | 'too_many';
  /** Read up to `length` bytes at `position` (pread). Returns the count read; 0 at end of file. */
  pread(fd: number, buf: Buffer, offset: number, length: number, position: number): number;
  /** flock(fd, op) with LOCK_SH/EX/NB/UN = 1/2/4/8; throws NativeError (EWOULDBLOCK) when NB and held. */
  flock(fd: number, op: number): void;
}
