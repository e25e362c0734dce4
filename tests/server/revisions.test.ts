/**
 * Both protocol revisions from one server (docs/MCP.md §Revisions), with real clients of both SDK lines on the
 * same tree: the v1 SDK `Client` (2025-11-25, `initialize`) and the v2 `Client` pinned to 2026-07-28
 * (`server/discover`, the per-request `_meta` envelope), over stdio (`memory-bridge mcp`) and over Streamable HTTP
 * (`serve`). The tool list and every answer must be the same bytes in all four ways (a read's `version` is
 * keyed per process, so it is compared only between clients of one process). Raw requests check what only
 * 2026-07-28 has: `resultType`, `ttlMs` and `cacheScope: "private"`, the Mcp-Method/Mcp-Name header checks
 * (-32020) and an unsupported revision (-32022).
 */
import test from 'ava';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as V1StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport as V1HttpClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  Client as V2Client,
  StreamableHTTPClientTransport as V2HttpClientTransport,
} from '@modelcontextprotocol/client';
import { StdioClientTransport as V2StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { spawn } from 'node:child_process';
import { removeTree } from '../helpers/fixtures.js';
import { startHttpServer, type HttpServerHandle } from '../../src/server/http.js';
import { CLI } from '../cli/tree.js';
import { client, makeWorld, mcpHeaders, rawRequest, setClients, type TestClient, type World } from './http-world.js';

const MODERN = '2026-07-28';
const LEGACY = '2025-11-25';

let world: World;
let work: TestClient;
let server: HttpServerHandle;
test.before(async () => {
  world = makeWorld('mb-revisions-');
  work = client('work-laptop', world.workHome);
  setClients(world.clientsFile, [work]);
  server = await startHttpServer({
    listen: { host: '127.0.0.1', port: 0 },
    clientsFile: world.clientsFile,
    version: '0.0.0-test',
    log: () => undefined,
  });
});
test.after.always(async () => {
  await server?.close(1000);
  if (world !== undefined) removeTree(world.base);
});

/** What one session does, whatever client it is: list the tools, call a tool. */
interface Session {
  version: string | undefined;
  listTools(): Promise<{ tools: unknown[] }>;
  callTool(name: string, args: unknown): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

const stdioCommand = () => ({
  command: process.execPath,
  args: [CLI, 'mcp', '--home', world.workHome, '--run-kind', 'interactive'],
  env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
  stderr: 'ignore' as const,
});
const auth = () => ({ requestInit: { headers: { Authorization: `Bearer ${work.token}` } } });

async function v1(transport: 'stdio' | 'http'): Promise<Session> {
  const c = new V1Client({ name: 'v1-test', version: '0.0.0' });
  await c.connect(
    transport === 'stdio'
      ? new V1StdioClientTransport(stdioCommand())
      : new V1HttpClientTransport(new URL(`${server.origin}/mcp`), auth()),
  );
  return {
    version: undefined,
    listTools: () => c.listTools(),
    callTool: (name, args) => c.callTool({ name, arguments: args as Record<string, unknown> }),
    close: () => c.close(),
  };
}

async function v2(transport: 'stdio' | 'http'): Promise<Session> {
  const c = new V2Client({ name: 'v2-test', version: '0.0.0' }, { versionNegotiation: { mode: { pin: MODERN } } });
  await c.connect(
    transport === 'stdio'
      ? new V2StdioClientTransport(stdioCommand())
      : new V2HttpClientTransport(new URL(`${server.origin}/mcp`), auth()),
  );
  return {
    version: c.getNegotiatedProtocolVersion(),
    listTools: () => c.listTools(),
    callTool: (name, args) =>
      c.callTool({ name, arguments: args as Record<string, unknown> }) as Promise<Record<string, unknown>>,
    close: () => c.close(),
  };
}

/** The calls every session makes: answers, refusals and every error code. */
const CALLS: Array<[string, unknown]> = [
  ['memory_bridge_search', { query: 'heron' }],
  ['memory_bridge_search', { query: 'heron', limit: 1 }],
  ['memory_bridge_search', { query: 'heron', within: ['shared/**'] }],
  ['memory_bridge_search', { query: 'heron', limit: 99 }],
  ['memory_bridge_search', { query: 'heron', path: '/etc' }],
  ['memory_bridge_read', { id: 'work/roadmap.md' }],
  ['memory_bridge_read', { id: 'work/roadmap.md', offset: 5 }],
  ['memory_bridge_read', { id: 'personal/diary.md' }],
  ['memory_bridge_read', { id: '../x.md' }],
];

/** A session's tool list and answers, as the bytes compared across sessions. */
async function transcript(s: Session): Promise<{ tools: string; answers: string[] }> {
  const { tools } = await s.listTools();
  const answers: string[] = [];
  for (const [name, args] of CALLS) {
    const r = await s.callTool(name, args);
    answers.push(JSON.stringify({ content: r.content, structuredContent: r.structuredContent, isError: r.isError }));
  }
  return { tools: JSON.stringify(tools), answers };
}

test('revisions › v1 (2025-11-25) and v2 (2026-07-28) clients over stdio and HTTP get the same bytes', async (t) => {
  const ways: Array<[string, () => Promise<Session>, string]> = [
    ['v1 stdio', () => v1('stdio'), LEGACY],
    ['v1 http', () => v1('http'), LEGACY],
    ['v2 stdio', () => v2('stdio'), MODERN],
    ['v2 http', () => v2('http'), MODERN],
  ];
  const seen: Array<[string, { tools: string; answers: string[] }]> = [];
  for (const [what, open, version] of ways) {
    const s = await open();
    try {
      if (what.startsWith('v2')) t.is(s.version, version, what);
      seen.push([what, await transcript(s)]);
    } finally {
      await s.close();
    }
  }
  const byWay = new Map(seen);
  const first = byWay.get('v1 stdio')!;
  t.is(JSON.parse(first.tools).length, 2);
  const parsed = first.answers.map((a) => JSON.parse(a) as { structuredContent: { ok: boolean } });
  t.true(parsed[0]!.structuredContent.ok, 'the first search answers');
  t.false(parsed[7]!.structuredContent.ok, 'a note outside the policy is refused');
  // Exact bytes where one process answered both (serve runs in this test's process) ...
  const [httpV1, httpV2] = [byWay.get('v1 http')!, byWay.get('v2 http')!];
  t.is(httpV2.tools, httpV1.tools, 'tools/list: v2 http = v1 http');
  for (let i = 0; i < CALLS.length; i++) t.is(httpV2.answers[i], httpV1.answers[i], `call ${i}: v2 http = v1 http`);
  // ... and across processes, the same bytes once the read's `version` is masked: it is keyed by a random key of
  // each process (docs/DESIGN.md), so two processes never give the same one.
  const masked = (a: string) => a.replace(/(\\?"version\\?":\\?")[A-Za-z0-9_-]{22}/g, '$1V');
  t.not(masked(first.answers[5]!), first.answers[5]!, 'the read answer has a version to mask');
  for (const [what, got] of seen.slice(1)) {
    t.is(got.tools, first.tools, `tools/list: ${what} = v1 stdio`);
    for (let i = 0; i < CALLS.length; i++)
      t.is(masked(got.answers[i]!), masked(first.answers[i]!), `call ${i}: ${what} = v1 stdio`);
  }
});

/** The 2026-07-28 `_meta` envelope of a raw request. */
const envelope = (version = MODERN) => ({
  'io.modelcontextprotocol/protocolVersion': version,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'raw-test', version: '0.0.0' },
});

async function modernPost(
  method: string,
  params: Record<string, unknown>,
  headers: Record<string, string>,
  version = MODERN,
): Promise<{ status: number; json: { result?: Record<string, unknown>; error?: { code: number } } }> {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 7, method, params: { ...params, _meta: envelope(version) } });
  const r = await rawRequest(server.port, {
    headers: mcpHeaders(server.port, work.token, { 'MCP-Protocol-Version': version, ...headers }),
    body,
  });
  return { status: r.status, json: JSON.parse(r.body) };
}

test('revisions › 2026-07-28 over HTTP: discover, resultType, ttlMs 0 and cacheScope private, header checks', async (t) => {
  const discover = await modernPost('server/discover', {}, { 'Mcp-Method': 'server/discover' });
  t.is(discover.status, 200);
  t.true(((discover.json.result?.supportedVersions ?? []) as string[]).includes(MODERN));
  t.like(discover.json.result, { resultType: 'complete', ttlMs: 0, cacheScope: 'private' });
  t.deepEqual(discover.json.result?.capabilities, { tools: { listChanged: false } });

  const list = await modernPost('tools/list', {}, { 'Mcp-Method': 'tools/list' });
  t.like(list.json.result, { resultType: 'complete', ttlMs: 0, cacheScope: 'private' });

  const call = await modernPost(
    'tools/call',
    { name: 'memory_bridge_read', arguments: { id: 'work/roadmap.md' } },
    { 'Mcp-Method': 'tools/call', 'Mcp-Name': 'memory_bridge_read' },
  );
  t.is(call.json.result?.resultType, 'complete');
  t.like(call.json.result?.structuredContent, { ok: true, id: 'work/roadmap.md' });

  const wrongName = await modernPost(
    'tools/call',
    { name: 'memory_bridge_read', arguments: { id: 'work/roadmap.md' } },
    { 'Mcp-Method': 'tools/call', 'Mcp-Name': 'memory_bridge_search' },
  );
  t.is(wrongName.json.error?.code, -32020, 'Mcp-Name differs from the body');
  const wrongMethod = await modernPost('tools/list', {}, { 'Mcp-Method': 'tools/call' });
  t.is(wrongMethod.json.error?.code, -32020, 'Mcp-Method differs from the body');
  const noHeader = await modernPost('tools/list', {}, {});
  t.is(noHeader.json.error?.code, -32020, 'Mcp-Method missing');
  const future = await modernPost('tools/list', {}, { 'Mcp-Method': 'tools/list' }, '2099-01-01');
  t.is(future.json.error?.code, -32022, 'a revision the server does not speak');

  const noToken = await rawRequest(server.port, {
    headers: mcpHeaders(server.port, null, { 'MCP-Protocol-Version': MODERN, 'Mcp-Method': 'tools/list' }),
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope() } }),
  });
  t.is(noToken.status, 401, 'the token is checked before either revision is answered');
});

/** Write lines to a fresh `memory-bridge mcp` and collect one answer line per request. */
async function stdioLines(lines: unknown[], answers: number): Promise<Array<Record<string, unknown>>> {
  const child = spawn(process.execPath, [CLI, 'mcp', '--home', world.workHome, '--run-kind', 'interactive'], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  let out = '';
  child.stdout.setEncoding('utf8');
  const done = new Promise<void>((resolve) => {
    child.stdout.on('data', (d: string) => {
      out += d;
      if (out.split('\n').filter((l) => l !== '').length >= answers) resolve();
    });
  });
  child.stdin.write(lines.map((l) => `${JSON.stringify(l)}\n`).join(''));
  await done;
  child.kill();
  return out
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

test('revisions › 2026-07-28 over stdio: discover and stateless requests, cacheScope private; no initialize needed', async (t) => {
  const answers = await stdioLines(
    [
      { jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: envelope() } },
      { jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: envelope() } },
      {
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: { name: 'memory_bridge_search', arguments: 'heron', _meta: envelope() },
      },
    ],
    3,
  );
  const byId = new Map(answers.map((a) => [a.id, a.result as Record<string, unknown>]));
  t.like(byId.get(1), { resultType: 'complete', ttlMs: 0, cacheScope: 'private' });
  t.like(byId.get(2), { resultType: 'complete', ttlMs: 0, cacheScope: 'private' });
  t.is(((byId.get(2)?.tools ?? []) as unknown[]).length, 2);
  // Non-object arguments reach our validation on this revision too: the invalid_request JSON with its hint.
  t.like(byId.get(3), { isError: true, structuredContent: { ok: false, error: { code: 'invalid_request' } } });
  const refused = byId.get(3)?.structuredContent as { error?: { hint?: string } } | undefined;
  t.regex(String(refused?.error?.hint), /^arguments: /);
});
