/**
 * One audit record's fields (docs/AUDIT.md §Records): what one tool call was and what it released. Field names
 * follow the OpenTelemetry semantic conventions for MCP where one exists (`mcp.method.name`, `gen_ai.tool.name`,
 * `mcp.protocol.version`, `error.type`, `mcp.server.operation.duration` in seconds); the others live under
 * `memory_bridge.`. Never the query text, a tool argument, a token, or the id of a note that was not released: a
 * refused read records its reason code, not the id asked for.
 */
import { traceIdOf, type CallContext, type RunKind, type Transport } from '../audit/record.js';
import { hitVersionOf } from './hit-versions.js';
import type { ReadResult, ToolResult } from './types.js';

/** One released note: its id and `version`; for reads the code point offset and the code points released. */
export interface ReleasedNote {
  id: string;
  version?: string;
  offset?: number;
  chars?: number;
  /** A read with `outline: true`: the note's headings were released, not its text. */
  outline?: true;
}

/** Everything a record says, before the chain hash is added. */
export interface CallFacts {
  /** ms since the epoch when the call started. */
  startMs: number;
  durationS: number;
  tool: string;
  home: string;
  transport: Transport;
  runKind: RunKind;
  context: CallContext;
  result: ToolResult;
  /** The refusal's reason code (`error.type`), for `ok: false`. */
  reason?: string;
}

/** Code points of a string. */
function codePoints(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0xd800 || c > 0xdbff || i + 1 >= text.length) n++;
    else {
      const d = text.charCodeAt(i + 1);
      n++;
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
  }
  return n;
}

/** A read's id, version, offset and the code points of note text it released. */
function readReleased(read: ReadResult): ReleasedNote {
  const chars = read.next_offset === undefined ? codePoints(read.content) : Math.max(0, read.next_offset - read.offset);
  return { id: read.id, version: read.version, offset: read.offset, chars };
}

/**
 * What a result released: every search hit's id and version (noted by the search, hit-versions.ts); a read's id, version, offset and released code points; an
 * outline's id and version with `outline: true` (headings only); for a read of several ids, each answered note (a refused
 * one released nothing and is not named).
 */
export function releasedOf(result: ToolResult): ReleasedNote[] {
  if (!result.ok) return [];
  if ('results' in result)
    return result.results.map((hit) => {
      const version = hitVersionOf(result, hit.id);
      return version === undefined ? { id: hit.id } : { id: hit.id, version };
    });
  if ('notes' in result) return result.notes.filter((n): n is ReadResult => n.ok).map(readReleased);
  if ('outline' in result) return [{ id: result.id, version: result.version, outline: true }];
  return [readReleased(result)];
}

/**
 * The record as an object, keys in their documented order (docs/AUDIT.md §Records); the writer adds
 * `memory_bridge.query_hmac` (with `"queries": "hmac"`) and `prev`.
 */
export function recordOf(facts: CallFacts): Record<string, unknown> {
  const r = facts.result;
  const record: Record<string, unknown> = {
    time: new Date(facts.startMs).toISOString(),
    'mcp.method.name': 'tools/call',
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': facts.tool,
    'memory_bridge.home': facts.home,
    'memory_bridge.transport': facts.transport,
    'memory_bridge.run_kind': facts.runKind,
    'memory_bridge.outcome': r.ok ? 'ok' : r.error.code,
    'mcp.server.operation.duration': Math.round(facts.durationS * 1e6) / 1e6,
  };
  if (typeof facts.context.client === 'string') record['memory_bridge.client'] = facts.context.client;
  if (typeof facts.context.protocolVersion === 'string') record['mcp.protocol.version'] = facts.context.protocolVersion;
  const trace = traceIdOf(facts.context.traceparent);
  if (trace !== undefined) record.trace_id = trace;
  if (!r.ok && facts.reason !== undefined) record['error.type'] = facts.reason;
  if (r.ok) {
    record['memory_bridge.notes'] = releasedOf(r);
    record['memory_bridge.truncated'] = r.truncated;
    if ('results' in r) record['memory_bridge.incomplete'] = r.incomplete === true;
  }
  return record;
}
