/**
 * One checked `POST /mcp` message answered by the SDK v2 (docs/HTTP.md, docs/MCP.md §Revisions): `http.ts` has
 * already applied Host/Origin, the bearer token, the rate, the concurrency limit, the body bound and strict JSON;
 * this module only turns the message into an MCP answer, stateless, with a fresh tool server for the request.
 *
 * - A 2026-07-28 request (the `_meta` envelope claim, decided by the SDK's own `isLegacyRequest`) goes to the
 *   SDK's `createMcpHandler` in modern-only mode (one JSON body per answer): it checks the envelope, the `Mcp-Method` and
 *   `Mcp-Name` headers against the body (-32020), the revision (-32022), and adds `resultType`, `ttlMs` and
 *   `cacheScope` to what our server answers.
 * - Everything else is 2025-era and goes to a fresh SDK `WebStandardStreamableHTTPServerTransport` without
 *   sessions and with JSON responses: what `serve` answered before the SDK v2, byte for byte.
 *
 * Node's request becomes a web `Request` carrying the method, URL and headers (the body is handed over already
 * parsed), and the web `Response` is written back whole: every answer here is one JSON body, no stream.
 */
import type http from 'node:http';
import {
  createMcpHandler,
  isLegacyRequest,
  WebStandardStreamableHTTPServerTransport,
  type McpHttpHandler,
} from '@modelcontextprotocol/server';
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
    maxBodyBytes: number,
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

/**
 * Create the exchange. `onerror` receives SDK-side faults and rejections (reporting only; the operator line of
 * the request is written by `http.ts`).
 */
export function createMcpExchange(onerror: (error: Error) => void): McpExchange {
  const modern: McpHttpHandler = createMcpHandler(
    (ctx) => createMcpServer(ctx.authInfo?.extra?.[SERVER_OPTIONS] as McpServerOptions),
    // 'auto' answers with one JSON body unless a handler sends a message before its result, which ours never do
    // ('json' would say so on stderr at every start).
    { legacy: 'reject', responseMode: 'auto', onerror },
  );
  return {
    async answer(req, res, message, server, maxBodyBytes) {
      const request = webRequestOf(req);
      const parsedBody = carryRawArguments(message);
      if (await isLegacyRequest(request, parsedBody, { maxRequestBodySize: maxBodyBytes })) {
        const mcp = createMcpServer(server);
        // No sessionIdGenerator: the SDK issues no session ids, and this transport serves this request only.
        const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: true });
        try {
          await mcp.connect(transport);
          await writeResponse(res, await transport.handleRequest(request, { parsedBody }));
        } finally {
          void transport.close();
          void mcp.close();
        }
        return;
      }
      const authInfo = { token: '', clientId: 'memory-bridge', scopes: [], extra: { [SERVER_OPTIONS]: server } };
      await writeResponse(res, await modern.fetch(request, { parsedBody, authInfo }));
    },
    close: () => modern.close(),
  };
}
