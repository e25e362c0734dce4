/**
 * `memory-bridge serve`: the two tools over authenticated MCP Streamable HTTP, one bearer token per client, each
 * bound to a profile home (docs/HTTP.md). Runs until SIGTERM or SIGINT, then stops gracefully and exits 0.
 */
import fs from 'node:fs';
import path from 'node:path';
import { BridgeError } from '../../errors.js';
import { RemedyNotes } from '../../remedies.js';
import { callerOf, ClientsFileError, loadClients } from '../../server/clients.js';
import { refusalAtStart, startRefusalText } from '../../tools/start.js';
import {
  DEFAULT_MAX_CONCURRENCY,
  DEFAULT_MAX_CONNECTIONS_PER_PEER,
  isLoopbackHost,
  parseListen,
  ServeConfigError,
  MAX_CONNECTIONS,
  SHUTDOWN_GRACE_MS,
  parseHostName,
  startHttpServer,
  checkListenSafety,
} from '../../server/http.js';
import { DEFAULT_LISTEN, formatHttpSetting, HTTP_SETTING_TABLE, httpSettingOf } from '../../server/http-settings.js';
import { readTrustedFile } from '../../trust/path.js';
import { boolFlag, integerFlag, listFlag, parseArgs, stringFlag, UsageError } from '../args.js';
import { EXIT, packageVersion, type Command } from '../command.js';

/** Largest TLS certificate chain or key file read. */
const MAX_TLS_FILE_BYTES = 1_048_576;

const PROG = 'memory-bridge serve';

function say(line: string): void {
  process.stderr.write(`${PROG}: ${line}\n`);
}

/**
 * The request log with remedies: a line carrying `reason=CODE` ends with that reason's remedy the first time the
 * server logs it, and a refusal before any tool ran (`result=CODE` of `HTTP_RESULT_REMEDIES`, no reason) with
 * that refusal's remedy the first time (src/remedies.ts `RemedyNotes`); every other line is written as it is.
 */
function requestLog(): (line: string) => void {
  const notes = new RemedyNotes();
  return (line) => {
    // `reason=root_untrusted root=CODE` is the root's refusal (src/remedies.ts `refusalWords`).
    const reason = / reason=([a-z_]{1,64})(?: root=([a-z_]{1,64}))?(?: |$)/.exec(line);
    if (reason !== null)
      return say(`${line}${reason[2] === undefined ? notes.suffix(reason[1]!) : notes.suffix(reason[2], 'root')}`);
    const result = /(?:^| )result=([a-z_]{1,64})(?: |$)/.exec(line);
    say(result === null ? line : `${line}${notes.httpSuffix(result[1]!)}`);
  };
}

/** The key file: trust rule on it and every directory above it, like the policy (docs/HTTP.md, "TLS"). */
function readKey(file: string): Buffer {
  try {
    return readTrustedFile(file, MAX_TLS_FILE_BYTES);
  } catch (err) {
    if (!(err instanceof BridgeError)) throw err;
    throw new ServeConfigError(
      `--tls-key ${file} is not usable (${err.reason}): it must be a regular file with one link, owned by root or ` +
        'the user running memory-bridge, not writable by group or others (mode 0600 is right), in directories ' +
        'that only root or that user can write (not a shared temp directory such as /tmp)',
    );
  }
}

function readCert(file: string): Buffer {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  } catch (err) {
    throw new ServeConfigError(`--tls-cert ${file} cannot be opened (${(err as NodeJS.ErrnoException).code})`);
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile() || st.size > MAX_TLS_FILE_BYTES)
      throw new ServeConfigError(`--tls-cert ${file} must be a regular file of at most ${MAX_TLS_FILE_BYTES} bytes`);
    return fs.readFileSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

export const command: Command = {
  name: 'serve',
  summary: 'serve the two tools over authenticated MCP Streamable HTTP (one token per client and home)',
  usage: `usage: memory-bridge serve --clients FILE [--listen HOST:PORT]
                            [--tls-cert FILE --tls-key FILE | --behind-proxy]
                            [--allowed-host NAME[:PORT]]... [--allowed-origin ORIGIN]... [--max-concurrency N]
                            [--max-connections-per-peer N] [--metrics FILE]

Serve memory_bridge_search and memory_bridge_read over MCP Streamable HTTP at POST /mcp (stateless), and a bare
health check at GET /healthz. Every request to /mcp needs "Authorization: Bearer <token>" for a client of the
clients file (memory-bridge clients add); the call is made as that client's home and run kind, under the policy
in <home>/plugin-data/memory-bridge/policy.json. The clients file is read again on every request.

Options:
  --clients FILE          the clients file (required; see memory-bridge clients --help)
  --listen HOST:PORT      where to listen (default ${DEFAULT_LISTEN}; [::1]:8765 for IPv6; port 0 picks one)
  --tls-cert FILE         PEM certificate chain: serve HTTPS (with --tls-key)
  --tls-key FILE          PEM private key; must pass the trust rule (mode 0600, owned by you or root)
  --behind-proxy          allow plain HTTP on a non-loopback address (a TLS-terminating proxy is in front)
  --allowed-host NAME[:PORT]
                          also accept this Host header (repeatable): NAME with any port or none (behind a
                          proxy), NAME:PORT with that port only. Always accepted: the listen host with the listen
                          port and, on loopback, localhost, 127.0.0.1 and [::1] with the listen port
  --allowed-origin ORIGIN accept requests carrying this Origin header (repeatable; default: none, so a request
                          from a web page is refused)
  --max-concurrency N     most requests in flight; more get 503 with Retry-After (default ${DEFAULT_MAX_CONCURRENCY})
  --max-connections-per-peer N
                          most connections open at once from one address (an IPv6 /64); at the cap the peer's
                          oldest idle keep-alive connection is closed, else a new one is refused (default
                          ${DEFAULT_MAX_CONNECTIONS_PER_PEER}; with --behind-proxy ${MAX_CONNECTIONS}, as every connection comes from the proxy)
  --metrics FILE          also serve GET /metrics (Prometheus text) to "Authorization: Bearer <token>" with the
                          token in FILE (one line, 32 to 256 characters; mode 0600, owned by you or root; read
                          again on every scrape). Labels: tool and outcome only (default: no /metrics)

At most ${MAX_CONNECTIONS} connections in all: at the cap the oldest idle keep-alive connection is closed to admit a new
one. A health check and every refusal close their connection.
Each client may make ${HTTP_SETTING_TABLE.ratePerSecond.default} requests per second (burst ${HTTP_SETTING_TABLE.rateBurst.default}); more get 429 with Retry-After. A body over ${formatHttpSetting(HTTP_SETTING_TABLE.maxBodyBytes)} gets 413.
One line per request goes to stderr (client, tool, result, status, milliseconds; a refusal's reason code, with its
remedy the first time it appears); never a token, query, id or path. At start, a client whose calls would all be
refused (no policy, a run kind the policy does not serve, a root that fails the trust rule, …) is named with the
reason and what to do.
SIGTERM or SIGINT: stop accepting, let requests in flight finish (at most ${SHUTDOWN_GRACE_MS / 1000} s), exit 0.`,
  async run(argv) {
    const parsed = parseArgs(argv, {
      clients: { type: 'string' },
      listen: { type: 'string' },
      'tls-cert': { type: 'string' },
      'tls-key': { type: 'string' },
      'behind-proxy': { type: 'boolean' },
      'allowed-host': { type: 'string', repeatable: true },
      'allowed-origin': { type: 'string', repeatable: true },
      'max-concurrency': { type: 'string' },
      'max-connections-per-peer': { type: 'string' },
      metrics: { type: 'string' },
    });
    if (parsed.positionals.length > 0)
      throw new UsageError(`unexpected argument ${JSON.stringify(parsed.positionals[0])}`);
    const clientsFlag = stringFlag(parsed, 'clients');
    if (clientsFlag === undefined || clientsFlag === '') throw new UsageError('--clients FILE is required');
    const clientsFile = path.resolve(clientsFlag);
    let listen: ReturnType<typeof parseListen>;
    try {
      listen = parseListen(stringFlag(parsed, 'listen') ?? DEFAULT_LISTEN);
    } catch (err) {
      if (err instanceof ServeConfigError) throw new UsageError(err.message);
      throw err;
    }
    let maxConcurrency: number;
    let perPeer: number | undefined;
    try {
      maxConcurrency = httpSettingOf(HTTP_SETTING_TABLE.maxConcurrency, integerFlag(parsed, 'max-concurrency'));
      // Without the flag the server picks the default, which depends on --behind-proxy (docs/HTTP.md "Connections").
      const perPeerFlag = integerFlag(parsed, 'max-connections-per-peer');
      perPeer =
        perPeerFlag === undefined ? undefined : httpSettingOf(HTTP_SETTING_TABLE.maxConnectionsPerPeer, perPeerFlag);
    } catch (err) {
      if (err instanceof RangeError) throw new UsageError(err.message);
      throw err;
    }
    const certFlag = stringFlag(parsed, 'tls-cert');
    const keyFlag = stringFlag(parsed, 'tls-key');
    if ((certFlag === undefined) !== (keyFlag === undefined))
      throw new UsageError('--tls-cert and --tls-key go together');
    const behindProxy = boolFlag(parsed, 'behind-proxy');
    const metricsFlag = stringFlag(parsed, 'metrics');
    if (metricsFlag === '') throw new UsageError('--metrics needs a FILE holding the metrics token');
    const allowedHosts = listFlag(parsed, 'allowed-host');
    const allowedOrigins = listFlag(parsed, 'allowed-origin');
    for (const h of allowedHosts)
      if (parseHostName(h) === null)
        throw new UsageError(`--allowed-host ${JSON.stringify(h)} is not a host name or address`);
    for (const o of allowedOrigins)
      if (!/^(https?:\/\/[^/\s]+\/?|null)$/i.test(o))
        throw new UsageError(`--allowed-origin ${JSON.stringify(o)} must look like https://host[:port]`);

    try {
      checkListenSafety(listen, certFlag !== undefined, behindProxy);
      const tls =
        certFlag !== undefined && keyFlag !== undefined
          ? { cert: readCert(path.resolve(certFlag)), key: readKey(path.resolve(keyFlag)) }
          : undefined;
      // The file is read again on every request; reading it now turns a broken setup into a clear start-up error.
      const clients = loadClients(clientsFile);
      if (clients.clients.length === 0) say(`${clientsFile} has no clients yet: every request will get 401`);
      // Said once at start for each client whose calls can only be refused; every request still checks it all again.
      for (const client of clients.clients) {
        const refusal = refusalAtStart(callerOf(client));
        if (refusal !== null)
          say(
            `client ${client.name}: every call will be unavailable until this is fixed: ${startRefusalText(refusal)}`,
          );
      }
      const wildcard = listen.host === '0.0.0.0' || listen.host === '::';
      if (wildcard && allowedHosts.length === 0)
        say('listening on every address with no --allowed-host: every request will get 403 until one is given');
      if (tls === undefined && !isLoopbackHost(listen.host))
        say('plain HTTP on a non-loopback address (--behind-proxy): only the proxy should be able to reach it');

      const server = await startHttpServer({
        listen,
        clientsFile,
        version: packageVersion(),
        ...(tls === undefined ? {} : { tls }),
        behindProxy,
        allowedHosts,
        allowedOrigins,
        maxConcurrency,
        maxConnectionsPerPeer: perPeer,
        ...(metricsFlag === undefined ? {} : { metricsTokenFile: path.resolve(metricsFlag) }),
        log: requestLog(),
      });
      say(`listening on ${server.origin}/mcp (${clients.clients.length} clients)`);
      let stopping = false;
      const onSignal = (signal: string): void => {
        if (stopping) {
          say(`${signal} again: closing every connection now`);
          server.closeNow();
          return;
        }
        stopping = true;
        say(`${signal}: stopping (requests in flight may finish for ${SHUTDOWN_GRACE_MS / 1000} s)`);
      };
      await new Promise<void>((resolve) => {
        const stop = (signal: NodeJS.Signals): void => {
          const first = !stopping;
          onSignal(signal);
          if (first) void server.close().then(resolve);
        };
        process.on('SIGTERM', stop);
        process.on('SIGINT', stop);
      });
      say('stopped');
      return EXIT.OK;
    } catch (err) {
      if (err instanceof ServeConfigError || err instanceof ClientsFileError) {
        say(err.message);
        return EXIT.FAILURE;
      }
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL') {
        say(`cannot listen on ${listen.host}:${listen.port} (${code})`);
        return EXIT.FAILURE;
      }
      throw err;
    }
  },
};
