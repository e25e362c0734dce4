/**
 * The public library surface of memory-bridge: create the bridge, call the two tools, and the types and error
 * class a host needs. Named exports only; everything else is internal and may change.
 */
export { createBridge } from './tools/bridge.js';
export { BridgeError } from './errors.js';
export { loadPolicy } from './policy/load.js';
export type { ErrorResult, PublicCode } from './errors.js';
export type { Limits, Policy } from './policy/types.js';
export type {
  Bridge,
  BridgeOptions,
  Caller,
  LogEvent,
  ReadResult,
  SearchHit,
  SearchResult,
  ToolName,
  ToolResult,
} from './tools/types.js';
