/**
 * The body gate of `memory-bridge serve` (docs/HTTP.md, "What a request must pass"): a request's body is read to
 * its end, bounded in size and in time, before the request may take a concurrency slot, and one client reads at
 * most `perClient` bodies at once. A client whose bodies never arrive (or drip in a byte at a time) therefore holds
 * its own connections until the body deadline and nothing else: no slot another client needs, and no more of the
 * server's memory than `perClient × maxBytes`.
 */
import type http from 'node:http';

/** What reading one body gave: its bytes, or why there are none. */
export type BodyOutcome = Buffer | 'too_large' | 'aborted' | 'timeout';

/** Counts the bodies being read per client and reads each one under the size and time bounds. */
export class BodyGate {
  private readonly perName = new Map<string, number>();
  private total = 0;

  /**
   * @param perClient most bodies one client (clients-file entry name) may have being read at once (≥ 1)
   * @param maxBytes largest body accepted, in bytes; a larger one reads as `'too_large'`
   * @param timeoutMs the whole body must arrive within this many ms of `read` being called, however steadily its
   *   bytes drip in; else `'timeout'`
   */
  constructor(
    private readonly perClient: number,
    private readonly maxBytes: number,
    private readonly timeoutMs: number,
  ) {
    if (!Number.isInteger(perClient) || perClient < 1) throw new RangeError('perClient: an integer ≥ 1');
    if (!(timeoutMs > 0)) throw new RangeError('timeoutMs: > 0');
  }

  /** Bodies being read now, over all clients. */
  get reading(): number {
    return this.total;
  }

  /**
   * Read `req`'s body for client `name`. A declared `Content-Length` over the limit is refused before anything is
   * read.
   *
   * @returns null (nothing read, nothing counted) when `name` already has `perClient` bodies being read; else the
   *   outcome, once the body ended, went over the limit, the client went away (`'aborted'`) or the deadline passed
   */
  read(name: string, req: http.IncomingMessage): Promise<BodyOutcome> | null {
    const declared = req.headers['content-length'];
    if (declared !== undefined && Number(declared) > this.maxBytes) return Promise.resolve('too_large');
    const held = this.perName.get(name) ?? 0;
    if (held >= this.perClient) return null;
    this.perName.set(name, held + 1);
    this.total++;
    return readBounded(req, this.maxBytes, this.timeoutMs).finally(() => this.release(name));
  }

  private release(name: string): void {
    this.total--;
    const n = (this.perName.get(name) ?? 1) - 1;
    if (n <= 0) this.perName.delete(name);
    else this.perName.set(name, n);
  }
}

/** Collect `req`'s body: at most `maxBytes`, within `timeoutMs`; every listener and the timer go when it settles. */
function readBounded(req: http.IncomingMessage, maxBytes: number, timeoutMs: number): Promise<BodyOutcome> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (value: BodyOutcome): void => {
      clearTimeout(timer);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onAbort);
      req.off('close', onClose);
      resolve(value);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > maxBytes) done('too_large');
      else chunks.push(chunk);
    };
    const onEnd = (): void => done(Buffer.concat(chunks, size));
    const onAbort = (): void => done('aborted');
    const onClose = (): void => {
      if (!req.complete) done('aborted');
    };
    const timer = setTimeout(() => done('timeout'), timeoutMs);
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onAbort);
    req.on('close', onClose);
  });
}
