/**
 * The first search of a view (docs/DESIGN.md, "The first search of a view") answers from the texts its scan
 * verified and builds the view's index after the answer. These tests drive the real scan, policy and index over
 * real files: the cold answer equals the built index's answer, the build happens after the answer (or before the
 * next call's scan), changes and policy edits made in between are seen, a failing build drops the view, and the
 * real stdio MCP server answers the same way.
 */
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import type { FileStat } from '../../native/types.js';
import { loadPolicy } from '../../src/policy/load.js';
import { createBridge } from '../../src/tools/bridge.js';
import { IndexCache, runSearch } from '../../src/tools/search.js';
import type { Caller, SearchResult } from '../../src/tools/types.js';
import type { ScannedNote } from '../../src/trust/types.js';
import { connectMcp } from '../adversarial/mcp-client.js';
import { writeNote } from '../helpers/fixtures.js';
import { STAT } from '../search/stat.js';
import { addHome, countingOpens, worldTracker, type World } from './world.js';

const { world, removeAll } = worldTracker();
test.after.always(removeAll);

const NOTES: Record<string, string> = {
  'garden/plan.md':
    '---\ntitle: Lantern plot\ntags: [horticulture, asters]\n---\n# Lantern Garden\n\nPlant blue asters beside the east gate. Opening day is April 12.\n',
  'garden/water.md': '# Watering\n\nWater the garden at dawn using collected rainwater; gardens need less in autumn.\n',
  'garden/shed.md': 'No heading here, only a remark about the garden shed and its lanterns.\n',
  'notes/templates.md': '# Templates\n\nA template inserts text; templating with variables. The temple of templates.\n',
  'notes/vault.md': '# Vault\n\nThe vault holds every note. Vaults sync across devices; a vault is a folder.\n',
  'notes/sync.md':
    '# Sync\n\nSync keeps vaults equal. Syncing happens in the background, synced notes are encrypted.\n',
  'notes/庭.md': '# 庭の手入れ\n\n庭の水やりは朝に行う。ノートの設定。\n',
  'notes/long.md': `# Long note\n\n${'Filler words about nothing in particular. '.repeat(40)}The vault appears at the end.\n`,
};

function notesWorld(fields: Record<string, unknown> = {}): World {
  const w = world({ names: 'unicode', ...fields });
  for (const [id, text] of Object.entries(NOTES)) writeNote(w.root, id, text);
  return w;
}

/** The cache key of the caller's view, as runSearch computes it. */
const keyOf = (caller: Caller): string => IndexCache.keyOf(caller.home!, loadPolicy(caller.home!));

function ok(r: unknown): SearchResult {
  const s = r as SearchResult;
  if (!s.ok) throw new Error('search refused');
  return s;
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

const QUERIES = [
  'garden',
  'lantern',
  'asters horticulture',
  'templ',
  'vault sync',
  'vaults',
  'syncing',
  'gardn',
  'watr',
  'g',
  'te',
  '庭',
  'ノート',
  '?!',
  'nothing matches zzqq',
];

test.serial(
  'deferred › the first call answers with the index still empty and builds it on the next turn of the event loop',
  async (t) => {
    const w = notesWorld();
    const cache = new IndexCache(8, undefined, 0);
    const key = keyOf(w.caller);
    const first = countingOpens(() => ok(runSearch({ query: 'garden' }, w.caller, cache)));
    t.is(first.opens, Object.keys(NOTES).length);
    t.true(first.value.results.length >= 3);
    t.true(cache.isPending(key), 'the build waits for the answer to be sent');
    const bytes = Object.keys(NOTES).reduce((n, id) => n + fs.statSync(path.join(w.root, id)).size, 0);
    // Pending notes count against the byte bound: their texts and records, besides the view's scan memo.
    t.true(cache.bytes >= bytes, 'pending notes count against the byte bound');
    await nextTurn();
    t.false(cache.isPending(key));
    t.true(cache.bytes > bytes, 'the built index counts at least its texts');
    const again = countingOpens(() => ok(runSearch({ query: 'garden' }, w.caller, cache)));
    t.is(again.opens, 0, 'the built index holds every note');
    t.deepEqual(again.value, first.value);
  },
);

test.serial(
  'deferred › a call before the build syncs the pending notes before its scan and answers from the full index',
  (t) => {
    const w = notesWorld();
    const cache = new IndexCache(8, undefined, 0);
    const first = ok(runSearch({ query: 'vault' }, w.caller, cache));
    t.true(cache.isPending(keyOf(w.caller)));
    const second = countingOpens(() => ok(runSearch({ query: 'vault' }, w.caller, cache)));
    t.is(second.opens, 0, 'the scan already knew every note');
    t.false(cache.isPending(keyOf(w.caller)));
    t.deepEqual(second.value, first);
  },
);

test('deferred › cold answers equal built-index answers over a sequence of queries and limits', async (t) => {
  const w = notesWorld({ limits: { snippet_chars: 60, total_chars: 260 } });
  const quiet = { log: () => undefined };
  const built = createBridge(quiet);
  ok(built.search({ query: 'warm up' }, w.caller));
  await nextTurn();
  let truncated = 0;
  for (const query of QUERIES) {
    for (const limit of [undefined, 1, 2]) {
      const args = limit === undefined ? { query } : { query, limit };
      const cold = createBridge(quiet).search(args, w.caller);
      const warm = built.search(args, w.caller);
      t.deepEqual(cold, warm, JSON.stringify(args));
      if (ok(warm).truncated) truncated++;
    }
  }
  t.true(truncated > 0, 'some answers were cut by count or total_chars');
});

test('deferred › a note changed, added or removed between the first and second call is seen by the second', async (t) => {
  for (const settle of [false, true]) {
    const w = notesWorld();
    const bridge = createBridge({ log: () => undefined });
    ok(bridge.search({ query: 'garden' }, w.caller));
    writeNote(w.root, 'garden/water.md', '# Watering\n\nWater the orchard at dusk with a hose named zephyrine.\n');
    writeNote(w.root, 'garden/new.md', '# New\n\nThe zephyrine hose hangs in the garden shed.\n');
    fs.rmSync(path.join(w.root, 'garden/shed.md'));
    if (settle) await nextTurn();
    const r = ok(bridge.search({ query: 'zephyrine' }, w.caller));
    t.deepEqual(r.results.map((h) => h.id).sort(), ['garden/new.md', 'garden/water.md'], `settled first: ${settle}`);
    const garden = ok(bridge.search({ query: 'garden' }, w.caller)).results.map((h) => h.id);
    t.false(garden.includes('garden/shed.md'));
    t.false(garden.includes('garden/water.md'));
    t.deepEqual(
      ok(createBridge({ log: () => undefined }).search({ query: 'garden' }, w.caller)).results,
      ok(bridge.search({ query: 'garden' }, w.caller)).results,
    );
  }
});

test('deferred › a policy edit between the first and second call applies to the second', async (t) => {
  for (const settle of [false, true]) {
    const w = notesWorld();
    const bridge = createBridge({ log: () => undefined });
    t.true(ok(bridge.search({ query: 'garden' }, w.caller)).results.some((h) => h.id === 'garden/plan.md'));
    w.setPolicy({ names: 'unicode', allow: ['**'], deny: ['garden/plan.md'] });
    if (settle) await nextTurn();
    const ids = ok(bridge.search({ query: 'garden asters' }, w.caller)).results.map((h) => h.id);
    t.false(ids.includes('garden/plan.md'), `settled first: ${settle}`);
    t.true(ids.includes('garden/water.md'));
    t.deepEqual(
      ok(createBridge({ log: () => undefined }).search({ query: 'garden asters' }, w.caller)).results.map((h) => h.id),
      ids,
    );
  }
});

const NOTE_STAT: FileStat = { ...STAT, size: 10 };
/** A note that sync refuses in a fresh index (no text although the index does not hold it). */
const unsyncable: ScannedNote = { id: 'a.md', key: 'k', stat: NOTE_STAT, text: undefined };

test('deferred › a deferred build that throws drops the view, whether it runs after the answer or before the next call', async (t) => {
  const cache = new IndexCache(8);
  cache.get('view');
  cache.defer('view', [unsyncable]);
  t.true(cache.isPending('view'));
  await nextTurn();
  t.false(cache.holds('view'), 'dropped after the failed build');

  const held = cache.get('other');
  cache.defer('other', [unsyncable]);
  const next = cache.get('other');
  t.not(next, held, 'a new index replaces the one whose build failed');
  t.is(next.size, 0);
  t.false(cache.isPending('other'));
  await nextTurn();
  t.true(cache.holds('other'), 'the stale callback leaves the new view alone');
});

test('deferred › defer accepts only a held view with an empty index and nothing pending', (t) => {
  const cache = new IndexCache(8);
  const note: ScannedNote = { id: 'a.md', key: 'k', stat: NOTE_STAT, text: 'moss' };
  t.throws(() => cache.defer('missing', [note]), { message: /fresh view/ });
  cache.get('v');
  cache.defer('v', [note]);
  t.throws(() => cache.defer('v', [note]), { message: /fresh view/ });
  t.is(cache.get('v').size, 1, 'get synced the pending note');
  t.throws(() => cache.defer('v', [note]), { message: /fresh view/ });
});

test.serial(
  'deferred › a view dropped while its notes are pending loses them and its next call is cold again',
  async (t) => {
    const w = notesWorld();
    const other = addHome(w, 'other', { names: 'unicode', allow: ['garden/**'] });
    const cache = new IndexCache(1, undefined, 0);
    ok(runSearch({ query: 'garden' }, w.caller, cache));
    ok(runSearch({ query: 'garden' }, other, cache));
    t.false(cache.holds(keyOf(w.caller)), 'the first view was dropped by the count bound');
    await nextTurn();
    t.false(cache.holds(keyOf(w.caller)));
    t.true(cache.holds(keyOf(other)));
    t.false(cache.isPending(keyOf(other)));
    const again = countingOpens(() => runSearch({ query: 'garden' }, w.caller, cache));
    t.is(again.opens, Object.keys(NOTES).length);
  },
);

test.serial(
  'deferred › over the real stdio MCP server the first answer, the calls after it and a fresh server agree',
  async (t) => {
    const w = notesWorld();
    const call = async (s: Awaited<ReturnType<typeof connectMcp>>, query: string) => {
      const r = await s.call('memory_bridge_search', { query });
      t.false(r.isError, query);
      return JSON.parse(r.text) as SearchResult;
    };
    const s = await connectMcp(w.home);
    let first: SearchResult;
    let afterChange: SearchResult;
    let repeat: SearchResult;
    try {
      first = await call(s, 'garden');
      writeNote(w.root, 'garden/new.md', '# New\n\nThe zephyrine hose hangs by the gate.\n');
      afterChange = await call(s, 'zephyrine');
      repeat = await call(s, 'garden');
    } finally {
      await s.close();
    }
    t.true(first.results.length >= 3);
    t.deepEqual(repeat, first);
    t.deepEqual(
      afterChange.results.map((h) => h.id),
      ['garden/new.md'],
    );
    const fresh = await connectMcp(w.home);
    try {
      t.deepEqual(await call(fresh, 'zephyrine'), afterChange);
      t.deepEqual(await call(fresh, 'garden'), first);
    } finally {
      await fresh.close();
    }
  },
);
