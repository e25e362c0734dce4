/**
 * The stat pool: a second thread (native/stat-worker.ts) that performs part of a warm scan's per-note `statx` calls
 * while the main thread walks, so the calls of one directory run on two cores. The scan's results stay exactly the
 * ones a single thread produces: the pool only changes which thread issues a candidate note's `statx`.
 *
 * Why an answer from the worker is as trustworthy as the main thread's own: the worker stats the same name bytes
 * relative to the same open descriptor (the main thread's, which it opened and judged in this call; descriptors are
 * per process), no-follow, after the call started; it never resolves a path. A descriptor is only ever used while
 * its job is published: before the main thread leaves a directory (and closes the descriptor), `retire` claims every
 * entry the worker has not claimed and waits until the worker's in-flight entries are done; the claim protocol
 * (see native/stat-worker.ts) makes a popped job unclaimable, so a reused descriptor number is never statted with
 * an old name.
 *
 * Protocol per directory: the scan lists the directory, then `publish` pushes a job with the candidate note entries
 * of the listing (the entries the walk will hand to its candidate step without a stat of its own). The scan then
 * processes entries in order exactly as before; for each candidate, `take` claims the entry from the front with a
 * compare-exchange; when the worker (claiming from the back) got there first, `take` waits for its answer (a stat
 * takes ~1.5 µs) and returns the raw words, or throws the NativeError the binding's own `statRawAt` would have thrown
 * for the worker's errno (the worker retries EINTR and reports EIO when the answer lacks a needed field, as
 * native/linux.ts does).
 *
 * Lifecycle: the pool starts lazily and asynchronously after a scan that statted at least `minCandidates`
 * (default STAT_POOL_MIN_CANDIDATES) candidate notes through the raw path; scans stay single-threaded until the
 * worker has bound statx and set its ready word, so no scan ever waits for the thread to start. The worker sleeps
 * in Atomics.wait between scans, is woken at scan start and spins while the scan runs (yielding after empty passes;
 * it runs at nice 19, so on a busy machine it only gets processor time nothing else wants). It is `unref`'d (it
 * never keeps a process alive), with small heap limits. If it fails or exits, the pool turns itself off for the life
 * of the process (scans are single-threaded again) and says so once on stderr with a reason code. No scan ever waits
 * for the worker except for an entry the worker already claimed; an entry claimed and not answered within STALL_MS
 * (a worker that stopped mid-call) is statted by the main thread and the pool turns off. After scans in which the
 * worker answered little (a busy machine), the pool pauses for a few scans (`nextPause`).
 *
 * Measured (2-core VM, 10,000 notes in 288 directories, warm scans interleaved in one process): 16-17 ms with the
 * pool against 25-28 ms without on an otherwise idle machine (the worker answers about 5,500 of the 10,000 stats);
 * about equal under a load of 3-5 other runnable processes. The thread adds about 3-6 MB of resident memory.
 *
 * Linux only. A scan uses the pool only when its caller passes it (`ScanOptions.statThread`, src/trust/scan.ts).
 * Environment: MEMORY_BRIDGE_STAT_THREADS=0 turns the pool off (read when the pool would start).
 */
import { Worker } from 'node:worker_threads';
import { RAW_STAT_WORDS, type Native } from '../../native/types.js';
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
  slotBufferBytes,
  slotFailure,
  type StatWorkerData,
  type StatWorkerMessage,
} from '../../native/stat-worker.js';

/** A scan that statted at least this many candidate notes through the raw path starts the pool. */
export const STAT_POOL_MIN_CANDIDATES = 1000;
/** Slots shared by the jobs of one scan's current directory path (entries beyond are statted by the main thread). */
export const STAT_POOL_CAPACITY = 32768;
/** How long the main thread waits for one entry the worker claimed before it stats it itself and turns the pool off. */
const STALL_MS = 5000;
/** Spins on a claimed entry before the main thread sleeps in Atomics.wait (a stat takes ~1.5 µs). */
const SPINS = 4096;
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

/** `take`: the entry is not the worker's; the caller stats it itself. */
export const NOT_TAKEN = -1;
/** `take`: the worker's answer is in `out`. */
export const TAKEN = 0;

/**
 * The NUL-terminated names of a listing's note entries in one shared buffer, handed to the worker once. Kept by
 * the listing (ScanMemo) and built on the listing's first job; `offsets[i]` is the byte offset of entry i's name,
 * -1 for entries without one.
 */
export interface NameArena {
  readonly id: number;
  readonly offsets: Int32Array;
}

/** What `publish` needs of a listing entry: its raw name and a NUL (empty when never statted by name). */
export interface NamedEntry {
  cname: Uint8Array;
  note: boolean;
}

/** What `publish` needs of a listing: its entries in scan order and the arena slot it keeps. */
export interface PoolListing<E extends NamedEntry> {
  entries: readonly E[];
  arena: NameArena | null;
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
 * What a scan asks of a second stat thread (`ScanOptions.statThread`), in this order: `beginScan` (false: this scan
 * runs single-threaded) → (`publish` → `take`… → `retire`)* nested like the directory walk → `endScan`; then
 * `noteScan` after every scan given the thread, whether it took part or not. `StatPool` is the implementation;
 * tests wrap it to see which names the worker statted.
 */
export interface StatThread {
  beginScan(): boolean;
  publish<E extends NamedEntry>(fd: number, listing: PoolListing<E>, isCandidate: (e: E) => boolean): number;
  take(job: number, index: number, out: Uint32Array): typeof TAKEN | typeof NOT_TAKEN;
  retire(job: number): void;
  endScan(): void;
  noteScan(candidates: number, native: Native): void;
}

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
  private depth = 0;
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
   * Times the main thread found an entry the worker claimed still unanswered after spinning (the worker was not
   * running), and the milliseconds it then slept waiting (diagnostics).
   */
  readonly waits = { count: 0, ms: 0 };

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
      worker = new Worker(new URL('../../native/stat-worker.js', import.meta.url), {
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
    worker.on('exit', () => this.fail('stat_worker_exit'));
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
      worker.on('exit', () => undefined);
      void worker.terminate().catch(() => undefined);
    }
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
    if (!this.ready || this.scanning || this.options.paused) return false;
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
   */
  endScan(): void {
    while (this.depth > 0) this.retire(this.depth - 1);
    Atomics.store(this.ctl, CTL.ACTIVE, 0);
    this.scanning = false;
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
   *
   * @returns a job handle for `take` and `retire`, or -1 when nothing was published (no candidates, job stack or
   *   slots full, or the worker is too far behind to acknowledge a new tag); the scan then stats everything itself
   */
  publish<E extends NamedEntry>(fd: number, listing: PoolListing<E>, isCandidate: (e: E) => boolean): number {
    const j = this.depth;
    if (!this.scanning || j >= MAX_JOBS || this.state !== 'starting') return -1;
    const tag = (this.epoch + 1) & TAG_MASK;
    if (((tag - Atomics.load(this.ctl, CTL.ACK)) & TAG_MASK) >= TAG_WINDOW) return -1;
    const base = j === 0 ? 0 : this.jobBase[j - 1]! + this.jobCount[j - 1]!;
    const arena = this.arenaOf(listing);
    const entries = listing.entries;
    const ints = this.ints;
    const unclaimed = tag << 2;
    let count = 0;
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
    this.epoch = tag;
    this.jobTag[j] = tag;
    this.jobBase[j] = base;
    this.jobCount[j] = count;
    this.jobFront[j] = 0;
    this.jobArena[j] = arena;
    const h = CTL_WORDS + j * JOB_WORDS;
    Atomics.store(this.ctl, h + JOB.FD, fd);
    Atomics.store(this.ctl, h + JOB.BASE, base);
    Atomics.store(this.ctl, h + JOB.COUNT, count);
    Atomics.store(this.ctl, h + JOB.ARENA, arena.id);
    Atomics.store(this.ctl, h + JOB.TAG, tag);
    Atomics.store(this.ctl, CTL.EPOCH, tag);
    this.depth = j + 1;
    this.published += count;
    Atomics.store(this.ctl, CTL.JOBS, this.depth);
    return j;
  }

  /**
   * The stat of listing entry `index` of job `job`, in `out` (RAW_STAT_WORDS words, layout RAW). Entries must be
   * asked for in listing order.
   *
   * @returns NOT_TAKEN when the main thread must stat the entry itself (it claimed it, or the entry is not in the
   *   job); TAKEN when `out` holds the worker's answer
   * @throws NativeError when the worker's statx failed: the error the binding's own `statRawAt` would have thrown
   */
  take(job: number, index: number, out: Uint32Array): typeof TAKEN | typeof NOT_TAKEN {
    const front = this.jobFront[job]!;
    const s = this.jobBase[job]! + front;
    if (front >= this.jobCount[job]! || this.entryOf[s] !== index) return NOT_TAKEN;
    this.jobFront[job] = front + 1;
    const unclaimed = this.jobTag[job]! << 2;
    const r = s * SLOT_WORDS;
    if (Atomics.compareExchange(this.ints, r, unclaimed, unclaimed | SLOT.MAIN) === unclaimed) return NOT_TAKEN;
    if (!this.awaitDone(r, unclaimed)) return NOT_TAKEN;
    const failure = slotFailure(this.ints, r);
    if (failure !== null) throw failure;
    const words = this.words;
    const at = r + SLOT_AT.RAW;
    for (let i = 0; i < RAW_STAT_WORDS; i++) out[i] = words[at + i]!;
    return TAKEN;
  }

  /**
   * Waits until the worker's claim on the slot record at word `s` is done: spins, then sleeps in Atomics.wait (the
   * worker notifies while CTL.WAITING is set; 1 ms timeouts regardless). False when the main thread got the slot
   * after all (the worker handed it back, or stalled past STALL_MS and the pool turned off): the caller stats it
   * itself. In that last case a worker that later resumes may still finish a statx on the job's descriptor number
   * after the scan closed it; its answer is never used (its compare-exchange to DONE fails).
   */
  private awaitDone(s: number, unclaimed: number): boolean {
    const states = this.ints;
    const done = unclaimed | SLOT.DONE;
    const claimed = unclaimed | SLOT.WORKER;
    let spins = 0;
    let since = 0;
    try {
      for (;;) {
        const v = Atomics.load(states, s);
        if (v === done) return true;
        if (v !== claimed) {
          // Handed back (UNCLAIMED) by a worker that failed mid-call: claim it here. Nothing else can be in the
          // slot of a live job; should it be, the caller stats the entry itself.
          if (v !== unclaimed) return false;
          if (Atomics.compareExchange(states, s, unclaimed, unclaimed | SLOT.MAIN) === unclaimed) return false;
          continue;
        }
        if (++spins < SPINS) continue;
        const now = performance.now();
        if (since === 0) {
          since = now;
          this.waits.count++;
        } else if (now - since > STALL_MS) {
          // The worker's late answer is then dropped by its own compare-exchange (the slot is no longer its).
          if (Atomics.compareExchange(states, s, claimed, unclaimed | SLOT.MAIN) === claimed) {
            this.fail('stat_worker_stalled');
            return false;
          }
          continue;
        }
        Atomics.store(this.ctl, CTL.WAITING, 1);
        Atomics.wait(states, s, claimed, 1);
        Atomics.store(this.ctl, CTL.WAITING, 0);
      }
    } finally {
      if (since !== 0) this.waits.ms += performance.now() - since;
    }
  }

  /**
   * Pops job `job` (the newest): claims every entry the worker has not claimed and waits until the worker's claimed
   * ones are done. After it returns the worker never touches the job's descriptor or names again, so the caller may
   * close the descriptor. Idempotent for -1.
   */
  retire(job: number): void {
    if (job < 0) return;
    if (job !== this.depth - 1) throw new Error('stat pool: jobs retired out of order');
    const unclaimed = this.jobTag[job]! << 2;
    const base = this.jobBase[job]!;
    const ints = this.ints;
    for (let k = this.jobFront[job]!; k < this.jobCount[job]!; k++) {
      const r = (base + k) * SLOT_WORDS;
      const was = Atomics.compareExchange(ints, r, unclaimed, unclaimed | SLOT.MAIN);
      if (was !== unclaimed) this.awaitDone(r, unclaimed);
    }
    this.jobFront[job] = this.jobCount[job]!;
    Atomics.store(this.ctl, CTL_WORDS + job * JOB_WORDS + JOB.TAG, -1);
    this.jobArena[job] = null;
    this.depth = job;
    Atomics.store(this.ctl, CTL.JOBS, job);
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
