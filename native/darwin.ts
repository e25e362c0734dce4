/**
 * macOS bindings (`/usr/lib/libSystem.B.dylib`) through koffi, for arm64 and x86_64: the POSIX core
 * (native/posix.ts: descriptor-relative no-follow opens, close, pread, flock) with what is macOS's own: struct stat
 * decoding (`fstat`/`fstatat`, `$INODE64` on x86_64), readdir listings, and extended ACLs (native/darwin-acl.ts).
 *
 * unverified: written from documented facts (docs/PLATFORM.md, Apple's Libc/xnu headers and man pages), never run.
 * `doctor` reports this through `Native.verified === false`.
 */
import type { default as Koffi } from 'koffi';
import { cString, requireRawComponent } from './component.js';
import { createDarwinAclReader } from './darwin-acl.js';
import { DARWIN_ERRNO, darwinErrors } from './errno.js';
import { createPosixCore } from './posix.js';
import { DT, type DirEntry, type FileStat, type Native, findInListing, rawFromFileStat } from './types.js';

// <sys/fcntl.h> values, the same on arm64 and x86_64 (docs/PLATFORM.md).
const O_RDONLY = 0;
const O_NONBLOCK = 0x4;
const O_NOFOLLOW = 0x100;
const O_NOCTTY = 0x20000;
const O_DIRECTORY = 0x100000;
const O_CLOEXEC = 0x1000000;
const AT_FDCWD = -2;
const AT_SYMLINK_NOFOLLOW = 0x20;

const { EINTR } = DARWIN_ERRNO;

/**
 * struct stat with 64-bit inodes (the only layout on arm64; the `$INODE64` symbols on x86_64), 144 bytes:
 * st_dev s32 @0, st_mode u16 @4, st_nlink u16 @6, st_ino u64 @8, st_uid u32 @16, st_gid u32 @20,
 * st_rdev s32 @24, st_atimespec @32, st_mtimespec @48, st_ctimespec @64, st_birthtimespec @80 (each: tv_sec s64,
 * tv_nsec s64), st_size s64 @96, st_blocks @104, st_blksize @112, st_flags @116, st_gen @120, spare to 144.
 */
const STAT_SIZE = 144;
const ST = Object.freeze({ dev: 0, mode: 4, nlink: 6, ino: 8, uid: 16, gid: 20, mtime: 48, ctime: 64, size: 96 });

/** struct dirent with 64-bit inodes: d_ino u64 @0, d_seekoff u64 @8, d_reclen u16 @16, d_namlen u16 @18, d_type u8 @20, d_name @21. */
const DIRENT_NAMLEN = 18;
const DIRENT_TYPE = 20;
const DIRENT_NAME = 21;

const NS_PER_S = 1_000_000_000n;

function timespecNs(buf: Buffer, offset: number): bigint {
  return buf.readBigInt64LE(offset) * NS_PER_S + buf.readBigInt64LE(offset + 8);
}

/**
 * Builds the macOS `Native` for `arch` ('arm64' or 'x64'), or null for any other architecture.
 * Throws whatever koffi throws when a library or symbol cannot be loaded; `getNative` turns that into null.
 */
export function createDarwinNative(koffi: typeof Koffi, arch: string): Native | null {
  if (arch !== 'arm64' && arch !== 'x64') return null;
  // x86_64 keeps the 32-bit-inode ABI under the plain names; the 64-bit-inode variants carry the $INODE64 suffix.
  const inode64 = arch === 'x64' ? '$INODE64' : '';

  const lib = koffi.load('/usr/lib/libSystem.B.dylib');
  const core = createPosixCore(koffi, lib, darwinErrors, {
    O_DIRECTORY,
    O_NOFOLLOW,
    O_NONBLOCK,
    O_NOCTTY,
    O_CLOEXEC,
    AT_FDCWD,
    EINTR,
  });
  const { names, openAt } = core;
  const fstatFn = lib.func(`fstat${inode64}`, 'int', ['int', 'uint8_t *']) as (fd: number, out: Buffer) => number;
  const fstatat = lib.func(`fstatat${inode64}`, 'int', ['int', 'const uint8_t *', 'uint8_t *', 'int']) as (
    dirfd: number,
    path: Buffer,
    out: Buffer,
    flags: number,
  ) => number;
  const fdopendir = lib.func(`fdopendir${inode64}`, 'void *', ['int']) as (fd: number) => bigint | null;
  const readdir = lib.func(`readdir${inode64}`, 'void *', ['void *']) as (dir: bigint) => bigint | null;
  const closedir = lib.func('int closedir(void *)') as (dir: bigint) => number;
  const dotPath = cString('.');
  const statBuf = Buffer.alloc(STAT_SIZE);

  function decodeStat(): FileStat {
    return {
      dev: BigInt(statBuf.readInt32LE(ST.dev) >>> 0),
      ino: statBuf.readBigUInt64LE(ST.ino),
      mode: statBuf.readUInt16LE(ST.mode),
      nlink: statBuf.readUInt16LE(ST.nlink),
      uid: statBuf.readUInt32LE(ST.uid),
      gid: statBuf.readUInt32LE(ST.gid),
      size: Number(statBuf.readBigInt64LE(ST.size)),
      mtimeNs: timespecNs(statBuf, ST.mtime),
      ctimeNs: timespecNs(statBuf, ST.ctime),
    };
  }

  return {
    platform: 'darwin',
    arch,
    verified: false,

    ...core.calls,

    fstat(fd: number): FileStat {
      if (fstatFn(fd, statBuf) !== 0) throw darwinErrors.fail('fstat', koffi.errno());
      return decodeStat();
    },

    statAt(dirfd: number, name: string): FileStat {
      const path = names.encode('fstatat', name);
      if (fstatat(dirfd, path, statBuf, AT_SYMLINK_NOFOLLOW) !== 0) throw darwinErrors.fail('fstatat', koffi.errno());
      return decodeStat();
    },

    statRawAt(dirfd: number, cname: Uint8Array, out: Uint32Array): void {
      // The same fstatat as statAt on the raw name bytes, then written as words (not allocation-free here).
      requireRawComponent(cname, 'fstatat', darwinErrors);
      if (fstatat(dirfd, cname as Buffer, statBuf, AT_SYMLINK_NOFOLLOW) !== 0)
        throw darwinErrors.fail('fstatat', koffi.errno());
      rawFromFileStat(decodeStat(), out);
    },

    findEntry(fd: number, name: Uint8Array, maxEntries: number): { count: number; found: boolean } | 'too_many' {
      return findInListing(this.listDir(fd, maxEntries), name);
    },

    readAcl: createDarwinAclReader(koffi, lib),

    listDir(fd: number, maxEntries: number): DirEntry[] | 'too_many' {
      // A fresh open file description of the same directory, so the caller's descriptor offset is untouched;
      // closedir closes it, a failed fdopendir leaves it to us.
      const own = openAt(fd, dotPath, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      const dir = fdopendir(own);
      if (dir === null) {
        const errno = koffi.errno();
        core.closeRaw(own);
        throw darwinErrors.fail('fdopendir', errno);
      }
      try {
        const entries: DirEntry[] = [];
        for (;;) {
          koffi.errno(0); // readdir signals both the end and an error with NULL
          const ent = readdir(dir);
          if (ent === null) {
            const errno = koffi.errno();
            if (errno !== 0) throw darwinErrors.fail('readdir', errno);
            return entries;
          }
          const namlen = koffi.decode(ent, DIRENT_NAMLEN, 'uint16_t') as number;
          const type = koffi.decode(ent, DIRENT_TYPE, 'uint8_t') as number;
          const name = Buffer.from(koffi.decode(ent, DIRENT_NAME, 'uint8_t', namlen) as ArrayLike<number>);
          if (name.length === 1 && name[0] === 0x2e) continue;
          if (name.length === 2 && name[0] === 0x2e && name[1] === 0x2e) continue;
          if (entries.length >= maxEntries) return 'too_many';
          entries.push({ name, type: type ?? DT.UNKNOWN });
        }
      } finally {
        closedir(dir);
      }
    },
  };
}
