/**
 * Linux bindings (glibc `libc.so.6`) through koffi: descriptor-relative no-follow opens, statx, getdents64,
 * fgetxattr for `system.posix_acl_access`, pread and flock.
 *
 * x86_64 is verified on the project's machines. aarch64 is unverified: written from documented facts
 * (docs/PLATFORM.md §Constants table, the generic syscall table and the arch-independent statx layout), never run.
 */
import os from 'node:os';
import type { default as Koffi } from 'koffi';
import { ComponentEncoder, cString, requireRawComponent } from './component.js';
import { LINUX_ERRNO, linuxErrors } from './errno.js';
import {
  DT,
  RAW,
  RAW_FLAG_MNT_ID,
  type AclRead,
  type DirEntry,
  type FileStat,
  type Native,
  rawFromFileStat,
} from './types.js';

/** The open flags and syscall numbers that differ between Linux architectures (docs/PLATFORM.md). */
interface LinuxArchConstants {
  O_DIRECTORY: number;
  O_NOFOLLOW: number;
  /** getdents64 syscall number (asm-generic table on aarch64). */
  SYS_getdents64: number;
  verified: boolean;
}

const ARCH_CONSTANTS: Readonly<Record<string, LinuxArchConstants>> = Object.freeze({
  x64: { O_DIRECTORY: 0x10000, O_NOFOLLOW: 0x20000, SYS_getdents64: 217, verified: true },
  // unverified: written from documented facts (docs/PLATFORM.md), never run on aarch64.
  arm64: { O_DIRECTORY: 0x4000, O_NOFOLLOW: 0x8000, SYS_getdents64: 61, verified: false },
});

// Flags that are the same on x86_64 and aarch64.
const O_RDONLY = 0;
const O_NOCTTY = 0x100;
const O_NONBLOCK = 0x800;
const O_CLOEXEC = 0x80000;
const AT_FDCWD = -100;
const AT_SYMLINK_NOFOLLOW = 0x100;
const AT_EMPTY_PATH = 0x1000;
const SEEK_SET = 0;

const { EINTR, ERANGE, ENODATA } = LINUX_ERRNO;

/** statx mask: TYPE|MODE|NLINK|UID|GID|ATIME|MTIME|CTIME|INO|SIZE|BLOCKS (STATX_BASIC_STATS). */
const STATX_BASIC_STATS = 0x7ff;
/** statx mask bit for stx_mnt_id (Linux 5.8). Requested on every call; absent from the answer on older kernels. */
const STATX_MNT_ID = 0x1000;
/** What every statx call here asks for (also the stat thread's, native/stat-worker.ts). */
export const STATX_REQUEST = STATX_BASIC_STATS | STATX_MNT_ID;
/** The fields FileStat needs: TYPE|MODE|NLINK|UID|GID|MTIME|CTIME|INO|SIZE. An answer without one of them is EIO. */
export const STATX_NEEDED = 0x1 | 0x2 | 0x4 | 0x8 | 0x10 | 0x40 | 0x80 | 0x100 | 0x200;

/** struct statx is 256 bytes with the same layout on every architecture (include/uapi/linux/stat.h). */
const STATX_SIZE = 256;
const STX = Object.freeze({
  mask: 0,
  nlink: 16,
  uid: 20,
  gid: 24,
  mode: 28,
  ino: 32,
  size: 40,
  ctime: 96,
  mtime: 112,
  devMajor: 136,
  devMinor: 140,
  mntId: 144,
});

/** The same fields as 32-bit word indices into the statx buffer (little-endian hosts only; see `statRawAt`). */
export const STXW = Object.freeze({
  mask: 0,
  nlink: 4,
  uid: 5,
  gid: 6,
  mode: 7,
  ino: 8,
  size: 10,
  ctime: 24,
  mtime: 28,
  devMajor: 34,
  devMinor: 35,
  mntId: 36,
});

/**
 * Copies a statx answer, read as 32-bit words `w` (little-endian host) whose mask is `mask`, into `out` from word
 * `at` on, in the RAW layout (native/types.ts). Shared by `statRawAt` and the stat thread, so both produce the same
 * words for the same answer.
 */
export function rawFromStatx(w: Uint32Array, mask: number, out: Uint32Array, at: number): void {
  out[at + RAW.DEV_LO] = makedevLow(w[STXW.devMajor]!, w[STXW.devMinor]!);
  out[at + RAW.DEV_HI] = makedevHigh(w[STXW.devMajor]!, w[STXW.devMinor]!);
  out[at + RAW.MODE] = w[STXW.mode]! & 0xffff;
  out[at + RAW.NLINK] = w[STXW.nlink]!;
  out[at + RAW.UID] = w[STXW.uid]!;
  out[at + RAW.GID] = w[STXW.gid]!;
  out[at + RAW.INO_LO] = w[STXW.ino]!;
  out[at + RAW.INO_HI] = w[STXW.ino + 1]!;
  out[at + RAW.SIZE_LO] = w[STXW.size]!;
  out[at + RAW.SIZE_HI] = w[STXW.size + 1]!;
  out[at + RAW.MTIME_S_LO] = w[STXW.mtime]!;
  out[at + RAW.MTIME_S_HI] = w[STXW.mtime + 1]!;
  out[at + RAW.MTIME_NS] = w[STXW.mtime + 2]!;
  out[at + RAW.CTIME_S_LO] = w[STXW.ctime]!;
  out[at + RAW.CTIME_S_HI] = w[STXW.ctime + 1]!;
  out[at + RAW.CTIME_NS] = w[STXW.ctime + 2]!;
  if ((mask & STATX_MNT_ID) !== 0) {
    out[at + RAW.FLAGS] = RAW_FLAG_MNT_ID;
    out[at + RAW.MNT_LO] = w[STXW.mntId]!;
    out[at + RAW.MNT_HI] = w[STXW.mntId + 1]!;
  } else {
    out[at + RAW.FLAGS] = 0;
    out[at + RAW.MNT_LO] = 0;
    out[at + RAW.MNT_HI] = 0;
  }
}

/** struct linux_dirent64: d_ino u64 @0, d_off s64 @8, d_reclen u16 @16, d_type u8 @18, d_name @19. */
const DIRENT_RECLEN = 16;
const DIRENT_TYPE = 18;
const DIRENT_NAME = 19;
const DIRENT_BUFFER_BYTES = 32 * 1024;

/** fcntl commands and lease types (asm-generic, shared by x86_64 and aarch64). */
const F_SETSIG = 10;
const F_SETLEASE = 1024;
const F_RDLCK = 0;
const F_UNLCK = 2;
/** Default action: ignore. Sent instead of SIGIO (default action: terminate) if a lease we hold is broken. */
const SIGURG = 23;
/** struct statfs is 120 bytes on x86_64 and aarch64. */
const STATFS_BYTES = 128;
/**
 * Filesystems every change of which goes through this kernel's VFS, so inotify sees it (fstatfs f_type): ext2/3/4,
 * xfs, btrfs, tmpfs, f2fs, zfs, bcachefs. Not overlay (a change to a lower layer made outside the overlay raises no
 * event on the overlay's inode), nor any network or FUSE filesystem (docs/DESIGN.md §Change notification).
 */
const WATCH_FILESYSTEMS: ReadonlySet<number> = new Set([
  0xef53, 0x58465342, 0x9123683e, 0x01021994, 0xf2f52010, 0x2fc12fc1, 0xca451a4e,
]);

/** overlayfs f_type (OVERLAYFS_SUPER_MAGIC). */
const OVERLAYFS_MAGIC = 0x794c7630;

/**
 * Filesystems (statfs f_type) whose writers all go through this kernel, so a read lease sees every one: those of
 * WATCH_FILESYSTEMS and overlay. Network and FUSE filesystems are left out: writers on other machines or behind a
 * daemon are invisible, and NFSv4 and SMB refuse a lease without a delegation or oplock.
 */
const LEASE_FILESYSTEMS: ReadonlySet<number> = new Set([...WATCH_FILESYSTEMS, OVERLAYFS_MAGIC]);

const IN_NONBLOCK = 0x800;
const IN_CLOEXEC = 0x80000;
const IN_DONT_FOLLOW = 0x02000000;
const POLLPRI = 0x2;
const POLLERR = 0x8;

/** Calls `fn` (a libc call returning 0 or -1) until it does not fail with EINTR; true on success. */
function retryEintrWith(koffi: typeof Koffi, fn: () => number): boolean {
  for (;;) {
    if (fn() !== -1) return true;
    if (koffi.errno() !== EINTR) return false;
  }
}

/** A first fgetxattr attempt fits any ordinary ACL (4 + 8·N bytes); ERANGE retries at 64 KiB, which always fits. */
const ACL_SMALL_BYTES = 4096;
const ACL_LARGE_BYTES = 64 * 1024;

const NS_PER_S = 1_000_000_000n;

/**
 * glibc's makedev(): the same encoding Node and libuv derive from statx, so a device id from statAt and from
 * fstat (both statx here) always compares equal.
 */
export function makedev(major: number, minor: number): bigint {
  const ma = BigInt(major >>> 0);
  const mi = BigInt(minor >>> 0);
  return ((ma & 0xfffff000n) << 32n) | ((ma & 0xfffn) << 8n) | ((mi & 0xffffff00n) << 12n) | (mi & 0xffn);
}

/**
 * The low 32 bits of `makedev(major, minor)` without a bigint: major bits 0-11 at 8-19, minor bits 0-7 at 0-7 and
 * bits 8-19 at 20-31.
 */
export function makedevLow(major: number, minor: number): number {
  return (((major & 0xfff) << 8) | ((minor & 0xfff00) << 12) | (minor & 0xff)) >>> 0;
}

/** The high 32 bits of `makedev(major, minor)`: minor bits 20-31 at 0-11, major bits 12-31 at 12-31. */
export function makedevHigh(major: number, minor: number): number {
  return ((major & 0xfffff000) | ((minor >>> 20) & 0xfff)) >>> 0;
}

function timestampNs(buf: Buffer, offset: number): bigint {
  return buf.readBigInt64LE(offset) * NS_PER_S + BigInt(buf.readUInt32LE(offset + 8));
}

/**
 * Builds the Linux `Native` for `arch` ('x64' or 'arm64'), or returns null for any other architecture.
 * Throws whatever koffi throws when libc or a symbol cannot be loaded; `getNative` turns that into null.
 */
export function createLinuxNative(koffi: typeof Koffi, arch: string): Native | null {
  const k = ARCH_CONSTANTS[arch];
  if (k === undefined) return null;

  const lib = koffi.load('libc.so.6');
  // openat is variadic in C; the three-argument declaration is correct because no mode is ever passed.
  const openat = lib.func('int openat(int, const uint8_t *, int)') as (
    dirfd: number,
    path: Buffer,
    flags: number,
  ) => number;
  const closeFn = lib.func('int close(int)') as (fd: number) => number;
  const statx = lib.func('int statx(int, const uint8_t *, int, unsigned int, uint8_t *)') as (
    dirfd: number,
    path: Buffer,
    flags: number,
    mask: number,
    out: Buffer,
  ) => number;
  const lseek = lib.func('int64_t lseek(int, int64_t, int)') as (
    fd: number,
    off: number,
    whence: number,
  ) => number | bigint;
  // getdents64 through syscall(2): glibc only gained a wrapper in 2.30, the syscall number is per architecture.
  const syscall = lib.func('long syscall(long, ...)') as (...args: unknown[]) => number | bigint;
  const fgetxattr = lib.func('intptr_t fgetxattr(int, const uint8_t *, uint8_t *, size_t)') as (
    fd: number,
    name: Buffer,
    value: Buffer,
    size: number,
  ) => number | bigint;
  const preadFn = lib.func('intptr_t pread(int, uint8_t *, size_t, int64_t)') as (
    fd: number,
    buf: Buffer,
    count: number,
    offset: number,
  ) => number | bigint;
  const flockFn = lib.func('int flock(int, int)') as (fd: number, op: number) => number;
  // fcntl is variadic: its third argument is passed with an explicit type on each call.
  const fcntl = lib.func('int fcntl(int, int, ...)') as (fd: number, cmd: number, ...rest: unknown[]) => number;
  const fstatfs = lib.func('int fstatfs(int, uint8_t *)') as (fd: number, buf: Buffer) => number;
  const statfsBuf = Buffer.alloc(STATFS_BYTES);
  const inotifyInit1 = lib.func('int inotify_init1(int)') as (flags: number) => number;
  const inotifyAddWatch = lib.func('int inotify_add_watch(int, const uint8_t *, uint32_t)') as (
    fd: number,
    path: Buffer,
    mask: number,
  ) => number;
  const inotifyRmWatch = lib.func('int inotify_rm_watch(int, int)') as (fd: number, wd: number) => number;
  const readFn = lib.func('intptr_t read(int, uint8_t *, size_t)') as (fd: number, buf: Buffer, n: number) => number;
  const pollFn = lib.func('int poll(uint8_t *, unsigned long, int)') as (fds: Buffer, n: number, ms: number) => number;
  /** struct pollfd { int fd; short events; short revents; } for /proc/self/mountinfo; fd -1 until first opened. */
  const mountPoll = Buffer.alloc(8);
  let mountFd = -1;
  let mountFailed = false;
  const procPath = cString('/proc/self/mountinfo');

  const retryEintr = (fn: () => number): boolean => retryEintrWith(koffi, fn);
  const names = new ComponentEncoder(linuxErrors);
  const rootPath = cString('/');
  const emptyPath = cString('');
  const aclName = cString('system.posix_acl_access');
  // One word array under the statx buffer: statRawAt reads it as words, statxInto as bytes (aligned by construction).
  const statWords = new Uint32Array(STATX_SIZE / 4);
  const statBuf = Buffer.from(statWords.buffer, 0, STATX_SIZE);
  const littleEndian = os.endianness() === 'LE';
  const direntBuf = Buffer.alloc(DIRENT_BUFFER_BYTES);
  const aclSmall = Buffer.alloc(ACL_SMALL_BYTES);
  let aclLarge: Buffer | undefined;

  const dirFlags = O_RDONLY | k.O_DIRECTORY | k.O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
  const fileFlags = O_RDONLY | k.O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;

  /** openat with EINTR retry; errno is read in the statement right after the failing call. */
  function openAt(dirfd: number, path: Buffer, flags: number): number {
    for (;;) {
      const fd = openat(dirfd, path, flags);
      if (fd >= 0) return fd;
      const errno = koffi.errno();
      if (errno !== EINTR) throw linuxErrors.fail('openat', errno);
    }
  }

  /** statx into `statBuf` with EINTR retry; returns the answer's mask, which must hold every field we judge by. */
  function statxCall(dirfd: number, path: Uint8Array, flags: number): number {
    for (;;) {
      const rc = statx(dirfd, path as Buffer, flags, STATX_REQUEST, statBuf);
      if (rc === 0) break;
      const errno = koffi.errno();
      if (errno !== EINTR) throw linuxErrors.fail('statx', errno);
    }
    // A filesystem that cannot report a field we judge by must not pass as if it had.
    const mask = statBuf.readUInt32LE(STX.mask);
    if ((mask & STATX_NEEDED) !== STATX_NEEDED) throw linuxErrors.of('statx', 'EIO');
    return mask;
  }

  function statxInto(dirfd: number, path: Buffer, flags: number): FileStat {
    const mask = statxCall(dirfd, path, flags);
    const st: FileStat = {
      dev: makedev(statBuf.readUInt32LE(STX.devMajor), statBuf.readUInt32LE(STX.devMinor)),
      ino: statBuf.readBigUInt64LE(STX.ino),
      mode: statBuf.readUInt16LE(STX.mode),
      nlink: statBuf.readUInt32LE(STX.nlink),
      uid: statBuf.readUInt32LE(STX.uid),
      gid: statBuf.readUInt32LE(STX.gid),
      size: Number(statBuf.readBigUInt64LE(STX.size)),
      mtimeNs: timestampNs(statBuf, STX.mtime),
      ctimeNs: timestampNs(statBuf, STX.ctime),
    };
    if ((mask & STATX_MNT_ID) !== 0) st.mntId = statBuf.readBigUInt64LE(STX.mntId);
    return st;
  }

  function fgetxattrInto(fd: number, buf: Buffer): number {
    for (;;) {
      const n = Number(fgetxattr(fd, aclName, buf, buf.length));
      if (n >= 0) return n;
      const errno = koffi.errno();
      if (errno !== EINTR) return -errno;
    }
  }

  /**
   * Lists `fd` from its start (getdents64 after rewinding: a dup would share the offset, so the caller's descriptor
   * is left otherwise untouched) and calls `visit(start, end, type)` for each entry but `.` and `..`, with the name
   * at `direntBuf[start .. end)`. Stops and returns false as soon as `visit` returns false; true after the last.
   */
  const getdents64 = k.SYS_getdents64;
  function eachEntry(fd: number, visit: (start: number, end: number, type: number) => boolean): boolean {
    if (Number(lseek(fd, 0, SEEK_SET)) < 0) throw linuxErrors.fail('lseek', koffi.errno());
    for (;;) {
      let n: number;
      for (;;) {
        n = Number(syscall(getdents64, 'int', fd, 'uint8_t *', direntBuf, 'size_t', direntBuf.length));
        if (n >= 0) break;
        const errno = koffi.errno();
        if (errno !== EINTR) throw linuxErrors.fail('getdents64', errno);
      }
      if (n === 0) return true;
      let off = 0;
      while (off < n) {
        const reclen = direntBuf.readUInt16LE(off + DIRENT_RECLEN);
        if (reclen < DIRENT_NAME + 1 || off + reclen > n) throw linuxErrors.of('getdents64', 'EIO');
        const start = off + DIRENT_NAME;
        // The name ends at its NUL terminator; the alignment padding after it is not zeroed by the kernel. Names
        // are short: a loop here is cheaper than a native indexOf call per entry.
        const limit = off + reclen;
        let end = start;
        while (end < limit && direntBuf[end] !== 0) end++;
        const len = end - start;
        const isDot =
          (len === 1 && direntBuf[start] === 0x2e) ||
          (len === 2 && direntBuf[start] === 0x2e && direntBuf[start + 1] === 0x2e);
        if (!isDot && !visit(start, end, direntBuf[off + DIRENT_TYPE] ?? DT.UNKNOWN)) return false;
        off += reclen;
      }
    }
  }

  return {
    platform: 'linux',
    arch,
    verified: k.verified,

    openRoot(): number {
      return openAt(AT_FDCWD, rootPath, O_RDONLY | k.O_DIRECTORY | O_CLOEXEC);
    },

    openDirAt(dirfd: number, name: string): number {
      return openAt(dirfd, names.encode('openat', name), dirFlags);
    },

    openFileAt(dirfd: number, name: string): number {
      return openAt(dirfd, names.encode('openat', name), fileFlags);
    },

    close(fd: number): void {
      // On Linux the descriptor is released even when close reports EINTR, so retrying could close a reused one.
      if (closeFn(fd) !== 0) {
        const errno = koffi.errno();
        if (errno !== EINTR) throw linuxErrors.fail('close', errno);
      }
    },

    fstat(fd: number): FileStat {
      // statx(fd, "", AT_EMPTY_PATH) rather than fs.fstatSync: same call and encoding as statAt.
      return statxInto(fd, emptyPath, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW);
    },

    statAt(dirfd: number, name: string): FileStat {
      return statxInto(dirfd, names.encode('statx', name), AT_SYMLINK_NOFOLLOW);
    },

    // The word view reads the buffer in host byte order; statx writes little-endian only on little-endian hosts, so a
    // big-endian host decodes the bytes (statxInto) and writes the words from that.
    statRawAt: littleEndian
      ? (dirfd: number, cname: Uint8Array, out: Uint32Array): void => {
          requireRawComponent(cname, 'statx', linuxErrors);
          const w = statWords;
          // statxCall inlined for the common success path (this runs once per note per call).
          const mask =
            statx(dirfd, cname as Buffer, AT_SYMLINK_NOFOLLOW, STATX_REQUEST, statBuf) === 0 &&
            (w[STXW.mask]! & STATX_NEEDED) === STATX_NEEDED
              ? w[STXW.mask]!
              : statxCall(dirfd, cname, AT_SYMLINK_NOFOLLOW);
          rawFromStatx(w, mask, out, 0);
        }
      : (dirfd: number, cname: Uint8Array, out: Uint32Array): void => {
          requireRawComponent(cname, 'statx', linuxErrors);
          rawFromFileStat(statxInto(dirfd, cname as Buffer, AT_SYMLINK_NOFOLLOW), out);
        },

    readAcl(fd: number): AclRead {
      let n = fgetxattrInto(fd, aclSmall);
      let buf: Buffer = aclSmall;
      if (n === -ERANGE) {
        aclLarge ??= Buffer.alloc(ACL_LARGE_BYTES);
        buf = aclLarge;
        n = fgetxattrInto(fd, buf);
      }
      if (n === -ENODATA) return { kind: 'none' };
      // Out of memory says nothing about the object: the call cannot be answered (docs/DESIGN.md).
      if (n < 0 && linuxErrors.exhausted(-n)) throw linuxErrors.fail('fgetxattr', -n);
      if (n < 0) return { kind: 'error', errno: -n };
      return { kind: 'linux', bytes: Buffer.from(buf.subarray(0, n)) };
    },

    listDir(fd: number, maxEntries: number): DirEntry[] | 'too_many' {
      const entries: DirEntry[] = [];
      const complete = eachEntry(fd, (start, end, type) => {
        if (entries.length >= maxEntries) return false;
        const name = Buffer.allocUnsafe(end - start); // small sizes come from Node's shared pool
        direntBuf.copy(name, 0, start, end);
        entries.push({ name, type });
        return true;
      });
      return complete ? entries : 'too_many';
    },

    findEntry(fd: number, name: Uint8Array, maxEntries: number): { count: number; found: boolean } | 'too_many' {
      let count = 0;
      let found = false;
      const len = name.length;
      const complete = eachEntry(fd, (start, end) => {
        if (count >= maxEntries) return false;
        count++;
        if (!found && end - start === len) {
          let k = 0;
          while (k < len && direntBuf[start + k] === name[k]) k++;
          found = k === len;
        }
        return true;
      });
      return complete ? { count, found } : 'too_many';
    },

    pread(fd: number, buf: Buffer, offset: number, length: number, position: number): number {
      if (offset < 0 || length < 0 || offset + length > buf.length || position < 0)
        throw linuxErrors.of('pread', 'EINVAL');
      for (;;) {
        const n = Number(preadFn(fd, buf.subarray(offset, offset + length), length, position));
        if (n >= 0) return n;
        const errno = koffi.errno();
        if (errno !== EINTR) throw linuxErrors.fail('pread', errno);
      }
    },

    openForWriting(fd: number): 'yes' | 'no' | 'unknown' {
      if (!retryEintr(() => fstatfs(fd, statfsBuf))) {
        const errno = koffi.errno();
        if (linuxErrors.exhausted(errno)) throw linuxErrors.fail('fstatfs', errno);
        return 'unknown';
      }
      // f_type is the first member of struct statfs (a long) on every 64-bit Linux architecture.
      if (!LEASE_FILESYSTEMS.has(Number(statfsBuf.readBigInt64LE(0) & 0xffffffffn))) return 'unknown';
      if (!retryEintr(() => fcntl(fd, F_SETSIG, 'int', SIGURG))) return 'unknown';
      if (retryEintr(() => fcntl(fd, F_SETLEASE, 'int', F_RDLCK))) {
        // Released at once; closing the descriptor would release it too.
        retryEintr(() => fcntl(fd, F_SETLEASE, 'int', F_UNLCK));
        return 'no';
      }
      const errno = koffi.errno();
      if (errno === LINUX_ERRNO.EWOULDBLOCK) return 'yes'; // EAGAIN
      if (linuxErrors.exhausted(errno)) throw linuxErrors.fail('fcntl', errno);
      return 'unknown';
    },

    flock(fd: number, op: number): void {
      for (;;) {
        if (flockFn(fd, op) === 0) return;
        const errno = koffi.errno();
        if (errno !== EINTR) throw linuxErrors.fail('flock', errno);
      }
    },

    watchOpen(): number {
      const fd = inotifyInit1(IN_NONBLOCK | IN_CLOEXEC);
      return fd >= 0 ? fd : -koffi.errno();
    },

    watchAdd(ifd: number, dirFd: number, cname: Uint8Array, mask: number): number {
      try {
        requireRawComponent(cname, 'statx', linuxErrors);
      } catch {
        return -LINUX_ERRNO.EINVAL;
      }
      if (!Number.isInteger(dirFd) || dirFd < 0) return -LINUX_ERRNO.EBADF;
      const prefix = `/proc/self/fd/${dirFd}/`;
      const path = Buffer.allocUnsafe(prefix.length + cname.length);
      path.write(prefix, 0, 'latin1');
      path.set(cname, prefix.length);
      for (;;) {
        const wd = inotifyAddWatch(ifd, path, (mask | IN_DONT_FOLLOW) >>> 0);
        if (wd >= 0) return wd;
        const errno = koffi.errno();
        if (errno !== EINTR) return -errno;
      }
    },

    watchRemove(ifd: number, wd: number): void {
      inotifyRmWatch(ifd, wd);
    },

    watchRead(ifd: number, buf: Buffer): number {
      for (;;) {
        const n = Number(readFn(ifd, buf, buf.length));
        if (n >= 0) return n;
        const errno = koffi.errno();
        if (errno === LINUX_ERRNO.EWOULDBLOCK) return 0;
        if (errno !== EINTR) return -errno;
      }
    },

    mountsChanged(): boolean | null {
      if (mountFailed) return null;
      if (mountFd < 0) {
        const fd = openat(AT_FDCWD, procPath, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
          mountFailed = true;
          return null;
        }
        mountFd = fd;
        mountPoll.writeInt32LE(fd, 0);
        mountPoll.writeInt16LE(POLLPRI, 4);
      }
      for (;;) {
        mountPoll.writeInt16LE(0, 6);
        const n = pollFn(mountPoll, 1, 0);
        if (n >= 0) return n > 0 && (mountPoll.readInt16LE(6) & (POLLPRI | POLLERR)) !== 0;
        if (koffi.errno() !== EINTR) return null;
      }
    },

    localFilesystem(fd: number): boolean {
      if (!retryEintr(() => fstatfs(fd, statfsBuf))) return false;
      return WATCH_FILESYSTEMS.has(Number(statfsBuf.readBigInt64LE(0) & 0xffffffffn));
    },
  };
}
