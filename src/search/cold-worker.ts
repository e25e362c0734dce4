/**
 * The cold thread's program (docs/DESIGN.md, "The first search of a view"): the index of a first call, built from
 * the notes of that call in a worker thread while the main thread's scan is still verifying and reading the rest.
 * The main thread (src/search/cold-thread.ts) starts one worker per large first call and ends it after the reply.
 *
 * What it sees: in scan order, each note the scan has already accepted and pushed to its result: the note's id and
 * where its verified bytes lie in the scan's shared text chunks (each chunk sent once, read here without a copy and
 * never written). It never opens, stats or judges anything: every trust check stays on the main thread.
 *
 * What it does: `IndexBuilder.add` per note as the batches arrive (the steps a fresh `NoteIndex.sync` takes for each
 * note, on the same text: the bytes decoded as `ReadNote.text` decodes them), then on `end` (the scan's note count)
 * checks the count and answers once on its reply port: `{ built }` (a `BuiltIndex`, its typed arrays moved, not
 * copied) or `{ error }` (a short reason code). In 'facts' mode (a first call that has a persisted index, whose
 * postings stand in for the build) it takes only the per-note steps the file cannot hold, `TextFactsBuilder.add`
 * (title, tags, body start), and answers `{ facts }`. After posting the answer it sets SIGNAL.DONE and notifies,
 * which is what the main thread waits on (`Atomics.wait`, since a search call is synchronous); SIGNAL.PROGRESS
 * counts the notes read so far, so the main thread can tell a slow worker from a stalled one.
 *
 * Bounds: the worker holds what a fresh index's sync holds (term table, postings and their staging, field lengths,
 * titles and tags), plus one offset triple per note; the note bytes are the scan's own memory, shared. It keeps no
 * note text: each note's text is decoded, indexed and dropped.
 *
 * This module is also imported by the main thread for the shapes and the signal layout; it runs the loop only when
 * started as a worker with `kind: 'memory-bridge-cold'`.
 */
import { isMainThread, type MessagePort, parentPort, workerData } from 'node:worker_threads';
import { decodeNoteBytes } from '../trust/note-text.js';
import { type BuiltIndex, builtBuffers, IndexBuilder, type TextFacts, TextFactsBuilder } from './index/built.js';

/** Words of the signal buffer (Int32Array): DONE is 1 once the answer is posted; PROGRESS counts notes read. */
export const SIGNAL = { DONE: 0, PROGRESS: 1 } as const;
export const SIGNAL_WORDS = 2;

/** What the main thread hands a cold worker at start. */
export interface ColdWorkerData {
  kind: 'memory-bridge-cold';
  /** 'build': the whole index (`IndexBuilder`); 'facts': each note's title, tags, body start (`TextFactsBuilder`). */
  mode: ColdMode;
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

/** What a worker makes: a first call's whole index, or (beside a persisted index) the facts of each note. */
export type ColdMode = 'build' | 'facts';

/** Worker → main, exactly once. */
export type ColdReply = { built: BuiltIndex } | { facts: TextFacts } | { error: string };

/** The worker loop (see the module comment). */
function runColdWorker(data: ColdWorkerData, port: MessagePort): void {
  const signal = new Int32Array(data.signal);
  const builder = data.mode === 'facts' ? new TextFactsBuilder() : new IndexBuilder();
  const chunks: Uint8Array[] = [];
  let answered = false;
  let stalled = false;

  const answer = (reply: ColdReply): void => {
    if (answered) return;
    answered = true;
    if ('built' in reply) data.reply.postMessage(reply, builtBuffers(reply.built));
    else if ('facts' in reply) data.reply.postMessage(reply, [reply.facts.bodyByte.buffer as ArrayBuffer]);
    else data.reply.postMessage(reply);
    Atomics.store(signal, SIGNAL.DONE, 1);
    Atomics.notify(signal, SIGNAL.DONE);
    port.close();
  };

  const read = (m: Extract<ColdMessage, { ids: string[] }>): void => {
    for (const [n, buffer] of m.chunks) chunks[n] = new Uint8Array(buffer);
    const { ids, where } = m;
    for (let i = 0; i < ids.length; i++) {
      const n = builder.count;
      if (n === data.stallAt) stalled = true;
      if (stalled) return;
      if (n === data.failAt) throw new Error('cold worker: test failure');
      const at = where[3 * i + 1]!;
      const bytes = chunks[where[3 * i]!]!.subarray(at, at + where[3 * i + 2]!);
      builder.add(ids[i]!, decodeNoteBytes(bytes));
      Atomics.store(signal, SIGNAL.PROGRESS, n + 1);
    }
  };

  port.on('message', (m: ColdMessage) => {
    if (answered || stalled) return;
    try {
      if ('end' in m) {
        if (m.end !== builder.count) {
          answer({ error: 'cold_count' });
          return;
        }
        answer(builder instanceof IndexBuilder ? { built: builder.finish() } : { facts: builder.finish() });
      } else read(m);
    } catch {
      answer({ error: 'cold_worker_error' });
    }
  });
}

const data = workerData as ColdWorkerData | undefined;
if (!isMainThread && parentPort !== null && data?.kind === 'memory-bridge-cold') runColdWorker(data, parentPort);
