/**
 * The MCP stdio server (PRODUCT.md §2, §3): two read-only tools over one caller fixed at launch.
 *
 * Built on the official SDK's low-level `Server`, not `McpServer`, because argument validation must happen in our
 * handler: bad arguments get the §2 `invalid_request` JSON (with a hint), never the SDK's own validator text.
 * Tool failures are results with `isError: true`; an unknown tool name is a protocol error (JSON-RPC InvalidParams),
 * as in the SDK's own high-level server. Operator logs are one short reason code per line on stderr; stdout carries
 * only protocol messages.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { Protocol } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { errorResult } from '../errors.js';
import { READ_INPUT_SCHEMA, SEARCH_INPUT_SCHEMA, TOOL_DESCRIPTIONS } from '../tools/schemas.js';
import { TOOL_NAMES, type Bridge, type Caller, type ToolName, type ToolResult } from '../tools/types.js';

export interface McpServerOptions {
  /** Who every call is made as: fixed at launch from `--home`/`HERMES_HOME` and `--run-kind` (PRODUCT.md §3). */
  caller: Caller;
  bridge: Bridge;
  /** Reported to the client as the server version (package.json). */
  version: string;
  /** Operator log sink for the server's own reason codes (default: one line on stderr). */
  log?: (reason: string) => void;
}

/** Annotations shared by both tools: they only read, and nothing outside the operator's folder is touched. */
const READ_ONLY_ANNOTATIONS = Object.freeze({
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
});

/** The two tools exactly as tools/list advertises them (names, descriptions, input schemas of PRODUCT.md §2). */
export const TOOLS: readonly Tool[] = Object.freeze([
  {
    name: 'memory_bridge_search',
    title: 'Search memory',
    description: TOOL_DESCRIPTIONS.memory_bridge_search,
    inputSchema: structuredClone(SEARCH_INPUT_SCHEMA) as unknown as Tool['inputSchema'],
    annotations: { title: 'Search memory', ...READ_ONLY_ANNOTATIONS },
  },
  {
    name: 'memory_bridge_read',
    title: 'Read a memory document',
    description: TOOL_DESCRIPTIONS.memory_bridge_read,
    inputSchema: structuredClone(READ_INPUT_SCHEMA) as unknown as Tool['inputSchema'],
    annotations: { title: 'Read a memory document', ...READ_ONLY_ANNOTATIONS },
  },
]);

/**
 * tools/call as it arrives, before any checking of `params`: we look at `name` and `arguments` ourselves.
 * The SDK's `Server.setRequestHandler` wraps tools/call in `CallToolRequestSchema`, which rejects an `arguments`
 * value that is not an object with the SDK's own error text; PRODUCT.md §2 wants our `invalid_request` JSON there.
 */
const RawCallToolRequestSchema = z.object({
  method: z.literal('tools/call'),
  params: z.unknown().optional(),
});

function isToolName(value: unknown): value is ToolName {
  return typeof value === 'string' && (TOOL_NAMES as readonly string[]).includes(value);
}

/** Wrap a §2 result as MCP tool content: the JSON text, and `isError` for every `ok: false`. */
export function toCallToolResult(result: ToolResult): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(result) }], isError: !result.ok };
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

/** Create the low-level server with both handlers installed (not yet connected). */
export function createMcpServer(opts: McpServerOptions): Server {
  const log = opts.log ?? ((reason: string) => process.stderr.write(`memory-bridge: server ${reason}\n`));
  const server = new Server(
    { name: 'memory-bridge', version: opts.version },
    { capabilities: { tools: { listChanged: false } } },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [...TOOLS] }));
  // Registered through Protocol's method to skip Server's tools/call wrapper (see RawCallToolRequestSchema); the
  // capability check that Server adds still runs (it is a virtual method) against the tools capability above.
  Protocol.prototype.setRequestHandler.call(server, RawCallToolRequestSchema, (request: z.infer<typeof RawCallToolRequestSchema>) =>
    handleToolCall(request.params, opts.bridge, opts.caller, log),
  );
  server.onerror = () => log('transport_error');
  return server;
}

/**
 * Serve MCP over this process's stdin/stdout until the client goes away (stdin ends or the transport closes).
 * Every call is made as `opts.caller`; a bad call is answered and the server keeps serving.
 */
export async function runMcpServer(opts: McpServerOptions): Promise<void> {
  const server = createMcpServer(opts);
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
  });
  const onEnd = (): void => {
    void server.close();
  };
  process.stdin.once('end', onEnd);
  process.stdin.once('close', onEnd);
  try {
    await server.connect(transport);
    await closed;
  } finally {
    process.stdin.off('end', onEnd);
    process.stdin.off('close', onEnd);
  }
}
