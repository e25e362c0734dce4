/**
 * errno numbers and the portable codes the layers above `native/` see instead. Every binding turns a failed call's
 * errno into a `NativeError` through its platform's table (`nativeErrors`), so code outside `native/` tests
 * `err.code === 'ENOENT'` and never a number that differs between Linux and macOS.
 */
import { NativeError, ResourceExhaustedError, type NativeCode } from './types.js';

/** Values shared by Linux (asm-generic, x86_64 and aarch64) and macOS (<sys/errno.h>). */
const SHARED = {
  EPERM: 1,
  ENOENT: 2,
  EINTR: 4,
  EIO: 5,
  ENXIO: 6,
  EBADF: 9,
  ENOMEM: 12,
  EACCES: 13,
  EEXIST: 17,
  ENOTDIR: 20,
  EISDIR: 21,
  EINVAL: 22,
  ENFILE: 23,
  EMFILE: 24,
  ENOSPC: 28,
  EROFS: 30,
  ERANGE: 34,
} as const;

/** Linux errno values (asm-generic: the same on x86_64 and aarch64). EWOULDBLOCK is EAGAIN. */
export const LINUX_ERRNO = Object.freeze({
  ...SHARED,
  EWOULDBLOCK: 11,
  ENAMETOOLONG: 36,
  ELOOP: 40,
  ENODATA: 61,
  EOPNOTSUPP: 95,
} satisfies Partial<Record<NativeCode, number>>);

/** macOS errno values (<sys/errno.h>). EWOULDBLOCK is EAGAIN; ENOTSUP is reported as EOPNOTSUPP. */
export const DARWIN_ERRNO = Object.freeze({
  ...SHARED,
  EWOULDBLOCK: 35,
  EOPNOTSUPP: 45,
  ELOOP: 62,
  ENAMETOOLONG: 63,
  ENODATA: 96,
} satisfies Partial<Record<NativeCode, number>>);

/** Builds `NativeError`s of one platform: `fail(call, errno)` sets the portable code from `table`. */
export interface NativeErrors {
  /**
   * The error of a failed `call` with this platform's `errno` (unknown numbers get the code 'EOTHER'): a
   * `ResourceExhaustedError` for EMFILE, ENFILE and ENOMEM (out of descriptors or memory, never a verdict on the
   * object), else a `NativeError`. Every failed system call of the bindings goes through here.
   */
  fail(call: string, errno: number): NativeError | ResourceExhaustedError;
  /** True when `errno` is EMFILE, ENFILE or ENOMEM (for calls that report other failures as values). */
  exhausted(errno: number): boolean;
  /** The error of a failed `call` for a portable code (conditions a binding detects itself: EINVAL, EIO, …). */
  of(call: string, code: Exclude<NativeCode, 'EOTHER'>): NativeError;
}

/** The `NativeErrors` of a platform table (LINUX_ERRNO or DARWIN_ERRNO). */
export function nativeErrors(table: Readonly<Partial<Record<NativeCode, number>>>): NativeErrors {
  const codes = new Map<number, NativeCode>();
  for (const [code, errno] of Object.entries(table)) codes.set(errno, code as NativeCode);
  return {
    fail: (call, errno) => {
      const code = codes.get(errno) ?? 'EOTHER';
      return code === 'EMFILE' || code === 'ENFILE' || code === 'ENOMEM'
        ? new ResourceExhaustedError(call, code, errno)
        : new NativeError(call, code, errno);
    },
    exhausted: (errno) => {
      const code = codes.get(errno);
      return code === 'EMFILE' || code === 'ENFILE' || code === 'ENOMEM';
    },
    of: (call, code) => new NativeError(call, code, table[code] ?? 0),
  };
}

/** Linux's `NativeErrors` (also used by the stat thread's answers and the write bindings). */
export const linuxErrors: NativeErrors = nativeErrors(LINUX_ERRNO);
/** macOS's `NativeErrors`. */
export const darwinErrors: NativeErrors = nativeErrors(DARWIN_ERRNO);
