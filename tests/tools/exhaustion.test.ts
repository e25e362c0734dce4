/**
 * Running out of descriptors is never silent (docs/DESIGN.md "Running out of descriptors"): real processes whose
 * RLIMIT_NOFILE is lowered after their modules are loaded scan a real tree whose notes sit under a chain of
 * directories (the walk holds one descriptor per level) next to many side directories. At every limit the answer
 * is either the complete one or `unavailable` with the operator reason `resource_exhausted`: never a partial
 * answer with `truncated: false`, never a refusal labelled as something else (policy_untrusted, io_error, a
 * denied note).
 */
import test from 'ava';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { makeHome, makeTempDir, mkdirs, removeTree, writeNote } from '../helpers/fixtures.js';
import { setOpenFileLimit } from '../helpers/rlimit.js';
import { CLI } from '../cli/tree.js';

const CHILD = path.join(path.dirname(fileURLToPath(import.meta.url)), 'exhaustion-child.js');
const tmp = makeTempDir('mb-exhaust-');
test.after.always(() => removeTree(tmp));

const root = mkdirs(tmp, 'memory');
/** A chain of 14 directories; every level also has a note and three side directories with a note each. */
const chain = Array.from({ length: 14 }, (_, i) => `level${i}`);
for (let depth = 1; depth <= chain.length; depth++) {
  const dir = chain.slice(0, depth).join('/');
  writeNote(root, `${dir}/note.md`, `# Level ${depth}\n\nA lantern note at depth ${depth}.\n`);
  for (const side of ['a', 'b', 'c']) writeNote(root, `${dir}/side-${side}/note.md`, `# Side ${side}\n\nlantern\n`);
}
const DEEP_ID = `${chain.join('/')}/deep.md`;
writeNote(root, DEEP_ID, '# Deep\n\nThe qzdeepmarkqz note sits at the bottom of the chain.\n');
const { home } = makeHome(tmp, { version: 1, root, allow: ['**'], limits: { max_depth: 16 } });
const caller = { home, cron: false, subagent: false };

const EXHAUSTED = { ok: false, error: { code: 'unavailable', message: 'Memory is unavailable.' } };
const CALLS = [
  { tool: 'memory_bridge_search', args: { query: 'qzdeepmarkqz' }, caller },
  { tool: 'memory_bridge_search', args: { query: 'lantern', limit: 10 }, caller },
  { tool: 'memory_bridge_read', args: { id: DEEP_ID }, caller },
];

/** Run CALLS in a child process whose descriptor limit is `limit` once its modules are loaded. */
function childAt(limit: number): Array<{ result: { ok: boolean }; reasons: string[] }> {
  const r = spawnSync(process.execPath, [CHILD, String(limit), JSON.stringify(CALLS)], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`child at limit ${limit}: status ${r.status} ${r.stderr}`);
  return r.stdout
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l));
}

test('with few descriptors left every call is complete or unavailable with resource_exhausted, at every limit', (t) => {
  const full = childAt(4096);
  for (const f of full) t.true(f.result.ok);
  const exhausted = [0, 0, 0];
  const complete = [0, 0, 0];
  for (let limit = 16; limit <= 56; limit += 2) {
    const got = childAt(limit);
    got.forEach((g, i) => {
      const what = `${JSON.stringify(CALLS[i]!.args)} at a limit of ${limit}`;
      if (g.result.ok) {
        // A read's version is keyed per process (docs/DESIGN.md "Reading long notes"): compare the rest.
        const { version: _a, ...got } = g.result as { version?: string };
        const { version: _b, ...whole } = full[i]!.result as { version?: string };
        t.deepEqual(got, whole, `${what}: a success must be the complete answer`);
        complete[i]!++;
      } else {
        t.deepEqual(g.result, EXHAUSTED, what);
        t.deepEqual(g.reasons, ['resource_exhausted'], what);
        exhausted[i]!++;
      }
    });
  }
  t.true(
    exhausted.every((n) => n > 0),
    `every call must run out of descriptors at some limit: ${exhausted}`,
  );
  t.true(
    complete.every((n) => n > 0),
    `every call must be complete at some limit: ${complete}`,
  );
});

test('the MCP server with few descriptors answers unavailable (resource_exhausted) and keeps serving', async (t) => {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'mcp', '--home', home, '--run-kind', 'interactive'],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const client = new Client({ name: 'exhaustion-test', version: '0.0.0' });
  await client.connect(transport);
  const search = async (): Promise<{ json: { ok: boolean }; isError: boolean }> => {
    const res = await client.request(
      { method: 'tools/call', params: { name: 'memory_bridge_search', arguments: { query: 'qzdeepmarkqz' } } },
      CallToolResultSchema,
    );
    return { json: JSON.parse((res.content[0] as { text: string }).text), isError: res.isError === true };
  };
  try {
    const full = await search();
    t.true(full.json.ok);
    // Lower the running server's limit step by step: the answer is complete until it cannot be, then unavailable.
    let exhausted = 0;
    for (let limit = 64; limit >= 16; limit -= 4) {
      setOpenFileLimit(transport.pid!, limit);
      const got = await search();
      if (got.json.ok) t.deepEqual(got, full, `limit ${limit}`);
      else {
        t.deepEqual(got, { json: EXHAUSTED, isError: true }, `limit ${limit}`);
        exhausted++;
      }
    }
    t.true(exhausted > 0, 'some limit must run out of descriptors');
    // Give the descriptors back: the same server answers in full again.
    setOpenFileLimit(transport.pid!, 4096);
    t.deepEqual(await search(), full);
  } finally {
    await client.close();
  }
  const reasons = [...stderr.matchAll(/^memory-bridge: memory_bridge_\w+ (\w+)/gm)].map((m) => m[1]!);
  t.true(reasons.length > 0);
  t.true(
    reasons.every((r) => r === 'resource_exhausted'),
    reasons.join(' '),
  );
});
