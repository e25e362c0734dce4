/**
 * The MCP stdio server (docs/TOOLS.md, docs/POLICY.md): two read-only tools over one caller fixed at launch.
 *
 * Built on the official SDK's `Protocol` (JSON-RPC, ping, cancellation, request bookkeeping) over our own stdio
 * transport (`stdio.ts`: linear line framing with a 1 MiB cap), with the server side of `initialize` written here
 * (`ToolServer`), not on `McpServer` or the low-level
 * `Server`: argument validation must happen in our handler (bad arguments get the `invalid_request` JSON of docs/TOOLS.md §Errors with a
 * hint, never the SDK's validator text), and `Server`'s module statically loads ajv and the experimental tasks
 * code (about 30 ms of a cold start; docs/BENCHMARKS.md) for features two read-only tools never use (sampling,
 * elicitation, logging, tasks). `ToolServer` answers `initialize` exactly as `Server._oninitialize` does.
 * Tool failures are results with `isError: true`; an unknown tool name is a protocol error (JSON-RPC InvalidParams,
 * -32602; docs/TOOLS.md §MCP). That is not what the pinned SDK's high-level `McpServer` (1.32.2) does: its tools/call
 * handler throws `McpError(InvalidParams, "Tool <name> not found")` and then catches it itself, like every error but
 * UrlElicitationRequired, and answers a tool result `{content: [{type: 'text', text: <that message>}], isError: true}`
 * — which would also echo the requested name back into the model's context. Operator logs are one short reason code per line on stderr; stdout carries
 * only protocol messages.
 */
import { Protocol } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  ErrorCode,
  InitializedNotificationSchema,
  InitializeRequestSchema,
  LATEST_PROTOCOL_VERSION,
  ListToolsRequestSchema,
  McpError,
  SUPPORTED_PROTOCOL_VERSIONS,
  type CallToolResult,
  type ClientCapabilities,
  type Implementation,
  type InitializeRequest,
  type InitializeResult,
  type ServerCapabilities,
  type ServerNotification,
  type ServerRequest,
  type ServerResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
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
import { LineTransport } from './stdio.js';

export interface McpServerOptions {
  /** Who every call is made as: fixed at launch from `--home`/`HERMES_HOME` and `--run-kind` (docs/POLICY.md). */
  caller: Caller;
  bridge: Bridge;
  /** Reported to the client as the server version (package.json). */
  version: string;
  /** Operator log sink for the server's own reason codes (default: one line on stderr). */
  log?: (reason: string) => void;
  /**
   * Refuse tool requests until `initialize` has been answered (docs/DESIGN.md "Line framing"). True for a stdio
   * session; a stateless HTTP request is served by a fresh server that never sees the client's `initialize`, so
   * the HTTP endpoint leaves it off (default false).
   */
  requireInitialize?: boolean;
}

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

/**
 * tools/call as it arrives, before any checking of `params`: we look at `name` and `arguments` ourselves.
 * (The SDK's `Server.setRequestHandler` wraps tools/call in `CallToolRequestSchema`, which rejects an `arguments`
 * value that is not an object with the SDK's own error text; docs/TOOLS.md wants our `invalid_request` JSON there.)
 */
const RawCallToolRequestSchema = z.object({
  method: z.literal('tools/call'),
  params: z.unknown().optional(),
});

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

/**
 * Answer one tools/call. `params` is whatever the client sent.
 *
 * @throws McpError(InvalidParams) when `params` is not an object or names a tool we do not have (protocol misuse)
 */
export function handleToolCall(
  params: unknown,
  bridge: Bridge,
  caller: Caller,
  log: (reason: string) => void,
): CallToolResult {
  if (typeof params !== 'object' || params === null || Array.isArray(params)) {
    log('bad_call_params');
    throw new McpError(ErrorCode.InvalidParams, 'tools/call needs params with a tool name');
  }
  const { name, arguments: args } = params as { name?: unknown; arguments?: unknown };
  if (!isToolName(name)) {
    log('unknown_tool');
    throw new McpError(ErrorCode.InvalidParams, 'Unknown tool');
  }
  let result: ToolResult;
  try {
    // The bridge validates `args` (missing, not an object, extra keys, bounds) and never throws by contract;
    // the catch only keeps a broken build from taking the server down.
    result = bridge.call(name, args, caller);
  } catch {
    log('internal');
    result = errorResult('unavailable');
  }
  return toCallToolResult(result);
}

/**
 * The server side of an MCP session that offers tools only and never sends requests or notifications of its own.
 *
 * `initialize` is answered as the SDK's `Server` answers it: the client's protocol version when the SDK supports
 * it, else the latest; our capabilities; our name and version. `ping`, cancellation and progress come from
 * `Protocol`. Registering a handler for a method that needs a capability we did not declare throws, as in
 * `Server` (only `tools/list` and `tools/call` need one here: `tools`).
 */
export class ToolServer extends Protocol<ServerRequest, ServerNotification, ServerResult> {
  private clientCapabilities: ClientCapabilities | undefined;
  private clientInfo: Implementation | undefined;
  private initialized = false;

  constructor(
    private readonly serverInfo: Implementation,
    private readonly capabilities: ServerCapabilities,
  ) {
    super();
    this.setRequestHandler(InitializeRequestSchema, (request) => this.onInitialize(request));
    this.setNotificationHandler(InitializedNotificationSchema, () => undefined);
  }

  /** What the client declared in `initialize` (undefined before it). */
  getClientCapabilities(): ClientCapabilities | undefined {
    return this.clientCapabilities;
  }

  /** True once `initialize` has been answered (requests are handled in arrival order). */
  isInitialized(): boolean {
    return this.initialized;
  }

  /** The client's name and version from `initialize` (undefined before it). */
  getClientVersion(): Implementation | undefined {
    return this.clientInfo;
  }

  private onInitialize(request: InitializeRequest): InitializeResult {
    const requested = request.params.protocolVersion;
    this.clientCapabilities = request.params.capabilities;
    this.clientInfo = request.params.clientInfo;
    const protocolVersion = SUPPORTED_PROTOCOL_VERSIONS.includes(requested) ? requested : LATEST_PROTOCOL_VERSION;
    this.initialized = true;
    return { protocolVersion, capabilities: this.capabilities, serverInfo: this.serverInfo };
  }

  /** We send no requests except what `Protocol` itself may send (none needs a client capability). */
  protected assertCapabilityForMethod(): void {}

  /** We send no notifications except cancellation and progress, which need no capability. */
  protected assertNotificationCapability(): void {}

  protected assertRequestHandlerCapability(method: string): void {
    // Protocol's constructor registers ping before our fields exist.
    if (this.capabilities === undefined) return;
    if ((method === 'tools/list' || method === 'tools/call') && this.capabilities.tools === undefined) {
      throw new Error(`Server does not support tools (required for ${method})`);
    }
    if (method.startsWith('tasks/'))
      throw new Error(`Server does not support tasks capability (required for ${method})`);
  }

  /** We never send task-augmented requests. */
  protected assertTaskCapability(method: string): void {
    throw new Error(`Client does not support task creation (required for ${method})`);
  }

  /** A request asking for task creation is refused (no tasks capability), with `Server`'s message. */
  protected assertTaskHandlerCapability(method: string): void {
    if (this.capabilities === undefined) return;
    throw new Error(`Server does not support task creation (required for ${method})`);
  }
}

/** Create the server with both tool handlers installed (not yet connected). */
export function createMcpServer(opts: McpServerOptions): ToolServer {
  const log = opts.log ?? ((reason: string) => process.stderr.write(`memory-bridge: server ${reason}\n`));
  const server = new ToolServer({ name: 'memory-bridge', version: opts.version }, { tools: { listChanged: false } });
  // The lifecycle (docs/DESIGN.md "Line framing"), when the session has one: before `initialize` only `initialize`
  // and `ping` are answered; a tool request gets JSON-RPC Invalid Request, never a result.
  const requireInitialized = (): void => {
    if (opts.requireInitialize !== true || server.isInitialized()) return;
    log('not_initialized');
    throw new McpError(ErrorCode.InvalidRequest, 'Server not initialized: send initialize first');
  };
  server.setRequestHandler(ListToolsRequestSchema, () => {
    requireInitialized();
    return { tools: [...TOOLS] };
  });
  // tools/call is registered with a schema that leaves `params` unchecked (see RawCallToolRequestSchema).
  server.setRequestHandler(RawCallToolRequestSchema, (request: z.infer<typeof RawCallToolRequestSchema>) => {
    requireInitialized();
    return handleToolCall(request.params, opts.bridge, opts.caller, log);
  });
  server.onerror = () => log('transport_error');
  return server;
}

/**
 * Serve MCP over this process's stdin/stdout (`LineTransport`: linear framing, 1 MiB line cap) until the client
 * goes away (stdin ends or the transport closes). Every call is made as `opts.caller`; a bad call or a bad line is
 * answered and the server keeps serving.
 */
export async function runMcpServer(opts: McpServerOptions): Promise<void> {
  const log = opts.log ?? ((reason: string) => process.stderr.write(`memory-bridge: server ${reason}\n`));
  const server = createMcpServer({ ...opts, log, requireInitialize: true });
  const transport = new LineTransport(process.stdin, process.stdout, { log });
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
  });
  await server.connect(transport);
  await closed;
}
