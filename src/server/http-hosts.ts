/**
 * Where `serve` listens and which names may reach it (docs/HTTP.md, "What a request must pass"): the `--listen`
 * address, the listen safety rule (plain HTTP only on loopback or behind a proxy), and the `Host` and `Origin`
 * checks that stop DNS rebinding.
 */

/** Where and how to listen. */
export interface ListenAddress {
  /** An IP address or host name, as given to `--listen` (IPv6 without brackets). */
  host: string;
  /** 0 picks a free port. */
  port: number;
}

/** A configuration `serve` must refuse to start with; the message says what to do. */
export class ServeConfigError extends Error {
  override readonly name = 'ServeConfigError';
}

/** True for loopback names and addresses: `localhost`, 127.0.0.0/8, `::1`. */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** A `Host` value (or an `--allowed-host`) taken apart: lower-case name (IPv6 in brackets) and port if given. */
export interface HostName {
  name: string;
  /** null when the value names no port. */
  port: number | null;
}

/** Parse `NAME`, `NAME:PORT`, `[v6]` or `[v6]:PORT` (a bare IPv6 address gets its brackets); null when malformed. */
export function parseHostName(value: string | undefined): HostName | null {
  if (value === undefined) return null;
  let v = value.trim().toLowerCase();
  // Two or more colons and no bracket: a bare IPv6 address (no port possible without brackets).
  if (!v.startsWith('[') && (v.match(/:/g) ?? []).length >= 2) v = `[${v}]`;
  const m = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::(\d{1,5}))?$/.exec(v);
  if (m === null) return null;
  const port = m[2] === undefined ? null : Number(m[2]);
  if (port !== null && port > 65535) return null;
  return { name: m[1]!, port };
}

/**
 * Which `Host` values are accepted (docs/HTTP.md, "What a request must pass"): `exact` holds `name:port` pairs,
 * `anyPort` names accepted with any port or none. A `Host` without a port means the scheme's default port
 * (RFC 9110 §7.2: 80 for http, 443 for https).
 */
export interface AllowedHosts {
  exact: Set<string>;
  anyPort: Set<string>;
  defaultPort: number;
}

/**
 * The accepted `Host` values: the listen address (host and port), on loopback also `localhost`, `127.0.0.1` and
 * `[::1]` with the listen port, plus every `--allowed-host`: `NAME:PORT` exactly, a bare `NAME` with any port or
 * none (behind a proxy the `Host` carries the proxy's port, or none, not ours). A rebinding page reaches us under
 * its own name, so the name is what stops it; the port keeps other local services' names from reaching this one.
 */
export function allowedHosts(listen: ListenAddress, tls: boolean, extra: readonly string[] = []): AllowedHosts {
  const hosts: AllowedHosts = { exact: new Set(), anyPort: new Set(), defaultPort: tls ? 443 : 80 };
  const own = parseHostName(listen.host);
  if (own !== null) hosts.exact.add(`${own.name}:${listen.port}`);
  if (isLoopbackHost(listen.host))
    for (const n of ['localhost', '127.0.0.1', '[::1]']) hosts.exact.add(`${n}:${listen.port}`);
  for (const value of extra) {
    const h = parseHostName(value);
    if (h === null) continue;
    if (h.port === null) hosts.anyPort.add(h.name);
    else hosts.exact.add(`${h.name}:${h.port}`);
  }
  return hosts;
}

/** True when a `Host` header value is accepted by `hosts`; a missing or malformed value never is. */
export function hostAllowed(value: string | undefined, hosts: AllowedHosts): boolean {
  const h = value === undefined || value === '' ? null : parseHostName(value);
  if (h === null) return false;
  return hosts.anyPort.has(h.name) || hosts.exact.has(`${h.name}:${h.port ?? hosts.defaultPort}`);
}

/**
 * True when an `Origin` header value is accepted (docs/HTTP.md, "What a request must pass"): it is listed with
 * `--allowed-origin`, or it is this server's own origin, `http` or `https` with a host and port that `hosts`
 * accepts exactly (a `NAME:PORT` pair, never a bare any-port name; no port means the scheme's default). A
 * rebinding page's origin carries the page's own name, which is never such a pair.
 */
export function originAllowed(value: string, hosts: AllowedHosts, listed: ReadonlySet<string>): boolean {
  const origin = normalOrigin(value);
  if (listed.has(origin)) return true;
  const m = /^(https?):\/\/([^/?#@]+)$/.exec(origin);
  const h = m === null ? null : parseHostName(m[2]);
  if (m === null || h === null) return false;
  return hosts.exact.has(`${h.name}:${h.port ?? (m[1] === 'https' ? 443 : 80)}`);
}

/** An origin as compared with `Origin`: lower case, no trailing `/`. */
export function normalOrigin(origin: string): string {
  return origin.trim().toLowerCase().replace(/\/+$/, '');
}

/**
 * The listen checks of docs/HTTP.md: a non-loopback address needs TLS or an explicit `--behind-proxy`.
 *
 * @throws ServeConfigError with what to do
 */
export function checkListenSafety(listen: ListenAddress, tls: boolean, behindProxy: boolean): void {
  if (isLoopbackHost(listen.host) || tls || behindProxy) return;
  throw new ServeConfigError(
    `refusing to serve plain HTTP on ${listen.host}, which is not a loopback address: bearer tokens would cross ` +
      'the network in clear text. Give --tls-cert FILE --tls-key FILE, or --behind-proxy when a TLS-terminating ' +
      'proxy in front of this host is the only way in',
  );
}

/** Parse `HOST:PORT` (`[v6]:PORT` for IPv6). Port 0 asks for a free port. */
export function parseListen(value: string): ListenAddress {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([A-Za-z0-9.-]+)):(\d{1,5})$/.exec(value);
  const port = m === null ? Number.NaN : Number(m[3]);
  if (m === null || port > 65535)
    throw new ServeConfigError(
      `--listen must be HOST:PORT (e.g. 127.0.0.1:8765 or [::1]:8765), not ${JSON.stringify(value)}`,
    );
  return { host: m[1] ?? m[2]!, port };
}
