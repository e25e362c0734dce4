/**
 * One request to `serve` through its gates (`RequestGates`' named steps, in order; docs/HTTP.md, "What a request must
 * pass"). Each gate either lets the request on or answers it with its refusal and ends it:
 *  1. `gateNames`: `Host` must name an allowed host and any `Origin` must be an allowed origin (DNS rebinding): 403.
 *     The SDK's own check is not used: it compares the whole `Host` value, port included, and lets every `Origin`
 *     through unless a list is configured, where we refuse any `Origin` not listed;
 *  2. `servePublic`: `GET /healthz` and the resource metadata need no token and are answered here; any path but
 *     `/mcp` is 404; a stopping server answers 503;
 *  3. `gateToken`: `Authorization: Bearer <token>` must match an entry of the clients file, read fresh for this
 *     request; every failure gets the same 401. The caller (home, run kind) comes only from the matched entry;
 *  4. `gateRate`: the client's token bucket (default 20 requests/s, burst 40): 429 with `Retry-After`; then only
 *     `POST` (405);
 *  5. `gateBody`: the body is read to its end before the request counts as in flight (`BodyGate`): at most 1 MiB
 *     (413), within the body deadline (default 10 s: 408), at most `maxConcurrency` bodies of one client at once
 *     (503). A client whose bodies never arrive holds only its own connections, never a slot another client needs;
 *  6. `gateConcurrency`: at most `maxConcurrency` requests in flight (default 16): 503 with `Retry-After`;
 *  7. `parseMessage`: strict JSON (400), one message (no batches: 400); then the server answers it.
 * Every request ends in exactly one operator line when its response closes (`logLine`): client name, tool (or
 * method), result code, HTTP status, duration. Never a token, a query, an id or a path.
 */
import type http from 'node:http';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { parseStrictJson, StrictJsonError } from '../policy/json.js';
import { TOOL_NAMES } from '../tools/types.js';
import type { BodyGate, BodyOutcome } from './http-body.js';
import { authenticate, bearerToken, ClientsFileError, type ClientEntry } from './clients.js';
import type { ConnectionTable } from './http-connections.js';
import { type AllowedHosts, hostAllowed, originAllowed, parseHostName } from './http-hosts.js';
import type { RateLimiter } from './http-rate.js';
import { HTTP_SETTING_TABLE } from './http-settings.js';
import { METRICS_PATH, type MetricsEndpoint } from './metrics.js';
import {
  bearerChallenge,
  publicOrigin,
  RESOURCE_METADATA_MCP_PATH,
  RESOURCE_METADATA_PATH,
  resourceMetadata,
} from './resource-metadata.js';

const MAX_BODY_BYTES = HTTP_SETTING_TABLE.maxBodyBytes.default;
/** Most body bytes discarded after a refusal before the connection is cut (so the client can read the answer). */
const MAX_DISCARD_BYTES = 4 * MAX_BODY_BYTES;

/** What one request's operator line says. */
export interface RequestRecord {
  client: string;
  tool: string;
  result: string;
  reason?: string;
}

/** The headers of every JSON answer of ours. */
export const JSON_HEADERS = { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' } as const;

/** A refusal as the SDK words its own: a JSON-RPC error object with id null. */
export function refusalBody(code: number, message: string): string {
  return JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null });
}

/** The one 401: same status, headers and body for a missing, malformed, unknown or revoked token. */
const UNAUTHORIZED_BODY = refusalBody(-32001, 'Unauthorized');

/** The server's side of the gates: its settings, its shared counters and the answer to a checked message. */
export interface GateServer {
  readonly clientsFile: string;
  /** Serving HTTPS, or behind a TLS-terminating proxy: the public origin is `https`. */
  readonly secure: boolean;
  readonly maxConcurrency: number;
  /** The accepted `Host` values (known once listening). */
  hosts(): AllowedHosts;
  readonly origins: ReadonlySet<string>;
  stopping(): boolean;
  readonly limiter: RateLimiter;
  readonly bodies: BodyGate;
  readonly connections: ConnectionTable;
  /** Requests in flight (gate 6 counts them up; a request's close counts it down). */
  inFlight: number;
  /** Responses whose connection Node is closing for a header or request timeout. */
  readonly timedOut: WeakSet<http.ServerResponse>;
  /** Connections already answered 408 at the body deadline: Node's own request timeout may still fire on them. */
  readonly answeredTimeout: WeakSet<Socket>;
  log(line: string): void;
  /** `GET /metrics` and the counters it shows (`serve --metrics`), or undefined: no such endpoint (404). */
  readonly metrics: MetricsEndpoint | undefined;
  /** Answer one checked message of `entry`'s client; `rec` gets the result. */
  answer: AnswerMessage;
}

/** How the server answers one checked message (`isToolCall`: a `tools/call`, whose result the bridge records). */
export type AnswerMessage = (
  req: http.IncomingMessage,
  res: http.ServerResponse,
  message: unknown,
  entry: ClientEntry,
  rec: RequestRecord,
  isToolCall: boolean,
) => Promise<void>;

/** The TCP socket under a request's socket (a TLS socket wraps the one the `connection` event saw). */
function tcpOf(socket: Socket): Socket {
  return (socket as Socket & { _parent?: Socket | null })._parent ?? socket;
}

/** The log label of a message: the tool of a `tools/call`, else an MCP-looking method name. */
function methodLabel(message: unknown): { tool: string; isToolCall: boolean } {
  if (typeof message !== 'object' || message === null) return { tool: 'invalid', isToolCall: false };
  const { method, params } = message as { method?: unknown; params?: unknown };
  if (typeof method !== 'string') return { tool: 'response', isToolCall: false };
  if (method === 'tools/call') {
    const name = typeof params === 'object' && params !== null ? (params as { name?: unknown }).name : undefined;
    const known = typeof name === 'string' && (TOOL_NAMES as readonly string[]).includes(name);
    return { tool: known ? name : 'unknown_tool', isToolCall: true };
  }
  // Method names go to the log only when they look like MCP's own (letters, '/', '_'), never arbitrary text.
  return { tool: /^[a-z][a-zA-Z/_]{0,63}$/.test(method) ? method : 'other', isToolCall: false };
}

/**
 * After a refusal, let the rest of the body arrive and throw it away (up to `MAX_DISCARD_BYTES`), so the client
 * reads our answer instead of a connection reset; past that the connection is cut.
 */
function discardBody(req: http.IncomingMessage): void {
  if (req.complete) return;
  let seen = 0;
  req.on('data', (chunk: Buffer) => {
    seen += chunk.length;
    if (seen > MAX_DISCARD_BYTES) req.socket.destroy();
  });
  req.on('error', () => undefined);
  req.resume();
}

/** The gates of one request (module comment); `run()` takes it through them. */
export class RequestGates {
  private readonly started = performance.now();
  private readonly rec: RequestRecord = { client: '-', tool: '-', result: 'disconnected' };
  private holdsSlot = false;
  /** The message reached the MCP layer (its duration is an `mcp.server.operation.duration`). */
  private answered = false;
  private readonly pathname: string | undefined;

  constructor(
    private readonly server: GateServer,
    private readonly req: http.IncomingMessage,
    private readonly res: http.ServerResponse,
  ) {
    const socket = tcpOf(req.socket);
    server.connections.busy(socket);
    res.once('close', () => this.logLine(socket));
    this.pathname = (req.url ?? '').split('?', 1)[0];
  }

  /** Every gate in order; a gate that refuses ends the request. A fault of ours throws (the server answers 500). */
  run(): void {
    if (!this.gateNames() || this.servePublic()) return;
    const entry = this.gateToken();
    if (entry === null || !this.gateRate(entry)) return;
    const reading = this.gateBody(entry);
    if (reading === null) return;
    void reading
      .then(async (body) => {
        if (!this.admitBody(body) || !this.gateConcurrency()) return;
        const message = this.parseMessage(body);
        if (message === undefined) return;
        const label = methodLabel(message);
        this.rec.tool = label.tool;
        this.answered = true;
        await this.server.answer(this.req, this.res, message, entry, this.rec, label.isToolCall);
      })
      .catch(() => {
        this.rec.result = 'internal';
        if (!this.res.headersSent) this.refuse(500, 'internal', -32603, 'Internal error');
        else this.res.destroy();
      });
  }

  /** The request's one operator line, when its response closes; frees its slot and maybe its connection. */
  private logLine(socket: Socket): void {
    const { res, rec, server } = this;
    if (this.holdsSlot) server.inFlight--;
    // A connection that is closing after this response is not idle: it may not be picked to make room (its
    // answer could still be on its way out).
    const closing =
      !(res as http.ServerResponse & { shouldKeepAlive?: boolean }).shouldKeepAlive ||
      String(res.getHeader('connection') ?? '').toLowerCase() === 'close';
    if (!closing) server.connections.idleAgain(socket);
    let status = res.headersSent ? res.statusCode : 0;
    if (server.timedOut.has(res)) {
      rec.result = 'timeout';
      status = 408;
    } else if (!res.writableFinished) rec.result = 'disconnected';
    const elapsed = performance.now() - this.started;
    const reason = rec.reason === undefined ? '' : ` reason=${rec.reason}`;
    const ms = elapsed.toFixed(1);
    server.log(`client=${rec.client} tool=${rec.tool} result=${rec.result}${reason} status=${status} ms=${ms}`);
    server.metrics?.counters.observe(rec.tool, rec.result, status, elapsed / 1000, this.answered);
  }

  /** Answers the refusal (`result` for the log line) and closes the connection once the body is thrown away. */
  private refuse(
    status: number,
    result: string,
    code: number,
    message: string,
    headers: http.OutgoingHttpHeaders = {},
  ): void {
    const { res } = this;
    this.rec.result = result;
    const body = status === 401 ? UNAUTHORIZED_BODY : refusalBody(code, message);
    res.sendDate = false;
    res.writeHead(status, {
      ...JSON_HEADERS,
      ...headers,
      'Content-Length': Buffer.byteLength(body),
      Connection: 'close',
    });
    res.end(body);
    discardBody(this.req);
  }

  /** Gate 1: the `Host` and any `Origin` are allowed (DNS rebinding). */
  private gateNames(): boolean {
    const { req, server } = this;
    if (!hostAllowed(req.headers.host, server.hosts())) {
      this.refuse(403, 'forbidden_host', -32000, 'Forbidden: Host not allowed');
      return false;
    }
    const origin = req.headers.origin;
    if (origin !== undefined && !originAllowed(origin, server.hosts(), server.origins)) {
      this.refuse(403, 'forbidden_origin', -32000, 'Forbidden: Origin not allowed');
      return false;
    }
    return true;
  }

  /** The resource's public address as this client reached it (docs/HTTP.md §Authorization). */
  private resourceOrigin(): string | null {
    return publicOrigin(parseHostName(this.req.headers.host), this.server.secure);
  }

  /**
   * Gate 2: answers what needs no token (the health check, the resource metadata), a path that is not `/mcp` and
   * a request to a stopping server; true when the request was answered here.
   */
  private servePublic(): boolean {
    const { req, res, rec, pathname } = this;
    const publicDoc =
      pathname === '/healthz'
        ? 'healthz'
        : pathname === RESOURCE_METADATA_PATH || pathname === RESOURCE_METADATA_MCP_PATH
          ? 'resource_metadata'
          : null;
    if (publicDoc !== null) {
      rec.tool = publicDoc;
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        this.refuse(405, 'method_not_allowed', -32000, 'Method not allowed', { Allow: 'GET, HEAD' });
        return true;
      }
      rec.result = 'ok';
      // No token, so no keep-alive: an idle connection held open after a health check would cost a slot for free.
      if (publicDoc === 'healthz') {
        res.writeHead(200, {
          'Content-Type': 'text/plain',
          'Content-Length': 3,
          'Cache-Control': 'no-store',
          Connection: 'close',
        });
        res.end(req.method === 'HEAD' ? undefined : 'ok\n');
      } else {
        const doc = JSON.stringify(resourceMetadata(this.resourceOrigin() ?? ''));
        res.writeHead(200, { ...JSON_HEADERS, 'Content-Length': Buffer.byteLength(doc), Connection: 'close' });
        res.end(req.method === 'HEAD' ? undefined : doc);
      }
      return true;
    }
    if (pathname === METRICS_PATH && this.server.metrics !== undefined) {
      this.serveMetrics(this.server.metrics);
      return true;
    }
    if (pathname !== '/mcp') {
      this.refuse(404, 'not_found', -32000, 'Not found');
      return true;
    }
    if (this.server.stopping()) {
      this.refuse(503, 'stopping', -32000, 'Server is stopping', { 'Retry-After': '1' });
      return true;
    }
    return false;
  }

  /** `GET /metrics` behind its own token (docs/HTTP.md §Metrics): the same 401 as `/mcp` for any other token. */
  private serveMetrics(metrics: MetricsEndpoint): void {
    const { req, res, rec } = this;
    rec.tool = 'metrics';
    const answer = metrics.scrape(req.method, req.headers.authorization);
    if (answer.status !== 200) {
      if (answer.reason !== undefined) rec.reason = answer.reason;
      if (answer.status === 405) this.refuse(405, answer.result, -32000, 'Method not allowed', { Allow: 'GET, HEAD' });
      else if (answer.status === 401)
        this.refuse(401, answer.result, -32001, 'Unauthorized', { 'WWW-Authenticate': 'Bearer' });
      else this.refuse(503, answer.result, -32000, 'Service unavailable');
      return;
    }
    rec.result = 'ok';
    res.writeHead(200, {
      'Content-Type': 'text/plain; version=0.0.4; charset=utf-8',
      'Content-Length': Buffer.byteLength(answer.body),
      'Cache-Control': 'no-store',
    });
    res.end(req.method === 'HEAD' ? undefined : answer.body);
  }

  /** Gate 3: the bearer token names a client of the clients file, read now; null when refused (401, or 503). */
  private gateToken(): ClientEntry | null {
    let entry: ClientEntry | null;
    try {
      entry = authenticate(this.server.clientsFile, bearerToken(this.req.headers.authorization));
    } catch (err) {
      if (!(err instanceof ClientsFileError)) throw err;
      this.rec.reason = err.reason;
      this.refuse(503, 'clients_unusable', -32000, 'Service unavailable');
      return null;
    }
    if (entry === null) {
      const challenge = bearerChallenge(this.resourceOrigin());
      this.refuse(401, 'unauthorized', -32001, 'Unauthorized', { 'WWW-Authenticate': challenge });
      return null;
    }
    this.rec.client = entry.name;
    return entry;
  }

  /** Gate 4: the client's token bucket has a token (429), and the method is `POST` (405). */
  private gateRate(entry: ClientEntry): boolean {
    const { limiter } = this.server;
    const wait = limiter.take(entry.name);
    limiter.prune(64);
    if (wait > 0) {
      this.refuse(429, 'rate_limited', -32000, 'Too many requests', { 'Retry-After': String(wait) });
      return false;
    }
    if (this.req.method !== 'POST') {
      this.refuse(405, 'method_not_allowed', -32000, 'Method not allowed', { Allow: 'POST' });
      return false;
    }
    return true;
  }

  /** Gate 5, start: a body slot of this client (503 when it holds `maxConcurrency`); the body as it arrives. */
  private gateBody(entry: ClientEntry): Promise<BodyOutcome> | null {
    const reading = this.server.bodies.read(entry.name, this.req);
    if (reading === null) this.refuse(503, 'busy', -32000, 'Too many requests in flight', { 'Retry-After': '1' });
    return reading;
  }

  /** Gate 5, end: true for a whole body; else the refusal is sent (or the client is gone) and the request ends. */
  private admitBody(body: BodyOutcome): body is Buffer {
    if (body === 'too_large')
      this.refuse(413, 'too_large', -32000, `Payload too large: at most ${MAX_BODY_BYTES} bytes`);
    else if (body === 'timeout' && !this.res.headersSent) {
      this.server.answeredTimeout.add(this.req.socket);
      this.refuse(408, 'timeout', -32000, 'Request Timeout');
    }
    return Buffer.isBuffer(body);
  }

  /** Gate 6: a slot among the `maxConcurrency` requests in flight (503), held until the response closes. */
  private gateConcurrency(): boolean {
    const { server } = this;
    if (server.inFlight >= server.maxConcurrency) {
      this.refuse(503, 'busy', -32000, 'Too many requests in flight', { 'Retry-After': '1' });
      return false;
    }
    server.inFlight++;
    this.holdsSlot = true;
    return true;
  }

  /** Gate 7: one strict JSON message (400 for bad JSON or a batch); undefined when refused. */
  private parseMessage(body: Buffer): unknown {
    let message: unknown;
    try {
      // Strict first (no duplicate keys, bounded nesting, valid UTF-8), then the plain parse the SDK expects.
      parseStrictJson(body);
      message = JSON.parse(body.toString('utf8'));
    } catch (err) {
      if (!(err instanceof StrictJsonError) && !(err instanceof SyntaxError)) throw err;
      this.refuse(400, 'bad_json', -32700, 'Parse error');
      return undefined;
    }
    if (Array.isArray(message)) {
      this.refuse(400, 'batch', -32600, 'Batch requests are not accepted');
      return undefined;
    }
    return message;
  }
}
