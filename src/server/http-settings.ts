/**
 * Every bound and default of `serve` in one table (docs/HTTP.md "Timeouts, limits and stopping" shows exactly these
 * rows, tests/server/http-settings.test.ts holds them equal): what each bounds, its default, the flag that sets it
 * (none for a fixed bound), and the range that flag accepts. `serve` takes no environment variables, so a setting's
 * chain is its flag, then its default (`httpSettingOf`).
 */

/** One setting of the HTTP server. */
export interface HttpSetting {
  /** The `serve` flag that sets it; null for a bound no flag changes. */
  flag: string | null;
  /** The value without the flag. */
  default: number;
  /** Smallest and largest value the flag accepts (for a fixed bound: its value). */
  min: number;
  max: number;
  /** What the number counts: `ms`, `bytes`, `requests`, `requests/s`, `connections`. */
  unit: 'ms' | 'bytes' | 'requests' | 'requests/s' | 'connections';
  /** What the setting bounds and what a client past it gets (the first cell of its row in docs/HTTP.md). */
  meaning: string;
}

/** The settings of `serve` (docs/HTTP.md "Timeouts, limits and stopping"; the numbers' reasons at each row). */
export const HTTP_SETTING_TABLE = Object.freeze({
  headersTimeoutMs: {
    flag: null,
    default: 5_000,
    min: 5_000,
    max: 5_000,
    unit: 'ms',
    // A connection that has sent no complete request yet holds a slot of the connection budget this long at most.
    meaning: 'request headers (and a TLS handshake) must arrive within (then 408 and the connection is closed)',
  },
  bodyTimeoutMs: {
    flag: null,
    default: 10_000,
    min: 10_000,
    max: 10_000,
    unit: 'ms',
    // Never more than the request timeout. 1 MiB in 10 s asks for 100 KB/s at least.
    meaning: "a request's body must arrive within, from its headers (then 408 and the connection is closed)",
  },
  requestTimeoutMs: {
    flag: null,
    default: 30_000,
    min: 30_000,
    max: 30_000,
    unit: 'ms',
    meaning: 'the whole request must arrive within (then 408)',
  },
  keepAliveTimeoutMs: {
    flag: null,
    default: 65_000,
    min: 65_000,
    max: 65_000,
    unit: 'ms',
    // Longer than the idle timeout of common proxies and load balancers (60 s), so the proxy closes first: when the
    // server closes an idle connection at the moment a client reuses it, that request fails on the client, and a
    // POST is not retried (measured with Node's 5 s default: a few failed calls per 6,400 under heavy load).
    meaning:
      "idle keep-alive connections are closed after (longer than a proxy's usual 60 s, so the proxy closes first)",
  },
  maxConnections: {
    flag: null,
    default: 1024,
    min: 1024,
    max: 1024,
    unit: 'connections',
    meaning: 'connections open at once, in all (at the cap the longest idle one is closed; see Connections)',
  },
  maxConnectionsPerPeer: {
    flag: '--max-connections-per-peer',
    default: 64,
    min: 1,
    max: 1024,
    unit: 'connections',
    meaning: 'connections open at once from one peer, an IPv6 /64 (with `--behind-proxy`: the whole 1,024)',
  },
  maxHeaderBytes: {
    flag: null,
    default: 16_384,
    min: 16_384,
    max: 16_384,
    unit: 'bytes',
    meaning: 'largest header block (431)',
  },
  maxBodyBytes: {
    flag: null,
    default: 1_048_576,
    min: 1_048_576,
    max: 1_048_576,
    unit: 'bytes',
    meaning: 'largest body (413)',
  },
  maxConcurrency: {
    flag: '--max-concurrency',
    default: 16,
    min: 1,
    max: 65_536,
    unit: 'requests',
    meaning: 'requests in flight, and bodies being read for one client (503, `Retry-After: 1`)',
  },
  ratePerSecond: {
    flag: null,
    default: 20,
    min: 20,
    max: 20,
    unit: 'requests/s',
    meaning: 'per-client rate, sustained (429, `Retry-After`)',
  },
  rateBurst: {
    flag: null,
    default: 40,
    min: 40,
    max: 40,
    unit: 'requests',
    meaning: 'per-client rate, burst (429, `Retry-After`)',
  },
  shutdownGraceMs: {
    flag: null,
    default: 10_000,
    min: 10_000,
    max: 10_000,
    unit: 'ms',
    meaning: 'a stop (SIGTERM, SIGINT) lets requests in flight finish for at most (then closes every connection)',
  },
} satisfies Record<string, HttpSetting>);

/** Where `serve` listens without `--listen`. */
export const DEFAULT_LISTEN = '127.0.0.1:8765';

/**
 * A setting's value by its chain: the flag's value when given, else the default.
 *
 * @throws RangeError naming the flag and its range (`--max-concurrency must be an integer from 1 to 65536`) for a
 *   value that is no integer in `[min, max]`
 */
export function httpSettingOf(spec: HttpSetting, flagValue: number | undefined): number {
  if (flagValue === undefined) return spec.default;
  if (!Number.isInteger(flagValue) || flagValue < spec.min || flagValue > spec.max)
    throw new RangeError(`${spec.flag ?? 'this setting'} must be an integer from ${spec.min} to ${spec.max}`);
  return flagValue;
}

/** A setting's value as docs/HTTP.md writes it: `5 s`, `1 MiB`, `16 KiB`, `1,024 connections`, `20 requests/s`. */
export function formatHttpSetting(spec: HttpSetting, value = spec.default): string {
  if (spec.unit === 'ms') return `${value / 1000} s`;
  if (spec.unit === 'bytes') return value % 1_048_576 === 0 ? `${value / 1_048_576} MiB` : `${value / 1024} KiB`;
  return `${value.toLocaleString('en-US')} ${spec.unit}`;
}
