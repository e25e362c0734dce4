/**
 * OAuth 2.0 Protected Resource Metadata (RFC 9728) for `serve` (docs/HTTP.md §Authorization): the document that
 * tells an MCP host what `/mcp` is and how a token is presented, and the `WWW-Authenticate` challenge of every 401
 * that names it (RFC 9728 §5.1, `resource_metadata`).
 *
 * Tokens stay static per-client bearer tokens from the clients file: the document lists no authorization server,
 * so a host does not start an OAuth flow and is configured with the header instead. The URLs are built from the
 * request's `Host`, which has passed the Host check first (so only `[a-z0-9.-]`, a bracketed IPv6 address and a
 * port can appear), and the scheme the client reached: `https` with TLS here or behind a TLS-terminating proxy.
 * Nothing in the document or the challenge depends on the token, so every 401 stays identical for one `Host`.
 */
import type { HostName } from './http.js';

/** Where the document is served (RFC 9728 §3: the well-known URI of the origin). */
export const RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource';
/** The same document at the path-suffixed form for the resource `…/mcp` (RFC 9728 §3.1). */
export const RESOURCE_METADATA_MCP_PATH = `${RESOURCE_METADATA_PATH}/mcp`;

/** `scheme://host[:port]` as the client reached this server, from its parsed `Host` (null: none usable). */
export function publicOrigin(h: HostName | null, secure: boolean): string | null {
  if (h === null) return null;
  return `${secure ? 'https' : 'http'}://${h.name}${h.port === null ? '' : `:${h.port}`}`;
}

/** The metadata document for the resource at `${origin}/mcp` (RFC 9728 §2). */
export function resourceMetadata(origin: string): Record<string, unknown> {
  return {
    resource: `${origin}/mcp`,
    bearer_methods_supported: ['header'],
    resource_name: 'memory-bridge',
  };
}

/** The `WWW-Authenticate` value of a 401 (RFC 6750 §3 with RFC 9728 §5.1's parameter). */
export function bearerChallenge(origin: string | null): string {
  return origin === null ? 'Bearer' : `Bearer resource_metadata="${origin}${RESOURCE_METADATA_PATH}"`;
}
