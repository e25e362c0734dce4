/**
 * A verify thread (verify.ts): checks the audit files it is handed, one at a time, by descriptor (opened by the
 * main thread relative to the judged audit directory; descriptors belong to the process), and answers each with
 * its `FileChain` or the code of the read error.
 */
import { parentPort } from 'node:worker_threads';
import { CHUNK_BYTES } from './chunks.js';
import { checkFile } from './chain.js';

/** One file to check. */
export interface VerifyTask {
  index: number;
  fd: number;
}

const buf = Buffer.allocUnsafe(CHUNK_BYTES);
parentPort?.on('message', (task: VerifyTask) => {
  try {
    parentPort!.postMessage({ index: task.index, chain: checkFile(task.fd, buf) });
  } catch (err) {
    parentPort!.postMessage({ index: task.index, error: (err as { code?: string }).code ?? 'read_error' });
  }
});
