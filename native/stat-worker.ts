/**
 * The stat helper thread (Linux, little-endian): a `node:worker_threads` worker that performs part of a warm scan's
 * per-note `statx` calls in parallel with the main thread, on descriptors of the directories the main thread opened
 * and judged (descriptors belong to the process, so both threads name the same open directory).
 *
 * This module is also imported by the main thread (src/trust/warm/stat-pool.ts) for the shared-memory layout below and
 * for `jobDescriptorCalls` (the pool's own `dup`/`close`); its loop only runs when the module is a worker's entry
 * point with this module's `workerData` tag. In the worker it loads koffi and binds only glibc `statx` (reading
 * koffi's per-thread errno) and `gettid` with `setpriority` for its own nice value; it imports
 * nothing but the small native/linux-stat.ts, native/errno.ts and native/types.ts, so the isolate stays small.
 *
 * Shared memory (all words little-endian host order, Int32Array/Uint32Array views):
 * - Control words (`CTL`) and, after them, a stack of `MAX_JOBS` job headers (`JOB`, `JOB_WORDS` words each). A job
 *   is one directory of the current scan: a descriptor of it that the pool owns (a duplicate of the scan's), a run
 *   of slots [base, base + count) and the name arena of its listing. The main thread pushes a job after listing a
 *   directory and pops it when it leaves the directory, without waiting for this thread (see `CTL.HELD`).
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
 * Held job (`CTL.HELD`): this thread stores a job's tag there before its first claim attempt in that job and -1
 * after its last one (the stat of a claimed slot lies in between); it is the only thread that uses a job's
 * descriptor, and only between a successful claim and the next attempt. The main thread never waits for it: an
 * entry this thread holds is statted by the main thread itself, and a popped job's descriptor is closed once every
 * slot is claimed and HELD does not name the job (src/trust/warm/stat-pool.ts proves why that is after this thread's
 * last use of it).
 *
 * Idle back-off: with nothing to claim this thread spins briefly (a new job usually follows within microseconds on
 * an idle machine), then sleeps on `CTL.EPOCH` until the main thread publishes a job (the main thread notifies only
 * while `CTL.SLEEPING` is set). Between scans it sleeps on `CTL.ACTIVE`.
 *
 * Names: each listing's candidate names live in a SharedArrayBuffer arena handed over once by `postMessage`
 * ({ arena: id, buffer }, later { drop: id }); this thread pulls such messages synchronously
 * (`receiveMessageOnPort`) when it is idle or meets an arena id it does not know yet, never while it holds a job,
 * and keeps each arena's buffer referenced until the drop, so a name is never read from freed memory.
 *
 * Test seam: while `CTL.GATE` is 1 this thread stops after each successful claim, before its stat, until the word
 * is 0 again (a thread descheduled in the middle of a claim, on demand; see `StatPool.holdWorker`).
 */
import { createRequire } from 'node:module';
import { isMainThread, parentPort, receiveMessageOnPort, workerData, type MessagePort } from 'node:worker_threads';
import type { default as Koffi } from 'koffi';
import { LINUX_ERRNO, linuxErrors } from './errno.js';
import { STATX_NEEDED, STATX_REQUEST, STXW, rawFromStatx } from './linux-stat.js';
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
  /** The tag of the job this thread may be claiming in and statting for, -1 when none (see the module comment). */
  HELD: 4,
  /** Slots this thread has statted since it started (diagnostics and tests). */
  STATTED: 5,
  /** The tag of the newest published job (the main thread's counter); this thread sleeps on it when idle. */
  EPOCH: 6,
  /** 1 while this thread sleeps on EPOCH (the main thread then notifies after a publish). */
  SLEEPING: 7,
  /** Test seam: 1 makes this thread stop after each successful claim until the word is 0 again. */
  GATE: 8,
  /** Times this thread went to sleep on EPOCH (diagnostics and tests). */
  SLEEPS: 9,
  /** Times such a sleep ended by the main thread's notify (diagnostics and tests). */
  WAKES: 10,
});
export const CTL_WORDS = 11;
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
/** fcntl(2) command: duplicate to the lowest free number, close-on-exec set (same value on every Linux arch). */
const F_DUPFD_CLOEXEC = 1030;

/** The descriptor calls the pool makes on the main thread for its jobs (`jobDescriptorCalls`). */
export interface JobDescriptorCalls {
  /** A close-on-exec duplicate of `fd` (same open directory), or -1 when none can be made (EMFILE and others). */
  dup(fd: number): number;
  /** Closes `fd` (a duplicate `dup` made); never retried (Linux releases the number even when close reports EINTR). */
  close(fd: number): void;
}

/**
 * The pool's own `fcntl(F_DUPFD_CLOEXEC)` and `close` (main thread, glibc through koffi): a job's descriptor is a
 * duplicate the pool owns, so the scan opens and closes its own descriptors exactly as it does without the pool,
 * and the pool closes a job's duplicate only once this thread can no longer use it. Throws what koffi throws when
 * libc cannot be loaded (the pool then turns itself off).
 */
export function jobDescriptorCalls(): JobDescriptorCalls {
  const koffi = createRequire(import.meta.url)('koffi') as typeof Koffi;
  const libc = koffi.load('libc.so.6');
  // fcntl is variadic: its third argument is passed with an explicit type on each call.
  const fcntl = libc.func('int fcntl(int, int, ...)') as (fd: number, cmd: number, ...rest: unknown[]) => number;
  const closeFn = libc.func('int close(int)') as (fd: number) => number;
  return {
    dup(fd: number): number {
      for (;;) {
        const copy = fcntl(fd, F_DUPFD_CLOEXEC, 'int', 0);
        if (copy >= 0) return copy;
        if (koffi.errno() !== EINTR) return -1;
      }
    },
    close(fd: number): void {
      closeFn(fd);
    },
  };
}

const AT_SYMLINK_NOFOLLOW = 0x100;

/**
 * Idle back-off, in passes that found nothing to claim (a pass over a few job headers takes well under a
 * microsecond): SPIN_PASSES passes spin (on an idle machine the next job usually follows within microseconds), then
 * the thread sleeps on CTL.EPOCH until the main thread publishes a job; a sleep is also cut short after SLEEP_MS, a
 * bound on the cost of any lost wake-up. No sched_yield: under the kernel's EEVDF scheduler a yield pushes the
 * yielding task's deadline back by a whole slice scaled by its weight (about 68 slices at nice 19), so a yielding
 * worker on a busy machine would be picked again only seconds later, while a sleeping one is placed afresh when it
 * wakes.
 */
const SPIN_PASSES = 512;
const SLEEP_MS = 50;
/** PRIO_PROCESS: with a thread id, setpriority(2) sets that one thread's nice value on Linux. */
const PRIO_PROCESS = 0;
/** The lowest priority: the worker only runs on a processor nothing else wants. */
const WORKER_NICE = 19;

/**
 * Gives this thread nice 19 (setpriority(PRIO_PROCESS, gettid(), 19); lowering one's own priority needs no
 * privilege). On an idle second core the worker runs at full speed; on a busy machine the scheduler prefers every
 * other thread, so the worker seldom takes processor time the main thread could use; the main thread never waits
 * for it (src/trust/warm/stat-pool.ts), so a descheduled worker costs a scan nothing but the stats it did not take.
 * Best effort: a libc without gettid (before glibc 2.30) keeps the default priority.
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
 * The worker's loop (`StatWorker`'s steps): binds `statx(int, const char *, int, unsigned, struct statx *)` with the
 * name passed as an address (the arenas never move), sets CTL.READY, then sleeps in Atomics.wait while no scan runs
 * and claims and stats slots while one does (`pass`, `claimFromBack`, `statSlot`), backing off when there is
 * nothing to claim (`sleep`). An exception while a slot is claimed hands the slot back (UNCLAIMED) and ends the
 * thread; the main thread turns the pool off on the exit event.
 */
class StatWorker {
  private readonly koffi = createRequire(import.meta.url)('koffi') as typeof Koffi;
  private readonly statx: (dirfd: number, path: number, flags: number, mask: number, out: Uint32Array) => number;
  private readonly ctl: Int32Array;
  private readonly ints: Int32Array;
  private readonly words: Uint32Array;
  /** struct statx is 256 bytes. */
  private readonly stx = new Uint32Array(64);
  /** Arena id → [base address, the buffer (kept alive here while the main thread may use the id)]. */
  private readonly arenas = new Map<number, { address: number; buffer: SharedArrayBuffer }>();
  /** Per job level: the tag whose back cursor `cursorAt` holds (-1: none). */
  private readonly cursorTag = new Int32Array(MAX_JOBS).fill(-1);
  private readonly cursorAt = new Int32Array(MAX_JOBS);

  constructor(
    data: StatWorkerData,
    private readonly port: MessagePort,
  ) {
    const libc = this.koffi.load('libc.so.6');
    this.statx = libc.func('int statx(int, intptr_t, int, unsigned int, uint8_t *)') as (
      dirfd: number,
      path: number,
      flags: number,
      mask: number,
      out: Uint32Array,
    ) => number;
    lowerPriority(libc);
    this.ctl = new Int32Array(data.control);
    this.ints = new Int32Array(data.slots);
    this.words = new Uint32Array(data.slots);
  }

  /** The loop: never returns; CTL.READY is 0 again once it ends by an exception. */
  run(): never {
    const { ctl } = this;
    let idle = 0;
    Atomics.store(ctl, CTL.READY, 1);
    try {
      for (;;) {
        // Holding no header here: acknowledge the newest tag (see TAG_WINDOW).
        const epoch = Atomics.load(ctl, CTL.EPOCH);
        Atomics.store(ctl, CTL.ACK, epoch);
        if (Atomics.load(ctl, CTL.ACTIVE) === 0) {
          this.drain();
          idle = 0;
          Atomics.wait(ctl, CTL.ACTIVE, 0);
          continue;
        }
        if (this.pass()) {
          idle = 0;
          continue;
        }
        if (++idle <= SPIN_PASSES) continue;
        this.drain();
        this.sleep(epoch);
        idle = 0;
      }
    } finally {
      // Scans stop publishing at once, before the main thread sees the exit event.
      Atomics.store(ctl, CTL.READY, 0);
    }
  }

  /** One message of the main thread: a new name arena, or one no listing uses any more. */
  private take(message: StatWorkerMessage): void {
    if ('arena' in message) {
      const address = Number(this.koffi.address(new Uint8Array(message.buffer)));
      this.arenas.set(message.arena, { address, buffer: message.buffer });
    } else {
      this.arenas.delete(message.drop);
    }
  }

  /** Every message waiting on the port, taken synchronously. */
  private drain(): void {
    for (let m = receiveMessageOnPort(this.port); m !== undefined; m = receiveMessageOnPort(this.port)) {
      this.take(m.message as StatWorkerMessage);
    }
  }

  /** The base address of arena `id` (messages drained once if it is not known yet); 0 when there is none. */
  private addressOf(id: number): number {
    let arena = this.arenas.get(id);
    if (arena === undefined) {
      this.drain();
      arena = this.arenas.get(id);
    }
    return arena === undefined ? 0 : arena.address;
  }

  /**
   * statx of a name in `fd` into the slot record at word `r`: EINTR retried, a missing needed field is EIO (as
   * statRawAt).
   */
  private statSlot(fd: number, address: number, r: number): void {
    const { ints, stx } = this;
    for (;;) {
      if (this.statx(fd, address, AT_SYMLINK_NOFOLLOW, STATX_REQUEST, stx) === 0) break;
      const errno = this.koffi.errno();
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
    rawFromStatx(stx, mask, this.words, r + SLOT_AT.RAW);
    ints[r + SLOT_AT.ERRNO] = 0;
  }

  /**
   * One pass over the job stack, newest job first: claims and stats slots from the back of the first job that has
   * unclaimed ones, for as long as no job is pushed or popped. Returns after any change; false when it found nothing.
   */
  private pass(): boolean {
    const { ctl, cursorTag, cursorAt } = this;
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
      const address = this.addressOf(arenaId);
      if (address === 0) {
        cursorAt[j] = -1;
        continue;
      }
      if (this.claimFromBack(j, tag, fd, base, address, top)) return true;
    }
    return false;
  }

  /**
   * Claims and stats the slots of job level `j` (tag `tag`) from its back cursor towards the front, until a claim
   * fails (the main thread got there from the front, or popped the job) or the job stack changes. True when it
   * statted a slot or saw the stack change.
   */
  private claimFromBack(j: number, tag: number, fd: number, base: number, address: number, top: number): boolean {
    const { ctl, ints, cursorAt } = this;
    const unclaimed = tag << 2;
    const mine = unclaimed | SLOT.WORKER;
    const done = unclaimed | SLOT.DONE;
    let worked = false;
    // HELD names this job from before the first claim attempt to after the last stat (see the module comment).
    Atomics.store(ctl, CTL.HELD, tag);
    try {
      for (let k = cursorAt[j]!; k >= 0; k--) {
        const r = (base + k) * SLOT_WORDS;
        if (Atomics.compareExchange(ints, r, unclaimed, mine) !== unclaimed) {
          cursorAt[j] = -1; // the main thread got here from the front, or popped the job
          break;
        }
        cursorAt[j] = k - 1;
        worked = true;
        if (Atomics.load(ctl, CTL.GATE) !== 0) this.held();
        try {
          this.statSlot(fd, address + ints[r + SLOT_AT.NAME]!, r);
        } catch (err) {
          Atomics.compareExchange(ints, r, mine, unclaimed);
          throw err;
        }
        // A compare-exchange, not a store: once the job is popped the main thread may have published the slot again.
        Atomics.compareExchange(ints, r, mine, done);
        Atomics.add(ctl, CTL.STATTED, 1);
        if (Atomics.load(ctl, CTL.JOBS) !== top) return true;
      }
    } finally {
      Atomics.store(ctl, CTL.HELD, -1);
    }
    return worked;
  }

  /** The test seam: stays here, holding the claim just made, while CTL.GATE is 1. */
  private held(): void {
    const { ctl } = this;
    while (Atomics.load(ctl, CTL.GATE) !== 0) Atomics.wait(ctl, CTL.GATE, 1, SLEEP_MS);
  }

  /**
   * Sleeps on CTL.EPOCH while it still holds `epoch` (the value read before the pass that found nothing). The
   * publisher stores EPOCH last (after the job and CTL.JOBS) and then reads SLEEPING: a job published before that
   * read was seen by the pass; one published after it changed EPOCH, so either this wait returns at once or the
   * publisher's read comes after the store of SLEEPING and it notifies (sequentially consistent atomics).
   */
  private sleep(epoch: number): void {
    const { ctl } = this;
    Atomics.store(ctl, CTL.SLEEPING, 1);
    Atomics.add(ctl, CTL.SLEEPS, 1);
    if (Atomics.load(ctl, CTL.ACTIVE) !== 0 && Atomics.wait(ctl, CTL.EPOCH, epoch, SLEEP_MS) === 'ok')
      Atomics.add(ctl, CTL.WAKES, 1);
    Atomics.store(ctl, CTL.SLEEPING, 0);
  }
}

const data = workerData as StatWorkerData | undefined;
if (!isMainThread && parentPort !== null && data?.kind === 'memory-bridge-stat') new StatWorker(data, parentPort).run();
