/**
 * MCP stdio framing over raw pipes and with a real SDK client (docs/DESIGN.md "Line framing"): lines of up to 1 MiB,
 * an over-cap line answered with a JSON-RPC error (its id recovered) while the session goes on, parse errors
 * answered, and tool requests before `initialize` refused with Invalid Request.
 */
import test from 'ava';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CallToolResultSchema, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { removeTree, type ParsedJson } from '../helpers/fixtures.js';
import { idOfOversized, MAX_MCP_LINE_BYTES } from '../../src/server/stdio.js';
import { CLI, makeTree, type Tree } from '../cli/tree.js';

let tree: Tree;
test.before(() => {
  tree = makeTree();
});
test.after.always(() => {
  if (tree !== undefined) removeTree(tree.base);
});

/** A server on raw pipes: write bytes, read response lines one at a time. */
interface Raw {
  child: ChildProcessWithoutNullStreams;
  write(data: string | Buffer): Promise<void>;
  next(): Promise<ParsedJson>;
  stderr(): string;
  end(): Promise<number | null>;
}

function raw(): Raw {
  const child = spawn(process.execPath, [CLI, 'mcp', '--home', tree.plainHome, '--run-kind', 'interactive'], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
  });
  let out = '';
  let err = '';
  const waiting: Array<(line: string) => void> = [];
  const lines: string[] = [];
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (c: string) => {
    out += c;
    for (let nl = out.indexOf('\n'); nl !== -1; nl = out.indexOf('\n')) {
      const line = out.slice(0, nl);
      out = out.slice(nl + 1);
      const w = waiting.shift();
      if (w !== undefined) w(line);
      else lines.push(line);
    }
  });
  child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return {
    child,
    write: (data) =>
      new Promise((resolve, reject) =>
        child.stdin.write(data, (e) => (e === undefined || e === null ? resolve() : reject(e))),
      ),
    next: () =>
      new Promise((resolve, reject) => {
        const l = lines.shift();
        if (l !== undefined) return resolve(JSON.parse(l));
        const timer = setTimeout(() => reject(new Error(`no response; stderr: ${err}`)), 60_000);
        waiting.push((line) => {
          clearTimeout(timer);
          resolve(JSON.parse(line));
        });
      }),
    stderr: () => err,
    end: () => {
      child.stdin.end();
      return exited;
    },
  };
}

const INIT = {
  jsonrpc: '2.0',
  id: 'init',
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
};
const line = (m: unknown) => `${JSON.stringify(m)}\n`;
const searchCall = (id: unknown, query = 'asters') => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'memory_bridge_search', arguments: { query } },
});

/** Write `data` in 64 KiB pieces, as a pipe delivers a large write. */
async function writeInPieces(r: Raw, data: Buffer): Promise<void> {
  for (let i = 0; i < data.length; i += 65536) await r.write(data.subarray(i, i + 65536));
}

test('framing › tools/call and tools/list before initialize get Invalid Request, never a result', async (t) => {
  const r = raw();
  try {
    await r.write(line(searchCall(1)));
    const early = await r.next();
    t.is(early.id, 1);
    t.is(early.result, undefined);
    t.is(early.error.code, ErrorCode.InvalidRequest);
    t.regex(early.error.message, /not initialized/);
    await r.write(line({ jsonrpc: '2.0', id: 2, method: 'tools/list' }));
    const list = await r.next();
    t.is(list.error.code, ErrorCode.InvalidRequest);
    // ping is allowed before initialize; after initialize the same call is answered.
    await r.write(line({ jsonrpc: '2.0', id: 3, method: 'ping' }));
    t.deepEqual(await r.next(), { jsonrpc: '2.0', id: 3, result: {} });
    await r.write(line(INIT));
    t.is((await r.next()).id, 'init');
    await r.write(line({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    await r.write(line(searchCall(4)));
    const answered = await r.next();
    t.is(answered.id, 4);
    t.true(JSON.parse(answered.result.content[0].text).ok);
  } finally {
    t.is(await r.end(), 0);
  }
  t.regex(r.stderr(), /not_initialized/);
});

test('framing › every request read before the input ends is answered, the calls waiting for the bridge to load', async (t) => {
  // Written at once and followed by the end of input: the server reads them while it still loads the bridge
  // (src/cli/commands/mcp.ts), answers initialize and tools/list at once, and the search once the bridge is there.
  const r = raw();
  await r.write(
    line(INIT) +
      line({ jsonrpc: '2.0', method: 'notifications/initialized' }) +
      line(searchCall(1)) +
      line({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
  );
  const code = await r.end();
  const answers = new Map<unknown, ParsedJson>();
  for (let i = 0; i < 3; i++) {
    const a = await r.next();
    answers.set(a.id, a);
  }
  t.is(code, 0);
  t.deepEqual([...answers.keys()].sort(), [1, 2, 'init'].sort());
  t.true(JSON.parse(answers.get(1)!.result.content[0].text).ok, 'the search was answered from the tree');
  t.is(answers.get(2)!.result.tools.length, 2);
});

test('framing › 8 MiB and 12 MiB lines are answered with Invalid Request (their ids recovered) and the session goes on', async (t) => {
  const r = raw();
  try {
    await r.write(line(INIT));
    await r.next();
    await r.write(line({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    const huge = 'x'.repeat(8 * 1024 * 1024);
    // Member order as the SDK's client writes it (id last), then with id first, then a 12 MiB line without an id.
    const idLast = `{"method":"tools/call","params":{"name":"memory_bridge_search","arguments":{"query":"${huge}"}},"jsonrpc":"2.0","id":41}\n`;
    await writeInPieces(r, Buffer.from(idLast));
    const first = await r.next();
    t.deepEqual(first, {
      jsonrpc: '2.0',
      id: 41,
      error: { code: ErrorCode.InvalidRequest, message: `Request line longer than ${MAX_MCP_LINE_BYTES} bytes` },
    });
    await writeInPieces(r, Buffer.from(line({ jsonrpc: '2.0', id: 'big', method: 'tools/call', params: { q: huge } })));
    t.is((await r.next()).id, 'big');
    await writeInPieces(r, Buffer.from(`${'y'.repeat(12 * 1024 * 1024)}\n`));
    const third = await r.next();
    t.is(third.id, null);
    t.is(third.error.code, ErrorCode.InvalidRequest);
    // Still serving, and a request split into one-byte writes is framed correctly.
    const again = Buffer.from(line(searchCall(42)));
    for (let i = 0; i < again.length; i += 7) await r.write(again.subarray(i, i + 7));
    const answered = await r.next();
    t.is(answered.id, 42);
    t.true(JSON.parse(answered.result.content[0].text).ok);
  } finally {
    t.is(await r.end(), 0);
  }
  t.is((r.stderr().match(/oversized_line/g) ?? []).length, 3);
});

test('framing › a line that is not JSON gets Parse error, a non-message gets Invalid Request, blank lines nothing', async (t) => {
  const r = raw();
  try {
    await r.write('{"jsonrpc": "2.0", "id": 1, "method": \n');
    t.deepEqual(await r.next(), {
      jsonrpc: '2.0',
      id: null,
      error: { code: ErrorCode.ParseError, message: 'Parse error' },
    });
    await r.write('\n   \r\n[1, 2]\n');
    t.deepEqual(await r.next(), {
      jsonrpc: '2.0',
      id: null,
      error: { code: ErrorCode.InvalidRequest, message: 'Invalid Request' },
    });
    await r.write('{"jsonrpc":"1.0","id":7,"method":"ping"}\n');
    t.is((await r.next()).id, 7);
    await r.write(line({ jsonrpc: '2.0', id: 8, method: 'ping' }));
    t.deepEqual(await r.next(), { jsonrpc: '2.0', id: 8, result: {} });
  } finally {
    t.is(await r.end(), 0);
  }
});

test('framing › a real MCP client sending an over-cap request gets an error for that request and keeps its session', async (t) => {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'mcp', '--home', tree.plainHome, '--run-kind', 'interactive'],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'framing-test', version: '0.0.0' });
  await client.connect(transport);
  try {
    const err = await t.throwsAsync(
      client.request(
        {
          method: 'tools/call',
          params: { name: 'memory_bridge_search', arguments: { query: 'q'.repeat(2 * MAX_MCP_LINE_BYTES) } },
        },
        CallToolResultSchema,
      ),
    );
    t.true(err instanceof McpError);
    t.is((err as McpError).code, ErrorCode.InvalidRequest);
    const ok = await client.callTool({ name: 'memory_bridge_search', arguments: { query: 'asters' } });
    t.true(JSON.parse((ok.content as Array<{ text: string }>)[0]!.text).ok);
  } finally {
    await client.close();
  }
});

test('framing › the id of an oversized line is read only where it belongs to the top-level object', (t) => {
  const b = (s: string) => Buffer.from(s);
  t.is(idOfOversized(b('{"jsonrpc":"2.0","id":5,"method":"x"'), b('')), 5);
  t.is(idOfOversized(b('{"id":"a\\"b","method"'), b('')), 'a"b');
  t.is(idOfOversized(b('{"method":"tools/call","params":{'), b('xxx"}},"jsonrpc":"2.0","id":77}')), 77);
  t.is(
    idOfOversized(b('{"method":"tools/call"'), b('"arguments":{"id":3}}}')),
    null,
    'a nested id is not the request id',
  );
  t.is(idOfOversized(b('{"params":{"id":3,'), b('xx"}}')), null);
  t.is(idOfOversized(b('garbage'), b('garbage')), null);
  t.is(idOfOversized(b('{"id":1.5,'), b('')), null);
});
