/**
 * `memory-bridge serve`: the two tools over MCP Streamable HTTP, one bearer token per client (docs/HTTP.md).
 *
 * `POST /mcp` is answered by the official SDK's `StreamableHTTPServerTransport` in stateless mode (a fresh transport
 * and tool server per request, JSON responses), so any number of hubs can sit behind one load balancer and a
 * request leaves nothing behind when it ends, however it ends. `GET /healthz` answers 200 with no details and needs
 * no token. Before the transport sees a request, this module applies, in order (docs/HTTP.md, "What a request must
 * pass"):
 *
 * 1. `Host` must name an allowed host and any `Origin` must be an allowed origin (DNS rebinding): 403. The SDK's
 *    own check is not used: it compares the whole `Host` value, port included, and lets every `Origin` through
 *    unless a list is configured, where we refuse any `Origin` not listed.
 * 2. `Authorization: Bearer <token>` must match an entry of the clients file, read fresh for this request; every
 *    failure gets the same 401. The caller (home, run kind) comes only from the matched entry.
 * 3. The client's token bucket (default 20 requests/s, burst 40): 429 with `Retry-After`.
 * 4. The body is read to its end before the request counts as in flight (`BodyGate`): at most 1 MiB (413), within
 *    the body deadline (default 10 s: 408), at most `maxConcurrency` bodies of one client at once (503). A client
 *    whose bodies never arrive holds only its own connections, never a slot another client needs.
 * 5. At most `maxConcurrency` requests in flight (default 16): 503 with `Retry-After`.
 * 6. Strict JSON (400), one message (no batches: 400).
 *
 * Connections are bounded before any of this (`ConnectionTable`, docs/HTTP.md "Connections"): at most
 * `maxConnections` in all and `maxConnectionsPerPeer` from one peer address; at a cap the oldest idle keep-alive
 * connection is closed to admit the new one. A health check and every refusal close their connection.
 * Node's `headersTimeout` and `requestTimeout` bound a slow client (408 and the connection closed). Every request
 * ends in exactly one operator line on stderr: client name, tool (or method), result code, HTTP status, duration.
 * Never a token, a query, an id or a path.
 */
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { parseStrictJson, StrictJsonError } from '../policy/json.js';
import { createBridge } from '../tools/bridge.js';
import { isHiddenNotice } from '../tools/hidden-notices.js';
import { TOOL_NAMES, type Bridge, type BridgeOptions, type LogEvent, type ToolName } from '../tools/types.js';
import { BodyGate, type BodyOutcome } from './http-body.js';
import { authenticate, bearerToken, callerOf, ClientsFileError, type ClientEntry } from './clients.js';
import { ConnectionTable } from './http-connections.js';
import { createMcpExchange } from './http-mcp.js';
import {
  bearerChallenge,
  publicOrigin,
  RESOURCE_METADATA_MCP_PATH,
  RESOURCE_METADATA_PATH,
  resourceMetadata,
} from './resource-metadata.js';

/** The TCP socket under a request's socket (a TLS socket wraps the one the `connection` event saw). */
function tcpOf(socket: Socket): Socket {
  return (socket as Socket & { _parent?: Socket | null })._parent ?? socket;
}

/** Largest request body accepted (1 MiB); a larger one gets 413. */
export const MAX_BODY_BYTES = 1_048_576;
/** Default most requests in flight at once. */
export const DEFAULT_MAX_CONCURRENCY = 16;
/** Default per-client rate: sustained requests per second and burst. */
export const DEFAULT_RATE = Object.freeze({ perSecond: 20, burst: 40 });
/**
 * Default time to receive a request's headers (and a TLS handshake), and the whole request, in ms (then 408 and
 * close). A connection that has sent no complete request yet holds a slot of the connection budget for at most
 * this long.
 */
export const DEFAULT_HEADERS_TIMEOUT_MS = 5_000;
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
/**
 * Default time for a request's body to arrive once its headers are accepted, in ms (then 408 and close; never more
 * than the request timeout). 1 MiB in 10 s asks for 100 KB/s at least.
 */
export const DEFAULT_BODY_TIMEOUT_MS = 10_000;
/**
 * Idle keep-alive connections are closed after this many ms. Longer than the idle timeout of common proxies and
 * load balancers (60 s) and far longer than a busy client's pauses: when the server closes an idle connection at
 * the moment a client reuses it, that request fails on the client, and a POST is not retried (measured with Node's
 * 5 s default: a few failed calls per 6,400 under heavy load). Idle connections are bounded by `MAX_CONNECTIONS`
 * and are closed at once when the server stops.
 */
export const KEEP_ALIVE_TIMEOUT_MS = 65_000;
/** Longest a graceful stop waits for requests in flight (then their connections are closed). */
export const SHUTDOWN_GRACE_MS = 10_000;
/** Most connections open at once (docs/HTTP.md, "Connections"). */
export const MAX_CONNECTIONS = 1024;
/** Default most connections open at once from one peer address (IPv6: one /64); see `ConnectionTable`. */
export const DEFAULT_MAX_CONNECTIONS_PER_PEER = 64;
/** Most body bytes discarded after a refusal before the connection is cut (so the client can read the answer). */
const MAX_DISCARD_BYTES = 4 * MAX_BODY_BYTES;

/** Where and how to listen. */
export interface ListenAddress {
  /** An IP address or host name, as given to `--listen` (IPv6 without brackets). */
  host: string;
  /** 0 picks a free port. */
  port: number;
}

export interface HttpServerOptions {
  listen: ListenAddress;
  /** Absolute path of the clients file (docs/HTTP.md), read on every request to `/mcp`. */
  clientsFile: string;
  /** Reported to clients as the server version. */
  version: string;
  /** PEM certificate chain and private key: serve HTTPS. */
  tls?: { cert: Buffer; key: Buffer };
  /** Plain HTTP on a non-loopback address is allowed only with this (a TLS-terminating proxy in front). */
  behindProxy?: boolean;
  /** `NAME` or `NAME:PORT` accepted in `Host` besides the defaults (see `allowedHosts`). */
  allowedHosts?: readonly string[];
  /** Origins accepted in `Origin`; a request with any other `Origin` gets 403. */
  allowedOrigins?: readonly string[];
  /** Default `DEFAULT_MAX_CONCURRENCY`. */
  maxConcurrency?: number;
  /** Most connections open at once (default `MAX_CONNECTIONS`). */
  maxConnections?: number | undefined;
  /**
   * Most connections from one peer (default `DEFAULT_MAX_CONNECTIONS_PER_PEER`; with `behindProxy`, where every
   * connection comes from the proxy, `maxConnections`).
   */
  maxConnectionsPerPeer?: number | undefined;
  /** Default `DEFAULT_RATE`. */
  rate?: { perSecond: number; burst: number };
  headersTimeoutMs?: number;
  requestTimeoutMs?: number;
  /** Default `DEFAULT_BODY_TIMEOUT_MS`, at most `requestTimeoutMs`. */
  bodyTimeoutMs?: number;
  /** The rate limiter's clock (default `performance.now`); tests stop it to count a burst exactly. */
  clock?: Clock | undefined;
  /** Options of the one shared bridge (its log is this server's). */
  bridgeOptions?: Omit<BridgeOptions, 'log'>;
  /** The operator log: one line per request (default: stderr with the `memory-bridge serve:` prefix). */
  log?: (line: string) => void;
}

/** A running server. */
export interface HttpServerHandle {
  /** `http://HOST:PORT` or `https://…` as bound (IPv6 in brackets). */
  origin: string;
  port: number;
  /**
   * Counters for tests and the operator: requests in flight, bodies being read, token buckets kept, open
   * connections, connections refused at a cap, and idle or header-less connections closed to admit another.
   */
  stats(): {
    inFlight: number;
    reading: number;
    buckets: number;
    connections: number;
    refused: number;
    evicted: number;
  };
  /**
   * Stop: no new connections, idle ones closed, requests in flight may finish for up to `graceMs` (default
   * `SHUTDOWN_GRACE_MS`); then every connection is closed. Resolves when the server is closed.
   */
  close(graceMs?: number): Promise<void>;
  /** Close every connection now, requests in flight included (a second signal during a graceful stop). */
  closeNow(): void;
}

/** A configuration `serve` must refuse to start with; the message says what to do. */
export class ServeConfigError extends Error {
  override readonly name = 'ServeConfigError';
}

/** True for loopback names and addresses: `localhost`, 127.0.0.0/8, `::1`. */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** A `Host` value (or an `--allowed-host`) taken apart: lower-case name (IPv6 in brackets) and port if given. */
export interface HostName {
  name: string;
  /** null when the value names no port. */
  port: number | null;
}

/** Parse `NAME`, `NAME:PORT`, `[v6]` or `[v6]:PORT` (a bare IPv6 address gets its brackets); null when malformed. */
export function parseHostName(value: string | undefined): HostName | null {
  if (value === undefined) return null;
  let v = value.trim().toLowerCase();
  // Two or more colons and no bracket: a bare IPv6 address (no port possible without brackets).
  if (!v.startsWith('[') && (v.match(/:/g) ?? []).length >= 2) v = `[${v}]`;
  const m = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::(\d{1,5}))?$/.exec(v);
  if (m === null) return null;
  const port = m[2] === undefined ? null : Number(m[2]);
  if (port !== null && port > 65535) return null;
  return { name: m[1]!, port };
}

/**
 * Which `Host` values are accepted (docs/HTTP.md, "What a request must pass"): `exact` holds `name:port` pairs,
 * `anyPort` names accepted with any port or none. A `Host` without a port means the scheme's default port
 * (RFC 9110 §7.2: 80 for http, 443 for https).
 */
export interface AllowedHosts {
  exact: Set<string>;
  anyPort: Set<string>;
  defaultPort: number;
}

/**
 * The accepted `Host` values: the listen address (host and port), on loopback also `localhost`, `127.0.0.1` and
 * `[::1]` with the listen port, plus every `--allowed-host`: `NAME:PORT` exactly, a bare `NAME` with any port or
 * none (behind a proxy the `Host` carries the proxy's port, or none, not ours). A rebinding page reaches us under
 * its own name, so the name is what stops it; the port keeps other local services' names from reaching this one.
 */
export function allowedHosts(listen: ListenAddress, tls: boolean, extra: readonly string[] = []): AllowedHosts {
  const hosts: AllowedHosts = { exact: new Set(), anyPort: new Set(), defaultPort: tls ? 443 : 80 };
  const own = parseHostName(listen.host);
  if (own !== null) hosts.exact.add(`${own.name}:${listen.port}`);
  if (isLoopbackHost(listen.host))
    for (const n of ['localhost', '127.0.0.1', '[::1]']) hosts.exact.add(`${n}:${listen.port}`);
  for (const value of extra) {
    const h = parseHostName(value);
    if (h === null) continue;
    if (h.port === null) hosts.anyPort.add(h.name);
    else hosts.exact.add(`${h.name}:${h.port}`);
  }
  return hosts;
}

/** True when a `Host` header value is accepted by `hosts`; a missing or malformed value never is. */
export function hostAllowed(value: string | undefined, hosts: AllowedHosts): boolean {
  const h = value === undefined || value === '' ? null : parseHostName(value);
  if (h === null) return false;
  return hosts.anyPort.has(h.name) || hosts.exact.has(`${h.name}:${h.port ?? hosts.defaultPort}`);
}

/**
 * True when an `Origin` header value is accepted (docs/HTTP.md, "What a request must pass"): it is listed with
 * `--allowed-origin`, or it is this server's own origin, `http` or `https` with a host and port that `hosts`
 * accepts exactly (a `NAME:PORT` pair, never a bare any-port name; no port means the scheme's default). A
 * rebinding page's origin carries the page's own name, which is never such a pair.
 */
export function originAllowed(value: string, hosts: AllowedHosts, listed: ReadonlySet<string>): boolean {
  const origin = normalOrigin(value);
  if (listed.has(origin)) return true;
  const m = /^(https?):\/\/([^/?#@]+)$/.exec(origin);
  const h = m === null ? null : parseHostName(m[2]);
  if (m === null || h === null) return false;
  return hosts.exact.has(`${h.name}:${h.port ?? (m[1] === 'https' ? 443 : 80)}`);
}

/** An origin as compared with `Origin`: lower case, no trailing `/`. */
export function normalOrigin(origin: string): string {
  return origin.trim().toLowerCase().replace(/\/+$/, '');
}

/**
 * The listen checks of docs/HTTP.md: a non-loopback address needs TLS or an explicit `--behind-proxy`.
 *
 * @throws ServeConfigError with what to do
 */
export function checkListenSafety(listen: ListenAddress, tls: boolean, behindProxy: boolean): void {
  if (isLoopbackHost(listen.host) || tls || behindProxy) return;
  throw new ServeConfigError(
    `refusing to serve plain HTTP on ${listen.host}, which is not a loopback address: bearer tokens would cross ` +
      'the network in clear text. Give --tls-cert FILE --tls-key FILE, or --behind-proxy when a TLS-terminating ' +
      'proxy in front of this host is the only way in',
  );
}

/** Parse `HOST:PORT` (`[v6]:PORT` for IPv6). Port 0 asks for a free port. */
export function parseListen(value: string): ListenAddress {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([A-Za-z0-9.-]+)):(\d{1,5})$/.exec(value);
  const port = m === null ? Number.NaN : Number(m[3]);
  if (m === null || port > 65535)
    throw new ServeConfigError(
      `--listen must be HOST:PORT (e.g. 127.0.0.1:8765 or [::1]:8765), not ${JSON.stringify(value)}`,
    );
  return { host: m[1] ?? m[2]!, port };
}

/** Milliseconds from an arbitrary origin that never goes backwards (production: `performance.now`). */
export type Clock = () => number;

/**
 * One token bucket per client name (docs/HTTP.md, "Limits"): `burst` tokens at most, refilled at `perSecond`, one
 * taken per request. Time comes from `clock` (monotonic milliseconds), so a test can stop it.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
    private readonly clock: Clock = () => performance.now(),
  ) {}

  /** Take one token for `name`: 0 when granted, else the whole seconds to wait (at least 1). */
  take(name: string): number {
    const now = this.clock();
    let b = this.buckets.get(name);
    if (b === undefined) {
      b = { tokens: this.burst, at: now };
      this.buckets.set(name, b);
    } else {
      b.tokens = Math.min(this.burst, b.tokens + ((now - b.at) / 1000) * this.perSecond);
      b.at = now;
    }
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - b.tokens) / this.perSecond));
  }

  /** Drop buckets that are full again (they hold no information) once more than `keep` are kept. */
  prune(keep: number): void {
    if (this.buckets.size <= keep) return;
    const now = this.clock();
    for (const [name, b] of this.buckets) {
      if (b.tokens + ((now - b.at) / 1000) * this.perSecond >= this.burst) this.buckets.delete(name);
    }
  }

  get size(): number {
    return this.buckets.size;
  }
}

/** What one request's operator line says. */
interface Record {
  client: string;
  tool: string;
  result: string;
  reason?: string;
}

const JSON_HEADERS = { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' } as const;

/** A refusal as the SDK words its own: a JSON-RPC error object with id null. */
function refusalBody(code: number, message: string): string {
  return JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null });
}

/** The one 401: same status, headers and body for a missing, malformed, unknown or revoked token. */
const UNAUTHORIZED_BODY = refusalBody(-32001, 'Unauthorized');

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
 * Start serving. Resolves once listening.
 *
 * @throws ServeConfigError for an unsafe listen address (see `checkListenSafety`); the listen error (EADDRINUSE…)
 *   as it comes from Node
 */
export async function startHttpServer(opts: HttpServerOptions): Promise<HttpServerHandle> {
  checkListenSafety(opts.listen, opts.tls !== undefined, opts.behindProxy === true);
  const log = opts.log ?? ((line: string) => process.stderr.write(`memory-bridge serve: ${line}\n`));
  // The accepted Host values need the bound port (port 0 picks one): set once listening, before any request.
  let hosts: AllowedHosts = { exact: new Set(), anyPort: new Set(), defaultPort: 0 };
  const origins = new Set((opts.allowedOrigins ?? []).map(normalOrigin));
  const maxConcurrency = opts.maxConcurrency ?? DEFAULT_MAX_CONCURRENCY;
  const rate = opts.rate ?? DEFAULT_RATE;
  if (!Number.isInteger(maxConcurrency) || maxConcurrency < 1) throw new RangeError('maxConcurrency: an integer ≥ 1');
  if (!(rate.perSecond > 0) || !(rate.burst >= 1)) throw new RangeError('rate: perSecond > 0 and burst ≥ 1');
  const limiter = new RateLimiter(rate.perSecond, rate.burst, opts.clock);
  const maxConnections = opts.maxConnections ?? MAX_CONNECTIONS;
  const perPeer =
    opts.maxConnectionsPerPeer ?? (opts.behindProxy === true ? maxConnections : DEFAULT_MAX_CONNECTIONS_PER_PEER);
  if (!Number.isInteger(maxConnections) || maxConnections < 1) throw new RangeError('maxConnections: an integer ≥ 1');
  if (!Number.isInteger(perPeer) || perPeer < 1 || perPeer > maxConnections)
    throw new RangeError('maxConnectionsPerPeer: an integer from 1 to maxConnections');
  const connections = new ConnectionTable(maxConnections, perPeer);
  const requestTimeout = opts.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const bodies = new BodyGate(
    maxConcurrency,
    MAX_BODY_BYTES,
    Math.min(opts.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS, requestTimeout),
  );

  // The bridge runs one call at a time (its calls are synchronous), so the call being answered is known here and
  // the bridge's own refusal reason joins that request's single log line instead of printing a second one. A line
  // about notes a search could not consider (docs/TRUST.md §Hidden notes) is its own line: the call was answered.
  let current: Record | null = null;
  const bridge: Bridge = createBridge({
    transport: 'http',
    ...opts.bridgeOptions,
    log: (event: LogEvent) => {
      if (isHiddenNotice(event.reason))
        log(`client=${current?.client ?? '-'} tool=${event.tool} notice=${event.reason} ${event.detail ?? ''}`);
      else if (current !== null) current.reason = event.reason;
      else log(`tool=${event.tool} reason=${event.reason}`);
    },
  });

  // Both protocol revisions, answered by the SDK v2 (http-mcp.ts). What it refuses (a header mismatch, an
  // unsupported revision) is already in that request's one operator line as its status and `refused`.
  const exchange = createMcpExchange(() => undefined);
  let inFlight = 0;
  let stopping = false;
  /** Responses whose connection Node is closing for a header or request timeout. */
  const timedOut = new WeakSet<http.ServerResponse>();
  /** Connections already answered 408 at the body deadline: Node's own request timeout may still fire on them. */
  const answeredTimeout = new WeakSet<Socket>();

  const serverOptions: http.ServerOptions = {
    headersTimeout: opts.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS,
    requestTimeout,
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    // How often Node looks for connections past their timeouts; the default (30 s) would let a slow client hold a
    // connection well beyond the timeout.
    connectionsCheckingInterval: Math.min(1000, opts.headersTimeoutMs ?? 1000),
    maxHeaderSize: 16_384,
  };
  const headersTimeout = serverOptions.headersTimeout!;
  const server =
    opts.tls !== undefined
      ? https.createServer({
          ...serverOptions,
          cert: opts.tls.cert,
          key: opts.tls.key,
          // A handshake that never finishes holds a connection slot like unfinished headers (Node's default: 120 s).
          handshakeTimeout: headersTimeout,
        })
      : http.createServer(serverOptions);

  const onRequest = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    const started = performance.now();
    const rec: Record = { client: '-', tool: '-', result: 'disconnected' };
    let holdsSlot = false;
    const socket = tcpOf(req.socket);
    connections.busy(socket);
    res.once('close', () => {
      if (holdsSlot) inFlight--;
      // A connection that is closing after this response is not idle: it may not be picked to make room (its
      // answer could still be on its way out).
      const closing =
        !(res as http.ServerResponse & { shouldKeepAlive?: boolean }).shouldKeepAlive ||
        String(res.getHeader('connection') ?? '').toLowerCase() === 'close';
      if (!closing) connections.idleAgain(socket);
      let status = res.headersSent ? res.statusCode : 0;
      if (timedOut.has(res)) {
        rec.result = 'timeout';
        status = 408;
      } else if (!res.writableFinished) rec.result = 'disconnected';
      const ms = (performance.now() - started).toFixed(1);
      const reason = rec.reason === undefined ? '' : ` reason=${rec.reason}`;
      log(`client=${rec.client} tool=${rec.tool} result=${rec.result}${reason} status=${status} ms=${ms}`);
    });

    const refuse = (
      status: number,
      result: string,
      code: number,
      message: string,
      headers: http.OutgoingHttpHeaders = {},
    ): void => {
      rec.result = result;
      const body = status === 401 ? UNAUTHORIZED_BODY : refusalBody(code, message);
      res.sendDate = false;
      res.writeHead(status, {
        ...JSON_HEADERS,
        ...headers,
        'Content-Length': Buffer.byteLength(body),
        Connection: 'close',
      });
      res.end(body);
      discardBody(req);
    };
    /** True for a whole body; else the refusal is sent (or the client is gone) and the request ends here. */
    const admitBody = (body: BodyOutcome): body is Buffer => {
      if (body === 'too_large') refuse(413, 'too_large', -32000, `Payload too large: at most ${MAX_BODY_BYTES} bytes`);
      else if (body === 'timeout' && !res.headersSent) {
        answeredTimeout.add(req.socket);
        refuse(408, 'timeout', -32000, 'Request Timeout');
      }
      return Buffer.isBuffer(body);
    };

    const pathname = (req.url ?? '').split('?', 1)[0];
    if (!hostAllowed(req.headers.host, hosts)) {
      refuse(403, 'forbidden_host', -32000, 'Forbidden: Host not allowed');
      return;
    }
    const origin = req.headers.origin;
    if (origin !== undefined && !originAllowed(origin, hosts, origins)) {
      refuse(403, 'forbidden_origin', -32000, 'Forbidden: Origin not allowed');
      return;
    }

    if (pathname === '/healthz') {
      rec.tool = 'healthz';
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        refuse(405, 'method_not_allowed', -32000, 'Method not allowed', { Allow: 'GET, HEAD' });
        return;
      }
      rec.result = 'ok';
      // No token, so no keep-alive: an idle connection held open after a health check would cost a slot for free.
      res.writeHead(200, {
        'Content-Type': 'text/plain',
        'Content-Length': 3,
        'Cache-Control': 'no-store',
        Connection: 'close',
      });
      res.end(req.method === 'HEAD' ? undefined : 'ok\n');
      return;
    }
    // The resource's public address as this client reached it (docs/HTTP.md §Authorization).
    const resourceOrigin = publicOrigin(
      parseHostName(req.headers.host),
      opts.tls !== undefined || opts.behindProxy === true,
    );
    if (pathname === RESOURCE_METADATA_PATH || pathname === RESOURCE_METADATA_MCP_PATH) {
      rec.tool = 'resource_metadata';
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        refuse(405, 'method_not_allowed', -32000, 'Method not allowed', { Allow: 'GET, HEAD' });
        return;
      }
      rec.result = 'ok';
      const doc = JSON.stringify(resourceMetadata(resourceOrigin ?? ''));
      // Public and token-free like the health check, so no keep-alive either.
      res.writeHead(200, { ...JSON_HEADERS, 'Content-Length': Buffer.byteLength(doc), Connection: 'close' });
      res.end(req.method === 'HEAD' ? undefined : doc);
      return;
    }
    if (pathname !== '/mcp') {
      refuse(404, 'not_found', -32000, 'Not found');
      return;
    }
    if (stopping) {
      refuse(503, 'stopping', -32000, 'Server is stopping', { 'Retry-After': '1' });
      return;
    }

    let entry: ClientEntry | null;
    try {
      entry = authenticate(opts.clientsFile, bearerToken(req.headers.authorization));
    } catch (err) {
      if (!(err instanceof ClientsFileError)) throw err;
      rec.reason = err.reason;
      refuse(503, 'clients_unusable', -32000, 'Service unavailable');
      return;
    }
    if (entry === null) {
      refuse(401, 'unauthorized', -32001, 'Unauthorized', { 'WWW-Authenticate': bearerChallenge(resourceOrigin) });
      return;
    }
    rec.client = entry.name;
    const wait = limiter.take(entry.name);
    limiter.prune(64);
    if (wait > 0) {
      refuse(429, 'rate_limited', -32000, 'Too many requests', { 'Retry-After': String(wait) });
      return;
    }
    if (req.method !== 'POST') {
      refuse(405, 'method_not_allowed', -32000, 'Method not allowed', { Allow: 'POST' });
      return;
    }
    const reading = bodies.read(entry.name, req);
    if (reading === null) {
      refuse(503, 'busy', -32000, 'Too many requests in flight', { 'Retry-After': '1' });
      return;
    }

    void reading
      .then(async (body) => {
        if (!admitBody(body)) return;
        if (inFlight >= maxConcurrency) {
          refuse(503, 'busy', -32000, 'Too many requests in flight', { 'Retry-After': '1' });
          return;
        }
        inFlight++;
        holdsSlot = true;
        let message: unknown;
        try {
          // Strict first (no duplicate keys, bounded nesting, valid UTF-8), then the plain parse the SDK expects.
          parseStrictJson(body);
          message = JSON.parse(body.toString('utf8'));
        } catch (err) {
          if (!(err instanceof StrictJsonError) && !(err instanceof SyntaxError)) throw err;
          refuse(400, 'bad_json', -32700, 'Parse error');
          return;
        }
        if (Array.isArray(message)) {
          refuse(400, 'batch', -32600, 'Batch requests are not accepted');
          return;
        }
        const label = methodLabel(message);
        rec.tool = label.tool;
        await answer(req, res, message, entry, rec, label.isToolCall);
      })
      .catch(() => {
        rec.result = 'internal';
        if (!res.headersSent) refuse(500, 'internal', -32603, 'Internal error');
        else res.destroy();
      });
  };

  /** Hand one checked message to a fresh stateless transport and tool server; both are closed when `res` closes. */
  const answer = async (
    req: http.IncomingMessage,
    res: http.ServerResponse,
    message: unknown,
    entry: ClientEntry,
    rec: Record,
    isToolCall: boolean,
  ): Promise<void> => {
    const caller = callerOf(entry);
    const recording: Bridge = {
      search: (args, c) => bridge.search(args, c),
      read: (args, c) => bridge.read(args, c),
      call: (tool: ToolName, args, c, context) => {
        current = rec;
        try {
          const result = bridge.call(tool, args, c, { ...context, client: entry.name });
          rec.result = result.ok ? 'ok' : result.error.code;
          return result;
        } finally {
          current = null;
        }
      },
    };
    const server = {
      caller,
      bridge: recording,
      version: opts.version,
      log: (reason: string) => {
        rec.reason = reason;
      },
    };
    // The tool call itself is synchronous. Without this pause each request would run to its answer before Node
    // read the next connection, so requests waiting in the kernel's socket buffers would never count as in
    // flight and the concurrency limit could not see a backlog (measured: no 503 at all, and calls timing out on
    // the client after 60 s, with 32 busy clients on an overloaded machine). Yielding to the event loop here lets
    // every request that has arrived be read and counted first; the ones past the limit get 503 at once.
    await new Promise<void>((resolve) => setImmediate(resolve));
    if (res.destroyed) return;
    if (!isToolCall) rec.result = 'ok';
    await exchange.answer(req, res, message, server, MAX_BODY_BYTES);
    if (res.statusCode >= 400 && rec.result === 'ok') rec.result = 'refused';
  };

  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    try {
      onRequest(req, res);
    } catch {
      // A fault of ours (never the client's input): answer 500 if nothing was sent yet, keep serving.
      if (res.headersSent) res.destroy();
      else {
        const body = refusalBody(-32603, 'Internal error');
        res.writeHead(500, { ...JSON_HEADERS, 'Content-Length': Buffer.byteLength(body), Connection: 'close' });
        res.end(body);
      }
    }
  });
  // Idle or slow connections cost memory until their timeout: bound how many may be open at once, in all and per
  // peer (ConnectionTable). Node's own cap is only a backstop for sockets being torn down.
  server.maxConnections = 2 * maxConnections;
  let refusalsLogged = 0;
  let refusalLoggedAt = Number.NEGATIVE_INFINITY;
  server.on('connection', (socket: Socket) => {
    const refusal = connections.admit(socket);
    if (refusal !== null) {
      socket.destroy();
      // One line at most every 10 s under a flood, with the count since the last one.
      const now = performance.now();
      if (now - refusalLoggedAt >= 10_000) {
        log(`connections refused reason=${refusal} count=${connections.refused - refusalsLogged}`);
        refusalsLogged = connections.refused;
        refusalLoggedAt = now;
      }
      return;
    }
    socket.once('close', () => connections.remove(socket));
  });
  // Malformed HTTP, and a client past the header or request timeout: answer when the socket can still take it.
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    const timeout = err.code === 'ERR_HTTP_REQUEST_TIMEOUT' || err.code === 'ERR_HTTP_HEADERS_TIMEOUT';
    const status = timeout ? 408 : err.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400;
    const pending = (socket as Socket & { _httpMessage?: http.ServerResponse | null })._httpMessage ?? null;
    if (pending === null && answeredTimeout.has(socket)) {
      socket.destroy();
      return;
    }
    // A request whose handler runs logs its own line when its response closes; mark why it is closing.
    if (pending !== null && timeout) timedOut.add(pending);
    else if (pending === null) log(`client=- tool=- result=${timeout ? 'timeout' : 'bad_http'} status=${status} ms=0`);
    if (socket.writable && (pending === null || !pending.headersSent)) {
      const body = refusalBody(-32000, http.STATUS_CODES[status]!);
      socket.end(
        `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
      socket.destroySoon();
    } else socket.destroy();
  });
  server.on('tlsClientError', () => {
    log('client=- tool=- result=tls_error status=0 ms=0');
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.listen.port, opts.listen.host, () => {
      server.off('error', reject);
      const port = (server.address() as AddressInfo).port;
      hosts = allowedHosts({ host: opts.listen.host, port }, opts.tls !== undefined, opts.allowedHosts);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const hostPart = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const origin = `${opts.tls !== undefined ? 'https' : 'http'}://${hostPart}:${address.port}`;

  let closing: Promise<void> | null = null;
  return {
    origin,
    port: address.port,
    stats: () => ({
      inFlight,
      reading: bodies.reading,
      buckets: limiter.size,
      connections: connections.size,
      refused: connections.refused,
      evicted: connections.evicted,
    }),
    close(graceMs = SHUTDOWN_GRACE_MS) {
      closing ??= new Promise<void>((resolve) => {
        stopping = true;
        server.close(() => {
          void exchange.close().finally(resolve);
        });
        server.closeIdleConnections();
        // Each request that finishes now leaves an idle connection behind: close those as they appear.
        const sweep = setInterval(() => server.closeIdleConnections(), 50);
        const force = setTimeout(() => server.closeAllConnections(), graceMs);
        server.once('close', () => {
          clearInterval(sweep);
          clearTimeout(force);
        });
      });
      return closing;
    },
    closeNow() {
      stopping = true;
      server.close();
      server.closeAllConnections();
    },
  };
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
