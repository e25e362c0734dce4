/**
 * Change notification and write leases on Linux (docs/DESIGN.md §Change notification, docs/TRUST.md): inotify on
 * a judged directory's entries, the mount table's change flag, which filesystems inotify and leases see every
 * change of (fstatfs), and the read lease that says whether a file is open for writing. Linux only: macOS has no
 * binding for these (`Native`'s optional calls).
 */
import type { default as Koffi } from 'koffi';
import { cString, requireRawComponent } from './component.js';
import { LINUX_ERRNO, linuxErrors } from './errno.js';
import type { Native } from './types.js';

const O_RDONLY = 0;
const O_CLOEXEC = 0x80000;
const AT_FDCWD = -100;
const { EINTR } = LINUX_ERRNO;

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

/** The Linux-only calls of `Native`. */
export type LinuxChangeCalls = Required<
  Pick<
    Native,
    'openForWriting' | 'watchOpen' | 'watchAdd' | 'watchRemove' | 'watchRead' | 'mountsChanged' | 'localFilesystem'
  >
>;

/**
 * The Linux change-notification and lease calls over `lib` (glibc).
 *
 * @param retryEintr the binding's EINTR rule (native/posix.ts)
 * @throws whatever koffi throws when a symbol cannot be loaded
 */
export function createLinuxChanges(
  koffi: typeof Koffi,
  lib: ReturnType<(typeof Koffi)['load']>,
  retryEintr: (fn: () => number) => boolean,
): LinuxChangeCalls {
  const openat = lib.func('int openat(int, const uint8_t *, int)') as (
    dirfd: number,
    path: Buffer,
    flags: number,
  ) => number;
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

  return {
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
