/**
 * The few write-side system calls the fleet export needs, descriptor-relative so that nothing inside `--out` is
 * ever reached through a path string: openat with O_CREAT|O_EXCL|O_NOFOLLOW and an explicit mode, mkdirat,
 * renameat, unlinkat, and getgrnam for `--group NAME`. Linux only (glibc); x86_64 verified, aarch64 written from
 * the same documented constants as native/linux.ts and never run. Everything else (fstat, fchmod, fchown, write,
 * fsync on these descriptors) is done with Node's `fs` on the raw descriptor numbers, which it accepts.
 */
import { createRequire } from 'node:module';
import type { default as Koffi } from 'koffi';
import { ComponentEncoder } from './component.js';
import { LINUX_ERRNO, linuxErrors } from './errno.js';

/** Write-side calls, all synchronous; each throws NativeError (code from native/errno.ts) on failure. */
export interface WriteNative {
  /**
   * openat(dirfd, name, O_WRONLY|O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC, mode): a new regular file that did not
   * exist (EEXIST otherwise; a symlink at `name` is never followed). The mode still passes through the umask:
   * callers fchmod afterwards.
   */
  createExclusive(dirfd: number, name: string, mode: number): number;
  /** openat(dirfd, name, O_RDWR|O_CREAT|O_NOFOLLOW|O_CLOEXEC, mode): open or create (for the lock file). */
  openOrCreate(dirfd: number, name: string, mode: number): number;
  /**
   * openat(dirfd, name, O_RDWR|O_APPEND|O_NOFOLLOW|O_CLOEXEC), plus O_CREAT|O_EXCL with `mode` when `create`: an
   * append-only descriptor of a regular file (an audit file), never through a symlink at `name`. Every write(2) on
   * it lands at the end of the file whatever other descriptors do.
   */
  openAppend(dirfd: number, name: string, create: boolean, mode: number): number;
  /** mkdirat(dirfd, name, mode); EEXIST when anything already has that name. */
  mkdirAt(dirfd: number, name: string, mode: number): void;
  /** renameat(fromDir, from, toDir, to): atomic replace of `to`; never follows a symlink at either name. */
  renameAt(fromDir: number, from: string, toDir: number, to: string): void;
  /** unlinkat(dirfd, name, 0): removes a directory entry that is not a directory (a symlink itself, not its target). */
  unlinkAt(dirfd: number, name: string): void;
  /** getgrnam(name).gr_gid, or null when no such group exists. */
  groupId(name: string): number | null;
  /**
   * syncfs(fd) on a koffi worker thread: write back every dirty page of the filesystem holding `fd` (one call
   * instead of an fsync per file) without blocking the event loop while the disk works. Resolves when done.
   */
  syncFs(fd: number): Promise<void>;
}

interface ArchFlags {
  O_NOFOLLOW: number;
}

const ARCH: Readonly<Record<string, ArchFlags>> = Object.freeze({
  x64: { O_NOFOLLOW: 0x20000 },
  // unverified: from the aarch64 column of docs/PLATFORM.md §Constants, never run.
  arm64: { O_NOFOLLOW: 0x8000 },
});

const O_WRONLY = 0x1;
const O_RDWR = 0x2;
const O_CREAT = 0x40;
const O_EXCL = 0x80;
const O_APPEND = 0x400;
const O_CLOEXEC = 0x80000;
const { EINTR } = LINUX_ERRNO;

let cached: WriteNative | null | undefined;

/** The write bindings for this process (built once), or null off Linux x64/arm64 or when koffi cannot load libc. */
export function getWriteNative(): WriteNative | null {
  if (cached !== undefined) return cached;
  cached = null;
  if (process.platform !== 'linux') return cached;
  const flags = ARCH[process.arch];
  if (flags === undefined) return cached;
  try {
    const koffi = createRequire(import.meta.url)('koffi') as typeof Koffi;
    cached = build(koffi, flags);
  } catch {
    cached = null;
  }
  return cached;
}

function build(koffi: typeof Koffi, k: ArchFlags): WriteNative {
  const lib = koffi.load('libc.so.6');
  // openat is variadic in C: the mode must travel through koffi's variadic form (docs/PLATFORM.md).
  const openat = lib.func('int openat(int, const uint8_t *, int, ...)') as (...args: unknown[]) => number;
  const mkdirat = lib.func('int mkdirat(int, const uint8_t *, uint32_t)') as (
    d: number,
    n: Buffer,
    m: number,
  ) => number;
  const renameat = lib.func('int renameat(int, const uint8_t *, int, const uint8_t *)') as (
    a: number,
    an: Buffer,
    b: number,
    bn: Buffer,
  ) => number;
  const unlinkat = lib.func('int unlinkat(int, const uint8_t *, int)') as (d: number, n: Buffer, f: number) => number;
  const syncfs = lib.func('int syncfs(int)') as unknown as {
    async(fd: number, cb: (err: unknown, rc: number) => void): void;
  };
  const GroupStruct = koffi.struct('mb_group', {
    gr_name: 'char *',
    gr_passwd: 'char *',
    gr_gid: 'uint32_t',
    gr_mem: 'void *',
  });
  const getgrnam = lib.func('getgrnam', koffi.pointer(GroupStruct), ['const char *']) as (name: string) => unknown;

  // Two encoders: renameat needs two names alive at once.
  const first = new ComponentEncoder(linuxErrors);
  const second = new ComponentEncoder(linuxErrors);

  function retry(call: string, fn: () => number): number {
    for (;;) {
      const rc = fn();
      if (rc >= 0) return rc;
      const errno = koffi.errno();
      if (errno !== EINTR) throw linuxErrors.fail(call, errno);
    }
  }

  function open(dirfd: number, name: string, how: number, mode: number): number {
    const path = first.encode('openat', name);
    return retry('openat', () => openat(dirfd, path, how | k.O_NOFOLLOW | O_CLOEXEC, 'uint32_t', mode));
  }

  return {
    createExclusive: (dirfd, name, mode) => open(dirfd, name, O_WRONLY | O_CREAT | O_EXCL, mode),
    openOrCreate: (dirfd, name, mode) => open(dirfd, name, O_RDWR | O_CREAT, mode),
    openAppend: (dirfd, name, create, mode) =>
      open(dirfd, name, O_RDWR | O_APPEND | (create ? O_CREAT | O_EXCL : 0), mode),
    mkdirAt(dirfd, name, mode) {
      const path = first.encode('mkdirat', name);
      retry('mkdirat', () => mkdirat(dirfd, path, mode));
    },
    renameAt(fromDir, from, toDir, to) {
      const a = first.encode('renameat', from);
      const b = second.encode('renameat', to);
      retry('renameat', () => renameat(fromDir, a, toDir, b));
    },
    unlinkAt(dirfd, name) {
      const path = first.encode('unlinkat', name);
      retry('unlinkat', () => unlinkat(dirfd, path, 0));
    },
    syncFs(fd) {
      return new Promise((resolve, reject) => {
        syncfs.async(fd, (err, rc) => {
          if (err) reject(err instanceof Error ? err : new Error(String(err)));
          else if (rc !== 0) reject(linuxErrors.of('syncfs', 'EIO'));
          else resolve();
        });
      });
    },
    groupId(name) {
      if (name === '' || name.includes('\0')) return null;
      const ptr = getgrnam(name);
      if (ptr === null) return null;
      const g = koffi.decode(ptr, GroupStruct) as { gr_gid: number };
      return g.gr_gid;
    },
  };
}
