import test from 'ava';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CallToolResultSchema, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { makeHome, removeTree, type ParsedJson } from '../helpers/fixtures.js';
import { remedyOf } from '../../src/remedies.js';
import { READ_INPUT_SCHEMA, SEARCH_INPUT_SCHEMA, TOOL_DESCRIPTIONS } from '../../src/tools/schemas.js';
import { CLI, makeTree, NOTES, type Tree } from '../cli/tree.js';

interface Session {
  client: Client;
  /** Everything the server wrote on stderr so far. */
  stderr: () => string;
  close: () => Promise<void>;
}

/** Spawn `memory-bridge mcp` with `args` and a minimal environment, and connect a real SDK client over stdio. */
async function connect(args: string[], env: Record<string, string> = {}): Promise<Session> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'mcp', ...args],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
    stderr: 'pipe',
  });
  let err = '';
  transport.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString('utf8')));
  const client = new Client({ name: 'memory-bridge-test', version: '0.0.0' });
  await client.connect(transport);
  return { client, stderr: () => err, close: () => client.close() };
}

/** Call a tool and return the parsed JSON text plus the isError flag. */
async function call(
  s: Session,
  name: string,
  args: unknown,
): Promise<{ json: ParsedJson; text: string; isError: boolean }> {
  // client.request sends params as given (no client-side checks), so non-object arguments reach the server as-is.
  const res = await s.client.request(
    { method: 'tools/call', params: { name, arguments: args } as never },
    CallToolResultSchema,
  );
  assertOneText(res.content);
  const text = (res.content[0] as { type: 'text'; text: string }).text;
  return { json: JSON.parse(text), text, isError: res.isError === true };
}

function assertOneText(content: unknown[]): void {
  if (content.length !== 1 || (content[0] as { type?: string }).type !== 'text') {
    throw new Error('expected exactly one text content item');
  }
}

let tree: Tree;
test.before(() => {
  tree = makeTree();
});
test.after.always(() => {
  if (tree !== undefined) removeTree(tree.base);
});

const interactive = () => ['--home', tree.plainHome, '--run-kind', 'interactive'];

test('mcp › tools/list advertises exactly the two tools, their input schemas and readOnlyHint', async (t) => {
  const s = await connect(interactive());
  try {
    const { tools } = await s.client.listTools();
    t.deepEqual(tools.map((x) => x.name).sort(), ['memory_bridge_read', 'memory_bridge_search']);
    const search = tools.find((x) => x.name === 'memory_bridge_search')!;
    const read = tools.find((x) => x.name === 'memory_bridge_read')!;
    t.deepEqual(search.inputSchema, JSON.parse(JSON.stringify(SEARCH_INPUT_SCHEMA)));
    t.deepEqual(read.inputSchema, JSON.parse(JSON.stringify(READ_INPUT_SCHEMA)));
    t.is(search.inputSchema.additionalProperties, false);
    t.is(read.inputSchema.additionalProperties, false);
    t.is(search.description, TOOL_DESCRIPTIONS.memory_bridge_search);
    t.is(read.description, TOOL_DESCRIPTIONS.memory_bridge_read);
    for (const tool of tools) {
      t.is(tool.annotations?.readOnlyHint, true, tool.name);
      t.is(tool.annotations?.destructiveHint, false, tool.name);
      t.is(tool.annotations?.openWorldHint, false, tool.name);
    }
  } finally {
    await s.close();
  }
});

test('mcp › search then read return the allowed notes as tool JSON text', async (t) => {
  const s = await connect(interactive());
  try {
    const found = await call(s, 'memory_bridge_search', { query: 'asters' });
    t.false(found.isError);
    t.true(found.json.ok);
    t.is(typeof found.json.truncated, 'boolean');
    const ids = (found.json.results as Array<{ id: string }>).map((r) => r.id);
    t.true(ids.includes('projects/garden.md'));
    t.false(ids.some((id) => id.includes('private/')));
    const hit = (found.json.results as Array<{ id: string; title?: string; snippet: string }>).find(
      (r) => r.id === 'projects/garden.md',
    )!;
    t.is(hit.title, 'Lantern Garden');
    t.regex(hit.snippet, /asters/i);

    const read = await call(s, 'memory_bridge_read', { id: 'projects/garden.md' });
    t.false(read.isError);
    t.deepEqual(read.json, {
      ok: true,
      id: 'projects/garden.md',
      title: 'Lantern Garden',
      content: NOTES['projects/garden.md'],
      truncated: false,
      offset: 0,
      version: read.json.version,
    });
    t.regex(String(read.json.version), /^[A-Za-z0-9_-]{22}$/);
    t.is(read.text, JSON.stringify(read.json), 'the text is the compact JSON of the result');
  } finally {
    await s.close();
  }
});

const badArguments: Array<[string, string, unknown, RegExp]> = [
  [
    'an extra key',
    'memory_bridge_search',
    { query: 'garden', path: '/etc' },
    /^arguments: only query, limit, within, tags, modified_after, modified_before and sort/,
  ],
  ['limit 0', 'memory_bridge_search', { query: 'garden', limit: 0 }, /^limit: an integer from 1 to/],
  ['limit as the string "5"', 'memory_bridge_search', { query: 'garden', limit: '5' }, /^limit: an integer from 1 to/],
  ['limit 2.5', 'memory_bridge_search', { query: 'garden', limit: 2.5 }, /^limit: an integer from 1 to/],
  ['a missing query', 'memory_bridge_search', { limit: 3 }, /^query: /],
  ['an empty query', 'memory_bridge_search', { query: '' }, /^query: /],
  ['missing arguments', 'memory_bridge_search', undefined, /^(arguments|query): /],
  ['a string instead of an object', 'memory_bridge_search', 'garden', /^arguments: /],
  ['an array instead of an object', 'memory_bridge_read', ['projects/garden.md'], /^arguments: /],
  ['null arguments', 'memory_bridge_read', null, /^arguments: /],
  ['a number as the id', 'memory_bridge_read', { id: 7 }, /^id: /],
  ['an extra key on read', 'memory_bridge_read', { id: 'projects/garden.md', root: '/' }, /^arguments: only id/],
];

test('mcp › bad arguments get invalid_request JSON with a hint, never the SDK validator text', async (t) => {
  const s = await connect(interactive());
  try {
    for (const [what, tool, args, hint] of badArguments) {
      const r = await call(s, tool, args);
      t.true(r.isError, what);
      t.is(r.json.ok, false, what);
      t.is(r.json.error.code, 'invalid_request', what);
      t.is(r.json.error.message, 'The request is invalid.', what);
      t.regex(r.json.error.hint, hint, what);
      t.deepEqual(Object.keys(r.json).sort(), ['error', 'ok'], what);
      t.notRegex(r.text, /MCP error|Invalid arguments|Expected|zod|received/i, what);
    }
  } finally {
    await s.close();
  }
});

test('mcp › an unknown tool name is a protocol error, and the server keeps answering afterwards', async (t) => {
  const s = await connect(interactive());
  try {
    for (const name of ['memory_bridge_write', '', 'MEMORY_BRIDGE_SEARCH']) {
      const err = await t.throwsAsync(s.client.callTool({ name, arguments: { query: 'garden' } }), {
        instanceOf: McpError,
      });
      t.is(err?.code, ErrorCode.InvalidParams, name);
    }
    await call(s, 'memory_bridge_search', { query: 'garden', limit: 99 });
    await call(s, 'memory_bridge_read', 'not an object');
    const after = await call(s, 'memory_bridge_search', { query: 'garden' });
    t.true(after.json.ok, 'a good call after bad ones still works');
    t.false(after.isError);
    t.is((await s.client.listTools()).tools.length, 2);
  } finally {
    await s.close();
  }
});

test('mcp › a denied read and a missing read are the same not_found_or_denied answer', async (t) => {
  const s = await connect(interactive());
  try {
    const denied = await call(s, 'memory_bridge_read', { id: 'projects/private/gate-code.md' });
    const missing = await call(s, 'memory_bridge_read', { id: 'projects/greenhouse.md' });
    t.true(denied.isError);
    t.deepEqual(denied.json, {
      ok: false,
      error: { code: 'not_found_or_denied', message: 'No readable document has that id.' },
    });
    t.is(denied.text, missing.text);
  } finally {
    await s.close();
  }
  t.false(s.stderr().includes(tree.root), 'stderr names no path');
  t.false(s.stderr().includes('gate-code'), 'stderr names no note');
});

test('mcp › without --home or HERMES_HOME every call is unavailable', async (t) => {
  const s = await connect(['--run-kind', 'interactive']);
  try {
    for (const [tool, args] of [
      ['memory_bridge_search', { query: 'garden' }],
      ['memory_bridge_read', { id: 'projects/garden.md' }],
    ] as const) {
      const r = await call(s, tool, args);
      t.true(r.isError, tool);
      t.deepEqual(r.json, { ok: false, error: { code: 'unavailable', message: 'Memory is unavailable.' } });
    }
  } finally {
    await s.close();
  }
  t.regex(s.stderr(), /no profile home/);
});

test('mcp › HERMES_HOME passed in the environment names the home', async (t) => {
  const s = await connect(['--run-kind', 'interactive'], { HERMES_HOME: tree.plainHome });
  try {
    const r = await call(s, 'memory_bridge_read', { id: 'workflows/visit.md' });
    t.true(r.json.ok);
  } finally {
    await s.close();
  }
});

test('mcp › the default run kind (unknown) is refused unless the policy allows both cron and subagents', async (t) => {
  for (const [home, expectOk] of [
    [tree.plainHome, false],
    [tree.cronHome, false],
    [tree.bothHome, true],
  ] as const) {
    const s = await connect(['--home', home]);
    try {
      const r = await call(s, 'memory_bridge_search', { query: 'garden' });
      t.is(r.json.ok, expectOk, home);
      if (!expectOk) t.is(r.json.error.code, 'unavailable');
      await call(s, 'memory_bridge_search', { query: 'garden' });
    } finally {
      await s.close();
    }
    // Said once at start, with the remedy; each refused call is then one line, the remedy only on the first.
    const start = `memory-bridge mcp: every call will be unavailable until this is fixed: run_kind_refused → ${remedyOf('run_kind_refused')}\n`;
    const lines = s.stderr().split('\n');
    if (expectOk) t.is(s.stderr(), '', home);
    else {
      t.true(s.stderr().startsWith(start), s.stderr());
      t.is(lines.filter((l) => l.includes('run_kind_refused →')).length, 2, s.stderr());
      t.is(lines.filter((l) => l === 'memory-bridge: memory_bridge_search run_kind_refused').length, 1, s.stderr());
    }
  }
});

test('mcp › says at start that a missing policy makes every call unavailable, and what to do', async (t) => {
  const s = await connect(['--home', `${tree.base}/no-such-home`, '--run-kind', 'interactive']);
  await s.close();
  t.regex(
    s.stderr(),
    /^memory-bridge mcp: every call will be unavailable until this is fixed: policy_missing → .*memory-bridge init/,
  );
  t.false(s.stderr().includes(tree.base), 'the remedy names no path');
});

test('mcp › a policy edit applies to the very next call of a running server', async (t) => {
  const { home } = makeHome(
    tree.base,
    {
      version: 1,
      root: tree.root,
      allow: ['projects/**', 'decisions/**', 'workflows/**'],
      deny: ['**/private/**'],
    },
    'editable',
  );
  const s = await connect(['--home', home, '--run-kind', 'interactive']);
  try {
    t.true((await call(s, 'memory_bridge_read', { id: 'decisions/watering.md' })).json.ok);
    makeHome(tree.base, { version: 1, root: tree.root, allow: ['projects/**'], deny: ['**/private/**'] }, 'editable');
    const after = await call(s, 'memory_bridge_read', { id: 'decisions/watering.md' });
    t.is(after.json.error?.code, 'not_found_or_denied');
  } finally {
    await s.close();
  }
});
