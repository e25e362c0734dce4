/**
 * The plain-JSON path of `serve` (src/server/json-exchange.ts, docs/MCP.md §Revisions): a 2025-era request the
 * SDK's Streamable HTTP transport would hand to its server as it is gets exactly the answer that transport gives.
 *
 * Two real HTTP servers share one bridge over the same tree: one answers through `createMcpExchange()` (the plain
 * path for what `plainRequestOf` admits), the other through `createMcpExchange(…, { plainJson: false })` (the SDK's
 * transport for every 2025-era message). Every request below, plain ones and every kind the plain path leaves to
 * the SDK, must get the same status, `Content-Type` and body bytes from both. A second test pins which requests
 * take the plain path, so the comparison is known to cover it.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Socket } from 'node:net';
import test from 'ava';
import { removeTree } from '../helpers/fixtures.js';
import { createBridge } from '../../src/tools/bridge.js';
import { createMcpExchange, type McpExchange } from '../../src/server/http-mcp.js';
import { plainRequestOf } from '../../src/server/json-exchange.js';
import type { McpServerOptions } from '../../src/server/mcp.js';
import { makeWorld, rawRequest, startExchangeServer, type RawResponse, type World } from './http-world.js';

let world: World;
const servers: http.Server[] = [];
const exchanges: McpExchange[] = [];
let plainPort = 0;
let sdkPort = 0;

/** A server that hands every JSON body to `exchange`; its port. */
async function serveWith(exchange: McpExchange, options: McpServerOptions): Promise<number> {
  const server = await startExchangeServer(exchange, options);
  servers.push(server);
  return (server.address() as AddressInfo).port;
}

test.before(async () => {
  world = makeWorld('mb-json-exchange-');
  const bridge = createBridge({ transport: 'http', log: () => undefined });
  const options: McpServerOptions = {
    caller: { home: world.workHome, cron: false, subagent: false, profile: 'exchange-test' },
    bridge,
    version: '0.0.0-test',
    log: () => undefined,
  };
  const plain = createMcpExchange(() => undefined);
  const sdk = createMcpExchange(() => undefined, { plainJson: false });
  exchanges.push(plain, sdk);
  plainPort = await serveWith(plain, options);
  sdkPort = await serveWith(sdk, options);
});

test.after.always(async () => {
  for (const s of servers) await new Promise<void>((resolve) => s.close(() => resolve()));
  for (const e of exchanges) await e.close();
  if (world !== undefined) removeTree(world.base);
});

const ACCEPT = 'application/json, text/event-stream';
const JSON_TYPE = 'application/json';

/** One request: its headers beyond Host, and its body. */
interface Case {
  name: string;
  headers: Record<string, string>;
  body: unknown;
  /** True when the plain path must answer it. */
  plain: boolean;
}

const rpc = (method: string, params?: unknown, id: unknown = 7): unknown => ({
  jsonrpc: '2.0',
  id,
  method,
  ...(params === undefined ? {} : { params }),
});
const call = (name: string, args: unknown): unknown => rpc('tools/call', { name, arguments: args });
const plainHeaders = { Accept: ACCEPT, 'Content-Type': JSON_TYPE, 'MCP-Protocol-Version': '2025-11-25' };

const CASES: Case[] = [
  { name: 'tools/list', headers: plainHeaders, body: rpc('tools/list'), plain: true },
  { name: 'search', headers: plainHeaders, body: call('memory_bridge_search', { query: 'heron' }), plain: true },
  {
    name: 'search within',
    headers: plainHeaders,
    body: call('memory_bridge_search', { query: 'heron', within: ['shared/**'], limit: 1 }),
    plain: true,
  },
  { name: 'read', headers: plainHeaders, body: call('memory_bridge_read', { id: 'work/roadmap.md' }), plain: true },
  {
    name: 'read denied',
    headers: plainHeaders,
    body: call('memory_bridge_read', { id: 'personal/diary.md' }),
    plain: true,
  },
  { name: 'bad arguments', headers: plainHeaders, body: call('memory_bridge_search', 'heron'), plain: true },
  {
    name: 'own __proto__ argument',
    headers: plainHeaders,
    body: JSON.parse(
      '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"memory_bridge_search","arguments":{"query":"x","__proto__":{}}}}',
    ),
    plain: true,
  },
  { name: 'unknown tool', headers: plainHeaders, body: call('no_such_tool', {}), plain: true },
  { name: 'tools/call without params', headers: plainHeaders, body: rpc('tools/call'), plain: true },
  { name: 'ping, string id', headers: plainHeaders, body: rpc('ping', undefined, 'a-1'), plain: true },
  { name: 'ping, id 0', headers: plainHeaders, body: rpc('ping', undefined, 0), plain: true },
  { name: 'unknown method', headers: plainHeaders, body: rpc('memory/nothing'), plain: true },
  { name: 'resources/list (not offered)', headers: plainHeaders, body: rpc('resources/list'), plain: true },
  {
    name: 'logging/setLevel (not offered)',
    headers: plainHeaders,
    body: rpc('logging/setLevel', { level: 'info' }),
    plain: true,
  },
  {
    name: 'no protocol version header',
    headers: { Accept: ACCEPT, 'Content-Type': JSON_TYPE },
    body: rpc('tools/list'),
    plain: true,
  },
  {
    name: 'older protocol version header',
    headers: { ...plainHeaders, 'MCP-Protocol-Version': '2025-06-18' },
    body: rpc('tools/list'),
    plain: true,
  },
  {
    name: 'JSON content type with a charset',
    headers: { ...plainHeaders, 'Content-Type': 'application/json; charset=utf-8' },
    body: rpc('tools/list'),
    plain: true,
  },
  {
    name: 'initialize',
    headers: { Accept: ACCEPT, 'Content-Type': JSON_TYPE },
    body: rpc('initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'exchange-test', version: '0' },
    }),
    plain: false,
  },
  {
    name: 'notification',
    headers: plainHeaders,
    body: { jsonrpc: '2.0', method: 'notifications/initialized' },
    plain: false,
  },
  { name: 'a posted response', headers: plainHeaders, body: { jsonrpc: '2.0', id: 3, result: {} }, plain: false },
  { name: 'not JSON-RPC', headers: plainHeaders, body: { hello: 'world' }, plain: false },
  { name: 'no Accept', headers: { 'Content-Type': JSON_TYPE }, body: rpc('tools/list'), plain: false },
  {
    name: 'Accept without event-stream',
    headers: { ...plainHeaders, Accept: JSON_TYPE },
    body: rpc('tools/list'),
    plain: false,
  },
  {
    name: 'text content type',
    headers: { ...plainHeaders, 'Content-Type': 'text/plain' },
    body: rpc('tools/list'),
    plain: false,
  },
  {
    name: 'unsupported protocol version header',
    headers: { ...plainHeaders, 'MCP-Protocol-Version': '1999-01-01' },
    body: rpc('tools/list'),
    plain: false,
  },
];

async function send(port: number, c: Case): Promise<RawResponse> {
  return rawRequest(port, { headers: { Host: `127.0.0.1:${port}`, ...c.headers }, body: JSON.stringify(c.body) });
}

test('json exchange › every 2025-era request gets the same status, content type and bytes as from the SDK transport', async (t) => {
  for (const c of CASES) {
    const ours = await send(plainPort, c);
    const sdk = await send(sdkPort, c);
    t.is(ours.status, sdk.status, `${c.name}: status`);
    t.is(ours.headers['content-type'], sdk.headers['content-type'], `${c.name}: content type`);
    t.is(ours.body, sdk.body, `${c.name}: body`);
  }
  // The comparison means something: answers came from the tools, and refusals are the SDK's own.
  const search = await send(plainPort, CASES[1]!);
  t.is(search.status, 200);
  t.regex(search.body, /work\/roadmap\.md/);
  const noAccept = await send(plainPort, CASES.find((c) => c.name === 'no Accept')!);
  t.is(noAccept.status, 406);
});

test('json exchange › the plain path takes exactly the plain requests', (t) => {
  for (const c of CASES) {
    const req = new http.IncomingMessage(new Socket());
    req.method = 'POST';
    for (const [name, value] of Object.entries(c.headers)) req.headers[name.toLowerCase()] = value;
    t.is(plainRequestOf(req, c.body) !== null, c.plain, c.name);
  }
});
