/**
 * Writes through Linux's asynchronous interfaces, for the change-notification tests (docs/DESIGN.md §Change
 * notification): a Linux AIO write (io_setup, io_submit, io_getevents, io_destroy) and an io_uring write
 * (io_uring_setup, two mmaps of its rings, io_uring_enter), both through syscall(2) from libc with koffi, which
 * is already a dependency (no compiler, no extra package). Each call writes `data` at `offset` of the open
 * descriptor `fd`, waits for its completion and returns the bytes written (or throws with the errno).
 */
import koffi from 'koffi';

/** System call numbers (x86-64 table; aarch64 uses the asm-generic one). */
const SYS =
  process.arch === 'arm64'
    ? { io_setup: 0, io_destroy: 1, io_submit: 2, io_getevents: 4, io_uring_setup: 425, io_uring_enter: 426 }
    : { io_setup: 206, io_destroy: 207, io_submit: 209, io_getevents: 208, io_uring_setup: 425, io_uring_enter: 426 };

let libc: {
  syscall: (...args: unknown[]) => number | bigint;
  mmap: (addr: null, len: number, prot: number, flags: number, fd: number, off: bigint) => unknown;
  munmap: (addr: unknown, len: number) => number;
  close: (fd: number) => number;
} | null = null;

function lib(): NonNullable<typeof libc> {
  if (libc === null) {
    const l = koffi.load('libc.so.6');
    libc = {
      syscall: l.func('long syscall(long, ...)') as never,
      mmap: l.func('void *mmap(void *, size_t, int, int, int, int64_t)') as never,
      munmap: l.func('int munmap(void *, size_t)') as never,
      close: l.func('int close(int)') as never,
    };
  }
  return libc;
}

function check(what: string, n: number | bigint): number {
  const v = Number(n);
  if (v < 0) throw new Error(`${what}: errno ${koffi.errno()}`);
  return v;
}

/** One IOCB_CMD_PWRITE through a fresh AIO context (struct iocb, include/uapi/linux/aio_abi.h). */
export function aioPwrite(fd: number, data: Buffer, offset: number): number {
  const { syscall } = lib();
  const ctx = Buffer.alloc(8);
  check('io_setup', syscall(SYS.io_setup, 'uint', 1, 'uint8_t *', ctx));
  const id = ctx.readBigUInt64LE();
  try {
    const iocb = Buffer.alloc(64);
    iocb.writeUInt16LE(1, 16); // aio_lio_opcode = IOCB_CMD_PWRITE
    iocb.writeUInt32LE(fd, 20); // aio_fildes
    iocb.writeBigUInt64LE(BigInt(koffi.address(data) as bigint), 24); // aio_buf
    iocb.writeBigUInt64LE(BigInt(data.length), 32); // aio_nbytes
    iocb.writeBigInt64LE(BigInt(offset), 40); // aio_offset
    const list = Buffer.alloc(8);
    list.writeBigUInt64LE(BigInt(koffi.address(iocb) as bigint));
    check('io_submit', syscall(SYS.io_submit, 'uint64_t', id, 'long', 1, 'uint8_t *', list));
    const event = Buffer.alloc(32); // struct io_event: data, obj, res, res2
    check(
      'io_getevents',
      syscall(SYS.io_getevents, 'uint64_t', id, 'long', 1, 'long', 1, 'uint8_t *', event, 'void *', null),
    );
    return check('aio write', event.readBigInt64LE(16));
  } finally {
    syscall(SYS.io_destroy, 'uint64_t', id);
  }
}

/** One IORING_OP_WRITE through a fresh ring of one entry (struct io_uring_params, io_uring_sqe, io_uring_cqe). */
export function uringWrite(fd: number, data: Buffer, offset: number): number {
  const { syscall, mmap, munmap, close } = lib();
  const params = Buffer.alloc(120);
  const ring = check('io_uring_setup', syscall(SYS.io_uring_setup, 'uint', 1, 'uint8_t *', params));
  const sqOff = (at: number) => params.readUInt32LE(40 + at);
  const cqOff = (at: number) => params.readUInt32LE(80 + at);
  const sqEntries = params.readUInt32LE(0);
  const cqEntries = params.readUInt32LE(4);
  const ringBytes = Math.max(sqOff(24) + sqEntries * 4, cqOff(20) + cqEntries * 16);
  const sqeBytes = sqEntries * 64;
  const PROT_RW = 3;
  const MAP_SHARED_POPULATE = 0x8001;
  // One mapping serves both rings (IORING_FEAT_SINGLE_MMAP, every kernel since 5.4).
  const rings = mmap(null, ringBytes, PROT_RW, MAP_SHARED_POPULATE, ring, 0n);
  const sqes = mmap(null, sqeBytes, PROT_RW, MAP_SHARED_POPULATE, ring, 0x10000000n);
  try {
    const R = Buffer.from(koffi.view(rings as never, ringBytes));
    const S = Buffer.from(koffi.view(sqes as never, sqeBytes));
    S.fill(0, 0, 64);
    S.writeUInt8(23, 0); // opcode = IORING_OP_WRITE
    S.writeInt32LE(fd, 4);
    S.writeBigUInt64LE(BigInt(offset), 8);
    S.writeBigUInt64LE(BigInt(koffi.address(data) as bigint), 16);
    S.writeUInt32LE(data.length, 24);
    const tail = R.readUInt32LE(sqOff(4));
    const mask = R.readUInt32LE(sqOff(8));
    R.writeUInt32LE(0, sqOff(24) + (tail & mask) * 4);
    R.writeUInt32LE(tail + 1, sqOff(4));
    const IORING_ENTER_GETEVENTS = 1;
    check(
      'io_uring_enter',
      syscall(
        SYS.io_uring_enter,
        'uint',
        ring,
        'uint',
        1,
        'uint',
        1,
        'uint',
        IORING_ENTER_GETEVENTS,
        'void *',
        null,
        'size_t',
        0,
      ),
    );
    const head = R.readUInt32LE(cqOff(0));
    const cqMask = R.readUInt32LE(cqOff(8));
    return check('io_uring write', R.readInt32LE(cqOff(20) + (head & cqMask) * 16 + 8));
  } finally {
    munmap(rings, ringBytes);
    munmap(sqes, sqeBytes);
    close(ring);
  }
}
