/**
 * The cold thread (docs/DESIGN.md, "The first search of a view"): a large first call of a view builds the view's
 * index on a second thread while its scan (stat, open, check, read every note) is still running on the main thread,
 * so the call costs about the longer of the two instead of their sum, and no build is left for after the answer
 * (the next call of the view finds its index ready). The index is exactly the one a fresh `sync` of the scan's notes
 * gives: the worker runs the same per-note steps (`IndexBuilder`) on the same bytes in the same order, and the main
 * thread adopts the result (`NoteIndex.adoptBuilt`) with its own scan's keys, stats and bytes; on any doubt the call
 * builds in its own thread.
 *
 * Per call: the search makes a `ColdFeed` before its scan (`coldThread().feed()`; null when the thread is off) and
 * hands it to the scan (`ScanOptions.noteSink`): the scan then keeps the texts it reads in shared chunks and calls
 * `accept` with each note as it joins the result (a note once pushed stays in it, also when a budget stops the scan
 * later). After COLD_THREAD_START accepted notes the feed starts a worker (src/search/cold-worker.ts) so the thread's
 * start overlaps the scan; from COLD_THREAD_ENGAGE notes on it sends the notes so far and then batches of COLD_BATCH
 * as they come: ids and byte ranges in the scan's shared chunks, never a copy of a text and never a note the scan
 * has not accepted. After the scan, `built(count)` sends the end and waits (Atomics.wait on the worker's signal word;
 * the call is synchronous) for the reply. A smaller scan never engages the worker (it is ended unused), so small
 * first calls pay nothing.
 *
 * Fallbacks (the caller then answers in its own thread, the same answer): the feed saw a note without shared bytes,
 * the count differs, or the worker failed, could not start, or made no progress for `stallMs`. A failure turns the
 * thread off for the life of the process (one operator line on stderr with a reason code).
 *
 * The worker is `unref`'d (it never keeps the process alive) and ended after each reply, which frees its heap and
 * its references to the shared chunks at once (an idle worker would not collect them); a first call of a view is
 * rare, and starting a thread costs a few tens of ms, overlapped with the scan.
 *
 * Environment: MEMORY_BRIDGE_COLD_THREAD=0 turns the thread off (read at each first call).
 */
import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from 'node:worker_threads';
import { ReadNote } from '../trust/note-text.js';
import type { ScannedNote } from '../trust/types.js';
import {
  type ColdMessage,
  type ColdMode,
  type ColdReply,
  type ColdWorkerData,
  SIGNAL,
  SIGNAL_WORDS,
} from './cold-worker.js';
import type { BuiltIndex, TextFacts } from './index/built.js';

/** Notes a first call's scan has accepted when the worker is started. */
export const COLD_THREAD_START = 2_500;
/** Notes a first call's scan has accepted when the worker is given them (smaller first calls rank in-thread). */
export const COLD_THREAD_ENGAGE = 5_000;
/** Notes per message once the worker is engaged. */
const COLD_BATCH = 512;
/** A worker whose progress count stands still this long (ms) is given up (the call answers in-thread). */
const COLD_STALL_MS = 10_000;
/** Slice of one Atomics.wait while the answer is awaited (ms). */
const WAIT_SLICE_MS = 50;

/** Options of the process's cold thread (tests force it on for small trees and inject failures). */
export interface ColdThreadOptions {
  /** Accepted notes before the worker starts (default COLD_THREAD_START). */
  startAt?: number;
  /** Accepted notes before the worker is engaged (default COLD_THREAD_ENGAGE; at least `startAt`). */
  engageAt?: number;
  /** Honour MEMORY_BRIDGE_COLD_THREAD=0 (default true). */
  useEnvironment?: boolean;
  /** Give a worker up after this long without progress (ms; default COLD_STALL_MS). */
  stallMs?: number;
  /** Test seam: the worker throws at this note number (default -1, never). */
  failAt?: number;
  /** Test seam: the worker stops, never answering, at this note number (default -1, never). */
  stallAt?: number;
}

/** What a scan calls with each note as it joins its result (`ScanOptions.noteSink`). */
export interface NoteSink {
  accept(note: ScannedNote): void;
  /** True while a worker is building beside the scan (the call will wait for it at the end). */
  besideScan(): boolean;
}

/** How the last engaged first call was answered (tests and diagnostics). */
export type ColdOutcome = 'none' | 'worker' | 'failed' | 'not_engaged';

/** The process's cold thread: see the module comment. */
export class ColdThread {
  private state: 'on' | 'failed' = 'on';
  private options: Required<ColdThreadOptions> = {
    startAt: COLD_THREAD_START,
    engageAt: COLD_THREAD_ENGAGE,
    useEnvironment: true,
    stallMs: COLD_STALL_MS,
    failAt: -1,
    stallAt: -1,
  };
  /** How the last first call with a feed ended (tests and diagnostics). */
  lastOutcome: ColdOutcome = 'none';
  /** What the last worker that answered made (tests and diagnostics). */
  lastMode: ColdMode | 'none' = 'none';
  /** Workers started so far (tests and diagnostics). */
  started = 0;

  /** Replaces the options and, when `reset`, turns a failed thread on again (tests). */
  configure(options: ColdThreadOptions, reset = false): void {
    this.options = { ...this.options, ...options };
    if (reset) this.state = 'on';
  }

  /** 'on' or 'failed' (off for the life of the process). */
  get status(): 'on' | 'failed' {
    return this.state;
  }

  /**
   * A feed for one first call of a view, or null when the thread is off (failed, or MEMORY_BRIDGE_COLD_THREAD=0).
   * `mode` 'build': the worker builds the view's index (`built`); 'facts': a persisted index stands in for the build,
   * and the worker makes only each note's title, tags and body start (`facts`).
   */
  feed(mode: ColdMode = 'build'): ColdFeed | null {
    if (this.state !== 'on') return null;
    if (this.options.useEnvironment && process.env.MEMORY_BRIDGE_COLD_THREAD === '0') return null;
    return new ColdFeed(this, this.options, mode);
  }

  /** Turns the thread off for the life of the process; one short operator line, no paths. */
  fail(reason: string): void {
    if (this.state === 'failed') return;
    this.state = 'failed';
    process.stderr.write(`memory-bridge: cold thread off (${reason})\n`);
  }
}

/**
 * One first call's link to its worker (see the module comment): `accept` per note in scan order, then `built`
 * once, then `close` on every path (the caller's finally).
 */
export class ColdFeed implements NoteSink {
  private worker: Worker | null = null;
  private port: MessagePort | null = null;
  private readonly signal = new Int32Array(new SharedArrayBuffer(SIGNAL_WORDS * 4));
  /** Notes accepted, and those not sent yet (all of them until the worker is engaged). */
  private count = 0;
  private held: ReadNote[] = [];
  private engaged = false;
  /** True once this feed gave up: the call answers in-thread. */
  private off = false;
  private readonly chunkOf = new Map<ArrayBufferLike, number>();

  constructor(
    private readonly thread: ColdThread,
    private readonly options: Required<ColdThreadOptions>,
    readonly mode: ColdMode = 'build',
  ) {}

  /**
   * True while the worker builds for this feed (started, not given up): the scan's end will wait for it. Never in
   * 'facts' mode, whose worker has far less to do than the scan, so the scan spends nothing extra on its behalf.
   */
  besideScan(): boolean {
    return this.mode === 'build' && this.worker !== null && !this.off;
  }

  /** A note that has just joined the scan's result (scan order). Never throws. */
  accept(note: ScannedNote): void {
    if (this.off) return;
    this.count++;
    if (!(note instanceof ReadNote) || !(note.bytes.buffer instanceof SharedArrayBuffer)) {
      this.drop();
      return;
    }
    this.held.push(note);
    if (this.worker === null && this.count >= this.options.startAt) this.start();
    if (this.worker === null || this.count < this.options.engageAt) return;
    if (!this.engaged || this.held.length >= COLD_BATCH) {
      this.engaged = true;
      this.send();
    }
  }

  /**
   * The index of the scan's `count` notes, built on the worker (`NoteIndex.adoptBuilt` takes it); undefined when
   * the worker was not engaged or failed (the caller then builds in its own thread). Waits for the worker while it
   * makes progress. Ends the worker.
   */
  built(count: number): BuiltIndex | undefined {
    const reply = this.replyFor('build', count);
    return reply !== undefined && 'built' in reply ? reply.built : undefined;
  }

  /**
   * In 'facts' mode, each of the scan's `count` notes' title, tags and body start, made on the worker; undefined
   * as `built` (the caller then computes them in its own thread). Ends the worker.
   */
  facts(count: number): TextFacts | undefined {
    const reply = this.replyFor('facts', count);
    return reply !== undefined && 'facts' in reply ? reply.facts : undefined;
  }

  /** The worker's reply for the scan's `count` notes when this feed's mode is `mode` (else none); ends the worker. */
  private replyFor(mode: ColdMode, count: number): Exclude<ColdReply, { error: string }> | undefined {
    try {
      return this.mode === mode ? this.await(count) : undefined;
    } finally {
      this.close();
    }
  }

  private await(count: number): Exclude<ColdReply, { error: string }> | undefined {
    if (this.off || !this.engaged || this.worker === null) {
      this.thread.lastOutcome = 'not_engaged';
      return undefined;
    }
    if (count !== this.count) {
      this.thread.lastOutcome = 'not_engaged';
      return undefined;
    }
    this.send();
    if (!this.post({ end: count })) return this.failed('cold_thread_post');
    const signal = this.signal;
    let progress = -1;
    let since = performance.now();
    while (Atomics.load(signal, SIGNAL.DONE) === 0) {
      Atomics.wait(signal, SIGNAL.DONE, 0, WAIT_SLICE_MS);
      const now = performance.now();
      const p = Atomics.load(signal, SIGNAL.PROGRESS);
      if (p !== progress) {
        progress = p;
        since = now;
      } else if (now - since > this.options.stallMs) return this.failed('cold_thread_stall');
    }
    // The reply was posted before DONE was stored, so it is in the port's queue.
    const got = receiveMessageOnPort(this.port!);
    if (got === undefined) return this.failed('cold_thread_reply');
    const reply = got.message as ColdReply;
    if ('error' in reply) return this.failed(reply.error);
    this.thread.lastOutcome = 'worker';
    this.thread.lastMode = this.mode;
    return reply;
  }

  private failed(reason: string): undefined {
    this.thread.lastOutcome = 'failed';
    this.thread.fail(reason);
    return undefined;
  }

  /** Ends the worker (if any) and forgets the held notes; the feed accepts nothing more. */
  close(): void {
    this.off = true;
    this.held = [];
    const worker = this.worker;
    this.worker = null;
    if (worker !== null) void worker.terminate().catch(() => undefined);
    this.port?.close();
    this.port = null;
  }

  /** Gives up for this call (a note without shared bytes): the worker, if any, is ended. */
  private drop(): void {
    this.close();
  }

  private start(): void {
    const { port1, port2 } = new MessageChannel();
    const data: ColdWorkerData = {
      kind: 'memory-bridge-cold',
      mode: this.mode,
      signal: this.signal.buffer as SharedArrayBuffer,
      reply: port2,
      failAt: this.options.failAt,
      stallAt: this.options.stallAt,
    };
    let worker: Worker;
    try {
      worker = new Worker(new URL('./cold-worker.js', import.meta.url), {
        workerData: data,
        transferList: [port2],
        stdout: true,
        stderr: true,
      });
    } catch {
      port1.close();
      this.thread.fail('cold_thread_start');
      this.close();
      return;
    }
    this.thread.started++;
    worker.unref();
    // Outside the call (the call itself watches the signal word): a worker that dies turns the thread off.
    worker.on('error', () => this.thread.fail('cold_thread_error'));
    this.worker = worker;
    this.port = port1;
  }

  private post(message: ColdMessage): boolean {
    try {
      this.worker!.postMessage(message);
      return true;
    } catch {
      return false;
    }
  }

  /** Sends the held notes (ids and byte ranges; each shared chunk the first time it is referenced). */
  private send(): void {
    const held = this.held;
    if (held.length === 0) return;
    this.held = [];
    const chunks: [number, SharedArrayBuffer][] = [];
    const ids: string[] = new Array(held.length);
    const where = new Int32Array(3 * held.length);
    for (let i = 0; i < held.length; i++) {
      const note = held[i]!;
      const bytes = note.bytes;
      const buffer = bytes.buffer as SharedArrayBuffer;
      let c = this.chunkOf.get(buffer);
      if (c === undefined) {
        c = this.chunkOf.size;
        this.chunkOf.set(buffer, c);
        chunks.push([c, buffer]);
      }
      ids[i] = note.id;
      where[3 * i] = c;
      where[3 * i + 1] = bytes.byteOffset;
      where[3 * i + 2] = bytes.length;
    }
    if (!this.post({ chunks, ids, where })) {
      this.thread.fail('cold_thread_post');
      this.close();
    }
  }
}

let processThread: ColdThread | undefined;

/** The process's cold thread (made on first use; starts no worker by itself). */
export function coldThread(): ColdThread {
  processThread ??= new ColdThread();
  return processThread;
}
