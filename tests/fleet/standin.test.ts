/**
 * The Qdrant stand-in behaves like the REST subset it stands for (filters, id-ordered pagination, auth, errors),
 * checked through the official JS client the export uses, and the client's own behaviour at construction.
 */
import test from 'ava';
import { QdrantClient } from '@qdrant/js-client-rest';
import { QdrantStandin, type StandinPoint } from '../helpers/qdrant-standin.js';
import { readQdrant, resolveQdrantSettings, scrollFilter } from '../../src/fleet/source-qdrant.js';
import { ExportError } from '../../src/fleet/errors.js';

function uuid(n: number): string {
  return `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
}

const POINTS: StandinPoint[] = [
  { id: uuid(3), payload: { domain: 'work', status: 'active', n: 3, tags: ['a', 'b'] } },
  { id: 5, payload: { domain: 'personal', status: 'active', n: 5 } },
  { id: uuid(1), payload: { domain: 'shared', status: 'active', n: 1, tags: ['c'] } },
  { id: 2, payload: { domain: 'work', status: 'archived', n: 2 } },
  { id: uuid(4), payload: { domain: 'Work', status: 'active', n: 4, nested: { k: 'v' } } },
];

async function withStandin(t: { teardown: (fn: () => Promise<void>) => void }, opts = {}): Promise<QdrantStandin> {
  const s = await QdrantStandin.start({ collections: { c: POINTS.map((p) => ({ ...p })) }, ...opts });
  t.teardown(() => s.stop());
  return s;
}

function client(s: QdrantStandin, extra: Record<string, unknown> = {}): QdrantClient {
  return new QdrantClient({ url: s.url, checkCompatibility: false, ...extra });
}

async function ids(c: QdrantClient, filter: unknown): Promise<Array<string | number>> {
  const r = await c.scroll('c', { limit: 100, filter: filter as never, with_payload: true });
  return r.points.map((p) => p.id as string | number);
}

test('stand-in › scroll returns integer ids first, then UUIDs, in order, with payloads', async (t) => {
  const s = await withStandin(t);
  t.deepEqual(await ids(client(s), undefined), [2, 5, uuid(1), uuid(3), uuid(4)]);
});

test('stand-in › must, should and must_not with match value, any, except and range', async (t) => {
  const c = client(await withStandin(t));
  t.deepEqual(await ids(c, { must: [{ key: 'status', match: { value: 'active' } }] }), [5, uuid(1), uuid(3), uuid(4)]);
  t.deepEqual(await ids(c, { must: [{ key: 'domain', match: { any: ['work', 'shared'] } }] }), [2, uuid(1), uuid(3)]);
  t.deepEqual(await ids(c, { must: [{ key: 'domain', match: { except: ['work', 'shared'] } }] }), [5, uuid(4)]);
  t.deepEqual(
    await ids(c, {
      should: [
        { key: 'n', range: { lt: 2 } },
        { key: 'n', range: { gte: 5 } },
      ],
    }),
    [5, uuid(1)],
  );
  t.deepEqual(await ids(c, { must_not: [{ key: 'status', match: { value: 'active' } }] }), [2]);
  t.deepEqual(
    await ids(c, { must: [{ key: 'tags', match: { value: 'b' } }] }),
    [uuid(3)],
    'array values match by element',
  );
  t.deepEqual(await ids(c, { must: [{ key: 'nested.k', match: { value: 'v' } }] }), [uuid(4)]);
  t.deepEqual(await ids(c, { must: [{ key: 'n', range: { gt: 2, lte: 4 } }] }), [uuid(3), uuid(4)]);
  t.deepEqual(await ids(c, { must: [{ has_id: [5, uuid(3)] }] }), [5, uuid(3)]);
  t.deepEqual(await ids(c, { must: [{ must_not: [{ key: 'domain', match: { value: 'work' } }] }] }), [
    5,
    uuid(1),
    uuid(4),
  ]);
});

test('stand-in › pages are id-ordered with an inclusive offset and next_page_offset null at the end', async (t) => {
  const c = client(await withStandin(t));
  const p1 = await c.scroll('c', { limit: 2 });
  t.deepEqual(
    p1.points.map((p) => p.id),
    [2, 5],
  );
  t.is(p1.next_page_offset, uuid(1));
  const p2 = await c.scroll('c', { limit: 2, offset: p1.next_page_offset as string });
  t.deepEqual(
    p2.points.map((p) => p.id),
    [uuid(1), uuid(3)],
  );
  const p3 = await c.scroll('c', { limit: 2, offset: p2.next_page_offset as string });
  t.deepEqual(
    p3.points.map((p) => p.id),
    [uuid(4)],
  );
  t.is(p3.next_page_offset, null);
});

test('stand-in › a wrong or missing key is a plain-text 401; an unknown collection a JSON 404', async (t) => {
  const s = await withStandin(t, { apiKeys: ['right'] });
  const noKey = await fetch(`${s.url}/collections/c/points/scroll`, {
    method: 'POST',
    body: '{}',
    headers: { 'content-type': 'application/json' },
  });
  t.is(noKey.status, 401);
  t.regex(noKey.headers.get('content-type') ?? '', /text\/plain/);
  t.regex(await noKey.text(), /API key/);
  const wrong = client(s, { headers: { 'api-key': 'wrong' } });
  const e401 = await t.throwsAsync(() => wrong.scroll('c', {}));
  t.is((e401 as unknown as { status: number }).status, 401);
  const right = client(s, { headers: { 'api-key': 'right' } });
  const e404 = await t.throwsAsync(() => right.scroll('missing', {}));
  t.is((e404 as unknown as { status: number }).status, 404);
  const raw = await fetch(`${s.url}/collections/missing`, { headers: { 'api-key': 'right' } });
  t.deepEqual(((await raw.json()) as { status: unknown }).status, {
    error: "Not found: Collection `missing` doesn't exist!",
  });
  const info = await right.getCollection('c');
  t.is(info.points_count, POINTS.length);
});

test('client › with checkCompatibility false the client makes no version call; with true it does', async (t) => {
  const s = await withStandin(t);
  client(s);
  await new Promise((r) => setTimeout(r, 50));
  t.deepEqual(s.requests, [], 'construction alone sends nothing');
  const warn = console.warn;
  const warnings: string[] = [];
  console.warn = (m: unknown) => void warnings.push(String(m));
  try {
    new QdrantClient({ url: s.url });
    for (let i = 0; i < 100 && warnings.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
  } finally {
    console.warn = warn;
  }
  t.deepEqual(
    s.requests.map((r) => `${r.method} ${r.path}`),
    ['GET /'],
  );
  // The fleet's server is 1.13: the probe only produces a warning, which is why the export turns it off.
  t.regex(warnings[0] ?? '', /incompatible/);
});

test('source › reads every page with the status filter and the domain selection', async (t) => {
  const many: StandinPoint[] = Array.from({ length: 600 }, (_, i) => ({
    id: uuid(i + 1),
    payload: { domain: i % 3 === 0 ? 'personal' : 'work', status: i % 10 === 0 ? 'archived' : 'active' },
  }));
  const s = await QdrantStandin.start({ collections: { hermes_fleet_memory: many }, apiKeys: ['k1'] });
  t.teardown(() => s.stop());
  const settings = resolveQdrantSettings({ FLEET_QDRANT_URL: s.url }, {});
  const all = await readQdrant(settings, { FLEET_QDRANT_KEY: 'k1' }, []);
  t.is(all.points.length, many.filter((p) => p.payload.status === 'active').length);
  t.true(s.scrollCount >= 3, 'more than one page');
  for (const r of s.requests) {
    t.is(r.apiKey, 'k1');
    t.deepEqual((r.body as { filter: unknown }).filter, scrollFilter([]));
    t.is((r.body as { with_vector: unknown }).with_vector, false);
  }
  const work = await readQdrant(settings, { FLEET_QDRANT_KEY: 'k1' }, ['work']);
  t.true(work.points.every((p) => (p.payload as { domain: string }).domain === 'work'));
  t.is(work.key, `qdrant:${s.url}#hermes_fleet_memory`);
});

test('source › settings come from FLEET_QDRANT_* and flags override them; https stays off unless asked', (t) => {
  const env = { FLEET_QDRANT_HOST: 'qd.internal', FLEET_QDRANT_PORT: '7000', FLEET_QDRANT_TIMEOUT: '3' };
  const a = resolveQdrantSettings(env, {});
  t.like(a, {
    url: null,
    host: 'qd.internal',
    port: 7000,
    https: false,
    timeoutSeconds: 3,
    collection: 'hermes_fleet_memory',
    apiKeyEnv: 'FLEET_QDRANT_KEY',
  });
  t.like(resolveQdrantSettings({ ...env, FLEET_QDRANT_URL: 'https://q.example:6334' }, {}), {
    url: 'https://q.example:6334',
  });
  t.like(resolveQdrantSettings({ ...env, FLEET_QDRANT_URL: 'https://q.example' }, { host: 'other', port: '1' }), {
    url: null,
    host: 'other',
    port: 1,
  });
  t.like(resolveQdrantSettings({}, { https: true, timeout: '0.5', collection: 'x', apiKeyEnv: 'MY_KEY' }), {
    https: true,
    timeoutSeconds: 0.5,
    collection: 'x',
    apiKeyEnv: 'MY_KEY',
  });
  t.like(resolveQdrantSettings({}, {}), { host: '127.0.0.1', port: 6333, https: false, timeoutSeconds: 10 });
  for (const bad of [
    { port: '0' },
    { port: 'x' },
    { timeout: '-1' },
    { url: 'ftp://x' },
    { url: 'http://u:p@h' },
    { apiKeyEnv: 'A-B' },
    { url: 'http://h', host: 'h' },
  ]) {
    const e = t.throws(() => resolveQdrantSettings({}, bad), { instanceOf: ExportError });
    t.is(e?.exitCode, 2);
  }
});
