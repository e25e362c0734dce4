/**
 * The HTTP endpoint's part of `npm run bench` (docs/HTTP.md): on one corpus,
 *
 * 1. warm search over HTTP against warm search over stdio, alternating per (repetition, query), both through the
 *    official SDK client (`StreamableHTTPClientTransport` against `memory-bridge serve`, `StdioClientTransport`
 *    against `memory-bridge mcp`), same home, same queries;
 * 2. load: 32 SDK clients, each with its own token, making 200 calls each at once (three searches to one read),
 *    two rounds, with the defaults of `serve` (16 requests in flight, 20 requests/s per client). A call refused
 *    with 503 or 429 is counted, not retried; anything else that fails is a failure. The server's RSS is sampled
 *    every 200 ms.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { newToken, tokenHash, writeClients, type ClientEntry } from '../src/server/clients.js';
import { MAX_CONNECTIONS } from '../src/server/http.js';
import type { Corpus } from './corpus.js';
import { QUERIES, serverMain } from './config.js';
import { connect, disconnect, rssOf, timeCall, toolPayload, type McpSession } from './processes.js';
import { summarise, type Summary } from './stats.js';

export const LOAD_CLIENTS = 32;
export const LOAD_CALLS = 200;
export const LOAD_ROUNDS = 2;
/** Pause before each timed call of the HTTP-versus-stdio comparison, in ms (one client stays under 20 requests/s). */
const WARM_PAUSE_MS = 60;

export interface HttpResult {
  notes: number;
  warmHttp: Summary;
  warmStdio: Summary;
  load: {
    clients: number;
    callsPerClient: number;
    rounds: {
      ok: number;
      refused429: number;
      refused503: number;
      failures: number;
      seconds: number;
      throughputPerS: number;
      latency: Summary & { p99: number };
      rssAfterMB: number | null;
    }[];
    rssBeforeMB: number | null;
    rssMaxDuringMB: number | null;
    /** Up to five distinct failure messages, with how often each occurred. */
    failureKinds: Record<string, number>;
  };
}

const mb = (mib: number | null): number | null => (mib === null ? null : Math.round(mib * 1.048576 * 10) / 10);

function log(msg: string): void {
  process.stderr.write(`[bench] ${msg}\n`);
}

interface Served {
  child: ChildProcess;
  url: string;
  stderrTail: () => string;
}

/** Start `memory-bridge serve` on a free loopback port with `clientsFile`; resolves once it listens. */
async function startServe(nodeOptions: string[], clientsFile: string): Promise<Served> {
  const child = spawn(
    process.execPath,
    // Every load client connects from 127.0.0.1, so they share one peer's connection cap: lift it to the total.
    [
      ...nodeOptions,
      serverMain,
      'serve',
      '--listen',
      '127.0.0.1:0',
      '--clients',
      clientsFile,
      '--max-connections-per-peer',
      String(MAX_CONNECTIONS),
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let tail = '';
  let url: string | null = null;
  const ready = new Promise<string>((resolve, reject) => {
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (d: string) => {
      // One line per request: keep only a tail for diagnostics.
      tail = (tail + d).slice(-4000);
      if (url === null) {
        const m = /listening on (http:\/\/[^ ]+\/mcp)/.exec(tail);
        if (m !== null) {
          url = m[1]!;
          resolve(url);
        }
      }
    });
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${tail}`)));
  });
  return { child, url: await ready, stderrTail: () => tail };
}

async function connectHttp(url: string, token: string): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: 'memory-bridge-bench', version: '0.1.0' });
  await client.connect(transport);
  return client;
}

async function timedSearch(client: Client, query: string): Promise<number> {
  const t0 = performance.now();
  const result = await client.callTool({ name: 'memory_bridge_search', arguments: { query } });
  const ms = performance.now() - t0;
  if (toolPayload(result).ok !== true) throw new Error(`search refused over HTTP: ${JSON.stringify(result)}`);
  return ms;
}

async function timedStdioSearch(s: McpSession, query: string): Promise<number> {
  const { ms, result } = await timeCall(s, 'memory_bridge_search', { query });
  if (toolPayload(result).ok !== true) throw new Error(`search refused over stdio: ${JSON.stringify(result)}`);
  return ms;
}

/**
 * Measure the endpoint on `c` (a corpus whose home's policy allows its notes).
 *
 * @param nodeOptions node options both servers start with (the launcher's, as in the rest of the bench)
 * @param scratch     an owner-only directory for the clients file
 * @param warmReps    repetitions of the query list for the HTTP-versus-stdio comparison
 */
export async function measureHttp(
  c: Corpus,
  nodeOptions: string[],
  scratch: string,
  warmReps: number,
): Promise<HttpResult> {
  const cfg = path.join(scratch, 'http-clients');
  // A reused scratch folder (`--corpora DIR`) still has the last run's clients: new tokens every run.
  fs.rmSync(cfg, { recursive: true, force: true });
  fs.mkdirSync(cfg, { mode: 0o700 });
  fs.chmodSync(cfg, 0o700);
  const clientsFile = path.join(cfg, 'clients.json');
  const tokens: string[] = [];
  const entries: ClientEntry[] = [];
  for (let i = 0; i <= LOAD_CLIENTS; i++) {
    const token = newToken();
    tokens.push(token);
    entries.push({ name: `node-${i}`, tokenSha256: tokenHash(token), home: c.home, runKind: 'interactive' });
  }
  writeClients(clientsFile, { clients: entries }, null);

  const served = await startServe(nodeOptions, clientsFile);
  const pid = served.child.pid!;
  let stdio: McpSession | null = null;
  const clients: Client[] = [];
  try {
    // 1. Warm search, HTTP against stdio.
    stdio = await connect(process.execPath, [
      ...nodeOptions,
      serverMain,
      'mcp',
      '--home',
      c.home,
      '--run-kind',
      'interactive',
    ]);
    const http = await connectHttp(served.url, tokens[0]!);
    clients.push(http);
    for (const q of ['obsidian', 'notes']) {
      await timedStdioSearch(stdio, q);
      await timedSearch(http, q);
    }
    log(`${c.notes} notes: warm search over HTTP and stdio ×${warmReps} over ${QUERIES.length} queries, alternated`);
    const warmHttp: number[] = [];
    const warmStdio: number[] = [];
    // One client within the server's default rate (20 requests/s, burst 40): a pause before every timed call, on both
    // sides alike, so a fast machine does not turn the comparison into 429s.
    const paced = async <T>(call: () => Promise<T>): Promise<T> => {
      await new Promise((resolve) => setTimeout(resolve, WARM_PAUSE_MS));
      return call();
    };
    for (let rep = 0; rep < warmReps; rep++) {
      for (let qi = 0; qi < QUERIES.length; qi++) {
        const q = QUERIES[qi]!;
        if ((rep + qi) % 2 === 0) {
          warmHttp.push(await paced(() => timedSearch(http, q)));
          warmStdio.push(await paced(() => timedStdioSearch(stdio!, q)));
        } else {
          warmStdio.push(await paced(() => timedStdioSearch(stdio!, q)));
          warmHttp.push(await paced(() => timedSearch(http, q)));
        }
      }
    }
    await disconnect(stdio);
    stdio = null;

    // 2. Load.
    log(`${c.notes} notes: load, ${LOAD_CLIENTS} clients × ${LOAD_CALLS} calls, ${LOAD_ROUNDS} rounds`);
    for (let i = 1; i <= LOAD_CLIENTS; i++) clients.push(await connectHttp(served.url, tokens[i]!));
    const readIds = c.ids.filter((_, i) => i % Math.max(1, Math.floor(c.ids.length / 50)) === 0).slice(0, 50);
    const rssBefore = mb(rssOf(pid).rssMiB);
    let rssMax = rssBefore ?? 0;
    const sampler = setInterval(() => {
      const r = mb(rssOf(pid).rssMiB);
      if (r !== null && r > rssMax) rssMax = r;
    }, 200);
    const failureKinds: Record<string, number> = {};
    const rounds: HttpResult['load']['rounds'] = [];
    try {
      for (let round = 0; round < LOAD_ROUNDS; round++) {
        const latencies: number[] = [];
        let ok = 0;
        let r429 = 0;
        let r503 = 0;
        let failures = 0;
        const t0 = performance.now();
        await Promise.all(
          clients.slice(1).map(async (client, k) => {
            for (let i = 0; i < LOAD_CALLS; i++) {
              const read = i % 4 === 3;
              const args = read
                ? { name: 'memory_bridge_read', arguments: { id: readIds[(k + i) % readIds.length]! } }
                : { name: 'memory_bridge_search', arguments: { query: QUERIES[(k + i) % QUERIES.length]! } };
              const s = performance.now();
              try {
                const result = await client.callTool(args);
                if (toolPayload(result).ok !== true) throw new Error(`tool refused: ${JSON.stringify(result)}`);
                latencies.push(performance.now() - s);
                ok++;
              } catch (err) {
                const code = err instanceof StreamableHTTPError ? err.code : undefined;
                if (code === 429) r429++;
                else if (code === 503) r503++;
                else {
                  failures++;
                  const kind = (err instanceof Error ? err.message : String(err)).slice(0, 200);
                  if (kind in failureKinds || Object.keys(failureKinds).length < 5)
                    failureKinds[kind] = (failureKinds[kind] ?? 0) + 1;
                }
              }
            }
          }),
        );
        const seconds = (performance.now() - t0) / 1000;
        const latency = summarise(latencies);
        const sorted = [...latencies].sort((a, b) => a - b);
        const p99 = Math.round((sorted[Math.max(0, Math.ceil(0.99 * sorted.length) - 1)] ?? Number.NaN) * 100) / 100;
        rounds.push({
          ok,
          refused429: r429,
          refused503: r503,
          failures,
          seconds: Math.round(seconds * 100) / 100,
          throughputPerS: Math.round(ok / seconds),
          latency: { ...latency, p99 },
          rssAfterMB: mb(rssOf(pid).rssMiB),
        });
        log(
          `  round ${round + 1}: ${ok} ok, ${r503} × 503, ${r429} × 429, ${failures} failures in ${seconds.toFixed(1)} s; ` +
            `p50 ${latency.p50} ms, p99 ${p99} ms; server RSS ${rounds.at(-1)!.rssAfterMB} MB`,
        );
        for (const [kind, count] of Object.entries(failureKinds)) log(`    failure ×${count}: ${kind}`);
      }
    } finally {
      clearInterval(sampler);
    }
    return {
      notes: c.notes,
      warmHttp: summarise(warmHttp),
      warmStdio: summarise(warmStdio),
      load: {
        clients: LOAD_CLIENTS,
        callsPerClient: LOAD_CALLS,
        rounds,
        rssBeforeMB: rssBefore,
        rssMaxDuringMB: rssMax,
        failureKinds,
      },
    };
  } finally {
    for (const client of clients) await client.close().catch(() => undefined);
    if (stdio !== null) await disconnect(stdio).catch(() => undefined);
    served.child.kill('SIGTERM');
    await new Promise((resolve) => served.child.once('exit', resolve));
  }
}
