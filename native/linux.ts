/**
 * Linux bindings (glibc `libc.so.6`) through koffi: the POSIX core (native/posix.ts: descriptor-relative no-follow
 * opens, close, pread, flock) with what is Linux's own: statx (native/linux-stat.ts), getdents64, fgetxattr for
 * `system.posix_acl_access`, and inotify, the mount table's change flag and read leases (native/linux-watch.ts).
 *
 * x86_64 is verified on the project's machines. aarch64 is unverified: written from documented facts
 * (docs/PLATFORM.md §Constants table, the generic syscall table and the arch-independent statx layout), never run.
 */
import type { default as Koffi } from 'koffi';
import { cString } from './component.js';
import { LINUX_ERRNO, linuxErrors } from './errno.js';
import { createLinuxStat } from './linux-stat.js';
import { createLinuxChanges } from './linux-watch.js';
import { createPosixCore } from './posix.js';
import { DT, type AclRead, type DirEntry, type Native } from './types.js';

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
const O_NOCTTY = 0x100;
const O_NONBLOCK = 0x800;
const O_CLOEXEC = 0x80000;
const AT_FDCWD = -100;
const SEEK_SET = 0;

const { EINTR, ERANGE, ENODATA } = LINUX_ERRNO;

/** struct linux_dirent64: d_ino u64 @0, d_off s64 @8, d_reclen u16 @16, d_type u8 @18, d_name @19. */
const DIRENT_RECLEN = 16;
const DIRENT_TYPE = 18;
const DIRENT_NAME = 19;
const DIRENT_BUFFER_BYTES = 32 * 1024;

/** A first fgetxattr attempt fits any ordinary ACL (4 + 8·N bytes); ERANGE retries at 64 KiB, which always fits. */
const ACL_SMALL_BYTES = 4096;
const ACL_LARGE_BYTES = 64 * 1024;

/**
 * Builds the Linux `Native` for `arch` ('x64' or 'arm64'), or returns null for any other architecture.
 * Throws whatever koffi throws when libc or a symbol cannot be loaded; `getNative` turns that into null.
 */
export function createLinuxNative(koffi: typeof Koffi, arch: string): Native | null {
  const k = ARCH_CONSTANTS[arch];
  if (k === undefined) return null;

  const lib = koffi.load('libc.so.6');
  const core = createPosixCore(koffi, lib, linuxErrors, {
    O_DIRECTORY: k.O_DIRECTORY,
    O_NOFOLLOW: k.O_NOFOLLOW,
    O_NONBLOCK,
    O_NOCTTY,
    O_CLOEXEC,
    AT_FDCWD,
    EINTR,
  });
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
  const aclName = cString('system.posix_acl_access');
  const direntBuf = Buffer.alloc(DIRENT_BUFFER_BYTES);
  const aclSmall = Buffer.alloc(ACL_SMALL_BYTES);
  let aclLarge: Buffer | undefined;

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
    ...core.calls,
    ...createLinuxStat(koffi, lib, core.names),

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

    ...createLinuxChanges(koffi, lib, core.retryEintr),
  };
}
