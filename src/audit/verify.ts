/**
 * `memory-bridge audit verify` (docs/AUDIT.md §Tamper evidence): every chain link of a home's trail, each record's
 * `prev` against the SHA-256 of the line before it, across file boundaries. Each file is checked in one linear pass
 * (chain.ts: per record a tail check, a 64-byte compare and one SHA-256; memory one 4 MiB chunk per thread), and
 * the files' results are linked in record order (`joinChains`). A trail of PARALLEL_FILES files or more is checked
 * by up to MAX_THREADS threads taking files one at a time (hashing is nearly all the work, and records of different
 * files are independent); a smaller one on the calling thread. Either way the answer is the same. Each file is
 * opened (relative to the judged directory, no link followed) only when its turn comes and closed when it is done,
 * so at most one descriptor per thread is open.
 */
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { getNative } from '../../native/index.js';
import type { Native } from '../../native/types.js';
import { openTrustedDir } from '../trust/path.js';
import { closeQuietly } from '../trust/walk.js';
import { type Break, checkFile, type FileChain, joinChains } from './chain.js';
import { auditDirOf, GENESIS } from './files.js';
import type { LinePlace } from './read.js';
import type { VerifyTask } from './verify-worker.js';
import { listAuditFiles } from './writer.js';

/** What `verifyTrail` found. */
export interface VerifyReport {
  dir: string;
  files: number;
  records: number;
  /** The `prev` of the first record read: GENESIS, or the hash of a record in a file retention has removed. */
  start: string | null;
  /** The first record whose `prev` is not the SHA-256 of the record before it (or is not a record at all). */
  broken?: LinePlace & { why: Break };
}

/** Trails of this many files or more are checked on several threads (4 files of the default 16 MiB: 64 MiB). */
export const PARALLEL_FILES = 4;
/** Most verify threads. */
export const MAX_THREADS = 4;

/** The verify options (tests force either path). */
export interface VerifyOptions {
  /** Threads to use: 0 checks on the calling thread; default: by the trail's size and the machine's cores. */
  threads?: number;
}

function requireNative(): Native {
  const native = getNative();
  if (native === null) throw new Error('memory-bridge audit needs the native bindings of Linux or macOS');
  return native;
}

/** Opens the audit file `name` of the judged directory `dirFd` when its turn comes. */
type Opener = (name: string) => number;

/** Each file checked on this thread, in order. */
function checkHere(names: readonly string[], open: Opener, native: Native): FileChain[] {
  return names.map((name) => {
    const fd = open(name);
    try {
      return checkFile(fd);
    } finally {
      closeQuietly(native, fd);
    }
  });
}

/** Each file checked by `threads` worker threads, each taking the next file as it finishes one. */
function checkOnThreads(names: readonly string[], open: Opener, native: Native, threads: number): Promise<FileChain[]> {
  const results = new Array<FileChain>(names.length);
  const fds = new Map<number, number>();
  let next = 0;
  let done = 0;
  let settled = false;
  return new Promise((resolve, reject) => {
    const workers: Worker[] = [];
    const stop = (err?: Error): void => {
      if (settled) return;
      settled = true;
      // Descriptors are closed only once every thread has ended, so no thread can read a number reused meanwhile.
      void Promise.allSettled(workers.map((w) => w.terminate())).then(() => {
        for (const fd of fds.values()) closeQuietly(native, fd);
        if (err === undefined) resolve(results);
        else reject(err);
      });
    };
    const give = (w: Worker): void => {
      if (next >= names.length) return;
      const index = next++;
      let fd: number;
      try {
        fd = open(names[index]!);
      } catch (err) {
        stop(err as Error);
        return;
      }
      fds.set(index, fd);
      const task: VerifyTask = { index, fd };
      w.postMessage(task);
    };
    for (let i = 0; i < threads; i++) {
      let w: Worker;
      try {
        w = new Worker(new URL('./verify-worker.js', import.meta.url), { stdout: true, stderr: true });
      } catch (err) {
        stop(err as Error);
        return;
      }
      workers.push(w);
      w.on('message', (m: { index: number; chain?: FileChain; error?: string }) => {
        const fd = fds.get(m.index);
        fds.delete(m.index);
        if (fd !== undefined) closeQuietly(native, fd);
        if (m.chain === undefined) return stop(new Error(`audit verify: reading a file failed (${m.error})`));
        results[m.index] = m.chain;
        if (++done === names.length) return stop();
        give(w);
      });
      w.on('error', (err) => stop(err));
      give(w);
    }
  });
}

/**
 * Check every chain link of `home`'s trail: each record's `prev` must be the SHA-256 of the line before it, across
 * file boundaries; the first record of the oldest file kept may chain to a removed file (its `prev` is reported as
 * `start`). Linear in the trail's bytes; memory is one read chunk per thread.
 *
 * @returns the report; `broken` names the first record (file, 1-based line) that is not a record or not chained
 * @throws BridgeError (the trust walk's reasons) when the directory is missing or untrusted; an Error when a read
 *   fails
 */
export async function verifyTrail(home: string, options: VerifyOptions = {}): Promise<VerifyReport> {
  const native = requireNative();
  const dir = auditDirOf(home);
  const dirFd = openTrustedDir(dir, 'policy_dir', native);
  try {
    const names = listAuditFiles(native, dirFd).map((f) => f.name);
    const open: Opener = (name) => native.openFileAt(dirFd, name);
    const threads =
      options.threads ??
      (names.length >= PARALLEL_FILES ? Math.min(MAX_THREADS, os.availableParallelism(), names.length) : 0);
    let chains: FileChain[] | undefined;
    if (threads > 0 && names.length > 0) {
      try {
        chains = await checkOnThreads(names, open, native, threads);
      } catch {
        // No thread could start, or one failed: the same check on this thread (a read error shows again there).
        chains = undefined;
      }
    }
    chains ??= checkHere(names, open, native);
    const joined = joinChains(chains);
    const report: VerifyReport = { dir, files: names.length, records: joined.records, start: joined.start };
    if (joined.broken !== undefined)
      report.broken = { file: names[joined.broken.file]!, line: joined.broken.line, why: joined.broken.why };
    return report;
  } finally {
    closeQuietly(native, dirFd);
  }
}

export { GENESIS };
