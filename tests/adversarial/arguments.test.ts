/**
 * Unknown, extra and ill-typed tool arguments, as a model would send them: in-process through createBridge and
 * over a real MCP stdio session. Every one is `invalid_request` with one of the fixed hints (never an echo of the
 * value), extra keys such as `home`, `root` or `allow` never change whose memory is read, and hostile objects
 * (throwing getters, proxies) never make a method throw.
 */
import test from 'ava';
import { HINTS } from '../../src/tools/args.js';
import { writeNote } from '../helpers/fixtures.js';
import { connectMcp } from './mcp-client.js';
import { MARK, assertClean, makeArena, planted, type Arena } from './support.js';

let a: Arena;
let other: Arena;
test.before(() => {
  a = makeArena();
  writeNote(a.root, 'a.md', '# A\n\nlantern\n');
  other = makeArena();
  writeNote(other.root, 'only-other.md', planted(MARK.outside));
});
test.after.always(() => {
  a?.cleanup();
  other?.cleanup();
});

const FIXED_HINTS = new Set<string>([
  HINTS.searchArguments,
  HINTS.searchKeys,
  HINTS.query,
  HINTS.limit(10),
  HINTS.readArguments,
  HINTS.readKeys,
  HINTS.id,
  'id: a relative document path as returned by memory_bridge_search',
]);

function searchCases(): unknown[] {
  return [
    { query: 'lantern', extra: 1 },
    { query: 'lantern', root: '/' },
    { query: 'lantern', home: other.home },
    { query: 'lantern', caller: { home: other.home, cron: false, subagent: false } },
    { query: 'lantern', id: 'a.md' },
    { query: 'lantern', allow: ['**'], deny: [] },
    { query: 'lantern', names: 'unicode' },
    { query: 'lantern', limit: 3, Limit: 3 },
    JSON.parse('{"query":"lantern","__proto__":{"limit":99}}'),
    JSON.parse('{"query":"lantern","constructor":{"prototype":{"x":1}}}'),
    { query: ['lantern'] },
    { query: { toString: () => 'lantern' } },
    { query: 42 },
    { query: null },
    { query: '' },
    { query: ' \t\n' },
    { query: 'x'.repeat(501) },
    { query: '😀'.repeat(501) },
    { query: 'lantern', limit: '3' },
    { query: 'lantern', limit: 3.5 },
    { query: 'lantern', limit: 0 },
    { query: 'lantern', limit: -1 },
    { query: 'lantern', limit: 11 },
    { query: 'lantern', limit: Number.POSITIVE_INFINITY },
    { query: 'lantern', limit: Number.NaN },
    { query: 'lantern', limit: null },
    { query: 'lantern', limit: true },
    { query: 'lantern', limit: [3] },
    {},
    [],
    ['lantern'],
    'lantern',
    42,
    null,
    undefined,
    true,
  ];
}

function readCases(): unknown[] {
  return [
    { id: 'a.md', home: other.home },
    { id: 'only-other.md', home: other.home },
    { id: 'only-other.md', root: other.root },
    { id: 'only-other.md', caller: other.caller },
    { id: 'a.md', query: 'x' },
    { id: 'a.md', ID: 'a.md' },
    JSON.parse('{"id":"a.md","__proto__":{"home":"/"}}'),
    { id: ['a.md'] },
    { id: { toString: () => 'a.md' } },
    { id: 42 },
    { id: null },
    { id: '' },
    { id: 'a'.repeat(513) },
    { path: 'a.md' },
    { file: 'a.md' },
    { uri: 'file:///a.md' },
    {},
    [],
    ['a.md'],
    'a.md',
    null,
    undefined,
  ];
}

function assertInvalid(t: import('ava').ExecutionContext, result: unknown, what: string): void {
  const r = result as { ok: boolean; error?: { code: string; message: string; hint?: string } };
  t.false(r.ok, what);
  t.is(r.error?.code, 'invalid_request', what);
  t.is(r.error?.message, 'The request is invalid.', what);
  t.true(r.error?.hint !== undefined && FIXED_HINTS.has(r.error.hint), `${what}: hint ${r.error?.hint}`);
  t.deepEqual(Object.keys(r.error ?? {}).sort(), ['code', 'hint', 'message'], what);
  assertClean(t, result, other, what);
}

const show = (v: unknown): string => {
  try {
    return JSON.stringify(v)?.slice(0, 60) ?? String(v);
  } catch {
    return String(v);
  }
};

test('arguments › every unknown, extra or ill-typed search argument is invalid_request with a fixed hint', (t) => {
  for (const args of searchCases()) assertInvalid(t, a.bridge.search(args, a.caller), `search ${show(args)}`);
});

test('arguments › every unknown, extra or ill-typed read argument is invalid_request with a fixed hint', (t) => {
  for (const args of readCases()) assertInvalid(t, a.bridge.read(args, a.caller), `read ${show(args)}`);
});

test('arguments › a well-formed call after any bad one still reads the caller’s own memory only', (t) => {
  t.true(a.read('a.md').ok);
  t.is(a.read('only-other.md').ok, false);
  t.true(other.read('only-other.md').ok);
});

test('arguments › hostile argument objects (throwing getters, proxies, cycles) never make a method throw', (t) => {
  const cyclic: Record<string, unknown> = { query: 'lantern' };
  cyclic.self = cyclic;
  const hostile: unknown[] = [
    new Proxy(
      {},
      {
        get: () => {
          throw new Error('/secret/path');
        },
        ownKeys: () => {
          throw new Error('/secret/path');
        },
      },
    ),
    new Proxy(
      { query: 'lantern' },
      {
        getOwnPropertyDescriptor: () => {
          throw new Error('/secret');
        },
      },
    ),
    Object.defineProperty({}, 'query', {
      enumerable: true,
      get: () => {
        throw new Error('/secret');
      },
    }),
    Object.defineProperty({}, 'id', {
      enumerable: true,
      get: () => {
        throw new Error('/secret');
      },
    }),
    cyclic,
    Object.create(null),
  ];
  for (const args of hostile) {
    for (const tool of ['memory_bridge_search', 'memory_bridge_read'] as const) {
      let r: unknown;
      t.notThrows(() => (r = a.bridge.call(tool, args, a.caller)));
      const rr = r as { ok: boolean; error?: { code: string } };
      t.false(rr.ok);
      t.true(rr.error?.code === 'invalid_request' || rr.error?.code === 'unavailable');
      t.false(JSON.stringify(r).includes('secret'));
    }
  }
  const unknownTool = a.bridge.call('memory_bridge_write' as never, { id: 'a.md' }, a.caller);
  t.false(unknownTool.ok);
});

test('arguments › over MCP every bad argument gets exactly the in-process answer, and an unknown tool is a protocol error', async (t) => {
  const s = await connectMcp(a.home);
  try {
    // undefined is not representable in JSON: the client omits `arguments` then.
    for (const args of searchCases().filter(
      (x) => x !== undefined && !(typeof x === 'number' && !Number.isFinite(x)),
    )) {
      const wire = JSON.parse(JSON.stringify(args) ?? 'null') as unknown;
      const { text, isError } = await s.call('memory_bridge_search', wire);
      t.true(isError, show(args));
      t.is(text, JSON.stringify(a.bridge.search(wire, a.caller)), `search ${show(args)}`);
    }
    for (const args of readCases().filter((x) => x !== undefined)) {
      const wire = JSON.parse(JSON.stringify(args) ?? 'null') as unknown;
      const { text, isError } = await s.call('memory_bridge_read', wire);
      t.true(isError, show(args));
      t.is(text, JSON.stringify(a.bridge.read(wire, a.caller)), `read ${show(args)}`);
      assertClean(t, text, other);
    }
    for (const name of ['memory_bridge_write', 'MEMORY_BRIDGE_READ', 'memory_bridge_read ', '../memory_bridge_read']) {
      await t.throwsAsync(() => s.call(name, { id: 'a.md' }), undefined, name);
    }
    t.false(s.stderr().includes(a.root));
  } finally {
    await s.close();
  }
});
