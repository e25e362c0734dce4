/**
 * The first search of a view through the real bridge, scan and files, with the cold thread forced on for small trees
 * (src/search/cold-thread.ts): the answer from the index the worker built is byte for byte the one the same call
 * gives with MEMORY_BRIDGE_COLD_THREAD=0 (in-thread `searchCold`, or a build in the call), including a scan cut by
 * max_entries (the worker indexes exactly the notes the scan returned), a view narrowed by `within`, filters and
 * filter-only calls; a failing worker gives the same answer from the in-thread path; after a worker-built first call
 * nothing is pending and the next call of the view answers from the adopted index, equal again. The same over real
 * corpora (the shipped vault, tldr Japanese and Korean pages): CJK, typo, prefix, `within`, `sort`, a `max_entries`
 * cut and tight character budgets, first call with and without the thread and warm call alike.
 */
import test from 'ava';
import { coldThread } from '../../src/search/cold-thread.js';
import { createBridge } from '../../src/tools/bridge.js';
import { DEFAULT_MAX_INDEXES, IndexCache, runSearch } from '../../src/tools/search.js';
import type { SearchResult } from '../../src/tools/types.js';
import { writeNote } from '../helpers/fixtures.js';
import { REAL_CALLS, withCorpora } from './corpus-world.js';
import { worldTracker, type World } from './world.js';

const { world, removeAll } = worldTracker();
test.after.always(() => {
  removeAll();
  coldThread().configure({ startAt: 2_500, engageAt: 5_000, failAt: -1 }, true);
});
test.beforeEach(() => coldThread().configure({ startAt: 0, engageAt: 0, failAt: -1, useEnvironment: true }, true));

const WORDS = [
  'lantern',
  'lanterns',
  'garden',
  'gardens',
  'vault',
  'vaults',
  'sync',
  'template',
  'temple',
  '庭',
  '検索',
];

/** A tree of `count` notes in a few directories, deterministic texts (some with front matter and headings). */
function tree(count: number, fields: Record<string, unknown> = {}): World {
  const w = world({ names: 'unicode', ...fields });
  for (let i = 0; i < count; i++) {
    const words = Array.from({ length: 5 + (i % 23) }, (_, j) => WORDS[(i * 7 + j * 3) % WORDS.length]).join(' ');
    const front = i % 5 === 0 ? `---\ntitle: Note ${i}\ntags: [${WORDS[i % WORDS.length]}]\n---\n` : '';
    writeNote(w.root, `d${i % 4}/n${String(i).padStart(3, '0')}.md`, `${front}# ${WORDS[i % 3]} ${i}\n\n${words}\n`);
  }
  return w;
}

/** The first call of a fresh bridge (a cold view), with the thread on or off by the environment. */
function firstCall(
  w: World,
  args: Record<string, unknown>,
  threadOff: boolean,
): { answer: SearchResult; outcome: string } {
  if (threadOff) process.env.MEMORY_BRIDGE_COLD_THREAD = '0';
  coldThread().lastOutcome = 'none';
  try {
    const answer = createBridge({}).search(args, w.caller) as SearchResult;
    return { answer, outcome: coldThread().lastOutcome };
  } finally {
    delete process.env.MEMORY_BRIDGE_COLD_THREAD;
  }
}

const QUERIES = ['lantern', 'gardn', 'temp', 'vault sync template', '庭 検索'];

test.serial('the first search answers the same with the cold thread as without it', (t) => {
  const w = tree(240);
  for (const query of QUERIES) {
    const on = firstCall(w, { query, limit: 10 }, false);
    const off = firstCall(w, { query, limit: 10 }, true);
    t.is(on.outcome, 'worker', query);
    t.is(off.outcome, 'none', query);
    t.true(off.answer.ok && off.answer.results.length > 0, query);
    t.is(JSON.stringify(on.answer), JSON.stringify(off.answer), query);
  }
});

test.serial('a scan cut by max_entries: the worker ranks exactly the returned notes (incomplete, same answer)', (t) => {
  const w = tree(240, { limits: { max_entries: 97 } });
  for (const query of ['lantern', 'gardens vaults']) {
    const on = firstCall(w, { query, limit: 10 }, false);
    const off = firstCall(w, { query, limit: 10 }, true);
    t.is(on.outcome, 'worker');
    t.true(off.answer.ok && off.answer.incomplete === true);
    t.is(JSON.stringify(on.answer), JSON.stringify(off.answer), query);
  }
});

test.serial('a view narrowed by within answers the same with the cold thread', (t) => {
  const w = tree(120);
  const args = { query: 'garden lantern', limit: 10, within: ['d1/**', 'd3/**'] };
  const on = firstCall(w, args, false);
  const off = firstCall(w, args, true);
  t.is(on.outcome, 'worker');
  t.is(JSON.stringify(on.answer), JSON.stringify(off.answer));
});

test.serial('a failing worker: the call answers from the in-thread path, the same answer', (t) => {
  const w = tree(120);
  const off = firstCall(w, { query: 'lantern', limit: 10 }, true);
  coldThread().configure({ failAt: 50 });
  const failed = firstCall(w, { query: 'lantern', limit: 10 }, false);
  t.is(failed.outcome, 'failed');
  t.is(coldThread().status, 'failed');
  t.is(JSON.stringify(failed.answer), JSON.stringify(off.answer));
});

test.serial('after a first call the worker answered, the warm call of the view answers the same', async (t) => {
  const w = tree(120);
  const bridge = createBridge({});
  const first = bridge.search({ query: 'temple', limit: 10 }, w.caller);
  t.is(coldThread().lastOutcome, 'worker');
  await new Promise((resolve) => setImmediate(resolve));
  const warm = bridge.search({ query: 'temple', limit: 10 }, w.caller);
  t.is(JSON.stringify(warm), JSON.stringify(first));
});

test.serial('a query reaching very many terms: the worker builds, the same answer as in-thread', (t) => {
  const w = world({ names: 'unicode' });
  for (let i = 0; i < 1700; i++)
    writeNote(w.root, `h/${i}.md`, Array.from({ length: 10 }, (_, j) => `a${(i * 10 + j).toString(16)}`).join(' '));
  const on = firstCall(w, { query: 'a', limit: 5 }, false);
  const off = firstCall(w, { query: 'a', limit: 5 }, true);
  t.is(on.outcome, 'worker');
  t.is(coldThread().status, 'on');
  t.true(off.answer.ok && off.answer.results.length > 0);
  t.is(JSON.stringify(on.answer), JSON.stringify(off.answer));
});

test.serial(
  'first calls with filters, without a query and sorted by date answer the same from the worker build',
  (t) => {
    const w = tree(160);
    for (const args of [
      { tags: ['lantern'], limit: 10 },
      { query: 'garden', tags: ['vault'], limit: 10 },
      { query: 'garden', sort: 'modified', limit: 10 },
      { query: 'lantern', modified_after: '2000-01-01', limit: 10 },
    ]) {
      const on = firstCall(w, args, false);
      const off = firstCall(w, args, true);
      t.is(on.outcome, 'worker', JSON.stringify(args));
      t.true(off.answer.ok, JSON.stringify(off.answer));
      t.is(JSON.stringify(on.answer), JSON.stringify(off.answer), JSON.stringify(args));
    }
  },
);

test.serial(
  'a first call the worker built leaves the view complete: nothing pending, the next call reads no note',
  (t) => {
    const w = tree(200);
    const indexes = new IndexCache(DEFAULT_MAX_INDEXES);
    const first = runSearch({ query: 'lantern', limit: 10 }, w.caller, indexes);
    t.is(coldThread().lastOutcome, 'worker');
    t.is(indexes.size, 1);
    const key = [...(indexes as unknown as { views: Map<string, unknown> }).views.keys()][0]!;
    t.false(indexes.isPending(key), 'no build is left for after the answer');
    const index = indexes.get(key);
    t.is(index.size, 200, 'the view holds every note of the first call');
    coldThread().lastOutcome = 'none';
    // The same call again: answered from the adopted index, with no feed (the view is not cold) and the same answer.
    const again = runSearch({ query: 'lantern', limit: 10 }, w.caller, indexes);
    t.is(coldThread().lastOutcome, 'none');
    t.is(JSON.stringify(again), JSON.stringify(first));
  },
);

/** A world holding the shipped vault under `vault/` and tldr Japanese and Korean pages under `ja/` and `ko/`. */
function corpusWorld(fields: Record<string, unknown> = {}): World {
  return withCorpora(world({ names: 'unicode', ...fields }), ['ja', 'ko']);
}

test.serial(
  'real corpora: the first call from the worker build, the in-thread first call and the warm call answer alike',
  (t) => {
    const configs = [
      { fields: {}, cut: false },
      { fields: { limits: { max_entries: 250 } }, cut: true },
      { fields: { limits: { snippet_chars: 40, total_chars: 300 } }, cut: false },
    ];
    for (const { fields, cut } of configs) {
      const w = corpusWorld(fields);
      const bridge = createBridge({});
      for (const args of REAL_CALLS) {
        const on = firstCall(w, args, false);
        const off = firstCall(w, args, true);
        t.is(on.outcome, 'worker', JSON.stringify(args));
        t.true(off.answer.ok, JSON.stringify(off.answer));
        t.is(off.answer.ok && off.answer.incomplete === true, cut, 'a max_entries cut is an incomplete answer');
        t.is(JSON.stringify(on.answer), JSON.stringify(off.answer), JSON.stringify([fields, args]));
        // The same call of a view that is warm (its index adopted from the worker on its first call).
        t.is(JSON.stringify(bridge.search(args, w.caller)), JSON.stringify(on.answer), JSON.stringify([fields, args]));
      }
    }
  },
);
