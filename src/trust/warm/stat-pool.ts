/**
 * The stat pool: a second thread (native/stat-worker.ts) that performs part of a warm scan's per-note `statx` calls
 * while the main thread walks, so the calls of one directory run on two cores. The scan's results stay exactly the
 * ones a single thread produces: the pool only changes which thread issues a candidate note's `statx`. The main
 * thread never waits for the worker.
 *
 * Protocol per directory: the scan lists the directory, then `publish` makes a duplicate D of its descriptor (the
 * pool's own, `fcntl(F_DUPFD_CLOEXEC)`: the same open directory) and pushes a job with D and the candidate note
 * entries of the listing (the entries the walk will hand to its candidate step without a stat of its own). The
 * scan then processes entries in order exactly as before; for each candidate, `take` claims the entry from the
 * front with one compare-exchange. When the worker (claiming from the back) already answered it, `take` returns
 * the raw words, or throws the NativeError the binding's own `statRawAt` would have thrown for the worker's errno
 * (the worker retries EINTR and reports EIO when the answer lacks a needed field, as native/linux.ts does). When the
 * worker claimed it and has not answered (it is in the middle of the call, or descheduled there: it runs at nice
 * 19), `take` does not wait: the scan stats the entry itself, the same call, and the worker's answer is never read.
 * When the scan leaves the directory, `retire` claims what is left, pops the job and closes D, or, when the worker
 * may still be using D, keeps it on a short list of deferred descriptors closed at a later safe point.
 *
 * Why the worker never uses a descriptor after it is closed. The worker uses job T's descriptor D only for the
 * `statx` of a slot it claimed (compare-exchange `T|UNCLAIMED` → `T|WORKER`), and only inside a run that it opens by
 * storing T in CTL.HELD before its first claim attempt in the job and closes by storing -1 after its last stat
 * (runs do not nest: one thread). `retire` first claims every slot of T that is still unclaimed, so from then on no
 * claim of T can succeed, and only then reads HELD. If HELD ≠ T, no run of T is in progress at that read and none
 * can claim anything afterwards, so every stat on D has returned and none will follow: D is closed. If HELD = T, D
 * goes to the deferred list and each later safe point (the next `beginScan`, `publish`, `retire`, `endScan`, a
 * timer after a scan that ends with one pending, and the worker's exit) reads HELD again and closes D at the first
 * read ≠ T, by the same argument. The scan's own descriptors are never handed to the worker, so the scan opens and
 * closes them exactly as without the pool (the caller's root descriptor included).
 *
 * Why a reused descriptor number is never statted with an old name. The worker takes a job's descriptor number,
 * slot range and name arena from its header, checked by reading the header's tag before and after, and uses them
 * only after a claim naming that tag succeeded; a slot carries tag T only while job T is published (a reused slot
 * is rewritten with the new job's tag before its header is stored). Until D is closed its number names the
 * directory it was duplicated from; once closed, the worker can no longer claim a slot of T (above), so a number
 * the kernel hands out again reaches the worker only in a new job, with a new tag and that job's names.
 *
 * Why the results are exactly the single-threaded ones. For every candidate the scan either takes the worker's
 * answer (the same `statx` call: the same name bytes, flags and mask, relative to the same open directory the scan
 * opened and judged in this call, issued after the job was published) or makes the call itself; errors map to the
 * same NativeError. The scan's order, budgets, skips and checks do not depend on which thread answered.
 *
 * Bounds. At most one descriptor is ever deferred (the worker holds at most one job at a time, and a descriptor
 * is deferred only while HELD names its job); the list is capped at MAX_DEFERRED and `publish` declines a job while
 * it is full. A scan can therefore end with one duplicate still open while the worker sits descheduled in the
 * middle of a call; it is closed as soon as the worker's call returns (the timer polls every few milliseconds) or
 * the pool turns off, never used afterwards. A worker that never runs costs a scan one `fcntl` and one `close` per
 * published directory and one compare-exchange per entry, and the adaptive pause (`nextPause`) turns the pool off
 * for the following scans.
 *
 * Lifecycle: the pool starts lazily and asynchronously after a scan that statted at least `minCandidates`
 * (default STAT_POOL_MIN_CANDIDATES) candidate notes through the raw path; scans stay single-threaded until the
 * worker has bound statx and set its ready word, so no scan ever waits for the thread to start. The worker sleeps
 * in Atomics.wait between scans and is woken at scan start; during a scan it claims while there is work, then
 * spins briefly and then sleeps until the next job (native/stat-worker.ts), so it burns no processor time while
 * the scan reads notes or walks directories without candidates. It is `unref`'d (it never keeps a process alive),
 * with small heap limits. If it fails or exits, the pool turns itself off for the life of the process (scans are
 * single-threaded again) and says so once on stderr with a reason code. After scans in which the worker answered
 * little (a busy machine), the pool pauses for a few scans (`nextPause`).
 *
 * Measured (2-core VM, 10,000 notes in 288 directories, warm scans interleaved in one process): 16-17 ms with the
 * pool against 25-28 ms without on an otherwise idle machine (the worker answers about 5,500 of the 10,000 stats);
 * about equal under a load of 3-5 other runnable processes. The thread adds about 3-6 MB of resident memory.
 *
 * Linux only. A scan uses the pool only when its caller passes it (`ScanOptions.statThread`, src/trust/scan.ts).
 * Environment: MEMORY_BRIDGE_STAT_THREADS=0 turns the pool off (read when the pool would start).
 */
import { Worker } from 'node:worker_threads';
import { RAW_STAT_WORDS, type Native } from '../../../native/types.js';
import {
  CONTROL_WORDS,
  CTL,
  CTL_WORDS,
  JOB,
  JOB_WORDS,
  MAX_JOBS,
  SLOT,
  SLOT_AT,
  SLOT_WORDS,
  TAG_MASK,
  TAG_WINDOW,
  jobDescriptorCalls,
  slotBufferBytes,
  slotFailure,
  type JobDescriptorCalls,
  type StatWorkerData,
  type StatWorkerMessage,
} from '../../../native/stat-worker.js';
import { NOT_TAKEN, TAKEN, type NameArena, type NamedEntry, type PoolListing, type StatThread } from './stat-thread.js';

/** A scan that statted at least this many candidate notes through the raw path starts the pool. */
export const STAT_POOL_MIN_CANDIDATES = 1000;
/** Slots shared by the jobs of one scan's current directory path (entries beyond are statted by the main thread). */
export const STAT_POOL_CAPACITY = 32768;
/** Most descriptors kept open for the worker after their job was popped (one is the most the protocol needs). */
const MAX_DEFERRED = 4;
/** First and longest interval, in ms, of the timer that closes descriptors still deferred after a scan. */
const REAP_FIRST_MS = 1;
const REAP_MAX_MS = 64;
/** Longest names a job carries (NAME_MAX); a longer one is left to the main thread's stat (ENAMETOOLONG). */
const NAME_MAX = 255;

/** Adaptive pause (see `StatPool.endScan`): sample size, share, longest pause in scans. */
const ADAPT_MIN_ENTRIES = 256;
const ADAPT_SHARE = 8;
const ADAPT_MAX_SKIP = 32;

/**
 * The adaptive pause after a scan (see `StatPool.endScan`): the number of scans to run without the pool, given the
 * entries the scan published, how many of them the worker answered, and the previous pause. A scan with fewer than
 * ADAPT_MIN_ENTRIES published entries says nothing and keeps the previous pause length.
 */
export function nextPause(published: number, answered: number, previous: number): number {
  if (published < ADAPT_MIN_ENTRIES) return previous;
  if (answered * ADAPT_SHARE >= published) return 0;
  return Math.min(ADAPT_MAX_SKIP, Math.max(1, previous * 2));
}

/** Options of the process's pool (tests force it on with `minCandidates: 0`). */
export interface StatPoolOptions {
  /** Candidate notes one scan must stat through the raw path before the pool starts (default 1000). */
  minCandidates?: number;
  /** Honour MEMORY_BRIDGE_STAT_THREADS=0 (default true). */
  useEnvironment?: boolean;
  /** While true, scans stay single-threaded even with the worker ready (tests compare both; default false). */
  paused?: boolean;
  /** Skip the pool for a while after scans where the worker took little part (see `endScan`; default true). */
  adaptive?: boolean;
}

type PoolState = 'off' | 'scheduled' | 'starting' | 'failed' | 'disabled';

/**
 * The process's stat pool (one worker per process, shared by every scan that is given it): see `StatThread` for
 * the order of calls.
 */
export class StatPool implements StatThread {
  private readonly control = new SharedArrayBuffer(CONTROL_WORDS * 4);
  private readonly ctl = new Int32Array(this.control);
  /** Slot records (SLOT_WORDS words each; see native/stat-worker.ts), as signed and unsigned words; made at start. */
  private ints: Int32Array<ArrayBufferLike> = new Int32Array(0);
  private words: Uint32Array<ArrayBufferLike> = new Uint32Array(0);
  /** Main-thread only: the listing index of the entry in each slot; made at start. */
  private entryOf = new Int32Array(0);
  /** Main-thread only, per job level: tag, first slot, slot count, the next slot `take` expects, and the arena. */
  private readonly jobTag = new Int32Array(MAX_JOBS);
  private readonly jobBase = new Int32Array(MAX_JOBS);
  private readonly jobCount = new Int32Array(MAX_JOBS);
  private readonly jobFront = new Int32Array(MAX_JOBS);
  private readonly jobArena: (NameArena | null)[] = new Array<NameArena | null>(MAX_JOBS).fill(null);
  /** Main-thread only, per job level: the pool's duplicate of the directory's descriptor (the one the worker uses). */
  private readonly jobFd = new Int32Array(MAX_JOBS);
  private depth = 0;
  /** Duplicates of popped jobs the worker may still be using, with their job's tag (see the module comment). */
  private readonly deferred: { fd: number; tag: number }[] = [];
  private reapTimer: ReturnType<typeof setTimeout> | null = null;
  private reapDelay = REAP_FIRST_MS;
  /** The pool's own dup/close (bound at start). */
  private calls: JobDescriptorCalls | null = null;
  /** Entries published and the worker's STATTED count at the start of the current scan. */
  private published = 0;
  private statted = 0;
  /** Scans still to run without the pool, and the length of the last such pause (see `endScan`). */
  private skip = 0;
  private backoff = 0;
  private epoch = 0;
  private nextArena = 1;
  private worker: Worker | null = null;
  private state: PoolState = 'off';
  private scanning = false;
  /** Set by `fail` during a scan: the worker is terminated when the scan ends (it may hold a claim until then). */
  private terminateAfterScan = false;
  private readonly dropped = new FinalizationRegistry<number>((id) => this.post({ drop: id }));
  private options: Required<StatPoolOptions> = {
    minCandidates: STAT_POOL_MIN_CANDIDATES,
    useEnvironment: true,
    paused: false,
    adaptive: true,
  };

  constructor() {
    for (let j = 0; j < MAX_JOBS; j++) this.ctl[CTL_WORDS + j * JOB_WORDS + JOB.TAG] = -1;
    this.ctl[CTL.HELD] = -1;
  }

  /** Replaces the options (tests). */
  configure(options: StatPoolOptions): void {
    this.options = { ...this.options, ...options };
  }

  /** Entries the worker has statted since it started (tests and diagnostics). */
  get workerStatted(): number {
    return Atomics.load(this.ctl, CTL.STATTED);
  }

  /**
   * Diagnostics and tests: `taken`, answers of the worker a scan used; `ownStats`, entries the worker had claimed
   * but not answered when the scan reached them (the scan statted them itself); `deferredCloses`, descriptors whose
   * close waited for a later safe point.
   */
  readonly counts = { taken: 0, ownStats: 0, deferredCloses: 0 };

  /** Times the worker went to sleep for lack of work during a scan (tests and diagnostics). */
  get workerSleeps(): number {
    return Atomics.load(this.ctl, CTL.SLEEPS);
  }

  /** Times such a sleep was ended by a new job's notify rather than by its time bound (tests and diagnostics). */
  get workerWakes(): number {
    return Atomics.load(this.ctl, CTL.WAKES);
  }

  /** True while the worker is inside a job (CTL.HELD names one): claiming, statting, or stopped by `holdWorker`. */
  get workerHolding(): boolean {
    return Atomics.load(this.ctl, CTL.HELD) !== -1;
  }

  /** Descriptors of popped jobs still open because the worker may be using them (at most one; see the module comment). */
  get deferredDescriptors(): number {
    return this.deferred.length;
  }

  /** True once the worker runs and the pool has not turned off. */
  get ready(): boolean {
    return this.state === 'starting' && Atomics.load(this.ctl, CTL.READY) === 1;
  }

  /**
   * 'off' (not started), 'scheduled' (starts on the next turn of the event loop), 'starting' (started; see `ready`),
   * 'failed' or 'disabled' (environment).
   */
  get status(): PoolState {
    return this.state;
  }

  /**
   * Called after each raw-path scan with the number of candidate notes it statted; when that is at least
   * `minCandidates` and the platform has the raw binding (Linux), schedules the worker's start for the next turn of
   * the event loop (an unref'd immediate), so the call that triggered it, usually a process's first search, does not
   * pay for creating the thread (about 30 ms on the main thread, measured through MCP at 2,000 notes). Never blocks
   * on the thread.
   */
  noteScan(candidates: number, native: Native): void {
    if (this.state !== 'off' || candidates < this.options.minCandidates) return;
    if (native.platform !== 'linux') return;
    if (this.options.useEnvironment && process.env.MEMORY_BRIDGE_STAT_THREADS === '0') {
      this.state = 'disabled';
      return;
    }
    this.state = 'scheduled';
    setImmediate(() => {
      if (this.state !== 'scheduled') return;
      // Outside any call now: a failure here (the shared buffers' allocation) must turn the pool off, not escape.
      try {
        this.start();
      } catch {
        this.fail('stat_worker_start');
      }
    }).unref();
  }

  private start(): void {
    this.state = 'starting';
    this.calls = jobDescriptorCalls();
    const slots = new SharedArrayBuffer(slotBufferBytes(STAT_POOL_CAPACITY));
    this.ints = new Int32Array(slots);
    this.words = new Uint32Array(slots);
    this.entryOf = new Int32Array(STAT_POOL_CAPACITY);
    const workerData: StatWorkerData = {
      kind: 'memory-bridge-stat',
      control: this.control,
      slots,
      capacity: STAT_POOL_CAPACITY,
    };
    let worker: Worker;
    try {
      worker = new Worker(new URL('../../../native/stat-worker.js', import.meta.url), {
        workerData,
        // The loop allocates nearly nothing; small heaps keep the thread's resident memory down.
        resourceLimits: { maxOldGenerationSizeMb: 8, maxYoungGenerationSizeMb: 1, codeRangeSizeMb: 4, stackSizeMb: 1 },
        stdout: true,
        stderr: true,
      });
    } catch {
      this.fail('stat_worker_start');
      return;
    }
    worker.unref();
    worker.on('error', () => this.fail('stat_worker_error'));
    worker.on('exit', () => {
      this.exited();
      this.fail('stat_worker_exit');
    });
    this.worker = worker;
  }

  /** Turns the pool off for the life of the process; one short operator line, no paths. */
  private fail(reason: string): void {
    if (this.state === 'failed') return;
    this.state = 'failed';
    process.stderr.write(`memory-bridge: stat thread off (${reason})\n`);
    if (this.scanning) this.terminateAfterScan = true;
    else this.terminate();
  }

  private terminate(): void {
    const worker = this.worker;
    this.worker = null;
    if (worker !== null) {
      worker.removeAllListeners('exit');
      worker.on('exit', () => this.exited());
      void worker.terminate().catch(() => undefined);
    }
  }

  /** The worker thread has ended: nothing can use a deferred descriptor any more. */
  private exited(): void {
    for (const d of this.deferred.splice(0)) this.calls?.close(d.fd);
  }

  /**
   * Closes every deferred descriptor whose job the worker no longer holds (CTL.HELD ≠ its tag; see the module
   * comment for why that read, made after all of the job's slots were claimed, proves the worker is done with it).
   * Never waits. Returns how many stay deferred.
   */
  private reap(): number {
    const deferred = this.deferred;
    if (deferred.length === 0) return 0;
    const held = Atomics.load(this.ctl, CTL.HELD);
    for (let i = deferred.length - 1; i >= 0; i--) {
      if (deferred[i]!.tag === held) continue;
      this.calls!.close(deferred[i]!.fd);
      deferred.splice(i, 1);
    }
    return deferred.length;
  }

  /** After a scan that ended with a deferred descriptor: reaps on an unref'd timer, backing off, until none is left. */
  private scheduleReap(): void {
    if (this.reapTimer !== null || this.deferred.length === 0) return;
    this.reapTimer = setTimeout(() => {
      this.reapTimer = null;
      if (this.reap() === 0) {
        this.reapDelay = REAP_FIRST_MS;
        return;
      }
      this.reapDelay = Math.min(REAP_MAX_MS, this.reapDelay * 2);
      this.scheduleReap();
    }, this.reapDelay);
    this.reapTimer.unref();
  }

  /**
   * Tests and diagnostics only (the scan path never waits): closes deferred descriptors, waiting up to `waitMs`
   * for the worker to leave the job it holds. Returns how many stay deferred (0 unless the worker is still held).
   */
  settleDeferred(waitMs = 0): number {
    const until = performance.now() + waitMs;
    const nap = new Int32Array(new SharedArrayBuffer(4));
    while (this.reap() > 0 && performance.now() < until) Atomics.wait(nap, 0, 0, 1);
    return this.deferred.length;
  }

  /**
   * Test seam (CTL.GATE): while on, the worker stops right after each claim it makes, before the stat, holding the
   * entry and its job as a descheduled thread would. Off lets it go on.
   */
  holdWorker(on: boolean): void {
    Atomics.store(this.ctl, CTL.GATE, on ? 1 : 0);
    if (!on) Atomics.notify(this.ctl, CTL.GATE);
  }

  private post(message: StatWorkerMessage): void {
    try {
      this.worker?.postMessage(message);
    } catch {
      this.fail('stat_worker_post');
    }
  }

  /** Marks a scan active and wakes the worker; false (single-threaded scan) unless the worker is ready. */
  beginScan(): boolean {
    if (this.scanning) return false;
    this.reap();
    if (!this.ready || this.options.paused) return false;
    if (this.skip > 0 && this.options.adaptive) {
      this.skip--;
      return false;
    }
    this.scanning = true;
    this.published = 0;
    this.statted = Atomics.load(this.ctl, CTL.STATTED);
    Atomics.store(this.ctl, CTL.ACTIVE, 1);
    Atomics.notify(this.ctl, CTL.ACTIVE);
    return true;
  }

  /**
   * Ends the scan `beginScan` started; every job must have been retired (the walk's finally blocks do that).
   *
   * Adaptive pause: when a scan published at least ADAPT_MIN_ENTRIES entries and the worker answered fewer than
   * one in ADAPT_SHARE of them, the worker was mostly not running (a busy machine); the next 1, 2, 4 … up to
   * ADAPT_MAX_SKIP scans then run single-threaded, without the protocol's small costs, and the scan after them
   * tries again. A scan where the worker took its part ends the pause.
   *
   * A descriptor still deferred here (the worker sits in the middle of a call) is closed by a timer or the next
   * scan (see the module comment); the scan does not wait for it.
   */
  endScan(): void {
    while (this.depth > 0) this.retire(this.depth - 1);
    Atomics.store(this.ctl, CTL.ACTIVE, 0);
    this.scanning = false;
    this.reap();
    this.scheduleReap();
    this.backoff = nextPause(this.published, Atomics.load(this.ctl, CTL.STATTED) - this.statted, this.backoff);
    if (this.published >= ADAPT_MIN_ENTRIES) this.skip = this.backoff;
    if (this.terminateAfterScan) {
      this.terminateAfterScan = false;
      this.terminate();
    }
  }

  private arenaOf<E extends NamedEntry>(listing: PoolListing<E>): NameArena {
    if (listing.arena !== null) return listing.arena;
    const entries = listing.entries;
    const offsets = new Int32Array(entries.length).fill(-1);
    let bytes = 0;
    for (const e of entries) if (e.note && e.cname.length > 1) bytes += e.cname.length;
    const buffer = new SharedArrayBuffer(Math.max(bytes, 1));
    const view = new Uint8Array(buffer);
    let at = 0;
    for (let i = 0; i < entries.length; i++) {
      const e = entries[i]!;
      if (!e.note || e.cname.length <= 1) continue;
      view.set(e.cname, at);
      offsets[i] = at;
      at += e.cname.length;
    }
    const arena: NameArena = { id: this.nextArena++, offsets };
    this.post({ arena: arena.id, buffer });
    this.dropped.register(arena, arena.id);
    listing.arena = arena;
    return arena;
  }

  /**
   * Publishes a job for the open directory `fd` (listed, judged): the entries of `listing` for which
   * `isCandidate(entry)` holds and which have a name in the arena, in listing order, as many as the free slots hold.
   * The job carries the pool's own duplicate of `fd`; the caller keeps `fd` and may close it whenever it would
   * without the pool.
   *
   * @returns a job handle for `take` and `retire`, or -1 when nothing was published (no candidates, job stack or
   *   slots full, no duplicate descriptor to be had, the deferred list full, or the worker too far behind to
   *   acknowledge a new tag); the scan then stats everything itself
   */
  publish<E extends NamedEntry>(fd: number, listing: PoolListing<E>, isCandidate: (e: E) => boolean): number {
    const j = this.depth;
    if (!this.scanning || j >= MAX_JOBS || this.state !== 'starting') return -1;
    if (this.deferred.length > 0 && this.reap() >= MAX_DEFERRED) return -1;
    const tag = (this.epoch + 1) & TAG_MASK;
    if (((tag - Atomics.load(this.ctl, CTL.ACK)) & TAG_MASK) >= TAG_WINDOW) return -1;
    const base = j === 0 ? 0 : this.jobBase[j - 1]! + this.jobCount[j - 1]!;
    const arena = this.arenaOf(listing);
    const entries = listing.entries;
    const ints = this.ints;
    const unclaimed = tag << 2;
    let count = 0;
    // Slots written here carry the new tag but belong to no job until its header is stored below: the worker only
    // claims inside a published header's range, so a job that is not published after all (no candidate, no
    // duplicate) leaves nothing it could claim, and the next job rewrites the slots with the same tag.
    for (let i = 0; i < entries.length && base + count < STAT_POOL_CAPACITY; i++) {
      const e = entries[i]!;
      const offset = arena.offsets[i]!;
      if (offset < 0 || e.cname.length - 1 > NAME_MAX || !isCandidate(e)) continue;
      const s = base + count++;
      ints[s * SLOT_WORDS + SLOT_AT.STATE] = unclaimed;
      ints[s * SLOT_WORDS + SLOT_AT.NAME] = offset;
      this.entryOf[s] = i;
    }
    if (count === 0) return -1;
    const copy = this.calls!.dup(fd);
    if (copy < 0) return -1;
    this.epoch = tag;
    this.jobTag[j] = tag;
    this.jobBase[j] = base;
    this.jobCount[j] = count;
    this.jobFront[j] = 0;
    this.jobArena[j] = arena;
    this.jobFd[j] = copy;
    const ctl = this.ctl;
    const h = CTL_WORDS + j * JOB_WORDS;
    Atomics.store(ctl, h + JOB.FD, copy);
    Atomics.store(ctl, h + JOB.BASE, base);
    Atomics.store(ctl, h + JOB.COUNT, count);
    Atomics.store(ctl, h + JOB.ARENA, arena.id);
    Atomics.store(ctl, h + JOB.TAG, tag);
    this.depth = j + 1;
    this.published += count;
    Atomics.store(ctl, CTL.JOBS, this.depth);
    // EPOCH last, then SLEEPING: the worker's sleep relies on this order (native/stat-worker.ts, `sleep`).
    Atomics.store(ctl, CTL.EPOCH, tag);
    if (Atomics.load(ctl, CTL.SLEEPING) !== 0) Atomics.notify(ctl, CTL.EPOCH);
    return j;
  }

  /**
   * The stat of listing entry `index` of job `job`, in `out` (RAW_STAT_WORDS words, layout RAW). Entries must be
   * asked for in listing order. Never waits: one compare-exchange on the entry's slot.
   *
   * @returns NOT_TAKEN when the main thread must stat the entry itself (it claimed it, the worker holds it without
   *   an answer yet, or the entry is not in the job); TAKEN when `out` holds the worker's answer
   * @throws NativeError when the worker's statx failed: the error the binding's own `statRawAt` would have thrown
   */
  take(job: number, index: number, out: Uint32Array): typeof TAKEN | typeof NOT_TAKEN {
    const front = this.jobFront[job]!;
    const s = this.jobBase[job]! + front;
    if (front >= this.jobCount[job]! || this.entryOf[s] !== index) return NOT_TAKEN;
    this.jobFront[job] = front + 1;
    const unclaimed = this.jobTag[job]! << 2;
    const r = s * SLOT_WORDS;
    const was = Atomics.compareExchange(this.ints, r, unclaimed, unclaimed | SLOT.MAIN);
    if (was !== (unclaimed | SLOT.DONE)) {
      // Claimed here (UNCLAIMED), or held by the worker (WORKER): the caller makes the call; a late answer of the
      // worker stays in the slot unread.
      if (was !== unclaimed) this.counts.ownStats++;
      return NOT_TAKEN;
    }
    this.counts.taken++;
    const failure = slotFailure(this.ints, r);
    if (failure !== null) throw failure;
    const words = this.words;
    const at = r + SLOT_AT.RAW;
    for (let i = 0; i < RAW_STAT_WORDS; i++) out[i] = words[at + i]!;
    return TAKEN;
  }

  /**
   * Pops job `job` (the newest) without waiting for the worker: claims every entry still unclaimed, clears the
   * header, then closes the job's duplicate descriptor unless CTL.HELD names the job, in which case the duplicate
   * is deferred (see the module comment for why the worker never uses it after it is closed). The caller's own
   * descriptor is not touched. Idempotent for -1.
   */
  retire(job: number): void {
    if (job < 0) return;
    if (job !== this.depth - 1) throw new Error('stat pool: jobs retired out of order');
    const tag = this.jobTag[job]!;
    const unclaimed = tag << 2;
    const base = this.jobBase[job]!;
    const ints = this.ints;
    for (let k = this.jobFront[job]!; k < this.jobCount[job]!; k++)
      Atomics.compareExchange(ints, (base + k) * SLOT_WORDS, unclaimed, unclaimed | SLOT.MAIN);
    this.jobFront[job] = this.jobCount[job]!;
    Atomics.store(this.ctl, CTL_WORDS + job * JOB_WORDS + JOB.TAG, -1);
    this.jobArena[job] = null;
    this.depth = job;
    Atomics.store(this.ctl, CTL.JOBS, job);
    // Every slot of the job is claimed now: HELD read from here on decides (module comment).
    const fd = this.jobFd[job]!;
    this.jobFd[job] = -1;
    if (Atomics.load(this.ctl, CTL.HELD) === tag) {
      this.deferred.push({ fd, tag });
      this.counts.deferredCloses++;
    } else {
      this.calls!.close(fd);
    }
    if (this.deferred.length > 0) this.reap();
  }

  /**
   * Resolves true once the worker is ready, false when the pool is off, failed or disabled (tests; polls every
   * few milliseconds, for at most `timeoutMs`).
   */
  async whenReady(timeoutMs = 10_000): Promise<boolean> {
    const until = Date.now() + timeoutMs;
    while ((this.state === 'scheduled' || this.state === 'starting') && !this.ready && Date.now() < until)
      await new Promise((r) => setTimeout(r, 5));
    return this.ready;
  }
}

/** The process's pool (created on first use; the worker starts only after a large enough scan). */
let pool: StatPool | undefined;
export function statPool(): StatPool {
  pool ??= new StatPool();
  return pool;
}
