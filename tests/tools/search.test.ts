import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { createBridge } from '../../src/tools/bridge.js';
import { IndexCache, runSearch } from '../../src/tools/search.js';
import type { LogEvent, SearchResult } from '../../src/tools/types.js';
import { isRoot, writeNote } from '../helpers/fixtures.js';
import { addHome, countingOpens, worldTracker, type World } from './world.js';

const { world, removeAll } = worldTracker();
test.after.always(removeAll);

function gardenWorld(fields: Record<string, unknown> = {}): World {
  const w = world({ allow: ['projects/**', 'decisions/**'], deny: ['**/private/**'], ...fields });
  writeNote(
    w.root,
    'projects/garden.md',
    '---\ntitle: Lantern plot\ntags: [horticulture]\n---\n# Lantern Garden\n\nPlant blue asters beside the east gate. Opening day is April 12.\n',
  );
  writeNote(
    w.root,
    'decisions/watering.md',
    '# Watering decision\n\nWater the garden at dawn using collected rainwater.\n',
  );
  writeNote(w.root, 'projects/notes.md', 'No heading here, only a remark about the garden shed.\n');
  return w;
}

test('search › returns ids, titles (front matter, level-1 heading, file name) and snippets without front matter', (t) => {
  const w = gardenWorld();
  const r = createBridge({ log: () => undefined }).search({ query: 'garden' }, w.caller) as SearchResult;
  t.true(r.ok);
  t.deepEqual(r.results.map((h) => h.id).sort(), ['decisions/watering.md', 'projects/garden.md', 'projects/notes.md']);
  const garden = r.results.find((h) => h.id === 'projects/garden.md')!;
  t.is(garden.title, 'Lantern plot');
  t.true(garden.snippet.startsWith('# Lantern Garden'));
  t.false(garden.snippet.includes('---'));
  t.is(r.results.find((h) => h.id === 'decisions/watering.md')!.title, 'Watering decision');
  t.is(r.results.find((h) => h.id === 'projects/notes.md')!.title, 'notes');
  // read gives the same title as search
  const read = createBridge({ log: () => undefined }).read({ id: 'projects/garden.md' }, w.caller);
  t.is((read as { title?: string }).title, 'Lantern plot');
  t.false(r.truncated);
});

test('search › front matter tags are searchable', (t) => {
  const w = gardenWorld();
  const r = createBridge({ log: () => undefined }).search({ query: 'horticulture' }, w.caller) as SearchResult;
  t.deepEqual(
    r.results.map((h) => h.id),
    ['projects/garden.md'],
  );
});

test('search › no response or log line contains the root path', (t) => {
  const w = gardenWorld();
  fs.symlinkSync('/etc/passwd', path.join(w.root, 'projects', 'link.md'));
  writeNote(w.root, 'projects/private/secret.md', '# Secret garden\n');
  const logs: LogEvent[] = [];
  const bridge = createBridge({ log: (e) => logs.push(e) });
  const outputs = [
    bridge.search({ query: 'garden' }, w.caller),
    bridge.search({ query: 'garden', limit: 1 }, w.caller),
    bridge.read({ id: 'projects/link.md' }, w.caller),
    bridge.read({ id: 'projects/private/secret.md' }, w.caller),
    bridge.read({ id: 'projects/garden.md' }, w.caller),
  ];
  const text = JSON.stringify(outputs) + JSON.stringify(logs);
  t.false(text.includes(w.tmp));
  t.false(text.includes(w.root));
});

test('search › a denied or untrusted note that matches never changes the response bytes', (t) => {
  const w = gardenWorld();
  const quiet = { log: () => undefined };
  const queries = ['garden', 'garden asters', 'water dawn', 'gard', 'blue gate'];
  const warm = createBridge(quiet);
  const before = queries.map((q) => JSON.stringify(warm.search({ query: q }, w.caller)));
  // Denied by the deny list, outside the allow list, and untrusted (group-writable) notes, all full of query words.
  const flood = '# Garden garden\ngarden garden asters water dawn blue gate garden\n'.repeat(20);
  writeNote(w.root, 'projects/private/flood.md', flood);
  writeNote(w.root, 'elsewhere/flood.md', flood);
  writeNote(w.root, 'projects/untrusted.md', flood, 0o620);
  const cold = createBridge(quiet);
  t.deepEqual(
    queries.map((q) => JSON.stringify(cold.search({ query: q }, w.caller))),
    before,
    'fresh process',
  );
  t.deepEqual(
    queries.map((q) => JSON.stringify(warm.search({ query: q }, w.caller))),
    before,
    'warm process',
  );
  // The flood note would have been found had it been allowed and trusted.
  fs.chmodSync(path.join(w.root, 'projects/untrusted.md'), 0o600);
  const found = cold.search({ query: 'garden' }, w.caller) as SearchResult;
  t.true(found.results.some((h) => h.id === 'projects/untrusted.md'));
});

test.serial('search › a warm call does not reopen unchanged notes and a changed note is re-read', (t) => {
  const w = gardenWorld();
  const bridge = createBridge({ log: () => undefined, racyMarginMs: 0 });
  const cold = countingOpens(() => bridge.search({ query: 'garden' }, w.caller));
  t.is(cold.opens, 3);
  const warm = countingOpens(() => bridge.search({ query: 'garden' }, w.caller));
  t.is(warm.opens, 0);
  t.is(JSON.stringify(warm.value), JSON.stringify(cold.value));
  writeNote(
    w.root,
    'decisions/watering.md',
    '# Watering decision\n\nWater the garden at dusk, never with a hose called zephyrine.\n',
  );
  const changed = countingOpens(() => bridge.search({ query: 'zephyrine' }, w.caller));
  t.is(changed.opens, 1);
  t.deepEqual(
    (changed.value as SearchResult).results.map((h) => h.id),
    ['decisions/watering.md'],
  );
});

test.serial('search › index views are bounded by maxIndexes, least recently used first', (t) => {
  const w = gardenWorld();
  const other = addHome(w, 'other', { allow: ['projects/**'] });
  const tight = createBridge({ log: () => undefined, maxIndexes: 1, racyMarginMs: 0 });
  tight.search({ query: 'garden' }, w.caller);
  tight.search({ query: 'garden' }, other);
  t.is(countingOpens(() => tight.search({ query: 'garden' }, w.caller)).opens, 3, 'the first view was dropped');
  const roomy = createBridge({ log: () => undefined, maxIndexes: 2, racyMarginMs: 0 });
  roomy.search({ query: 'garden' }, w.caller);
  roomy.search({ query: 'garden' }, other);
  t.is(countingOpens(() => roomy.search({ query: 'garden' }, w.caller)).opens, 0, 'both views kept');
});

test.serial(
  'search › index views are bounded by the memory they take, least recently used first, never the view in use',
  (t) => {
    const w = gardenWorld();
    const other = addHome(w, 'other', { allow: ['projects/**'] });
    // The memory each view takes alone once built (index, scan memo), as the cache counts it.
    const alone = (caller: typeof w.caller): number => {
      const cache = new IndexCache(8, undefined, 0);
      runSearch({ query: 'garden' }, caller, cache);
      runSearch({ query: 'garden' }, caller, cache);
      return cache.bytes;
    };
    const first = alone(w.caller);
    const second = alone(other);
    t.true(first > second && second > 0);
    // Room for either view alone, not for both.
    const tight = new IndexCache(8, Math.max(first, second) + 1, 0);
    for (const caller of [w.caller, w.caller, other, other]) runSearch({ query: 'garden' }, caller, tight);
    t.is(tight.size, 1);
    t.is(
      countingOpens(() => runSearch({ query: 'garden' }, w.caller, tight)).opens,
      3,
      'the least recently used view was dropped',
    );
    const roomy = new IndexCache(8, first + second, 0);
    for (const caller of [w.caller, w.caller, other, other]) runSearch({ query: 'garden' }, caller, roomy);
    t.is(countingOpens(() => runSearch({ query: 'garden' }, w.caller, roomy)).opens, 0, 'both views kept');
    // A view larger than the bound is still kept while it is the one in use.
    const tiny = createBridge({ log: () => undefined, maxIndexBytes: 1, racyMarginMs: 0 });
    tiny.search({ query: 'garden' }, w.caller);
    t.is(countingOpens(() => tiny.search({ query: 'garden' }, w.caller)).opens, 0);
    t.throws(() => createBridge({ maxIndexBytes: 0 }), { instanceOf: RangeError });
    t.throws(() => createBridge({ maxIndexBytes: Number.NaN }), { instanceOf: RangeError });
  },
);

test('search › making a note group-writable drops it from the very next search', (t) => {
  const w = gardenWorld();
  const bridge = createBridge({ log: () => undefined });
  const ids = () => (bridge.search({ query: 'garden' }, w.caller) as SearchResult).results.map((h) => h.id);
  t.true(ids().includes('projects/garden.md'));
  fs.chmodSync(path.join(w.root, 'projects/garden.md'), 0o620);
  t.false(ids().includes('projects/garden.md'));
});

test('search › a policy edit applies to the next call', (t) => {
  const w = gardenWorld();
  const bridge = createBridge({ log: () => undefined });
  const ids = () => (bridge.search({ query: 'garden' }, w.caller) as SearchResult).results.map((h) => h.id).sort();
  t.deepEqual(ids(), ['decisions/watering.md', 'projects/garden.md', 'projects/notes.md']);
  w.setPolicy({ allow: ['projects/**'], deny: ['**/notes.md'] });
  t.deepEqual(ids(), ['projects/garden.md']);
  w.setPolicy({ allow: ['decisions/**'] });
  t.deepEqual(ids(), ['decisions/watering.md']);
});

test('search › a Japanese query finds a Japanese note', (t) => {
  const w = world({ names: 'unicode' });
  writeNote(w.root, 'メモ/庭.md', '# 庭の手入れ\n\n庭の水やりは朝に行う。\n');
  writeNote(w.root, 'notes/en.md', '# Garden\nWater at dawn.\n');
  const r = createBridge({ log: () => undefined }).search({ query: '水やり' }, w.caller) as SearchResult;
  t.deepEqual(
    r.results.map((h) => h.id),
    ['メモ/庭.md'],
  );
  t.is(r.results[0]!.title, '庭の手入れ');
});

test('search › limit and total_chars omit accepted matches and set truncated', (t) => {
  const w = world({ limits: { snippet_chars: 20, total_chars: 40 } });
  for (const n of ['a', 'b', 'c']) writeNote(w.root, `${n}.md`, `pebble ${n}\n`);
  const bridge = createBridge({ log: () => undefined });
  const two = bridge.search({ query: 'pebble', limit: 2 }, w.caller) as SearchResult;
  t.deepEqual(
    two.results.map((h) => h.id),
    ['a.md', 'b.md'],
  );
  t.true(two.truncated);
  // Each result costs 4 (id) + 8 ("pebble x") = 12 code points: three fit in 40.
  const all = bridge.search({ query: 'pebble', limit: 3 }, w.caller) as SearchResult;
  t.is(all.results.length, 3);
  t.false(all.truncated);
  w.setPolicy({ limits: { snippet_chars: 20, total_chars: 30 } });
  const cut = bridge.search({ query: 'pebble', limit: 3 }, w.caller) as SearchResult;
  t.is(cut.results.length, 2);
  t.true(cut.truncated);
});

test('search › a limit within 1–10 but above the policy max_results is lowered to max_results, not refused', (t) => {
  const w = world({ limits: { max_results: 4, default_results: 2 } });
  for (const n of ['a', 'b', 'c', 'd', 'e', 'f']) writeNote(w.root, `${n}.md`, 'gravel');
  const bridge = createBridge({ log: () => undefined });
  for (const limit of [5, 10]) {
    const r = bridge.search({ query: 'gravel', limit }, w.caller) as SearchResult;
    t.true(r.ok);
    t.deepEqual(r, bridge.search({ query: 'gravel', limit: 4 }, w.caller));
    t.is(r.results.length, 4);
    t.true(r.truncated);
  }
  // Outside the schema's range it is still invalid.
  t.like(bridge.search({ query: 'gravel', limit: 11 }, w.caller), {
    ok: false,
    error: { code: 'invalid_request', hint: 'limit: an integer from 1 to 10' },
  });
});

test('search › the default limit is the policy default_results', (t) => {
  const w = world({ limits: { max_results: 4, default_results: 2 } });
  for (const n of ['a', 'b', 'c']) writeNote(w.root, `${n}.md`, 'gravel');
  const r = createBridge({ log: () => undefined }).search({ query: 'gravel' }, w.caller) as SearchResult;
  t.is(r.results.length, 2);
  t.true(r.truncated);
});

test('search › an empty query after tokenizing returns no results', (t) => {
  const w = gardenWorld();
  t.deepEqual(createBridge({ log: () => undefined }).search({ query: '?! —' }, w.caller), {
    ok: true,
    results: [],
    truncated: false,
  });
});

test('search › cron, subagent and unknown run kinds are refused without their opt-ins', (t) => {
  const w = gardenWorld();
  const logs: string[] = [];
  const bridge = createBridge({ log: (e) => logs.push(e.reason) });
  const unavailable = { ok: false, error: { code: 'unavailable', message: 'Memory is unavailable.' } };
  const as = (cron: boolean, subagent: boolean) => bridge.search({ query: 'garden' }, { ...w.caller, cron, subagent });
  t.deepEqual(as(true, false), unavailable);
  t.deepEqual(as(false, true), unavailable);
  t.deepEqual(as(true, true), unavailable);
  t.deepEqual(logs, ['cron_refused', 'subagent_refused', 'run_kind_refused']);
  w.setPolicy({ allow: ['projects/**'], allow_cron: true });
  t.true(as(true, false).ok);
  t.deepEqual(as(true, true), unavailable);
  w.setPolicy({ allow: ['projects/**'], allow_cron: true, allow_subagents: true });
  t.true(as(true, true).ok);
  t.true(as(false, true).ok);
});

test('search › a missing, invalid or untrusted policy makes search unavailable', (t) => {
  const w = gardenWorld();
  const bridge = createBridge({ log: () => undefined });
  const unavailable = { ok: false, error: { code: 'unavailable', message: 'Memory is unavailable.' } };
  fs.writeFileSync(w.policyPath, '{"version": 1, "root": 5}');
  t.deepEqual(bridge.search({ query: 'garden' }, w.caller), unavailable);
  w.setPolicy({ allow: ['**'] });
  fs.chmodSync(w.policyPath, 0o660);
  t.deepEqual(bridge.search({ query: 'garden' }, w.caller), unavailable);
  fs.rmSync(w.policyPath);
  t.deepEqual(bridge.search({ query: 'garden' }, w.caller), unavailable);
  t.deepEqual(bridge.search({ query: 'garden' }, { home: null, cron: false, subagent: false }), unavailable);
});

const rootTest = isRoot ? test : test.skip;
rootTest('search › a note owned by another user is skipped (needs root)', (t) => {
  const w = gardenWorld();
  fs.chownSync(path.join(w.root, 'projects/garden.md'), 65534, 65534);
  const r = createBridge({ log: () => undefined }).search({ query: 'garden' }, w.caller) as SearchResult;
  t.false(r.results.some((h) => h.id === 'projects/garden.md'));
});
