/**
 * Typed tool results over a real MCP client (the v1 SDK `Client`, which validates `structuredContent` against each
 * tool's `outputSchema` with its own JSON Schema validator on every `callTool`): output schemas, structured
 * content equal to the text block, `isError` with today's codes, the declared result size bound and annotations.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { makeHome, removeTree, writeNote } from '../helpers/fixtures.js';
import { MAX_RESULT_SIZE_META_KEY } from '../../src/server/mcp.js';
import { MAX_RESULT_SIZE_CHARS } from '../../src/tools/result-size.js';
import { READ_OUTPUT_SCHEMA, SEARCH_OUTPUT_SCHEMA } from '../../src/tools/schemas.js';
import { CLI, makeTree, REPO_ROOT, type Tree } from '../cli/tree.js';

let tree: Tree;
let bigHome: string;
test.before(() => {
  tree = makeTree();
  // A note whose every character takes two JSON code units, with a long title: the largest read answer the
  // default limits allow, and a search whose hits fill total_chars.
  writeNote(tree.root, 'projects/quotes.md', `# ${'"'.repeat(400)}\n\n${'\\"'.repeat(6000)} asters\n`);
  for (let i = 0; i < 12; i++)
    writeNote(tree.root, `projects/many-${i}.md`, `# ${'\\'.repeat(250)}\n\nasters ${'"'.repeat(400)}\n`);
  bigHome = makeHome(tree.base, { version: 1, root: tree.root, allow: ['projects/**'], deny: [] }, 'typed').home;
});
test.after.always(() => {
  if (tree !== undefined) removeTree(tree.base);
});

async function connect(home: string): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'mcp', '--home', home, '--run-kind', 'interactive'],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    stderr: 'ignore',
  });
  const client = new Client({ name: 'memory-bridge-typed-test', version: '0.0.0' });
  await client.connect(transport);
  return client;
}

test('typed › tools/list declares output schemas, the result size bound and read-only, idempotent, closed-world', async (t) => {
  const client = await connect(tree.plainHome);
  try {
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((x) => [x.name, x]));
    t.deepEqual(byName.get('memory_bridge_search')?.outputSchema, JSON.parse(JSON.stringify(SEARCH_OUTPUT_SCHEMA)));
    t.deepEqual(byName.get('memory_bridge_read')?.outputSchema, JSON.parse(JSON.stringify(READ_OUTPUT_SCHEMA)));
    for (const tool of tools) {
      t.is(tool.outputSchema?.type, 'object', tool.name);
      t.is(
        tool._meta?.[MAX_RESULT_SIZE_META_KEY],
        MAX_RESULT_SIZE_CHARS[tool.name as keyof typeof MAX_RESULT_SIZE_CHARS],
      );
      t.like(tool.annotations, {
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false,
      });
    }
  } finally {
    await client.close();
  }
});

test('typed › answers and errors carry structuredContent equal to their one text block, validated by the client', async (t) => {
  const client = await connect(tree.plainHome);
  try {
    const cases: Array<[string, Record<string, unknown>, boolean, string | null]> = [
      ['memory_bridge_search', { query: 'asters' }, true, null],
      ['memory_bridge_search', { query: 'asters', limit: 99 }, false, 'invalid_request'],
      ['memory_bridge_read', { id: 'projects/garden.md' }, true, null],
      ['memory_bridge_read', { id: 'projects/private/gate-code.md' }, false, 'not_found_or_denied'],
      ['memory_bridge_read', { id: '../etc/passwd' }, false, 'invalid_request'],
      // The filters, a filter-only search, outlines, sections and multi-reads (docs/TOOLS.md §Filters).
      ['memory_bridge_search', { query: 'asters', tags: ['x'], modified_after: '2020-01-01' }, true, null],
      ['memory_bridge_search', { within: ['projects/**'], sort: 'modified' }, true, null],
      ['memory_bridge_read', { id: 'projects/garden.md', outline: true }, true, null],
      ['memory_bridge_read', { id: 'projects/garden.md', section: 'lantern-garden' }, true, null],
      ['memory_bridge_read', { id: 'projects/garden.md', section: 'no such heading' }, false, 'invalid_request'],
      ['memory_bridge_read', { ids: ['projects/garden.md', 'projects/private/gate-code.md'] }, true, null],
    ];
    for (const [name, args, ok, code] of cases) {
      // callTool checks structuredContent against the tool's outputSchema and throws when it does not match.
      const res = await client.callTool({ name, arguments: args });
      const what = `${name} ${JSON.stringify(args)}`;
      t.is(res.isError === true, !ok, what);
      const content = res.content as Array<{ type: string; text: string }>;
      t.is(content.length, 1, what);
      t.is(content[0]!.type, 'text', what);
      t.deepEqual(res.structuredContent, JSON.parse(content[0]!.text), what);
      t.is(JSON.stringify(res.structuredContent), content[0]!.text, what);
      const sc = res.structuredContent as { ok: boolean; error?: { code: string } };
      t.is(sc.ok, ok, what);
      t.is(sc.error?.code ?? null, code, what);
    }
  } finally {
    await client.close();
  }
  const unavailable = await connect(tree.cronHome.replace(/cron$/, 'no-such-home'));
  try {
    const res = await unavailable.callTool({ name: 'memory_bridge_search', arguments: { query: 'asters' } });
    t.true(res.isError);
    t.deepEqual(res.structuredContent, {
      ok: false,
      error: { code: 'unavailable', message: 'Memory is unavailable.' },
    });
  } finally {
    await unavailable.close();
  }
});

test('typed › the largest answers the limits allow stay within the declared maxResultSizeChars', async (t) => {
  const client = await connect(bigHome);
  try {
    const read = await client.callTool({ name: 'memory_bridge_read', arguments: { id: 'projects/quotes.md' } });
    const readText = (read.content as Array<{ text: string }>)[0]!.text;
    t.false(read.isError === true);
    t.true((read.structuredContent as { truncated: boolean }).truncated, 'the read is cut at read_chars');
    t.true(readText.length > 10_000, `a large read (${readText.length})`);
    t.true(readText.length <= MAX_RESULT_SIZE_CHARS.memory_bridge_read, `${readText.length}`);
    const found = await client.callTool({ name: 'memory_bridge_search', arguments: { query: 'asters', limit: 10 } });
    const foundText = (found.content as Array<{ text: string }>)[0]!.text;
    t.false(found.isError === true);
    t.true((found.structuredContent as { truncated: boolean }).truncated, 'the search is cut at total_chars');
    t.true(foundText.length <= MAX_RESULT_SIZE_CHARS.memory_bridge_search, `${foundText.length}`);
  } finally {
    await client.close();
  }
});

test('typed › docs/MCP.md states the declared result size figures', (t) => {
  const doc = readFileSync(path.join(REPO_ROOT, 'docs', 'MCP.md'), 'utf8');
  for (const [name, figure] of Object.entries(MAX_RESULT_SIZE_CHARS)) {
    t.true(doc.includes(`| \`${name}\` |`) && doc.includes(`| ${figure.toLocaleString('en-US')} |`), name);
  }
});
