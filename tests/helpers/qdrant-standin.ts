/**
 * A local stand-in for the subset of the Qdrant REST API that the fleet export uses, since no Qdrant server can be
 * installed on the project's machines (docs/EXPORT.md §Connection). It listens on 127.0.0.1 on a random
 * port and answers like Qdrant 1.13 does:
 *
 * - `POST /collections/{name}/points/scroll` with `{limit, offset, filter, with_payload, with_vector}`: points in
 *   id order (unsigned integers before UUIDs, as Qdrant orders them), `offset` inclusive, `next_page_offset` the
 *   id of the first point of the next page or null; filters with `must` / `should` / `must_not` (nested filters
 *   too), conditions `match {value | any | except}`, `range {gt, gte, lt, lte}` and `has_id`, on dotted keys,
 *   matching any element of an array value.
 * - `GET /collections/{name}`: `points_count` and the vector parameters. `GET /`: the version probe.
 * - `api-key` header auth: missing or wrong → 401 with a plain-text body. Unknown collection → 404 with
 *   `{"status": {"error": "Not found: Collection `x` doesn't exist!"}}`.
 * - Injected faults: a 500 on the Nth scroll request, a delay on the Nth scroll request (for timeouts and for
 *   killing a client mid-export), and a hook called as each scroll request arrives.
 *
 * It records every request (method, path, which key was sent, parsed body) so tests can assert what the client did.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type PointId = string | number;

export interface StandinPoint {
  id: PointId;
  payload: Record<string, unknown>;
}

export interface RecordedRequest {
  method: string;
  path: string;
  /** The `api-key` header as sent, or null. */
  apiKey: string | null;
  body: unknown;
  /** Index of this scroll request (1-based) for scroll calls, else 0. */
  scroll: number;
}

export interface StandinOptions {
  /** Collection name → points. */
  collections?: Record<string, StandinPoint[]>;
  /** Accepted keys; empty or absent = no auth. */
  apiKeys?: string[] | undefined;
}

export interface Faults {
  /** Answer the Nth scroll request (1-based, counted over the server's life) with this HTTP status. */
  failScroll?: { at: number; status: number };
  /** Delay the answer to scroll requests from the Nth on by `ms` (`only` = just that one). */
  slowScroll?: { at: number; ms: number; only?: boolean };
  /** Called as each scroll request arrives, with its 1-based index. */
  onScroll?: (n: number) => void;
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Qdrant's id order: numeric ids ascending, then UUIDs by their 128-bit value. */
export function compareIds(a: PointId, b: PointId): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'number') return -1;
  if (typeof b === 'number') return 1;
  const x = a.replace(/-/g, '');
  const y = b.replace(/-/g, '');
  return x < y ? -1 : x > y ? 1 : 0;
}

function normaliseId(id: unknown): PointId | null {
  if (typeof id === 'number' && Number.isSafeInteger(id) && id >= 0) return id;
  if (typeof id === 'string' && UUID_RE.test(id.toLowerCase())) return id.toLowerCase();
  return null;
}

function valuesAt(payload: Record<string, unknown>, key: string): unknown[] {
  let cur: unknown[] = [payload];
  for (const part of key.split('.')) {
    const next: unknown[] = [];
    for (const v of cur) {
      if (v !== null && typeof v === 'object' && !Array.isArray(v) && part in (v as object)) {
        const got = (v as Record<string, unknown>)[part];
        if (Array.isArray(got)) next.push(...got);
        else next.push(got);
      }
    }
    cur = next;
  }
  return cur;
}

type Filter = { must?: unknown; should?: unknown; must_not?: unknown; min_should?: unknown };

function asList(v: unknown): unknown[] {
  if (v === undefined || v === null) return [];
  return Array.isArray(v) ? v : [v];
}

class BadRequest extends Error {}

function conditionMatches(cond: unknown, p: StandinPoint): boolean {
  if (cond === null || typeof cond !== 'object') throw new BadRequest('condition must be an object');
  const c = cond as Record<string, unknown>;
  if ('must' in c || 'should' in c || 'must_not' in c) return filterMatches(c as Filter, p);
  if ('has_id' in c) {
    const ids = asList(c.has_id).map(normaliseId);
    return ids.some((id) => id !== null && compareIds(id, p.id) === 0);
  }
  if (typeof c.key !== 'string') throw new BadRequest('condition needs a key');
  const vals = valuesAt(p.payload, c.key);
  if (c.match !== undefined) {
    const m = c.match as Record<string, unknown>;
    if ('value' in m) return vals.some((v) => v === m.value);
    if ('any' in m) {
      const any = asList(m.any);
      return vals.some((v) => any.includes(v));
    }
    if ('except' in m) {
      const ex = asList(m.except);
      // Qdrant: true when the field holds some value outside the list (a missing field matches too).
      return vals.length === 0 || vals.some((v) => !ex.includes(v));
    }
    throw new BadRequest('unsupported match');
  }
  if (c.range !== undefined) {
    const r = c.range as Record<string, unknown>;
    return vals.some((v) => {
      if (typeof v !== 'number') return false;
      if (typeof r.gt === 'number' && !(v > r.gt)) return false;
      if (typeof r.gte === 'number' && !(v >= r.gte)) return false;
      if (typeof r.lt === 'number' && !(v < r.lt)) return false;
      if (typeof r.lte === 'number' && !(v <= r.lte)) return false;
      return true;
    });
  }
  throw new BadRequest('unsupported condition');
}

/** Qdrant filter semantics: every `must`, at least one `should` (when any), no `must_not`. */
export function filterMatches(f: Filter | null | undefined, p: StandinPoint): boolean {
  if (f === null || f === undefined) return true;
  if (!asList(f.must).every((c) => conditionMatches(c, p))) return false;
  const should = asList(f.should);
  if (should.length > 0 && !should.some((c) => conditionMatches(c, p))) return false;
  if (asList(f.must_not).some((c) => conditionMatches(c, p))) return false;
  return true;
}

/** A running stand-in. Mutate `collections` and `faults` between requests as a test needs. */
export class QdrantStandin {
  readonly requests: RecordedRequest[] = [];
  faults: Faults = {};
  collections: Map<string, StandinPoint[]>;
  private readonly apiKeys: string[];
  private scrolls = 0;
  private server: http.Server;
  private readonly sockets = new Set<import('node:net').Socket>();
  port = 0;

  private constructor(opts: StandinOptions) {
    this.collections = new Map(Object.entries(opts.collections ?? {}));
    this.apiKeys = opts.apiKeys ?? [];
    this.server = http.createServer((req, res) => void this.handle(req, res));
    // Longer than the client's own keep-alive (10 s), so an idle pooled connection is never closed under a reuse.
    this.server.keepAliveTimeout = 30_000;
    this.server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
  }

  /** Start on 127.0.0.1 with a random port. */
  static async start(opts: StandinOptions = {}): Promise<QdrantStandin> {
    const s = new QdrantStandin(opts);
    await new Promise<void>((resolve) => s.server.listen(0, '127.0.0.1', resolve));
    s.port = (s.server.address() as AddressInfo).port;
    return s;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Scroll requests received so far. */
  get scrollCount(): number {
    return this.scrolls;
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private send(res: http.ServerResponse, status: number, body: Json, started: number): void {
    if (res.destroyed || res.writableEnded) return;
    const obj = body as Record<string, Json>;
    obj.time = (Date.now() - started) / 1000;
    const text = JSON.stringify(obj);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const started = Date.now();
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    let body: unknown;
    const method = req.method ?? 'GET';
    const url = new URL(req.url ?? '/', 'http://x');
    const apiKeyHeader = req.headers['api-key'];
    const apiKey = typeof apiKeyHeader === 'string' ? apiKeyHeader : null;
    const scrollMatch = /^\/collections\/([^/]+)\/points\/scroll$/.exec(url.pathname);
    const scrollIndex = method === 'POST' && scrollMatch ? ++this.scrolls : 0;
    try {
      body = raw === '' ? undefined : JSON.parse(raw);
    } catch {
      this.requests.push({ method, path: url.pathname, apiKey, body: raw, scroll: scrollIndex });
      this.send(res, 400, { status: { error: 'Format error in JSON body' } }, started);
      return;
    }
    this.requests.push({ method, path: url.pathname, apiKey, body, scroll: scrollIndex });

    if (this.apiKeys.length > 0 && (apiKey === null || !this.apiKeys.includes(apiKey))) {
      res.writeHead(401, { 'content-type': 'text/plain' });
      res.end('Must provide an API key or an Authorization bearer token');
      return;
    }
    if (method === 'GET' && url.pathname === '/') {
      this.send(res, 200, { title: 'qdrant - vector search engine', version: '1.13.2' }, started);
      return;
    }
    const collMatch = /^\/collections\/([^/]+)$/.exec(url.pathname);
    const name = decodeURIComponent((scrollMatch ?? collMatch)?.[1] ?? '');
    if (scrollMatch || collMatch) {
      if (!this.collections.has(name)) {
        this.send(res, 404, { status: { error: `Not found: Collection \`${name}\` doesn't exist!` } }, started);
        return;
      }
    }
    const points = this.collections.get(name) ?? [];
    if (method === 'GET' && collMatch) {
      this.send(
        res,
        200,
        {
          result: {
            status: 'green',
            optimizer_status: 'ok',
            points_count: points.length,
            config: { params: { vectors: { size: 384, distance: 'Cosine' } } },
          },
          status: 'ok',
        },
        started,
      );
      return;
    }
    if (method === 'POST' && scrollMatch) {
      this.faults.onScroll?.(scrollIndex);
      const slow = this.faults.slowScroll;
      if (slow && (slow.only ? scrollIndex === slow.at : scrollIndex >= slow.at)) {
        await new Promise((r) => setTimeout(r, slow.ms));
      }
      const fail = this.faults.failScroll;
      if (fail && fail.at === scrollIndex) {
        this.send(res, fail.status, { status: { error: 'Service internal error: injected fault' } }, started);
        return;
      }
      try {
        this.send(res, 200, { result: this.scroll(points, body) as Json, status: 'ok' }, started);
      } catch (e) {
        if (!(e instanceof BadRequest)) throw e;
        this.send(res, 400, { status: { error: `Bad request: ${e.message}` } }, started);
      }
      return;
    }
    this.send(res, 404, { status: { error: 'Not found' } }, started);
  }

  private scroll(points: StandinPoint[], body: unknown): unknown {
    const b = (body ?? {}) as {
      limit?: unknown;
      offset?: unknown;
      filter?: Filter;
      with_payload?: unknown;
      with_vector?: unknown;
    };
    const limit = b.limit === undefined ? 10 : b.limit;
    if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1)
      throw new BadRequest('limit must be a positive integer');
    const sorted = points.filter((p) => filterMatches(b.filter, p)).sort((x, y) => compareIds(x.id, y.id));
    let start = 0;
    if (b.offset !== undefined && b.offset !== null) {
      const off = normaliseId(b.offset);
      if (off === null) throw new BadRequest('offset must be a point id');
      start = sorted.findIndex((p) => compareIds(p.id, off) >= 0);
      if (start < 0) start = sorted.length;
    }
    const page = sorted.slice(start, start + limit);
    const next = sorted[start + limit];
    return {
      points: page.map((p) => ({ id: p.id, payload: b.with_payload === false ? null : p.payload })),
      next_page_offset: next === undefined ? null : next.id,
    };
  }
}
