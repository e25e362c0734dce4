/**
 * The cold ranking thread's program (docs/DESIGN.md, "The first search of a view"): the pass of `searchCold` over
 * the notes of a first call, run in a worker thread while the main thread's scan is still verifying and reading the
 * rest. The main thread (src/search/cold-thread.ts) starts one worker per large first call and ends it after the
 * answer.
 *
 * What it sees: the query, the response limits, and, in scan order, each note the scan has already accepted and
 * pushed to its result: the note's id and where its verified bytes lie in the scan's shared text chunks (each chunk
 * sent once, read here without a copy and never written). It never opens, stats or judges anything: every trust
 * check stays on the main thread.
 *
 * What it does: `CorpusReader.add` per note as the batches arrive (the same code the in-thread pass runs, on the
 * same text: the bytes decoded as `ReadNote.text` decodes them), then on `end` (the scan's note count) checks the
 * count, ranks and bounds the response with `searchCorpus`, and answers once on its reply port: `{ hits, truncated }`,
 * `{ tooBroad: true }` (the query reached more than COLD_MAX_CANDIDATES terms; answered at once, the rest ignored)
 * or `{ error }` (a short reason code). After posting the answer it sets SIGNAL.DONE and notifies, which is what the
 * main thread waits on (`Atomics.wait`, since a search call is synchronous); SIGNAL.PROGRESS counts the notes read
 * so far, so the main thread can tell a slow worker from a stalled one.
 *
 * Bounds: the worker holds what the in-thread pass holds (the term table, field lengths, candidate postings, titles),
 * plus one offset triple per note; the note bytes are the scan's own memory, shared.
 *
 * This module is also imported by the main thread for the shapes and the signal layout; it runs the loop only when
 * started as a worker with `kind: 'memory-bridge-cold'`.
 */
import { isMainThread, type MessagePort, parentPort, workerData } from 'node:worker_threads';
import { decodeNoteBytes } from '../trust/note-text.js';
import { CorpusReader, queryTerms, searchCorpus, TooBroad } from './cold.js';
import type { ResponseLimits, SearchHit } from './types.js';

/** Words of the signal buffer (Int32Array): DONE is 1 once the answer is posted; PROGRESS counts notes read. */
export const SIGNAL = { DONE: 0, PROGRESS: 1 } as const;
export const SIGNAL_WORDS = 2;

/** What the main thread hands a cold worker at start. */
export interface ColdWorkerData {
  kind: 'memory-bridge-cold';
  query: string;
  limit: number;
  limits: ResponseLimits;
  /** SIGNAL_WORDS Int32 words (see SIGNAL). */
  signal: SharedArrayBuffer;
  /** Where the one answer goes (the main thread reads it with `receiveMessageOnPort`). */
  reply: MessagePort;
  /** Test seam: throw while reading note number `failAt` (-1: never). */
  failAt: number;
  /** Test seam: stop reading, and never answer, at note number `stallAt` (-1: never). */
  stallAt: number;
}

/**
 * Main → worker. A batch: `chunks` newly referenced (number → shared buffer), then the next notes in scan order:
 * `ids[i]` with its bytes at `where[3i]` (chunk number), `where[3i+1]` (byte offset), `where[3i+2]` (byte length).
 * `end`: the scan is over and returned `end` notes.
 */
export type ColdMessage = { chunks: [number, SharedArrayBuffer][]; ids: string[]; where: Int32Array } | { end: number };

/** Worker → main, exactly once. */
export type ColdReply = { hits: SearchHit[]; truncated: boolean } | { tooBroad: true } | { error: string };

/** The worker loop (see the module comment). */
function runColdWorker(data: ColdWorkerData, port: MessagePort): void {
  const signal = new Int32Array(data.signal);
  const reader = new CorpusReader(queryTerms(data.query));
  const chunks: Uint8Array[] = [];
  let where = new Int32Array(3 * 1024);
  let answered = false;
  let stalled = false;

  const answer = (reply: ColdReply): void => {
    if (answered) return;
    answered = true;
    data.reply.postMessage(reply);
    Atomics.store(signal, SIGNAL.DONE, 1);
    Atomics.notify(signal, SIGNAL.DONE);
    port.close();
  };

  const bytesOf = (n: number): Uint8Array => {
    const at = where[3 * n + 1]!;
    return chunks[where[3 * n]!]!.subarray(at, at + where[3 * n + 2]!);
  };

  const read = (m: Extract<ColdMessage, { ids: string[] }>): void => {
    for (const [n, buffer] of m.chunks) chunks[n] = new Uint8Array(buffer);
    const { ids } = m;
    for (let i = 0; i < ids.length; i++) {
      const n = reader.count;
      if (n === data.stallAt) stalled = true;
      if (stalled) return;
      if (n === data.failAt) throw new Error('cold worker: test failure');
      if (3 * (n + 1) > where.length) {
        const grown = new Int32Array(where.length * 2);
        grown.set(where);
        where = grown;
      }
      where.set(m.where.subarray(3 * i, 3 * i + 3), 3 * n);
      reader.add(ids[i]!, decodeNoteBytes(bytesOf(n)));
      Atomics.store(signal, SIGNAL.PROGRESS, n + 1);
    }
  };

  port.on('message', (m: ColdMessage) => {
    if (answered || stalled) return;
    try {
      if ('end' in m) {
        if (m.end !== reader.count) {
          answer({ error: 'cold_count' });
          return;
        }
        const terms = queryTerms(data.query);
        answer(searchCorpus(reader.finish(), terms, data.limit, data.limits, (doc) => decodeNoteBytes(bytesOf(doc))));
      } else read(m);
    } catch (err) {
      answer(err instanceof TooBroad ? { tooBroad: true } : { error: 'cold_worker_error' });
    }
  });
}

const data = workerData as ColdWorkerData | undefined;
if (!isMainThread && parentPort !== null && data?.kind === 'memory-bridge-cold') runColdWorker(data, parentPort);
