/**
 * statx on Linux (docs/PLATFORM.md): the one stat call of the Linux binding, by descriptor (`AT_EMPTY_PATH`) and
 * by name without following links, and its decoding: into a `FileStat`, and into the RAW words (native/types.ts)
 * the scan's hot path and the stat thread (native/stat-worker.ts) read. struct statx has the same layout on every
 * architecture (include/uapi/linux/stat.h), so nothing here depends on the arch.
 */
import os from 'node:os';
import type { default as Koffi } from 'koffi';
import { type ComponentEncoder, cString, requireRawComponent } from './component.js';
import { LINUX_ERRNO, linuxErrors } from './errno.js';
import { type FileStat, type Native, RAW, RAW_FLAG_MNT_ID, rawFromFileStat } from './types.js';

const AT_SYMLINK_NOFOLLOW = 0x100;
const AT_EMPTY_PATH = 0x1000;
const { EINTR } = LINUX_ERRNO;

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

/** The stat calls of the Linux `Native`, over statx of `lib` (glibc). */
export type LinuxStatCalls = Pick<Native, 'fstat' | 'statAt' | 'statRawAt'>;

/**
 * The Linux stat calls, each through one shared 256-byte answer buffer (one call at a time, like every call here).
 *
 * @throws whatever koffi throws when statx cannot be loaded
 */
export function createLinuxStat(
  koffi: typeof Koffi,
  lib: ReturnType<(typeof Koffi)['load']>,
  names: ComponentEncoder,
): LinuxStatCalls {
  const statx = lib.func('int statx(int, const uint8_t *, int, unsigned int, uint8_t *)') as (
    dirfd: number,
    path: Buffer,
    flags: number,
    mask: number,
    out: Buffer,
  ) => number;
  const emptyPath = cString('');
  // One word array under the statx buffer: statRawAt reads it as words, statxInto as bytes (aligned by construction).
  const statWords = new Uint32Array(STATX_SIZE / 4);
  const statBuf = Buffer.from(statWords.buffer, 0, STATX_SIZE);
  const littleEndian = os.endianness() === 'LE';

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

  return {
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
  };
}
