/**
 * One 2025-era HTTP request answered in one JSON body by the SDK's `Server` over a transport that lives for that
 * request only (docs/MCP.md §Revisions, docs/HTTP.md): the common case of `POST /mcp`, a request that is neither
 * `initialize` nor anything the SDK's Streamable HTTP transport would refuse.
 *
 * The SDK's `WebStandardStreamableHTTPServerTransport` answers such a request with exactly `JSON.stringify` of the
 * response its server sends, status 200 and `Content-Type: application/json`; reaching it from Node costs a web
 * `Request` built from the Node request, a web `Response` read back through a web stream, and schema checks of
 * the outgoing message (about 1.3 ms of a 13.6 ms warm search at 10,000 notes, docs/MCP.md §Speed).
 * `plainRequestOf` says whether a message is one the transport would hand to its server as it is; for those, the
 * same `Server` built by `createMcpServer` answers through `ExchangeTransport` and the exchange writes the same
 * bytes itself. Everything else (`initialize`, notifications, a missing `Accept` type, another `Content-Type`, an
 * unsupported `MCP-Protocol-Version`, a message that is not a JSON-RPC request) still goes to the SDK's
 * transport, which answers in its own words (`src/server/http-mcp.ts`).
 */
import type http from 'node:http';
import {
  isJsonContentType,
  isJSONRPCRequest,
  parseJSONRPCMessage,
  SUPPORTED_PROTOCOL_VERSIONS,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type RequestId,
  type Transport,
} from '@modelcontextprotocol/server';

/** A header's one value as the web `Headers` of the SDK's transport would give it (Node joins repeats with ", "). */
export function headerOf(req: http.IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/**
 * The JSON-RPC request the SDK's Streamable HTTP transport (stateless, JSON responses) would pass to its server
 * unchanged for this 2025-era `POST`, or null when it would do anything else. Its conditions, in its order:
 * `Accept` names both `application/json` and `text/event-stream` (else 406); `Content-Type` is JSON (else 415);
 * the message is a JSON-RPC message (else 400) and a request (a notification or a response gets 202); it is not
 * `initialize` (which the transport treats on its own); an `MCP-Protocol-Version` header, if any, names a revision
 * the server speaks (else 400). `message` is the parsed body, already past `carryRawArguments`. Constant work
 * beyond the SDK's own schema checks of the message.
 */
export function plainRequestOf(req: http.IncomingMessage, message: unknown): JSONRPCRequest | null {
  const accept = headerOf(req, 'accept');
  if (accept === undefined || !accept.includes('application/json') || !accept.includes('text/event-stream'))
    return null;
  const contentType = headerOf(req, 'content-type');
  if (contentType === undefined || !isJsonContentType(contentType)) return null;
  let parsed: JSONRPCMessage;
  try {
    parsed = parseJSONRPCMessage(message);
  } catch {
    return null;
  }
  if (!isJSONRPCRequest(parsed) || parsed.method === 'initialize') return null;
  const version = headerOf(req, 'mcp-protocol-version');
  if (version !== undefined && !(SUPPORTED_PROTOCOL_VERSIONS as readonly string[]).includes(version)) return null;
  return parsed;
}

/**
 * The SDK `Transport` of one request: `deliver` hands the request to the connected server, `answered` resolves
 * with the server's response to it (a result or an error), or with null when the transport closes first. Any
 * other message the server sends is dropped, as the SDK's transport drops it in JSON mode (our handlers send
 * none).
 */
export class ExchangeTransport implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: ((message: JSONRPCMessage, extra?: object) => void) | undefined;
  /** The response to the delivered request, or null when the transport closed before one was sent. */
  readonly answered: Promise<JSONRPCMessage | null>;
  private settle: (message: JSONRPCMessage | null) => void = () => undefined;
  private closed = false;

  constructor(private readonly id: RequestId) {
    this.answered = new Promise((resolve) => {
      this.settle = resolve;
    });
  }

  async start(): Promise<void> {}

  /**
   * Hand the request to the server (call once, after `connect`). Unlike the SDK's transport it gives the handlers
   * no web `Request` (`ctx.http.req`): ours read nothing of the HTTP request, and what a record needs from it (the
   * `MCP-Protocol-Version` of a 2025-era call) `http.ts` passes to the bridge itself.
   */
  deliver(request: JSONRPCRequest): void {
    this.onmessage?.(request, {});
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) return;
    const m = message as { id?: unknown; result?: unknown; error?: unknown };
    if (m.id === this.id && (m.result !== undefined || m.error !== undefined)) this.settle(message);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.settle(null);
    this.onclose?.();
  }
}
