/**
 * `serve --metrics FILE` (docs/HTTP.md §Metrics): `GET /metrics` in the Prometheus text exposition format (0.0.4),
 * behind a bearer token of its own, never a client's. Labels are only `tool` and `outcome`, each from a closed set
 * (a label value the client chose, a client name, a note id or a path never appears), so the number of series is
 * bounded whatever requests arrive:
 *
 * - `memory_bridge_requests_total{tool, outcome}`: every request the server answered, by what it asked for
 *   (`TOOL_LABELS`, else `other`) and how it ended (the operator line's result);
 * - `mcp_server_operation_duration_seconds{tool, outcome}`: the OpenTelemetry `mcp.server.operation.duration`
 *   histogram of the MCP requests (`POST /mcp`), in seconds, with the convention's bucket boundaries;
 * - `memory_bridge_http_refusals_total{outcome}`: responses with status 401, 403, 413, 429 and 503;
 * - `memory_bridge_views_cached`, `memory_bridge_watches_held`, `memory_bridge_notes_visible`: gauges read at
 *   each scrape (views held by the bridge, inotify watches of the process, notes held by those views).
 *
 * The token file is judged and read on every scrape (a new token takes effect at once, like the clients file).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { readTrustedFile } from '../trust/path.js';
import { watchesHeld } from '../trust/view.js';
import { TOOL_NAMES, type Bridge } from '../tools/types.js';
import { ServeConfigError } from './http-hosts.js';

/** The path of the metrics endpoint. */
export const METRICS_PATH = '/metrics';

/** `mcp.server.operation.duration` bucket boundaries of the OpenTelemetry MCP conventions, in seconds. */
export const DURATION_BUCKETS_S: readonly number[] = Object.freeze([
  0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300,
]);

/** The refusal statuses counted on their own. */
export const REFUSAL_STATUSES: readonly number[] = Object.freeze([401, 403, 413, 429, 503]);

/**
 * The `tool` label values: the two tools, the MCP methods a client of ours sends, and the server's own endpoints;
 * anything else is `other`.
 */
export const TOOL_LABELS: ReadonlySet<string> = new Set([
  ...TOOL_NAMES,
  'unknown_tool',
  'initialize',
  'notifications/initialized',
  'notifications/cancelled',
  'tools/list',
  'ping',
  'server/discover',
  'healthz',
  'resource_metadata',
  'metrics',
  '-',
]);

/** Token bytes accepted in the token file (after trimming one trailing newline). */
const TOKEN_MIN = 32;
const TOKEN_MAX = 256;
/** The token file is read up to this many bytes. */
const TOKEN_FILE_MAX = 1024;

/** A token file `serve` must refuse to start with, or a scrape must refuse (503); `reason` is a short code. */
export class MetricsTokenError extends Error {
  override readonly name = 'MetricsTokenError';
  constructor(readonly reason: string) {
    super(`metrics token file refused (${reason})`);
  }
}

/**
 * The SHA-256 of the token in `file`: a trusted file (docs/TRUST.md, like the clients file) holding one token of
 * 32 to 256 printable ASCII characters without spaces, optionally followed by one newline.
 *
 * @throws MetricsTokenError with the trust reason (docs/TRUST.md) or `bad_token`
 */
export function metricsTokenHash(file: string): Buffer {
  let bytes: Buffer;
  try {
    bytes = readTrustedFile(file, TOKEN_FILE_MAX);
  } catch (err) {
    const reason = (err as { reason?: unknown }).reason;
    throw new MetricsTokenError(typeof reason === 'string' ? reason : 'untrusted');
  }
  let end = bytes.length;
  if (end > 0 && bytes[end - 1] === 0x0a) end--;
  if (end < TOKEN_MIN || end > TOKEN_MAX) throw new MetricsTokenError('bad_token');
  for (let i = 0; i < end; i++) if (bytes[i]! <= 0x20 || bytes[i]! >= 0x7f) throw new MetricsTokenError('bad_token');
  return createHash('sha256').update(bytes.subarray(0, end)).digest();
}

/** What the gauges read at a scrape. */
export interface GaugeReading {
  viewsCached: number;
  watchesHeld: number;
  notesVisible: number;
}

/** One label value from a closed set: `value` when `allowed`, else `other`. */
function labelOf(value: string, allowed: (v: string) => boolean): string {
  return allowed(value) ? value : 'other';
}

/** An outcome label: the operator line's result codes are short snake_case words (src/server/http.ts). */
function isOutcome(v: string): boolean {
  return /^[a-z][a-z_]{0,31}$/.test(v);
}

/** One histogram series: counts per bucket (not cumulative), sum and count. */
interface Histogram {
  buckets: number[];
  sum: number;
  count: number;
}

/** The counters of one `serve` process (module comment). */
export class ServeMetrics {
  private readonly requests = new Map<string, number>();
  private readonly durations = new Map<string, Histogram>();
  private readonly refusals = new Map<number, number>(REFUSAL_STATUSES.map((s) => [s, 0]));

  /**
   * Count one finished request.
   *
   * @param tool    what it asked for (the operator line's `tool`)
   * @param outcome how it ended (the operator line's `result`)
   * @param status  the HTTP status sent (0: none)
   * @param seconds how long it took
   * @param mcp     true for a message the MCP layer answered (observed in the duration histogram)
   */
  observe(tool: string, outcome: string, status: number, seconds: number, mcp: boolean): void {
    const key = `${labelOf(tool, (v) => TOOL_LABELS.has(v))}\u0000${labelOf(outcome, isOutcome)}`;
    this.requests.set(key, (this.requests.get(key) ?? 0) + 1);
    const refused = this.refusals.get(status);
    if (refused !== undefined) this.refusals.set(status, refused + 1);
    if (!mcp) return;
    let h = this.durations.get(key);
    if (h === undefined) {
      h = { buckets: new Array<number>(DURATION_BUCKETS_S.length + 1).fill(0), sum: 0, count: 0 };
      this.durations.set(key, h);
    }
    let i = 0;
    while (i < DURATION_BUCKETS_S.length && seconds > DURATION_BUCKETS_S[i]!) i++;
    h.buckets[i]!++;
    h.sum += seconds;
    h.count++;
  }

  /** The exposition text (content type `text/plain; version=0.0.4`). */
  render(gauges: GaugeReading): string {
    const out: string[] = [];
    const labels = (key: string): string => {
      const [tool, outcome] = key.split('\u0000');
      return `tool="${tool}",outcome="${outcome}"`;
    };
    out.push(
      '# HELP memory_bridge_requests_total Requests answered, by what was asked (tool) and how it ended (outcome).',
      '# TYPE memory_bridge_requests_total counter',
    );
    for (const [key, n] of [...this.requests].sort((a, b) => (a[0] < b[0] ? -1 : 1)))
      out.push(`memory_bridge_requests_total{${labels(key)}} ${n}`);
    out.push(
      '# HELP mcp_server_operation_duration_seconds MCP request duration as observed by the server (mcp.server.operation.duration).',
      '# TYPE mcp_server_operation_duration_seconds histogram',
    );
    for (const [key, h] of [...this.durations].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
      let cumulative = 0;
      DURATION_BUCKETS_S.forEach((le, i) => {
        cumulative += h.buckets[i]!;
        out.push(`mcp_server_operation_duration_seconds_bucket{${labels(key)},le="${le}"} ${cumulative}`);
      });
      out.push(`mcp_server_operation_duration_seconds_bucket{${labels(key)},le="+Inf"} ${h.count}`);
      out.push(`mcp_server_operation_duration_seconds_sum{${labels(key)}} ${h.sum}`);
      out.push(`mcp_server_operation_duration_seconds_count{${labels(key)}} ${h.count}`);
    }
    out.push(
      '# HELP memory_bridge_http_refusals_total Responses with a refusal status (outcome: the status).',
      '# TYPE memory_bridge_http_refusals_total counter',
    );
    for (const [status, n] of this.refusals) out.push(`memory_bridge_http_refusals_total{outcome="${status}"} ${n}`);
    const gauge = (name: string, help: string, value: number): void => {
      out.push(`# HELP ${name} ${help}`, `# TYPE ${name} gauge`, `${name} ${value}`);
    };
    gauge('memory_bridge_views_cached', 'Profile views (search indexes) held in memory.', gauges.viewsCached);
    gauge('memory_bridge_watches_held', 'Change-notification watches this process holds.', gauges.watchesHeld);
    gauge('memory_bridge_notes_visible', 'Notes held by the cached views.', gauges.notesVisible);
    return `${out.join('\n')}\n`;
  }
}

/**
 * Whether an `Authorization` header carries the metrics token whose SHA-256 is `hash` (compared in constant time).
 */
export function metricsAuthorized(authorization: string | undefined, hash: Buffer): boolean {
  const m = authorization === undefined ? null : /^Bearer ([\x21-\x7e]{1,256})$/.exec(authorization);
  if (m === null) return false;
  return timingSafeEqual(createHash('sha256').update(m[1]!, 'latin1').digest(), hash);
}

/** What a scrape is answered: 200 with the exposition text, or a refusal for the operator line. */
export type ScrapeAnswer = { status: 200; body: string } | { status: 401 | 405 | 503; result: string; reason?: string };

/** The endpoint of one `serve` process: its token file, its counters and where the gauges come from. */
export class MetricsEndpoint {
  readonly counters = new ServeMetrics();

  /**
   * @param tokenFile absolute path of the token file (`metricsTokenHash`), judged and read on every scrape
   * @param held      the bridge's views and the notes they hold (`Bridge.held`)
   */
  constructor(
    readonly tokenFile: string,
    private readonly held: () => { views: number; notes: number },
  ) {}

  /** Answer `GET /metrics` (HEAD too) with this `Authorization` header. */
  scrape(method: string | undefined, authorization: string | undefined): ScrapeAnswer {
    if (method !== 'GET' && method !== 'HEAD') return { status: 405, result: 'method_not_allowed' };
    let hash: Buffer;
    try {
      hash = metricsTokenHash(this.tokenFile);
    } catch (err) {
      if (!(err instanceof MetricsTokenError)) throw err;
      return { status: 503, result: 'metrics_unusable', reason: err.reason };
    }
    if (!metricsAuthorized(authorization, hash)) return { status: 401, result: 'unauthorized' };
    const { views, notes } = this.held();
    return {
      status: 200,
      body: this.counters.render({ viewsCached: views, watchesHeld: watchesHeld(), notesVisible: notes }),
    };
  }
}

/**
 * The endpoint of `serve --metrics FILE` over `bridge`, once the token file has been judged and read.
 *
 * @throws ServeConfigError saying what to do when the token file cannot be used
 */
export function metricsEndpointOf(tokenFile: string, bridge: Bridge): MetricsEndpoint {
  try {
    metricsTokenHash(tokenFile);
  } catch (err) {
    if (!(err instanceof MetricsTokenError)) throw err;
    const what =
      err.reason === 'bad_token'
        ? 'it must hold one token of 32 to 256 printable characters without spaces (e.g. `openssl rand -hex 32`)'
        : 'it and every directory above it must be owned by you or root and not writable by others (chmod 600)';
    throw new ServeConfigError(`--metrics ${tokenFile} is refused (${err.reason}): ${what}`);
  }
  return new MetricsEndpoint(tokenFile, () => bridge.held?.() ?? { views: 0, notes: 0 });
}
