/**
 * The audit record's line format (docs/AUDIT.md §Records): what a transport tells about a call, the trace id and
 * run kind as recorded, the line with its chain hash, and the query's HMAC. The record's fields are built from a
 * tool result in src/tools/audit-record.ts.
 */
import crypto, { createHash, createHmac } from 'node:crypto';

/** The run kind a record names (docs/POLICY.md §Run kind). */
export type RunKind = 'interactive' | 'cron' | 'subagent' | 'unknown';

/** How the call reached the bridge. */
export type Transport = 'stdio' | 'http' | 'worker' | 'cli' | 'library';

/** What the transport knows about one call beyond the caller record (all optional; none decides anything). */
export interface CallContext {
  /** The HTTP client's configured name (`serve`), never its token. */
  client?: string;
  /** The MCP protocol revision of the session, when the transport knows it. */
  protocolVersion?: string;
  /** `params._meta.traceparent` of the request, as sent (only its trace id is kept, and only when well formed). */
  traceparent?: unknown;
}

const TRACEPARENT = /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/;

/** The trace id of a W3C traceparent (`00-<32 hex>-<16 hex>-<2 hex>`), or undefined; an all-zero id is invalid. */
export function traceIdOf(traceparent: unknown): string | undefined {
  if (typeof traceparent !== 'string' || traceparent.length !== 55) return undefined;
  const m = TRACEPARENT.exec(traceparent);
  if (m === null || /^0+$/.test(m[1]!)) return undefined;
  return m[1];
}

/** The run kind a caller's two flags stand for (docs/POLICY.md §Run kind). */
export function runKindOf(cron: boolean, subagent: boolean): RunKind {
  if (cron && subagent) return 'unknown';
  if (cron) return 'cron';
  if (subagent) return 'subagent';
  return 'interactive';
}

/** `crypto.hash` (one-shot, Node 20.12 and later: about twice as fast per short line), when this Node has it. */
const oneShot = (crypto as { hash?: (algorithm: string, data: Uint8Array, encoding: 'hex') => string }).hash;

/** SHA-256 (hex) of one record line's bytes, without its newline: the next record's `prev`. */
export function lineHash(line: Uint8Array): string {
  if (oneShot !== undefined) return oneShot('sha256', line, 'hex');
  return createHash('sha256').update(line).digest('hex');
}

/** The record line (JSON, one `\n` at the end) with `prev` set. */
export function recordLine(record: Record<string, unknown>, prev: string): Buffer {
  return Buffer.from(`${JSON.stringify({ ...record, prev })}\n`, 'utf8');
}

/** HMAC-SHA256 (hex) of a query under a home's key. */
export function queryHmac(key: Uint8Array, query: string): string {
  return createHmac('sha256', key).update(query, 'utf8').digest('hex');
}
