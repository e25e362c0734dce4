/**
 * Tool arguments as the client sent them, carried past the SDK's wire schema (docs/TOOLS.md §MCP: a bad argument
 * gets our `invalid_request` JSON with a hint, never a validator's own message).
 *
 * The SDK v2 parses every `tools/call` against the protocol's schema before any handler runs. That schema wants
 * `arguments` to be an object (a string, an array or `null` there would be answered with the SDK's validator text
 * as a protocol error), and it rebuilds the object it accepts, dropping an own `__proto__` key on the way (so
 * `{"query": "x", "__proto__": {}}`, which the bridge refuses for its extra key, would arrive as a valid search).
 * So both transports (stdio `LineTransport`, the HTTP endpoint) pass each incoming message through
 * `carryRawArguments` first: a `tools/call` that has `arguments` gets `{}` in their place and the value itself,
 * untouched, under `params._meta[RAW_ARGUMENTS_META_KEY]` (a value there is not parsed by the SDK); the tool
 * handler reads it back with `argumentsOf`, and the bridge judges exactly what the client sent. A value the client
 * put under that key itself is dropped first, so the key only ever holds what the transport moved there.
 */

/** The `_meta` key of a request's params that holds non-object arguments (never sent by the transport outward). */
export const RAW_ARGUMENTS_META_KEY = 'memory-bridge/raw-arguments';

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The message to hand to the SDK for one parsed JSON-RPC message (see the module comment). Anything that is not a
 * `tools/call` request with object params and an object (or absent) `_meta` is returned as it is; otherwise a
 * shallow copy. Constant work per message.
 */
export function carryRawArguments(message: unknown): unknown {
  if (!isPlainObject(message) || message.method !== 'tools/call' || !isPlainObject(message.params)) return message;
  const params = message.params;
  const meta = params._meta;
  if (meta !== undefined && !isPlainObject(meta)) return message;
  const hasOwnRaw = meta !== undefined && Object.hasOwn(meta, RAW_ARGUMENTS_META_KEY);
  const moves = Object.hasOwn(params, 'arguments');
  if (!hasOwnRaw && !moves) return message;
  const nextMeta: Record<string, unknown> = { ...meta };
  delete nextMeta[RAW_ARGUMENTS_META_KEY];
  const nextParams: Record<string, unknown> = { ...params, _meta: nextMeta };
  if (moves) {
    nextMeta[RAW_ARGUMENTS_META_KEY] = params.arguments;
    nextParams.arguments = {};
  }
  if (meta === undefined && Object.keys(nextMeta).length === 0) delete nextParams._meta;
  return { ...message, params: nextParams };
}

/** The arguments the client sent, from tools/call params as the SDK handed them to the handler. */
export function argumentsOf(params: { arguments?: unknown; _meta?: unknown }): unknown {
  const meta = params._meta;
  if (isPlainObject(meta) && Object.hasOwn(meta, RAW_ARGUMENTS_META_KEY)) return meta[RAW_ARGUMENTS_META_KEY];
  return params.arguments;
}
