/**
 * The MCP protocol revision one tools/call was made under, for the audit record's `mcp.protocol.version`
 * (docs/AUDIT.md §Records). Only a revision this SDK speaks is named: the value comes from the client, and a
 * record never carries text a client chose.
 */
import {
  PROTOCOL_VERSION_META_KEY,
  SUPPORTED_PROTOCOL_VERSIONS,
  type Server,
  type ServerContext,
} from '@modelcontextprotocol/server';

/**
 * The revisions a record may name: the per-request envelope revision this server answers (docs/MCP.md
 * §Revisions; the SDK refuses any other envelope revision with -32022 before a handler runs) and the SDK's
 * `initialize`-era list.
 */
const KNOWN_REVISIONS: ReadonlySet<string> = new Set(['2026-07-28', ...SUPPORTED_PROTOCOL_VERSIONS]);

/** `value` when it names a revision a record may name (KNOWN_REVISIONS), else undefined. */
export function knownRevision(value: unknown): string | undefined {
  return typeof value === 'string' && KNOWN_REVISIONS.has(value) ? value : undefined;
}

/**
 * The revision of the request `ctx` on `server`: the request's own envelope (2026-07-28), else the revision the
 * connection negotiated in `initialize` (a 2025-era stdio session). A stateless 2025-era HTTP request, whose fresh
 * server never saw `initialize`, names its revision in the `MCP-Protocol-Version` header, which `serve` adds
 * (src/server/http.ts, with `knownRevision`).
 *
 * @returns a revision such as `2025-11-25`, or undefined when the request names none this SDK supports
 */
export function protocolVersionOf(server: Server, ctx: ServerContext): string | undefined {
  try {
    const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
    return knownRevision(envelope?.[PROTOCOL_VERSION_META_KEY]) ?? knownRevision(server.getNegotiatedProtocolVersion());
  } catch {
    return undefined;
  }
}
