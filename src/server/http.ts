/**
 * `memory-bridge serve`: the two tools over MCP Streamable HTTP, one bearer token per client (docs/HTTP.md).
 *
 * `POST /mcp` is answered by the official SDK (http-mcp.ts) statelessly (a fresh transport and tool server per
 * request, JSON responses), so any number of hubs can sit behind one load balancer and a request leaves nothing
 * behind when it ends, however it ends. `GET /healthz` answers 200 with no details and needs no token. Before the
 * SDK sees a request it passes the gates of http-request.ts (Host and Origin, token, rate, body, concurrency,
 * strict JSON; docs/HTTP.md, "What a request must pass"). Every bound and default is a row of `HTTP_SETTING_TABLE`
 * (http-settings.ts).
 *
 * The server's lifecycle is `HttpServer`'s named steps:
 *  1. the constructor settles the options (`settle`: defaults from the table, ranges checked), makes the one shared
 *     bridge and the Node server, and wires its events;
 *  2. `admitConnection`: connections are bounded before any request is read (`ConnectionTable`, docs/HTTP.md
 *     "Connections"): at most `maxConnections` in all and `maxConnectionsPerPeer` from one peer address; at a cap
 *     the oldest idle keep-alive connection is closed to admit the new one;
 *  3. `onRequest`: each request through its gates (`RequestGates`), a fault of ours answered 500;
 *  4. `answer`: a checked message to the SDK, with the bridge's refusal reason joining the request's log line;
 *  5. `onClientError`: malformed HTTP and a client past the header or request timeout (Node's `headersTimeout`
 *     and `requestTimeout`): 400, 431 or 408 and the connection closed;
 *  6. `listen`, then `handle()`: the running server's origin, counters, `close` (graceful) and `closeNow`.
 * A health check and every refusal close their connection. Every request ends in exactly one operator line on
 * stderr: client name, tool (or method), result code, HTTP status, duration. Never a token, a query, an id or a
 * path.
 */
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { createBridge } from '../tools/bridge.js';
import { refusalWords } from '../remedies.js';
import { isHiddenNotice } from '../tools/hidden-notices.js';
import type { Bridge, BridgeOptions, LogEvent, ToolName } from '../tools/types.js';
import { BodyGate } from './http-body.js';
import { callerOf } from './clients.js';
import { ConnectionTable } from './http-connections.js';
import { type AllowedHosts, allowedHosts, checkListenSafety, type ListenAddress, normalOrigin } from './http-hosts.js';
import { createMcpExchange, type McpExchange } from './http-mcp.js';
import { type Clock, RateLimiter } from './http-rate.js';
import {
  type AnswerMessage,
  type GateServer,
  JSON_HEADERS,
  refusalBody,
  RequestGates,
  type RequestRecord,
} from './http-request.js';
import { HTTP_SETTING_TABLE as TABLE } from './http-settings.js';
import { metricsEndpointOf, type MetricsEndpoint } from './metrics.js';
import { knownRevision } from './protocol-version.js';

export {
  type AllowedHosts,
  allowedHosts,
  checkListenSafety,
  type HostName,
  hostAllowed,
  isLoopbackHost,
  type ListenAddress,
  normalOrigin,
  originAllowed,
  parseHostName,
  parseListen,
  ServeConfigError,
} from './http-hosts.js';
export { type Clock, RateLimiter } from './http-rate.js';

/** Largest request body accepted (1 MiB); a larger one gets 413. */
export const MAX_BODY_BYTES = TABLE.maxBodyBytes.default;
/** Default most requests in flight at once. */
export const DEFAULT_MAX_CONCURRENCY = TABLE.maxConcurrency.default;
/** Default per-client rate: sustained requests per second and burst. */
export const DEFAULT_RATE = Object.freeze({ perSecond: TABLE.ratePerSecond.default, burst: TABLE.rateBurst.default });
/** Default time to receive a request's headers (and a TLS handshake), and the whole request, in ms. */
export const DEFAULT_HEADERS_TIMEOUT_MS = TABLE.headersTimeoutMs.default;
export const DEFAULT_REQUEST_TIMEOUT_MS = TABLE.requestTimeoutMs.default;
/** Default time for a request's body to arrive once its headers are accepted, in ms (never more than the request's). */
export const DEFAULT_BODY_TIMEOUT_MS = TABLE.bodyTimeoutMs.default;
/** Idle keep-alive connections are closed after this many ms (and at once when the server stops). */
export const KEEP_ALIVE_TIMEOUT_MS = TABLE.keepAliveTimeoutMs.default;
/** Longest a graceful stop waits for requests in flight (then their connections are closed). */
export const SHUTDOWN_GRACE_MS = TABLE.shutdownGraceMs.default;
/** Most connections open at once (docs/HTTP.md, "Connections"). */
export const MAX_CONNECTIONS = TABLE.maxConnections.default;
/** Default most connections open at once from one peer address (IPv6: one /64); see `ConnectionTable`. */
export const DEFAULT_MAX_CONNECTIONS_PER_PEER = TABLE.maxConnectionsPerPeer.default;

/** What `serve` runs with (the CLI builds it from its flags; defaults from `HTTP_SETTING_TABLE`). */
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
  /**
   * `--metrics FILE`: serve `GET /metrics` (docs/HTTP.md §Metrics) behind the bearer token in this trusted file
   * (absolute path); without it there is no such endpoint.
   */
  metricsTokenFile?: string;
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

/** The options with their defaults, checked: what the server runs with. */
interface Settled {
  maxConcurrency: number;
  rate: { perSecond: number; burst: number };
  maxConnections: number;
  perPeer: number;
  headersTimeout: number;
  requestTimeout: number;
  bodyTimeout: number;
}

/**
 * Step 1 of the lifecycle: every option with its default (`HTTP_SETTING_TABLE`), checked.
 *
 * @throws RangeError for a concurrency, rate or connection bound out of range
 */
function settle(opts: HttpServerOptions): Settled {
  const maxConcurrency = opts.maxConcurrency ?? DEFAULT_MAX_CONCURRENCY;
  const rate = opts.rate ?? DEFAULT_RATE;
  if (!Number.isInteger(maxConcurrency) || maxConcurrency < 1) throw new RangeError('maxConcurrency: an integer ≥ 1');
  if (!(rate.perSecond > 0) || !(rate.burst >= 1)) throw new RangeError('rate: perSecond > 0 and burst ≥ 1');
  const maxConnections = opts.maxConnections ?? MAX_CONNECTIONS;
  const perPeer =
    opts.maxConnectionsPerPeer ?? (opts.behindProxy === true ? maxConnections : DEFAULT_MAX_CONNECTIONS_PER_PEER);
  if (!Number.isInteger(maxConnections) || maxConnections < 1) throw new RangeError('maxConnections: an integer ≥ 1');
  if (!Number.isInteger(perPeer) || perPeer < 1 || perPeer > maxConnections)
    throw new RangeError('maxConnectionsPerPeer: an integer from 1 to maxConnections');
  const requestTimeout = opts.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  return {
    maxConcurrency,
    rate,
    maxConnections,
    perPeer,
    headersTimeout: opts.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS,
    requestTimeout,
    bodyTimeout: Math.min(opts.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS, requestTimeout),
  };
}

/** The server's state and lifecycle steps (module comment); the gates of each request see it as a `GateServer`. */
class HttpServer implements GateServer {
  readonly clientsFile: string;
  readonly secure: boolean;
  readonly maxConcurrency: number;
  readonly origins: ReadonlySet<string>;
  readonly limiter: RateLimiter;
  readonly bodies: BodyGate;
  readonly connections: ConnectionTable;
  inFlight = 0;
  readonly timedOut = new WeakSet<http.ServerResponse>();
  readonly answeredTimeout = new WeakSet<Socket>();
  readonly log: (line: string) => void;
  readonly metrics: MetricsEndpoint | undefined;
  /** The accepted Host values need the bound port (port 0 picks one): set once listening, before any request. */
  private allowed: AllowedHosts = { exact: new Set(), anyPort: new Set(), defaultPort: 0 };
  private isStopping = false;
  private closing: Promise<void> | null = null;
  private readonly bridge: Bridge;
  private readonly exchange: McpExchange;
  private readonly server: http.Server;
  /**
   * The bridge runs one call at a time (its calls are synchronous), so the call being answered is known here and
   * the bridge's own refusal reason joins that request's single log line instead of printing a second one.
   */
  private current: RequestRecord | null = null;
  private refusalsLogged = 0;
  private refusalLoggedAt = Number.NEGATIVE_INFINITY;

  /** Step 1: settle the options, make the bridge, the SDK exchange and the Node server, wire its events. */
  constructor(private readonly opts: HttpServerOptions) {
    const settled = settle(opts);
    this.log = opts.log ?? ((line: string) => process.stderr.write(`memory-bridge serve: ${line}\n`));
    this.clientsFile = opts.clientsFile;
    this.secure = opts.tls !== undefined || opts.behindProxy === true;
    this.maxConcurrency = settled.maxConcurrency;
    this.origins = new Set((opts.allowedOrigins ?? []).map(normalOrigin));
    this.limiter = new RateLimiter(settled.rate.perSecond, settled.rate.burst, opts.clock);
    this.connections = new ConnectionTable(settled.maxConnections, settled.perPeer);
    this.bodies = new BodyGate(settled.maxConcurrency, MAX_BODY_BYTES, settled.bodyTimeout);
    // A line about notes a search could not consider (docs/TRUST.md §Hidden notes) is its own line: the call was
    // answered.
    this.bridge = createBridge({
      transport: 'http',
      ...opts.bridgeOptions,
      log: (event: LogEvent) => {
        if (isHiddenNotice(event.reason))
          this.log(
            `client=${this.current?.client ?? '-'} tool=${event.tool} notice=${event.reason} ${event.detail ?? ''}`,
          );
        else if (this.current !== null) this.current.reason = refusalWords(event.reason, event.subject);
        else this.log(`tool=${event.tool} reason=${refusalWords(event.reason, event.subject)}`);
      },
    });
    // `--metrics FILE`: the token file must be usable now; it is judged and read again on every scrape.
    this.metrics =
      opts.metricsTokenFile === undefined ? undefined : metricsEndpointOf(opts.metricsTokenFile, this.bridge);
    // Both protocol revisions, answered by the SDK v2 (http-mcp.ts). What it refuses (a header mismatch, an
    // unsupported revision) is already in that request's one operator line as its status and `refused`.
    this.exchange = createMcpExchange(() => undefined);
    this.server = this.nodeServer(settled);
    this.server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => this.onRequest(req, res));
    // Idle or slow connections cost memory until their timeout: bound how many may be open at once, in all and per
    // peer (ConnectionTable). Node's own cap is only a backstop for sockets being torn down.
    this.server.maxConnections = 2 * settled.maxConnections;
    this.server.on('connection', (socket: Socket) => this.admitConnection(socket));
    this.server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => this.onClientError(err, socket));
    this.server.on('tlsClientError', () => {
      this.log('client=- tool=- result=tls_error status=0 ms=0');
    });
  }

  hosts(): AllowedHosts {
    return this.allowed;
  }

  stopping(): boolean {
    return this.isStopping;
  }

  /** Step 1: the Node server with the timeouts and header bound of the settings; HTTPS with `tls`. */
  private nodeServer(settled: Settled): http.Server {
    const serverOptions: http.ServerOptions = {
      headersTimeout: settled.headersTimeout,
      requestTimeout: settled.requestTimeout,
      keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
      // How often Node looks for connections past their timeouts; the default (30 s) would let a slow client hold a
      // connection well beyond the timeout.
      connectionsCheckingInterval: Math.min(1000, this.opts.headersTimeoutMs ?? 1000),
      maxHeaderSize: TABLE.maxHeaderBytes.default,
    };
    const { tls } = this.opts;
    if (tls === undefined) return http.createServer(serverOptions);
    return https.createServer({
      ...serverOptions,
      cert: tls.cert,
      key: tls.key,
      // A handshake that never finishes holds a connection slot like unfinished headers (Node's default: 120 s).
      handshakeTimeout: settled.headersTimeout,
    });
  }

  /** Step 2: a new connection within the caps, or destroyed (one log line at most every 10 s under a flood). */
  private admitConnection(socket: Socket): void {
    const { connections } = this;
    const refusal = connections.admit(socket);
    if (refusal !== null) {
      socket.destroy();
      const now = performance.now();
      if (now - this.refusalLoggedAt >= 10_000) {
        this.log(`connections refused reason=${refusal} count=${connections.refused - this.refusalsLogged}`);
        this.refusalsLogged = connections.refused;
        this.refusalLoggedAt = now;
      }
      return;
    }
    socket.once('close', () => connections.remove(socket));
  }

  /** Step 3: one request through its gates; a fault of ours (never the client's input) is a 500, and we go on. */
  private onRequest(req: http.IncomingMessage, res: http.ServerResponse): void {
    try {
      new RequestGates(this, req, res).run();
    } catch {
      if (res.headersSent) res.destroy();
      else {
        const body = refusalBody(-32603, 'Internal error');
        res.writeHead(500, { ...JSON_HEADERS, 'Content-Length': Buffer.byteLength(body), Connection: 'close' });
        res.end(body);
      }
    }
  }

  /** Step 4: hand one checked message to the SDK with a tool server for this request; `rec` gets the result. */
  readonly answer: AnswerMessage = async (req, res, message, entry, rec, isToolCall) => {
    const { bridge } = this;
    // A 2025-era HTTP request names its revision in this header only (its fresh server never saw `initialize`); an
    // envelope's revision, when the request has one, comes with `context` and wins.
    const header = knownRevision(req.headers['mcp-protocol-version']);
    const revision = header === undefined ? {} : { protocolVersion: header };
    const recording: Bridge = {
      search: (args, c) => bridge.search(args, c),
      read: (args, c) => bridge.read(args, c),
      call: (tool: ToolName, args, c, context) => {
        this.current = rec;
        try {
          const result = bridge.call(tool, args, c, { ...revision, ...context, client: entry.name });
          rec.result = result.ok ? 'ok' : result.error.code;
          return result;
        } finally {
          this.current = null;
        }
      },
    };
    const server = {
      caller: callerOf(entry),
      bridge: recording,
      version: this.opts.version,
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
    await this.exchange.answer(req, res, message, server);
    if (res.statusCode >= 400 && rec.result === 'ok') rec.result = 'refused';
  };

  /** Step 5: malformed HTTP, or a client past the header or request timeout: answer when the socket can take it. */
  private onClientError(err: NodeJS.ErrnoException, socket: Socket): void {
    const timeout = err.code === 'ERR_HTTP_REQUEST_TIMEOUT' || err.code === 'ERR_HTTP_HEADERS_TIMEOUT';
    const status = timeout ? 408 : err.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400;
    const pending = (socket as Socket & { _httpMessage?: http.ServerResponse | null })._httpMessage ?? null;
    if (pending === null && this.answeredTimeout.has(socket)) {
      socket.destroy();
      return;
    }
    // A request whose handler runs logs its own line when its response closes; mark why it is closing.
    if (pending !== null && timeout) this.timedOut.add(pending);
    else if (pending === null)
      this.log(`client=- tool=- result=${timeout ? 'timeout' : 'bad_http'} status=${status} ms=0`);
    if (socket.writable && (pending === null || !pending.headersSent)) {
      const body = refusalBody(-32000, http.STATUS_CODES[status]!);
      socket.end(
        `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
      socket.destroySoon();
    } else socket.destroy();
  }

  /** Step 6: listen; the accepted Host values are set from the bound port before any request is read. */
  async listen(): Promise<void> {
    const { server, opts } = this;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(opts.listen.port, opts.listen.host, () => {
        server.off('error', reject);
        const port = (server.address() as AddressInfo).port;
        this.allowed = allowedHosts({ host: opts.listen.host, port }, opts.tls !== undefined, opts.allowedHosts);
        resolve();
      });
    });
  }

  /** Step 6: the running server's handle. */
  handle(): HttpServerHandle {
    const address = this.server.address() as AddressInfo;
    const hostPart = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    return {
      origin: `${this.opts.tls !== undefined ? 'https' : 'http'}://${hostPart}:${address.port}`,
      port: address.port,
      stats: () => ({
        inFlight: this.inFlight,
        reading: this.bodies.reading,
        buckets: this.limiter.size,
        connections: this.connections.size,
        refused: this.connections.refused,
        evicted: this.connections.evicted,
      }),
      close: (graceMs = SHUTDOWN_GRACE_MS) => this.close(graceMs),
      closeNow: () => this.closeNow(),
    };
  }

  /** Graceful stop: no new requests, idle connections closed as they appear, the rest after `graceMs`. */
  private close(graceMs: number): Promise<void> {
    const { server } = this;
    this.closing ??= new Promise<void>((resolve) => {
      this.isStopping = true;
      server.close(() => {
        void this.exchange.close().finally(resolve);
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
    return this.closing;
  }

  /** Every connection closed now, requests in flight included. */
  private closeNow(): void {
    this.isStopping = true;
    this.server.close();
    this.server.closeAllConnections();
  }
}

/**
 * Start serving. Resolves once listening.
 *
 * @throws ServeConfigError for an unsafe listen address (see `checkListenSafety`); RangeError for a bound out of
 *   range; the listen error (EADDRINUSE…) as it comes from Node
 */
export async function startHttpServer(opts: HttpServerOptions): Promise<HttpServerHandle> {
  checkListenSafety(opts.listen, opts.tls !== undefined, opts.behindProxy === true);
  const server = new HttpServer(opts);
  await server.listen();
  return server.handle();
}
