/**
 * memory_bridge_search's `tags`, `modified_after`, `modified_before`, `sort` and filter-only searches (docs/TOOLS.md
 * §Filters) over real notes with front matter, inline tags and set modification times: each filter alone and
 * combined, with `within`, a denied note carrying the tag never counted or shown, `truncated` and `incomplete` with
 * filters, a first call of a view answering as a warm one, and the fixed hints of invalid values.
 */
import fs from 'node:fs';
import test from 'ava';
import { HINTS } from '../../src/tools/args.js';
import { loadPolicy } from '../../src/policy/load.js';
import { createBridge } from '../../src/tools/bridge.js';
import { IndexCache, runSearch } from '../../src/tools/search.js';
import { parseInstant } from '../../src/tools/filters.js';
import { noteTags } from '../../src/search/tags.js';
import type { SearchResult } from '../../src/tools/types.js';
import { writeNote } from '../helpers/fixtures.js';
import { countingOpens, type World, worldTracker } from './world.js';

const { world, removeAll } = worldTracker();
test.after.always(removeAll);

/** Notes and their modification times (UTC), all mentioning "budget". */
const NOTES: [string, string, string][] = [
  ['decisions/pricing.md', '---\ntags: [pricing, decision]\n---\n# Pricing\nbudget tiers\n', '2026-11-20T10:00:00Z'],
  ['decisions/hiring.md', '---\ntags: decision, People\n---\n# Hiring\nbudget for two\n', '2026-11-28T10:00:00Z'],
  ['projects/alpha.md', '# Alpha\nbudget review #project/alpha and #Pricing\n', '2026-11-30T09:00:00Z'],
  ['projects/beta.md', '# Beta\nbudget `#pricing` in code\n```\n#pricing\n```\n', '2026-12-01T08:00:00Z'],
  ['notes/daily.md', '# Daily\nbudget talk #project\n', '2026-11-29T23:30:00Z'],
  ['private/secret.md', '---\ntags: [pricing]\n---\n# Secret\nbudget budget budget pricing\n', '2026-12-01T12:00:00Z'],
];

function tree(fields: Record<string, unknown> = {}, skip: string[] = []): World {
  const w = world({ allow: ['**/*.md'], deny: ['private/**'], ...fields });
  for (const [id, text, when] of NOTES) {
    if (skip.includes(id)) continue;
    const file = writeNote(w.root, id, text);
    const t = new Date(when);
    fs.utimesSync(file, t, t);
  }
  return w;
}

function ok(r: unknown): SearchResult {
  const s = r as SearchResult;
  if (!s.ok) throw new Error(JSON.stringify(r));
  return s;
}
const ids = (r: unknown): string[] => ok(r).results.map((h) => h.id);
const sorted = (r: unknown): string[] => ids(r).sort();

test('tags › front matter list and string, inline tags, nested parents, case; never in code', (t) => {
  t.deepEqual(noteTags(NOTES[0]![1]), ['decision', 'pricing']);
  t.deepEqual(noteTags(NOTES[1]![1]), ['decision', 'people']);
  t.deepEqual(noteTags(NOTES[2]![1]), ['pricing', 'project', 'project/alpha']);
  t.is(noteTags(NOTES[3]![1]), undefined);
  t.deepEqual(noteTags('#1984 and #y1984 a#b #a//b/ `x` #c\n~~~\n#d\n~~~\n#e'), ['a', 'a/b', 'c', 'e', 'y1984']);
  t.deepEqual(noteTags('---\ntags:\n  - "#Quoted"\n  - two words\n---\n# Heading is no tag\n'), [
    'quoted',
    'two',
    'words',
  ]);

  const w = tree();
  const bridge = createBridge({ log: () => undefined });
  const search = (tags: string[]) => sorted(bridge.search({ query: 'budget', limit: 10, tags }, w.caller));
  t.deepEqual(search(['pricing']), ['decisions/pricing.md', 'projects/alpha.md']);
  t.deepEqual(search(['#PRICING']), ['decisions/pricing.md', 'projects/alpha.md']);
  t.deepEqual(search(['decision']), ['decisions/hiring.md', 'decisions/pricing.md']);
  t.deepEqual(search(['decision', 'pricing']), ['decisions/pricing.md']);
  t.deepEqual(search(['project']), ['notes/daily.md', 'projects/alpha.md']);
  t.deepEqual(search(['project/alpha']), ['projects/alpha.md']);
  t.deepEqual(search(['nothing']), []);
});

test('dates › modified_after is inclusive, modified_before exclusive, offsets honoured; sort modified', (t) => {
  const w = tree();
  const bridge = createBridge({ log: () => undefined });
  const q = (args: Record<string, unknown>) => bridge.search({ query: 'budget', limit: 10, ...args }, w.caller);
  t.deepEqual(sorted(q({ modified_after: '2026-11-30' })), ['projects/alpha.md', 'projects/beta.md']);
  t.deepEqual(sorted(q({ modified_after: '2026-11-30T09:00:00Z' })), ['projects/alpha.md', 'projects/beta.md']);
  t.deepEqual(sorted(q({ modified_after: '2026-11-30T09:00:01Z' })), ['projects/beta.md']);
  // 2026-11-30T00:00+01:00 is 2026-11-29T23:00Z: daily (23:30Z) is after it.
  t.deepEqual(sorted(q({ modified_after: '2026-11-30T00:00+01:00', modified_before: '2026-11-30T09:00' })), [
    'notes/daily.md',
  ]);
  t.deepEqual(sorted(q({ modified_before: '2026-11-21' })), ['decisions/pricing.md']);
  t.deepEqual(q({ modified_after: '2026-12-02', modified_before: '2026-11-01' }), {
    ok: true,
    results: [],
    truncated: false,
  });
  t.deepEqual(ids(q({ sort: 'modified' })), [
    'projects/beta.md',
    'projects/alpha.md',
    'notes/daily.md',
    'decisions/hiring.md',
    'decisions/pricing.md',
  ]);
});

test('filter-only › no query lists the selected notes newest first with the start of each note', (t) => {
  const w = tree();
  const bridge = createBridge({ log: () => undefined });
  const r = ok(bridge.search({ within: ['projects/**', 'notes/**'], modified_after: '2026-11-29' }, w.caller));
  t.deepEqual(
    r.results.map((h) => h.id),
    ['projects/beta.md', 'projects/alpha.md', 'notes/daily.md'],
  );
  t.true(r.results[0]!.snippet.startsWith('# Beta budget'));
  t.deepEqual(ids(bridge.search({ tags: ['decision'] }, w.caller)), ['decisions/hiring.md', 'decisions/pricing.md']);
  // Limits as for any search: one hit and truncated.
  const one = ok(bridge.search({ tags: ['decision'], limit: 1 }, w.caller));
  t.deepEqual(
    one.results.map((h) => h.id),
    ['decisions/hiring.md'],
  );
  t.true(one.truncated);
});

test('combined › within, tags and dates narrow together; a first call answers as a warm one', (t) => {
  const w = tree();
  const args = {
    query: 'budget',
    limit: 10,
    within: ['projects/**'],
    tags: ['pricing'],
    modified_before: '2026-12-01',
  };
  const first = createBridge({ log: () => undefined });
  const cold = first.search(args, w.caller);
  t.deepEqual(ids(cold), ['projects/alpha.md']);
  t.deepEqual(first.search(args, w.caller), cold);
  t.deepEqual(ids(first.search({ ...args, within: ['decisions/**'] }, w.caller)), ['decisions/pricing.md']);
  t.deepEqual(first.search({ ...args, within: ['notes/**'] }, w.caller), { ok: true, results: [], truncated: false });
});

test('denied › a denied note carrying the tag is never shown or counted', (t) => {
  const with_ = tree();
  const without = tree({}, ['private/secret.md']);
  for (const args of [
    { query: 'budget pricing', limit: 10, tags: ['pricing'] },
    { tags: ['pricing'] },
    { query: 'budget', modified_after: '2026-12-01', sort: 'modified' },
  ]) {
    const a = createBridge({ log: () => undefined }).search(args, with_.caller);
    const b = createBridge({ log: () => undefined }).search(args, without.caller);
    t.false(JSON.stringify(a).includes('secret'));
    // Same hits, same order, same snippets: the denied note changed no statistic.
    t.deepEqual(a, b);
  }
});

test('incomplete › a cut scan sets truncated and incomplete with filters exactly as without', (t) => {
  const w = tree({ limits: { max_entries: 2 } });
  const bridge = createBridge({ log: () => undefined });
  const plain = ok(bridge.search({ query: 'budget' }, w.caller));
  t.true(plain.incomplete);
  for (const args of [
    { query: 'budget', tags: ['nothing'] },
    { tags: ['decision'] },
    { modified_after: '2030-01-01' },
  ]) {
    const r = ok(bridge.search(args, w.caller));
    t.true(r.truncated);
    t.true(r.incomplete);
  }
});

test('arguments › dates, tags, sort and a missing query get fixed hints', (t) => {
  const w = tree();
  const bridge = createBridge({ log: () => undefined });
  const hint = (args: unknown) => {
    const r = bridge.search(args, w.caller);
    return r.ok ? 'ok' : r.error.hint;
  };
  t.is(hint({}), HINTS.query);
  t.is(hint({ limit: 3 }), HINTS.query);
  t.is(hint({ query: 'x', modified_after: '2026-02-30' }), HINTS.modifiedAfter);
  t.is(hint({ query: 'x', modified_after: '30.11.2026' }), HINTS.modifiedAfter);
  t.is(hint({ query: 'x', modified_before: '2026-11-30T24:00' }), HINTS.modifiedBefore);
  t.is(hint({ query: 'x', tags: [] }), HINTS.tags);
  t.is(hint({ query: 'x', tags: ['a b'] }), HINTS.tags);
  t.is(hint({ query: 'x', tags: ['1984'] }), HINTS.tags);
  t.is(hint({ query: 'x', tags: Array.from({ length: 9 }, (_, i) => `t${i}`) }), HINTS.tags);
  t.is(hint({ query: 'x', sort: 'newest' }), HINTS.sort);
  t.is(hint({ query: 'x', tag: ['a'] }), HINTS.searchKeys);
  t.is(parseInstant('2026-11-30'), Date.UTC(2026, 10, 30));
  t.is(parseInstant('2026-11-30T10:00:00.5-02:30'), Date.UTC(2026, 10, 30, 12, 30, 0, 500));
  t.is(parseInstant('2024-02-29'), Date.UTC(2024, 1, 29));
  t.is(parseInstant('2023-02-29'), undefined);
});

test('view › filters use the profile view: no view, index or note read of their own', (t) => {
  const w = tree();
  const cache = new IndexCache(1, undefined, 0);
  const key = IndexCache.keyOf(w.caller.home!, loadPolicy(w.caller.home!));
  t.true(ok(runSearch({ query: 'budget' }, w.caller, cache)).ok);
  t.true(ok(runSearch({ query: 'budget' }, w.caller, cache)).ok);
  const held = cache.get(key);
  const calls: Record<string, unknown>[] = [
    { query: 'budget', tags: ['pricing'] },
    { query: 'budget', modified_after: '2026-11-25' },
    { query: 'budget', modified_before: '2026-11-25T12:00:00-05:00', within: ['decisions/**'] },
    { query: 'budget', sort: 'modified' },
    { tags: ['project'] },
    { modified_after: '2026-11-01' },
    ...Array.from({ length: 10 }, (_, i) => ({ query: 'budget', modified_after: `2026-11-${10 + i}` })),
  ];
  for (const args of calls) {
    const call = countingOpens(() => runSearch(args, w.caller, cache));
    t.true(ok(call.value).ok);
    t.is(call.opens, 0, `no note is read again: ${JSON.stringify(args)}`);
    t.is(cache.size, 1, 'no view of its own');
    t.is(cache.get(key), held, 'the same index serves every filter');
    t.is(held.size, 5, 'the index holds the whole view');
  }
});
