/**
 * Cards from Qdrant through the official REST client (@qdrant/js-client-rest 1.18, which still runs on Node 20).
 * Connection settings follow the fleet's own variables (docs/EXPORT.md §Connection), so the export
 * reads the store exactly as the fleet's MCP server does; flags override them. The key comes only from an
 * environment variable, never from a flag value (a flag would show in `ps` and shell history).
 */
import { QdrantClient } from '@qdrant/js-client-rest';
import type { RawPoint } from './card.js';
import { ExportError } from './errors.js';
import type { SourceRead } from './source.js';

/** The fleet's collection name (hard-coded in its client). */
export const DEFAULT_COLLECTION = 'hermes_fleet_memory';
/** Points asked for per scroll request. */
export const SCROLL_PAGE = 256;

/** Effective connection settings. `url` wins over host/port/https when set. */
export interface QdrantSettings {
  url: string | null;
  host: string;
  port: number;
  https: boolean;
  /** Per-request timeout in seconds. */
  timeoutSeconds: number;
  collection: string;
  /** Name of the environment variable holding the key (the key itself is read at connect time). */
  apiKeyEnv: string;
}

/** Flag values that override the environment; undefined = not given. */
export interface QdrantFlags {
  url?: string;
  host?: string;
  port?: string;
  https?: boolean;
  timeout?: string;
  collection?: string;
  apiKeyEnv?: string;
}

function parseBool(v: string, what: string): boolean {
  const s = v.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(s)) return true;
  if (['0', 'false', 'no', 'off', ''].includes(s)) return false;
  throw new ExportError(`${what}: expected true or false`, 2);
}

function parsePort(v: string, what: string): number {
  if (!/^[0-9]{1,5}$/.test(v) || Number(v) < 1 || Number(v) > 65535) {
    throw new ExportError(`${what}: expected a port number from 1 to 65535`, 2);
  }
  return Number(v);
}

function parseTimeout(v: string, what: string): number {
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n) || n <= 0 || n > 3600) {
    throw new ExportError(`${what}: expected seconds, more than 0 and at most 3600`, 2);
  }
  return n;
}

function checkUrl(v: string, what: string): string {
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw new ExportError(`${what}: not a URL`, 2);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new ExportError(`${what}: use http:// or https://`, 2);
  // Credentials in a URL would end up in logs and in the manifest's source key; the key has its own variable.
  if (u.username !== '' || u.password !== '') throw new ExportError(`${what}: must not contain credentials`, 2);
  return v;
}

/**
 * One scalar connection setting's chain: its flag wins, then its environment variable (an empty one counts as
 * unset), then the default. `parse` reads a text value, naming `what` (the flag or the variable) in its error.
 */
interface SettingSpec<T> {
  flag: string;
  env: string;
  fallback: T;
  parse: (v: string, what: string) => T;
}

/** The flag → environment → default chain of every scalar Qdrant setting (docs/EXPORT.md §Connection). */
export const QDRANT_SETTING_TABLE = Object.freeze({
  host: { flag: '--host', env: 'FLEET_QDRANT_HOST', fallback: '127.0.0.1', parse: (v: string) => v },
  port: { flag: '--port', env: 'FLEET_QDRANT_PORT', fallback: 6333, parse: parsePort },
  https: { flag: '--https', env: 'FLEET_QDRANT_HTTPS', fallback: false, parse: parseBool },
  timeoutSeconds: { flag: '--timeout', env: 'FLEET_QDRANT_TIMEOUT', fallback: 10, parse: parseTimeout },
} satisfies Record<string, SettingSpec<unknown>>);

/** A setting's value by its chain: the flag (text is parsed, a typed flag taken as is), the variable, the default. */
function settingOf<T>(spec: SettingSpec<T>, flag: string | T | undefined, env: NodeJS.ProcessEnv): T {
  if (flag !== undefined) return typeof flag === 'string' ? spec.parse(flag, spec.flag) : flag;
  const v = env[spec.env];
  return v ? spec.parse(v, spec.env) : spec.fallback;
}

/**
 * Resolve settings: flags, then `FLEET_QDRANT_URL` (wins over the rest of the environment), then
 * `FLEET_QDRANT_HOST` (127.0.0.1) + `FLEET_QDRANT_PORT` (6333) + `FLEET_QDRANT_HTTPS` (false), and
 * `FLEET_QDRANT_TIMEOUT` seconds (10), each by its chain in `QDRANT_SETTING_TABLE`. A `--url` flag and a `--host`/`--port`/`--https` flag together are a usage
 * error. Throws ExportError with exit code 2 for malformed values.
 */
export function resolveQdrantSettings(env: NodeJS.ProcessEnv, flags: QdrantFlags): QdrantSettings {
  const hostFlags = flags.host !== undefined || flags.port !== undefined || flags.https !== undefined;
  if (flags.url !== undefined && hostFlags) {
    throw new ExportError('--url cannot be combined with --host, --port or --https', 2);
  }
  const timeoutSeconds = settingOf(QDRANT_SETTING_TABLE.timeoutSeconds, flags.timeout, env);
  const collection = flags.collection ?? DEFAULT_COLLECTION;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: a collection name must not hold `/` or a C0 control
  if (collection === '' || collection.length > 255 || /[/\u0000-\u001f]/.test(collection)) {
    throw new ExportError('--collection: expected a collection name', 2);
  }
  const apiKeyEnv = flags.apiKeyEnv ?? 'FLEET_QDRANT_KEY';
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(apiKeyEnv)) {
    throw new ExportError('--api-key-env: expected an environment variable name', 2);
  }
  let url: string | null = null;
  if (flags.url !== undefined) url = checkUrl(flags.url, '--url');
  else if (!hostFlags && env.FLEET_QDRANT_URL) url = checkUrl(env.FLEET_QDRANT_URL, 'FLEET_QDRANT_URL');
  const host = settingOf(QDRANT_SETTING_TABLE.host, flags.host, env);
  if (host === '' || (/[/:\s]/.test(host) && !/^\[?[0-9a-fA-F:]+\]?$/.test(host))) {
    throw new ExportError('--host: expected a host name without scheme or port', 2);
  }
  const port = settingOf(QDRANT_SETTING_TABLE.port, flags.port, env);
  const https = settingOf(QDRANT_SETTING_TABLE.https, flags.https, env);
  return { url, host, port, https, timeoutSeconds, collection, apiKeyEnv };
}

/** `scheme://host:port[/prefix]` of the settings, without credentials (for messages and the source key). */
export function endpointOf(s: QdrantSettings): string {
  if (s.url !== null) {
    const u = new URL(s.url);
    const port = u.port !== '' ? u.port : String(s.port);
    const prefix = u.pathname === '/' ? '' : u.pathname.replace(/\/$/, '');
    return `${u.protocol}//${u.hostname}:${port}${prefix}`;
  }
  return `${s.https ? 'https' : 'http'}://${s.host}:${s.port}`;
}

/** Progress callback: pages and points read so far. */
export type PageProgress = (pages: number, points: number) => void;

/**
 * The filter sent with every scroll: `status == "active"`, and when domains are selected, `domain` in that set.
 * Expiry is not filtered on the server: the live rule needs `pinned` too and is applied per card.
 */
export function scrollFilter(domains: readonly string[]): Record<string, unknown> {
  const must: Record<string, unknown>[] = [{ key: 'status', match: { value: 'active' } }];
  if (domains.length > 0) must.push({ key: 'domain', match: { any: [...domains] } });
  return { must };
}

/** A clear operator message for a failed request; never includes the key or the server's reply body. */
function describeFailure(e: unknown, s: QdrantSettings, pages: number): string {
  const where = `${endpointOf(s)} collection ${s.collection}`;
  const during = pages === 0 ? 'on the first request' : `after ${pages} complete page(s)`;
  const err = e as { name?: string; status?: unknown; message?: string; cause?: { code?: string } };
  if (err.name === 'QdrantClientTimeoutError') {
    return `Qdrant at ${where} did not answer within ${s.timeoutSeconds}s ${during}`;
  }
  if (typeof err.status === 'number') {
    if (err.status === 401 || err.status === 403) {
      return `Qdrant at ${where} refused the request (${err.status}): check the key in $${s.apiKeyEnv}`;
    }
    if (err.status === 404) return `Qdrant at ${where}: the collection does not exist (404)`;
    return `Qdrant at ${where} failed with HTTP ${err.status} ${during}`;
  }
  if (err.name === 'QdrantClientUnexpectedResponseError')
    return `Qdrant at ${where} sent an unexpected response ${during}`;
  const code = err.cause?.code;
  if (code) return `cannot reach Qdrant at ${where}: ${code}`;
  return `cannot read from Qdrant at ${where} ${during}`;
}

/**
 * Scroll the whole collection: every page, with {@link scrollFilter}, until `next_page_offset` is null. Any failed
 * request (401, 404, 5xx, timeout, connection error), a malformed page, or an offset that does not advance throws
 * ExportError (exit 1): a partial read is never returned, so nothing downstream can mistake it for the whole store.
 *
 * The client is built with `checkCompatibility: false` (no version probe against the fleet's older server) and
 * `https` set explicitly (the client would otherwise switch to https whenever a key is present).
 */
export async function readQdrant(
  s: QdrantSettings,
  env: NodeJS.ProcessEnv,
  domains: readonly string[],
  progress?: PageProgress,
): Promise<SourceRead> {
  const key = env[s.apiKeyEnv];
  const headers: Record<string, string> = {};
  // The key goes in the `api-key` header the server checks. It is passed as a header rather than `apiKey` so the
  // client neither flips the scheme to https nor prints its own warning; ours below says the same once.
  if (key !== undefined && key !== '') headers['api-key'] = key;
  let client: QdrantClient;
  try {
    const common = { headers, timeout: Math.round(s.timeoutSeconds * 1000), checkCompatibility: false };
    client =
      s.url !== null
        ? new QdrantClient({ url: s.url, ...common })
        : new QdrantClient({ host: s.host, port: s.port, https: s.https, ...common });
  } catch {
    throw new ExportError(`invalid Qdrant settings for ${endpointOf(s)}`, 2);
  }
  const endpoint = endpointOf(s);
  if (
    headers['api-key'] !== undefined &&
    endpoint.startsWith('http://') &&
    !/^http:\/\/(127\.|localhost:|\[::1\]:)/.test(endpoint)
  ) {
    process.stderr.write(`export-fleet: warning: sending the Qdrant key over plain http to ${endpoint}\n`);
  }
  const filter = scrollFilter(domains);
  const points: RawPoint[] = [];
  const seenOffsets = new Set<string>();
  let offset: unknown;
  let pages = 0;
  for (;;) {
    let page: { points?: unknown; next_page_offset?: unknown };
    try {
      page = (await client.scroll(s.collection, {
        limit: SCROLL_PAGE,
        // The first page has no offset (the key is left out, as JSON would drop an undefined one).
        ...(offset === undefined ? {} : { offset: offset as string | number }),
        filter,
        with_payload: true,
        with_vector: false,
      })) as { points?: unknown; next_page_offset?: unknown };
    } catch (e) {
      throw new ExportError(describeFailure(e, s, pages));
    }
    if (!Array.isArray(page.points)) throw new ExportError(`Qdrant at ${endpoint} sent a malformed scroll page`);
    for (const p of page.points as Array<{ id?: unknown; payload?: unknown }>) {
      points.push({ id: p?.id, payload: p?.payload });
    }
    pages += 1;
    progress?.(pages, points.length);
    const next = page.next_page_offset;
    if (next === null || next === undefined) break;
    const mark = `${typeof next}:${String(next)}`;
    // A server that hands back an offset it already gave would loop forever; treat it as a failed read.
    if (seenOffsets.has(mark)) throw new ExportError(`Qdrant at ${endpoint} repeated a scroll offset; read aborted`);
    seenOffsets.add(mark);
    offset = next;
  }
  return { key: `qdrant:${endpoint}#${s.collection}`, points, invalid: 0 };
}
