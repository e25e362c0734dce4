/**
 * One checked `POST /mcp` message answered by the SDK v2 (docs/HTTP.md, docs/MCP.md §Revisions): `http.ts` has
 * already applied Host/Origin, the bearer token, the rate, the concurrency limit, the body bound and strict JSON;
 * this module only turns the message into an MCP answer, stateless, with a fresh tool server for the request.
 *
 * The era comes from the SDK's own classification (`classifyInboundRequest`, what its `isLegacyRequest` and
 * `createMcpHandler` run), fed from Node's headers and the parsed body:
 *
 * - A 2026-07-28 request (the `_meta` envelope claim) goes to the SDK's `createMcpHandler` in modern-only mode
 *   (one JSON body per answer): it checks the envelope, the `Mcp-Method` and `Mcp-Name` headers against the body
 *   (-32020), the revision (-32022), and adds `resultType`, `ttlMs` and `cacheScope` to what our server answers.
 * - A 2025-era request that the SDK's Streamable HTTP transport would pass to its server as it is (the common
 *   case; `plainRequestOf` in json-exchange.ts) is answered by the same fresh server over `ExchangeTransport`,
 *   and its response is written as that transport writes it: status 200, `application/json`, the JSON text.
 * - Every other 2025-era message (`initialize`, notifications, wrong `Accept` or `Content-Type`, an unsupported
 *   `MCP-Protocol-Version`, something that is not JSON-RPC) goes to a fresh SDK
 *   `WebStandardStreamableHTTPServerTransport` without sessions and with JSON responses, which answers it in its
 *   own words.
 *
 * For the SDK's web handlers Node's request becomes a web `Request` carrying the method, URL and headers (the
 * body is handed over already parsed), and the web `Response` is written back whole: every answer here is one
 * JSON body, no stream.
 */
import type http from 'node:http';
import {
  classifyInboundRequest,
  createMcpHandler,
  WebStandardStreamableHTTPServerTransport,
  type InboundHttpRequest,
  type McpHttpHandler,
} from '@modelcontextprotocol/server';
import { ExchangeTransport, headerOf, plainRequestOf } from './json-exchange.js';
import { createMcpServer, type McpServerOptions } from './mcp.js';
import { carryRawArguments } from './raw-arguments.js';

/** Answers checked messages; one per `serve` process. */
export interface McpExchange {
  /**
   * Answer one parsed JSON-RPC message (not a batch) on `res`, as the caller of `server` (its bridge, caller and
   * log are this request's). Resolves once the answer is written.
   */
  answer(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    message: unknown,
    server: McpServerOptions,
  ): Promise<void>;
  /** Abort modern exchanges still in flight (server stop). */
  close(): Promise<void>;
}

/** The key under which a request's server options travel to the modern handler's factory. */
const SERVER_OPTIONS = 'memoryBridgeServer';

/** A web `Request` with `req`'s method, URL and headers; the body is passed separately, parsed. */
function webRequestOf(req: http.IncomingMessage): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (typeof value === 'string') headers.set(name, value);
    else if (Array.isArray(value)) for (const v of value) headers.append(name, v);
  }
  return new Request(`http://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`, {
    method: req.method ?? 'POST',
    headers,
  });
}

/** Write a web `Response` to Node's `res` in one piece (its body is one JSON document or empty). */
async function writeResponse(res: http.ServerResponse, response: Response): Promise<void> {
  const body = Buffer.from(await response.arrayBuffer());
  if (res.destroyed) return;
  const headers: http.OutgoingHttpHeaders = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  headers['content-length'] = body.length;
  res.writeHead(response.status, headers);
  res.end(body);
}

/** Write one JSON body as the SDK's transport answers a request: 200, `application/json`, nothing else of its own. */
function writeJson(res: http.ServerResponse, text: string): void {
  if (res.destroyed) return;
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** The standard request headers the SDK's classification reads, by its field names. */
const STANDARD_HEADERS = [
  ['protocolVersionHeader', 'mcp-protocol-version'],
  ['mcpMethodHeader', 'mcp-method'],
  ['mcpNameHeader', 'mcp-name'],
] as const;

/**
 * True when the SDK would serve this request as 2025-era (no `_meta` envelope claim): the classification that its
 * `isLegacyRequest` and `createMcpHandler` run (`classifyInboundRequest`), fed from Node's headers and the parsed
 * body instead of a web `Request`.
 */
function isLegacy(req: http.IncomingMessage, parsedBody: unknown): boolean {
  const request: InboundHttpRequest = { httpMethod: (req.method ?? 'POST').toUpperCase(), body: parsedBody };
  for (const [key, header] of STANDARD_HEADERS) {
    const value = headerOf(req, header);
    if (value !== undefined) request[key] = value;
  }
  return classifyInboundRequest(request).kind === 'legacy';
}

/** How the exchange answers 2025-era requests. */
export interface McpExchangeOptions {
  /**
   * Answer the requests `plainRequestOf` admits over `ExchangeTransport` (default true). False sends every 2025-era
   * message to the SDK's Streamable HTTP transport: the reference tests/server/json-exchange.test.ts compares the
   * default with, byte for byte.
   */
  plainJson?: boolean;
}

/**
 * Create the exchange. `onerror` receives SDK-side faults and rejections (reporting only; the operator line of
 * the request is written by `http.ts`).
 */
export function createMcpExchange(onerror: (error: Error) => void, options: McpExchangeOptions = {}): McpExchange {
  const plainJson = options.plainJson ?? true;
  const modern: McpHttpHandler = createMcpHandler(
    (ctx) => createMcpServer(ctx.authInfo?.extra?.[SERVER_OPTIONS] as McpServerOptions),
    // 'auto' answers with one JSON body unless a handler sends a message before its result, which ours never do
    // ('json' would say so on stderr at every start).
    { legacy: 'reject', responseMode: 'auto', onerror },
  );
  return {
    async answer(req, res, message, server) {
      const parsedBody = carryRawArguments(message);
      if (!isLegacy(req, parsedBody)) {
        const authInfo = { token: '', clientId: 'memory-bridge', scopes: [], extra: { [SERVER_OPTIONS]: server } };
        await writeResponse(res, await modern.fetch(webRequestOf(req), { parsedBody, authInfo }));
        return;
      }
      const plain = plainJson ? plainRequestOf(req, parsedBody) : null;
      const mcp = createMcpServer(server);
      if (plain !== null) {
        const transport = new ExchangeTransport(plain.id);
        try {
          await mcp.connect(transport);
          transport.deliver(plain);
          const answer = await transport.answered;
          if (answer === null) throw new Error('closed before an answer');
          writeJson(res, JSON.stringify(answer));
        } finally {
          void mcp.close();
        }
        return;
      }
      // No sessionIdGenerator: the SDK issues no session ids, and this transport serves this request only.
      const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true });
      try {
        await mcp.connect(transport);
        await writeResponse(res, await transport.handleRequest(webRequestOf(req), { parsedBody }));
      } finally {
        void transport.close();
        void mcp.close();
      }
    },
    close: () => modern.close(),
  };
}
