/**
 * The stat helper thread (Linux, little-endian): a `node:worker_threads` worker that performs part of a warm scan's
 * per-note `statx` calls in parallel with the main thread, on the main thread's own directory descriptors
 * (descriptors belong to the process, so both threads name the same open directory).
 *
 * This module is also imported by the main thread (src/trust/stat-pool.ts) for the shared-memory layout below; its
 * loop only runs when the module is a worker's entry point with this module's `workerData` tag. In the worker it
 * loads koffi and binds only glibc `statx` (reading koffi's per-thread errno), `sched_yield`, and `gettid` with
 * `setpriority` for its own nice value; it imports nothing but the small native/linux.ts and native/types.ts, so
 * the isolate stays small.
 *
 * Shared memory (all words little-endian host order, Int32Array/Uint32Array views):
 * - Control words (`CTL`) and, after them, a stack of `MAX_JOBS` job headers (`JOB`, `JOB_WORDS` words each). A job
 *   is one directory of the current scan: the descriptor, a run of slots [base, base + count) and the name arena of
 *   its listing. The main thread pushes a job after listing a directory and pops it before it closes the descriptor.
 * - Slots: one record of SLOT_WORDS words per slot (two cache lines, so the main thread reads one slot's answer from
 *   two lines): a state word, an errno word, the byte offset of the entry's NUL-terminated name in the job's arena,
 *   and RAW_STAT_WORDS words for the answer (layout `RAW`, as `Native.statRawAt` writes it).
 *
 * Slot state word: `(tag << 2) | status`, where `tag` is the 29-bit number of the job the slot was published in and
 * status is UNCLAIMED, MAIN (the main thread claimed it), WORKER (this thread claimed it and is stat'ing it) or
 * DONE (answer or errno written). Both threads claim with a compare-exchange from `tag|UNCLAIMED`; the main thread
 * from the front of a job, this thread from the back of the newest job that has unclaimed slots. A header read is
 * checked with a second read of its tag (the main thread clears the tag before reusing a header), and every claim
 * names the tag, so a slot of a job that was popped (and possibly re-published under a new tag) is never claimed
 * with an old descriptor or name. Tags wrap after 2^29 jobs; the main thread publishes a job only while its tag is
 * within 2^28 of the tag this thread last acknowledged (`CTL.ACK`, stored whenever it holds no header), so a stale
 * tag can never equal a live one.
 *
 * Names: each listing's candidate names live in a SharedArrayBuffer arena handed over once by `postMessage`
 * ({ arena: id, buffer }, later { drop: id }); this thread pulls such messages synchronously
 * (`receiveMessageOnPort`) when it is idle or meets an arena id it does not know yet.
 */
import { createRequire } from 'node:module';
import { isMainThread, parentPort, receiveMessageOnPort, workerData, type MessagePort } from 'node:worker_threads';
import type { default as Koffi } from 'koffi';
import { LINUX_ERRNO, linuxErrors } from './errno.js';
import { STATX_NEEDED, STATX_REQUEST, STXW, rawFromStatx } from './linux.js';
import type { NativeError, ResourceExhaustedError } from './types.js';

/** Control word indices. */
export const CTL = Object.freeze({
  /** 1 while a scan runs (the main thread wakes this thread with Atomics.notify on it), else 0. */
  ACTIVE: 0,
  /** Number of published jobs (the job stack's height). */
  JOBS: 1,
  /** The job tag counter as this thread last saw it while holding no header. */
  ACK: 2,
  /** 1 once statx is bound and the loop runs; 0 again when the loop failed. */
  READY: 3,
  /** 1 while the main thread sleeps in Atomics.wait on a slot state (this thread then notifies). */
  WAITING: 4,
  /** Slots this thread has statted since it started (diagnostics and tests). */
  STATTED: 5,
  /** The tag of the newest published job (the main thread's counter). */
  EPOCH: 6,
});
export const CTL_WORDS = 8;
/** Word offsets inside one job header. `TAG` is -1 while the header holds no job. */
export const JOB = Object.freeze({ TAG: 0, FD: 1, BASE: 2, COUNT: 3, ARENA: 4 });
export const JOB_WORDS = 5;
/** Deepest job stack (directory nesting) the pool serves; deeper directories are statted by the main thread. */
export const MAX_JOBS = 64;
/** Words of the control buffer. */
export const CONTROL_WORDS = CTL_WORDS + MAX_JOBS * JOB_WORDS;

/** Slot status (low two bits of a state word). */
export const SLOT = Object.freeze({ UNCLAIMED: 0, MAIN: 1, WORKER: 2, DONE: 3 });
/** Tags are 29 bits so that `(tag << 2) | status` stays a positive int32. */
export const TAG_MASK = 0x1fff_ffff;
/** A tag more than this far ahead of the acknowledged one is not published (see the module comment). */
export const TAG_WINDOW = 0x1000_0000;

/** Words per slot record (128 bytes): state, errno, name offset, the raw stat words, padding. */
export const SLOT_WORDS = 32;
/** Word offsets inside a slot record. */
export const SLOT_AT = Object.freeze({ STATE: 0, ERRNO: 1, NAME: 2, RAW: 3 });

/** Byte length of the slot buffer for `capacity` slots. */
export function slotBufferBytes(capacity: number): number {
  return capacity * SLOT_WORDS * 4;
}

/** The `workerData` this entry point expects. */
export interface StatWorkerData {
  kind: 'memory-bridge-stat';
  control: SharedArrayBuffer;
  slots: SharedArrayBuffer;
  capacity: number;
}

/** Messages from the main thread: a new name arena, or an arena no listing uses any more. */
export type StatWorkerMessage = { arena: number; buffer: SharedArrayBuffer } | { drop: number };

/**
 * The failure a DONE slot record at word `r` reports: the NativeError the main thread's own `statRawAt` would have
 * thrown for the worker's errno, or null when the record holds an answer.
 */
export function slotFailure(ints: Int32Array<ArrayBufferLike>, r: number): NativeError | ResourceExhaustedError | null {
  const errno = ints[r + SLOT_AT.ERRNO]!;
  return errno === 0 ? null : linuxErrors.fail('statx', errno);
}

const { EINTR, EIO } = LINUX_ERRNO;
const AT_SYMLINK_NOFOLLOW = 0x100;

/**
 * Passes in a row that found nothing to claim (about 0.5 µs each) before the worker yields its processor: a new job
 * usually follows within microseconds on an idle machine, while on a busy one the yield hands the processor back
 * (possibly to the main thread it serves).
 */
const IDLE_PASSES = 64;

/** PRIO_PROCESS: with a thread id, setpriority(2) sets that one thread's nice value on Linux. */
const PRIO_PROCESS = 0;
/** The lowest priority: the worker only runs on a processor nothing else wants (or while the main thread waits). */
const WORKER_NICE = 19;

/**
 * Gives this thread nice 19 (setpriority(PRIO_PROCESS, gettid(), 19); lowering one's own priority needs no
 * privilege). On an idle second core the worker runs at full speed; on a busy machine the scheduler prefers every
 * other thread, so the worker seldom takes processor time the main thread could use. The main thread's own wait for
 * a claimed entry sleeps after a short spin, which frees its processor for the worker. Best effort: a libc without
 * gettid (before glibc 2.30) keeps the default priority.
 */
function lowerPriority(libc: ReturnType<typeof Koffi.load>): void {
  try {
    const gettid = libc.func('int gettid(void)') as () => number;
    const setpriority = libc.func('int setpriority(int, unsigned int, int)') as (
      which: number,
      who: number,
      prio: number,
    ) => number;
    setpriority(PRIO_PROCESS, gettid(), WORKER_NICE);
  } catch {
    // Default priority.
  }
}

/**
 * The worker's loop: never returns. Binds `statx(int, const char *, int, unsigned, struct statx *)` with the name
 * passed as an address (the arenas never move), sets CTL.READY, then sleeps in Atomics.wait while no scan runs and
 * claims and stats slots while one does. An exception while a slot is claimed hands the slot back (UNCLAIMED, the
 * main thread then stats it itself) and ends the thread; the main thread turns the pool off on the exit event.
 */
function runStatWorker(data: StatWorkerData, port: MessagePort): never {
  const koffi = createRequire(import.meta.url)('koffi') as typeof Koffi;
  const libc = koffi.load('libc.so.6');
  const statx = libc.func('int statx(int, intptr_t, int, unsigned int, uint8_t *)') as (
    dirfd: number,
    path: number,
    flags: number,
    mask: number,
    out: Uint32Array,
  ) => number;
  // Called when passes found nothing to claim, so a worker that shares a core with the main thread gives it back.
  const schedYield = libc.func('int sched_yield(void)') as () => number;
  lowerPriority(libc);
  const ctl = new Int32Array(data.control);
  const ints = new Int32Array(data.slots);
  const words = new Uint32Array(data.slots);
  const stx = new Uint32Array(64); // struct statx is 256 bytes
  /** Arena id → [base address, the buffer (kept alive here while the main thread may use the id)]. */
  const arenas = new Map<number, { address: number; buffer: SharedArrayBuffer }>();
  /** Per job level: the tag whose back cursor `cursorAt` holds (-1: none). */
  const cursorTag = new Int32Array(MAX_JOBS).fill(-1);
  const cursorAt = new Int32Array(MAX_JOBS);

  const take = (message: StatWorkerMessage): void => {
    if ('arena' in message) {
      const address = Number(koffi.address(new Uint8Array(message.buffer)));
      arenas.set(message.arena, { address, buffer: message.buffer });
    } else {
      arenas.delete(message.drop);
    }
  };
  const drain = (): void => {
    for (let m = receiveMessageOnPort(port); m !== undefined; m = receiveMessageOnPort(port)) {
      take(m.message as StatWorkerMessage);
    }
  };
  const addressOf = (id: number): number => {
    let arena = arenas.get(id);
    if (arena === undefined) {
      drain();
      arena = arenas.get(id);
    }
    return arena === undefined ? 0 : arena.address;
  };

  /**
   * statx of a name in `fd` into the slot record at word `r`: EINTR retried, a missing needed field is EIO (as
   * statRawAt).
   */
  const statSlot = (fd: number, address: number, r: number): void => {
    for (;;) {
      if (statx(fd, address, AT_SYMLINK_NOFOLLOW, STATX_REQUEST, stx) === 0) break;
      const errno = koffi.errno();
      if (errno !== EINTR) {
        ints[r + SLOT_AT.ERRNO] = errno;
        return;
      }
    }
    const mask = stx[STXW.mask]!;
    if ((mask & STATX_NEEDED) !== STATX_NEEDED) {
      ints[r + SLOT_AT.ERRNO] = EIO;
      return;
    }
    rawFromStatx(stx, mask, words, r + SLOT_AT.RAW);
    ints[r + SLOT_AT.ERRNO] = 0;
  };

  /**
   * One pass over the job stack, newest job first: claims and stats slots from the back of the first job that has
   * unclaimed ones, for as long as no job is pushed or popped. Returns after any change; false when it found nothing.
   */
  const pass = (): boolean => {
    const top = Atomics.load(ctl, CTL.JOBS);
    for (let j = top - 1; j >= 0; j--) {
      const h = CTL_WORDS + j * JOB_WORDS;
      const tag = Atomics.load(ctl, h + JOB.TAG);
      if (tag < 0) return true; // being pushed or popped: start over
      const fd = Atomics.load(ctl, h + JOB.FD);
      const base = Atomics.load(ctl, h + JOB.BASE);
      const count = Atomics.load(ctl, h + JOB.COUNT);
      const arenaId = Atomics.load(ctl, h + JOB.ARENA);
      if (Atomics.load(ctl, h + JOB.TAG) !== tag) return true;
      if (cursorTag[j] !== tag) {
        cursorTag[j] = tag;
        cursorAt[j] = count - 1;
      }
      if (cursorAt[j]! < 0) continue;
      const address = addressOf(arenaId);
      if (address === 0) {
        cursorAt[j] = -1;
        continue;
      }
      const unclaimed = tag << 2;
      const mine = unclaimed | SLOT.WORKER;
      const done = unclaimed | SLOT.DONE;
      let worked = false;
      for (let k = cursorAt[j]!; k >= 0; k--) {
        const r = (base + k) * SLOT_WORDS;
        if (Atomics.compareExchange(ints, r, unclaimed, mine) !== unclaimed) {
          cursorAt[j] = -1; // the main thread got here from the front
          break;
        }
        cursorAt[j] = k - 1;
        worked = true;
        try {
          statSlot(fd, address + ints[r + SLOT_AT.NAME]!, r);
        } catch (err) {
          Atomics.compareExchange(ints, r, mine, unclaimed);
          throw err;
        }
        // A compare-exchange, not a store: a main thread that gave up waiting (see stat-pool.ts) owns the slot now.
        Atomics.compareExchange(ints, r, mine, done);
        Atomics.add(ctl, CTL.STATTED, 1);
        if (Atomics.load(ctl, CTL.WAITING) !== 0) Atomics.notify(ints, r);
        if (Atomics.load(ctl, CTL.JOBS) !== top) return true;
      }
      if (worked) return true;
    }
    return false;
  };

  let idle = 0;
  Atomics.store(ctl, CTL.READY, 1);
  try {
    for (;;) {
      // Holding no header here: acknowledge the newest tag (see TAG_WINDOW).
      Atomics.store(ctl, CTL.ACK, Atomics.load(ctl, CTL.EPOCH));
      if (Atomics.load(ctl, CTL.ACTIVE) === 0) {
        drain();
        Atomics.wait(ctl, CTL.ACTIVE, 0);
        continue;
      }
      if (pass()) idle = 0;
      else if (++idle >= IDLE_PASSES) {
        idle = 0;
        schedYield();
      }
    }
  } finally {
    // Scans stop publishing at once, before the main thread sees the exit event.
    Atomics.store(ctl, CTL.READY, 0);
  }
}

const data = workerData as StatWorkerData | undefined;
if (!isMainThread && parentPort !== null && data?.kind === 'memory-bridge-stat') runStatWorker(data, parentPort);
