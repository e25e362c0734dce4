/**
 * The MCP server of both transports (docs/TOOLS.md, docs/MCP.md): two read-only tools over one caller, answering
 * protocol revision 2026-07-28 (`server/discover`, a `_meta` envelope on every request) and 2025-11-25 (the
 * `initialize` handshake) with the same tools and the same answers.
 *
 * Built on the official SDK v2's low-level `Server` (`@modelcontextprotocol/server`), which owns both eras' wire
 * codecs: `server/discover`, `initialize`, `ping`, cancellation, the envelope checks, `resultType`, and `ttlMs` /
 * `cacheScope` on cacheable results. Not on `McpServer`: its tools take Standard Schema validators and answer a bad
 * argument with the validator's own text as a tool result, and its tools/call answers an unknown tool name as a
 * tool result that repeats the name; here argument validation happens in our handler (bad arguments get the
 * `invalid_request` JSON of docs/TOOLS.md §Errors with a hint) and an unknown tool is a protocol error (JSON-RPC
 * InvalidParams, -32602). Non-object `arguments`, which the SDK's wire schema would refuse with its own text, reach
 * the bridge through `raw-arguments.ts`.
 *
 * Serving entries: `runMcpServer` (stdio: the SDK's `serveStdio` over our `LineTransport`, linear framing with a
 * 1 MiB line cap) and `src/server/http.ts` (`serve`). Operator logs are one short reason code per line on stderr;
 * stdout carries only protocol messages.
 */
import {
  ProtocolError,
  ProtocolErrorCode,
  Server,
  type CacheHint,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { errorResult } from '../errors.js';
import { MAX_RESULT_SIZE_CHARS } from '../tools/result-size.js';
import {
  READ_INPUT_SCHEMA,
  READ_OUTPUT_SCHEMA,
  SEARCH_INPUT_SCHEMA,
  SEARCH_OUTPUT_SCHEMA,
  TOOL_DESCRIPTIONS,
} from '../tools/schemas.js';
import { TOOL_NAMES, type Bridge, type Caller, type ToolName, type ToolResult } from '../tools/types.js';
import { protocolVersionOf } from './protocol-version.js';
import { DeferredBridge } from './deferred-bridge.js';
import { argumentsOf } from './raw-arguments.js';
import { LineTransport } from './stdio.js';

export interface McpServerOptions {
  /** Who every call is made as: fixed at launch from `--home`/`HERMES_HOME` and `--run-kind` (docs/POLICY.md). */
  caller: Caller;
  /**
   * What answers the tool calls. A `DeferredBridge` (`memory-bridge mcp`) is loaded once `tools/list` has been
   * answered or at the first tool call, whichever comes first; a tool call waits for it, and one that cannot be
   * loaded answers `unavailable`.
   */
  bridge: Bridge | DeferredBridge;
  /** Reported to the client as the server version (package.json). */
  version: string;
  /** Operator log sink for the server's own reason codes (default: one line on stderr). */
  log?: (reason: string) => void;
  /**
   * Refuse tool requests until `initialize` has been answered (docs/DESIGN.md "Line framing"). True for a stdio
   * connection that opened in the 2025 era; a 2026-07-28 request carries its version and capabilities itself and
   * a stateless HTTP request is served by a fresh server that never sees the client's `initialize`, so both leave
   * it off (default false).
   */
  requireInitialize?: boolean;
  /**
   * The tools `tools/list` advertises (default `TOOLS`). Only tests pass another list: tests/conformance adds the
   * conformance suite's JSON Schema 2020-12 tool to check that this listing path keeps every schema keyword
   * (docs/MCP.md §Conformance). A tool not in `TOOL_NAMES` is still answered as unknown by tools/call.
   */
  tools?: readonly Tool[];
}

/**
 * `ttlMs` and `cacheScope` of every cacheable result (`tools/list`, `server/discover`; docs/MCP.md §Caching):
 * nothing is reused, and nothing is shared between callers. Every call re-reads the policy, so no answer may be
 * served from a cache past a policy edit; and over HTTP what a caller sees follows from its own token.
 */
export const CACHE_HINT: Readonly<Required<CacheHint>> = Object.freeze({ ttlMs: 0, cacheScope: 'private' });

/** Annotations shared by both tools: they only read, and nothing outside the operator's folder is touched. */
const READ_ONLY_ANNOTATIONS = Object.freeze({
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
});

/** The `_meta` key under which a tool declares the longest result it can return (docs/MCP.md §Typed results). */
export const MAX_RESULT_SIZE_META_KEY = 'anthropic/maxResultSizeChars';

/**
 * The two tools exactly as tools/list advertises them (names, descriptions, input and output schemas of
 * docs/TOOLS.md, the result size bound of src/tools/result-size.ts).
 */
export const TOOLS: readonly Tool[] = Object.freeze([
  {
    name: 'memory_bridge_search',
    title: 'Search memory',
    description: TOOL_DESCRIPTIONS.memory_bridge_search,
    inputSchema: structuredClone(SEARCH_INPUT_SCHEMA) as unknown as Tool['inputSchema'],
    outputSchema: structuredClone(SEARCH_OUTPUT_SCHEMA) as unknown as Tool['outputSchema'],
    annotations: { title: 'Search memory', ...READ_ONLY_ANNOTATIONS },
    _meta: { [MAX_RESULT_SIZE_META_KEY]: MAX_RESULT_SIZE_CHARS.memory_bridge_search },
  },
  {
    name: 'memory_bridge_read',
    title: 'Read a memory document',
    description: TOOL_DESCRIPTIONS.memory_bridge_read,
    inputSchema: structuredClone(READ_INPUT_SCHEMA) as unknown as Tool['inputSchema'],
    outputSchema: structuredClone(READ_OUTPUT_SCHEMA) as unknown as Tool['outputSchema'],
    annotations: { title: 'Read a memory document', ...READ_ONLY_ANNOTATIONS },
    _meta: { [MAX_RESULT_SIZE_META_KEY]: MAX_RESULT_SIZE_CHARS.memory_bridge_read },
  },
]);

function isToolName(value: unknown): value is ToolName {
  return typeof value === 'string' && (TOOL_NAMES as readonly string[]).includes(value);
}

/**
 * Wrap a tool result (docs/TOOLS.md §Results) as an MCP tool result: `structuredContent` is the answer object (it
 * matches the tool's output schema, error answers included), the one text block is the same JSON for clients that
 * read text, and `isError` is set for every `ok: false`.
 */
export function toCallToolResult(result: ToolResult): CallToolResult {
  // The result is plain JSON data (no undefined members), so the object serializes to exactly the text.
  return {
    content: [{ type: 'text', text: JSON.stringify(result) }],
    structuredContent: result as unknown as { [key: string]: unknown },
    isError: !result.ok,
  };
}

/** `params._meta.traceparent` as sent (the audit record keeps only a well-formed trace id), or undefined. */
function traceparentOf(params: object): unknown {
  try {
    const meta = (params as { _meta?: unknown })._meta;
    return typeof meta === 'object' && meta !== null ? (meta as { traceparent?: unknown }).traceparent : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Answer one tools/call. `params` is whatever the client sent; `protocolVersion` is the request's MCP revision
 * (protocol-version.ts), passed on for the audit record only.
 *
 * @throws ProtocolError(InvalidParams) when `params` is not an object or names a tool we do not have (protocol misuse)
 */
export function handleToolCall(
  params: unknown,
  bridge: Bridge,
  caller: Caller,
  log: (reason: string) => void,
  protocolVersion?: string,
): CallToolResult {
  if (typeof params !== 'object' || params === null || Array.isArray(params)) {
    log('bad_call_params');
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'tools/call needs params with a tool name');
  }
  const { name } = params as { name?: unknown };
  const args = argumentsOf(params);
  if (!isToolName(name)) {
    log('unknown_tool');
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Unknown tool');
  }
  let result: ToolResult;
  try {
    // The bridge validates `args` (missing, not an object, extra keys, bounds) and never throws by contract;
    // the catch only keeps a broken build from taking the server down.
    const context = {
      traceparent: traceparentOf(params),
      ...(protocolVersion === undefined ? {} : { protocolVersion }),
    };
    result = bridge.call(name, args, caller, context);
  } catch {
    log('internal');
    result = errorResult('unavailable');
  }
  return toCallToolResult(result);
}

/**
 * Create one tool server (not yet connected): the SDK's `Server` with the tools capability, the cache hint above
 * on every cacheable result, and our tools/list and tools/call handlers. A serving entry marks it 2026-07-28 or
 * 2025-era; the handlers are the same for both.
 */
export function createMcpServer(opts: McpServerOptions): Server {
  const log = opts.log ?? ((reason: string) => process.stderr.write(`memory-bridge: server ${reason}\n`));
  const server = new Server(
    { name: 'memory-bridge', version: opts.version },
    {
      capabilities: { tools: { listChanged: false } },
      cacheHints: { 'tools/list': CACHE_HINT, 'server/discover': CACHE_HINT },
    },
  );
  // The lifecycle (docs/DESIGN.md "Line framing"), when the session has one: before `initialize` only `initialize`
  // and `ping` are answered; a tool request gets JSON-RPC Invalid Request, never a result.
  const requireInitialized = (): void => {
    if (opts.requireInitialize !== true || server.getClientVersion() !== undefined) return;
    log('not_initialized');
    throw new ProtocolError(ProtocolErrorCode.InvalidRequest, 'Server not initialized: send initialize first');
  };
  const tools = opts.tools ?? TOOLS;
  const bridge = opts.bridge;
  server.setRequestHandler('tools/list', () => {
    requireInitialized();
    if (bridge instanceof DeferredBridge) bridge.loadSoon();
    return { tools: [...tools] };
  });
  server.setRequestHandler('tools/call', (request, ctx) => {
    requireInitialized();
    const protocolVersion = protocolVersionOf(server, ctx);
    if (!(bridge instanceof DeferredBridge))
      return handleToolCall(request.params, bridge, opts.caller, log, protocolVersion);
    return bridge.get().then(
      (loaded) => handleToolCall(request.params, loaded, opts.caller, log, protocolVersion),
      () => {
        log('internal');
        return toCallToolResult(errorResult('unavailable'));
      },
    );
  });
  server.onerror = () => log('transport_error');
  return server;
}

/**
 * Serve MCP over this process's stdin/stdout until the client goes away (stdin ends or the transport closes).
 * The SDK's `serveStdio` picks the era from the opening message (`initialize`: 2025-11-25, pinned for the
 * connection; a request with the 2026-07-28 envelope: modern) and builds one server for it from our factory, over
 * `LineTransport` (linear framing, 1 MiB line cap). Every call is made as `opts.caller`; a bad call or a bad line
 * is answered and the server keeps serving. With a `DeferredBridge`, `initialize`, `ping` and `tools/list` are
 * answered without loading it, tool calls wait for it, and every request read before the input ends is answered.
 */
export async function runMcpServer(opts: McpServerOptions): Promise<void> {
  const log = opts.log ?? ((reason: string) => process.stderr.write(`memory-bridge: server ${reason}\n`));
  const deferred = opts.bridge instanceof DeferredBridge ? opts.bridge : null;
  // Input that ends before the bridge is loaded: it is loaded then (the start check line comes with it), and the
  // calls read so far, which wait for it, are answered before the transport closes (their answers follow in the
  // same turn of the event loop as the load settling).
  const beforeClose = async (): Promise<void> => {
    await deferred?.get().catch(() => undefined);
    await new Promise<void>((resolve) => setImmediate(resolve));
  };
  const transport = new LineTransport(process.stdin, process.stdout, {
    log,
    ...(deferred === null ? {} : { beforeClose }),
  });
  serveStdio((ctx) => createMcpServer({ ...opts, log, requireInitialize: ctx.era === 'legacy' }), {
    transport,
    onerror: () => log('transport_error'),
  });
  await transport.ended;
}
