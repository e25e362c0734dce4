/**
 * The POSIX core both platform bindings share (native/linux.ts, native/darwin.ts): descriptor-relative no-follow
 * opens of one checked name component, close, pread and flock, each with the same EINTR rule, over the platform's
 * own libc and open flags. What differs per platform stays in its binding: how a stat answer is decoded (statx on
 * Linux, struct stat on macOS), how an ACL is read (the `system.posix_acl_access` bytes, or the extended ACL's
 * entries), how a directory is listed (getdents64, or readdir), and Linux's change notification and leases
 * (docs/DESIGN.md §Layers, native/).
 */
import type { default as Koffi } from 'koffi';
import { ComponentEncoder, cString } from './component.js';
import type { NativeErrors } from './errno.js';
import type { Native } from './types.js';

/** The platform's open flags, `AT_FDCWD` and `EINTR` (docs/PLATFORM.md §Constants table). */
export interface PosixConstants {
  O_DIRECTORY: number;
  O_NOFOLLOW: number;
  O_NONBLOCK: number;
  O_NOCTTY: number;
  O_CLOEXEC: number;
  AT_FDCWD: number;
  EINTR: number;
}

/** The calls of `Native` the core answers the same way on every platform. */
export type PosixCalls = Pick<Native, 'openRoot' | 'openDirAt' | 'openFileAt' | 'close' | 'pread' | 'flock'>;

/** The core of one binding: its `Native` calls, and the helpers the binding's own calls build on. */
export interface PosixCore {
  calls: PosixCalls;
  /** openat with EINTR retry; errno is read in the statement right after the failing call. @throws NativeError */
  openAt(dirfd: number, path: Buffer, flags: number): number;
  /** Calls `fn` (a libc call returning 0 or -1) until it does not fail with EINTR; true on success. */
  retryEintr(fn: () => number): boolean;
  /** The one name-component encoder (native/component.ts) of this binding. */
  names: ComponentEncoder;
  /** The raw `close(2)`, for a descriptor whose close error says nothing (a failed fdopendir's). */
  closeRaw(fd: number): number;
}

const O_RDONLY = 0;

/**
 * The core over `lib` (the platform's loaded libc).
 *
 * @param errors the platform's errno → NativeError mapping (native/errno.ts)
 * @throws whatever koffi throws when a symbol cannot be loaded (`getNative` turns that into null)
 */
export function createPosixCore(
  koffi: typeof Koffi,
  lib: ReturnType<(typeof Koffi)['load']>,
  errors: NativeErrors,
  c: PosixConstants,
): PosixCore {
  // openat is variadic in C; declaring only the fixed arguments is correct (x86_64, aarch64 and Apple arm64 alike)
  // because no mode is ever passed.
  const openat = lib.func('int openat(int, const uint8_t *, int)') as (
    dirfd: number,
    path: Buffer,
    flags: number,
  ) => number;
  const closeFn = lib.func('int close(int)') as (fd: number) => number;
  const preadFn = lib.func('intptr_t pread(int, uint8_t *, size_t, int64_t)') as (
    fd: number,
    buf: Buffer,
    count: number,
    offset: number,
  ) => number | bigint;
  const flockFn = lib.func('int flock(int, int)') as (fd: number, op: number) => number;
  const { EINTR } = c;
  const names = new ComponentEncoder(errors);
  const rootPath = cString('/');
  const dirFlags = O_RDONLY | c.O_DIRECTORY | c.O_NOFOLLOW | c.O_NONBLOCK | c.O_CLOEXEC;
  const fileFlags = O_RDONLY | c.O_NOFOLLOW | c.O_NONBLOCK | c.O_NOCTTY | c.O_CLOEXEC;

  function openAt(dirfd: number, path: Buffer, flags: number): number {
    for (;;) {
      const fd = openat(dirfd, path, flags);
      if (fd >= 0) return fd;
      const errno = koffi.errno();
      if (errno !== EINTR) throw errors.fail('openat', errno);
    }
  }

  function retryEintr(fn: () => number): boolean {
    for (;;) {
      if (fn() !== -1) return true;
      if (koffi.errno() !== EINTR) return false;
    }
  }

  const calls: PosixCalls = {
    openRoot(): number {
      return openAt(c.AT_FDCWD, rootPath, O_RDONLY | c.O_DIRECTORY | c.O_CLOEXEC);
    },

    openDirAt(dirfd: number, name: string): number {
      return openAt(dirfd, names.encode('openat', name), dirFlags);
    },

    openFileAt(dirfd: number, name: string): number {
      return openAt(dirfd, names.encode('openat', name), fileFlags);
    },

    close(fd: number): void {
      // Linux releases the descriptor even when close reports EINTR, and macOS may report EINTR after releasing
      // it: retrying could close a descriptor another thread was just given. Never retry a close.
      if (closeFn(fd) !== 0) {
        const errno = koffi.errno();
        if (errno !== EINTR) throw errors.fail('close', errno);
      }
    },

    pread(fd: number, buf: Buffer, offset: number, length: number, position: number): number {
      if (offset < 0 || length < 0 || offset + length > buf.length || position < 0) throw errors.of('pread', 'EINVAL');
      for (;;) {
        const n = Number(preadFn(fd, buf.subarray(offset, offset + length), length, position));
        if (n >= 0) return n;
        const errno = koffi.errno();
        if (errno !== EINTR) throw errors.fail('pread', errno);
      }
    },

    flock(fd: number, op: number): void {
      for (;;) {
        if (flockFn(fd, op) === 0) return;
        const errno = koffi.errno();
        if (errno !== EINTR) throw errors.fail('flock', errno);
      }
    },
  };

  return { calls, openAt, retryEintr, names, closeRaw: closeFn };
}
