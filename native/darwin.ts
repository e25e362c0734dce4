/**
 * macOS bindings (`/usr/lib/libSystem.B.dylib`) through koffi, for arm64 and x86_64.
 *
 * unverified: written from documented facts (docs/PLATFORM.md, Apple's Libc/xnu headers and man pages), never run.
 * `doctor` reports this through `Native.verified === false`.
 */
import type { default as Koffi } from 'koffi';
import { ComponentEncoder, cString, requireRawComponent } from './component.js';
import { DARWIN_ERRNO, darwinErrors } from './errno.js';
import {
  DT,
  type AclRead,
  type DarwinAclEntry,
  type DirEntry,
  type FileStat,
  type Native,
  findInListing,
  rawFromFileStat,
} from './types.js';

// <sys/fcntl.h> values, the same on arm64 and x86_64 (docs/PLATFORM.md).
const O_RDONLY = 0;
const O_NONBLOCK = 0x4;
const O_NOFOLLOW = 0x100;
const O_NOCTTY = 0x20000;
const O_DIRECTORY = 0x100000;
const O_CLOEXEC = 0x1000000;
const AT_FDCWD = -2;
const AT_SYMLINK_NOFOLLOW = 0x20;

const { ENOENT, EINTR, EIO, EINVAL } = DARWIN_ERRNO;

// <sys/acl.h>
const ACL_TYPE_EXTENDED = 0x100;
const ACL_FIRST_ENTRY = 0;
const ACL_NEXT_ENTRY = -1;
// <membership.h>
const ID_TYPE_UID = 0;
const ID_TYPE_GID = 1;

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
  // openat is variadic; declaring only the fixed arguments is correct on Apple arm64 because no mode is passed.
  const openat = lib.func('int openat(int, const uint8_t *, int)') as (
    dirfd: number,
    path: Buffer,
    flags: number,
  ) => number;
  const closeFn = lib.func('int close(int)') as (fd: number) => number;
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
  const preadFn = lib.func('intptr_t pread(int, uint8_t *, size_t, int64_t)') as (
    fd: number,
    buf: Buffer,
    count: number,
    offset: number,
  ) => number | bigint;
  const flockFn = lib.func('int flock(int, int)') as (fd: number, op: number) => number;
  const aclGetFd = lib.func('void *acl_get_fd_np(int, int)') as (fd: number, type: number) => bigint | null;
  const aclGetEntry = lib.func('int acl_get_entry(void *, int, _Out_ void **)') as (
    acl: bigint,
    entryId: number,
    out: [bigint | null],
  ) => number;
  const aclGetTagType = lib.func('int acl_get_tag_type(void *, _Out_ int *)') as (
    entry: bigint,
    out: [number | null],
  ) => number;
  const aclGetPermsetMask = lib.func('int acl_get_permset_mask_np(void *, _Out_ uint64_t *)') as (
    entry: bigint,
    out: [number | bigint | null],
  ) => number;
  const aclGetQualifier = lib.func('void *acl_get_qualifier(void *)') as (entry: bigint) => bigint | null;
  const aclFree = lib.func('int acl_free(void *)') as (p: bigint) => number;
  // mbr_uuid_to_id returns 0 or an errno value directly (not through errno).
  const mbrUuidToId = lib.func('int mbr_uuid_to_id(void *, _Out_ uint32_t *, _Out_ int *)') as (
    uuid: bigint,
    id: [number | null],
    type: [number | null],
  ) => number;

  const names = new ComponentEncoder(darwinErrors);
  const rootPath = cString('/');
  const dotPath = cString('.');
  const statBuf = Buffer.alloc(STAT_SIZE);

  const dirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
  const fileFlags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;

  function openAt(dirfd: number, path: Buffer, flags: number): number {
    for (;;) {
      const fd = openat(dirfd, path, flags);
      if (fd >= 0) return fd;
      const errno = koffi.errno();
      if (errno !== EINTR) throw darwinErrors.fail('openat', errno);
    }
  }

  function closeQuietly(fd: number): void {
    closeFn(fd);
  }

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

  /** Decodes one extended ACL entry; an unresolvable qualifier yields idType/id null (the rule refuses it). */
  function decodeEntry(entry: bigint): DarwinAclEntry | null {
    const tagOut: [number | null] = [null];
    if (aclGetTagType(entry, tagOut) !== 0 || tagOut[0] === null) return null;
    const maskOut: [number | bigint | null] = [null];
    if (aclGetPermsetMask(entry, maskOut) !== 0 || maskOut[0] === null) return null;
    const decoded: DarwinAclEntry = { tag: tagOut[0], perms: BigInt(maskOut[0]), idType: null, id: null };
    const qualifier = aclGetQualifier(entry);
    if (qualifier === null) return decoded;
    try {
      const idOut: [number | null] = [null];
      const typeOut: [number | null] = [null];
      if (mbrUuidToId(qualifier, idOut, typeOut) === 0 && idOut[0] !== null) {
        if (typeOut[0] === ID_TYPE_UID) decoded.idType = 'uid';
        else if (typeOut[0] === ID_TYPE_GID) decoded.idType = 'gid';
        if (decoded.idType !== null) decoded.id = idOut[0];
      }
    } finally {
      aclFree(qualifier);
    }
    return decoded;
  }

  return {
    platform: 'darwin',
    arch,
    verified: false,

    openRoot(): number {
      return openAt(AT_FDCWD, rootPath, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    },

    openDirAt(dirfd: number, name: string): number {
      return openAt(dirfd, names.encode('openat', name), dirFlags);
    },

    openFileAt(dirfd: number, name: string): number {
      return openAt(dirfd, names.encode('openat', name), fileFlags);
    },

    close(fd: number): void {
      // macOS may report EINTR after releasing the descriptor; never retry a close.
      if (closeFn(fd) !== 0) {
        const errno = koffi.errno();
        if (errno !== EINTR) throw darwinErrors.fail('close', errno);
      }
    },

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

    readAcl(fd: number): AclRead {
      const acl = aclGetFd(fd, ACL_TYPE_EXTENDED);
      if (acl === null) {
        const errno = koffi.errno();
        if (darwinErrors.exhausted(errno)) throw darwinErrors.fail('acl_get_fd_np', errno);
        return errno === ENOENT ? { kind: 'none' } : { kind: 'error', errno };
      }
      try {
        const entries: DarwinAclEntry[] = [];
        for (let entryId = ACL_FIRST_ENTRY; ; entryId = ACL_NEXT_ENTRY) {
          const entryOut: [bigint | null] = [null];
          if (aclGetEntry(acl, entryId, entryOut) !== 0) {
            const errno = koffi.errno();
            // Past the last entry Apple's libc answers -1/EINVAL (libacl on Linux answers 0 instead).
            if (errno === EINVAL) return { kind: 'darwin', entries };
            return { kind: 'error', errno };
          }
          if (entryOut[0] === null) return { kind: 'error', errno: EIO };
          const decoded = decodeEntry(entryOut[0]);
          if (decoded === null) return { kind: 'error', errno: EIO };
          entries.push(decoded);
        }
      } finally {
        aclFree(acl);
      }
    },

    listDir(fd: number, maxEntries: number): DirEntry[] | 'too_many' {
      // A fresh open file description of the same directory, so the caller's descriptor offset is untouched;
      // closedir closes it, a failed fdopendir leaves it to us.
      const own = openAt(fd, dotPath, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      const dir = fdopendir(own);
      if (dir === null) {
        const errno = koffi.errno();
        closeQuietly(own);
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

    pread(fd: number, buf: Buffer, offset: number, length: number, position: number): number {
      if (offset < 0 || length < 0 || offset + length > buf.length || position < 0)
        throw darwinErrors.of('pread', 'EINVAL');
      for (;;) {
        const n = Number(preadFn(fd, buf.subarray(offset, offset + length), length, position));
        if (n >= 0) return n;
        const errno = koffi.errno();
        if (errno !== EINTR) throw darwinErrors.fail('pread', errno);
      }
    },

    flock(fd: number, op: number): void {
      for (;;) {
        if (flockFn(fd, op) === 0) return;
        const errno = koffi.errno();
        if (errno !== EINTR) throw darwinErrors.fail('flock', errno);
      }
    },
  };
}
