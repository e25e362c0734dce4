/**
 * The first search of a view with a persisted index, through the real bridge, scan and files (src/tools/persisted-index.ts,
 * docs/DESIGN.md §The persisted index): the answer is byte for byte the one the same first call gives without the file
 * (MEMORY_BRIDGE_PERSISTED_INDEX=0, and with the cold thread building), and the warm call after it answers alike; on
 * real corpora (the shipped vault, tldr Japanese and Korean pages: CJK, typo, prefix, `within`, filters, `sort`, a
 * `max_entries` cut, tight character budgets). Notes changed, replaced, added, removed, made untrusted or newly denied
 * after the file was written are never taken from it: they are indexed again from their text (counted as rebuilt) or
 * left out, and the answer is still the one without the file.
 */
import fs from 'node:fs';
import path from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { getNative } from '../../native/index.js';
import { replaceFile } from '../../src/atomic-write.js';
import { loadPolicy } from '../../src/policy/load.js';
import { coldThread } from '../../src/search/cold-thread.js';
import { createBridge } from '../../src/tools/bridge.js';
import { IndexCache } from '../../src/tools/index-cache.js';
import {
  adoptPersisted,
  buildPersistedIndex,
  lastUseOf,
  loadPersistedIndex,
  persistedIndexPath,
} from '../../src/tools/persisted-index.js';
import { NoteIndex } from '../../src/search/index.js';
import { scanLimitsOf } from '../../src/policy/scan-limits.js';
import { parseCaller } from '../../src/tools/caller.js';
import { policyAndRoot } from '../../src/tools/start.js';
import { scanTree } from '../../src/trust/scan.js';
import type { ScannedNote } from '../../src/trust/types.js';
import type { SearchResult } from '../../src/tools/types.js';
import { writeNote } from '../helpers/fixtures.js';
import { REAL_CALLS, withCorpora } from './corpus-world.js';
import { worldTracker, type World } from './world.js';

const native = getNative();
const { world, removeAll } = worldTracker();
test.after.always(() => {
  removeAll();
  coldThread().configure({ startAt: 2_500, engageAt: 5_000, failAt: -1 }, true);
});

/** A world holding the shipped vault under `vault/` and tldr Japanese and Korean pages under `ja/` and `ko/`. */
function corpusWorld(fields: Record<string, unknown> = {}): World {
  return withCorpora(world({ names: 'unicode', ...fields }), ['ja', 'ko']);
}

/** Write the persisted index of `w`'s home as `memory-bridge index` does (racy margin off: the notes are new). */
function writeIndex(w: World): void {
  replaceFile(persistedIndexPath(w.home), buildPersistedIndex(w.home, native!, { racyMarginMs: 0 }).bytes, 0o600);
}

/** The view's last use of its persisted index in this process. */
function lastUse(w: World) {
  return lastUseOf(IndexCache.keyOf(w.home, loadPolicy(w.home)));
}

/** A first call of a fresh bridge (a cold view), with the persisted index on or off (and the cold thread as set). */
function firstCall(w: World, args: Record<string, unknown>, persistedOff: boolean): SearchResult {
  if (persistedOff) process.env.MEMORY_BRIDGE_PERSISTED_INDEX = '0';
  try {
    return createBridge({ racyMarginMs: 0 }).search(args, w.caller) as SearchResult;
  } finally {
    delete process.env.MEMORY_BRIDGE_PERSISTED_INDEX;
  }
}

/** The equivalence calls, and a tag filter and a date filter on top. */
const CALLS: Record<string, unknown>[] = [
  ...REAL_CALLS,
  { tags: ['recipe'], limit: 5 },
  { query: 'note', modified_after: '2000-01-01', limit: 5 },
];

test.serial('real corpora: first calls with the persisted index answer as without it, cold and warm', (t) => {
  if (native === null) return t.pass();
  const configs = [
    { fields: {}, cut: false },
    { fields: { limits: { max_entries: 250 } }, cut: true },
    { fields: { limits: { snippet_chars: 40, total_chars: 300 } }, cut: false },
  ];
  for (const { fields, cut } of configs) {
    const w = corpusWorld(fields);
    writeIndex(w);
    const warm = createBridge({ racyMarginMs: 0 });
    for (const args of CALLS) {
      const label = JSON.stringify([fields, args]);
      const off = firstCall(w, args, true);
      const on = firstCall(w, args, false);
      t.like(lastUse(w), { state: 'used', rebuilt: 0 }, label);
      t.true(off.ok, label);
      t.is(off.ok && off.incomplete === true, cut, label);
      t.is(JSON.stringify(on), JSON.stringify(off), label);
      t.is(JSON.stringify(warm.search(args, w.caller)), JSON.stringify(off), label);
    }
  }
});

test.serial('the answer with the persisted index equals the cold thread build of the same first call', (t) => {
  if (native === null) return t.pass();
  const w = corpusWorld();
  writeIndex(w);
  coldThread().configure({ startAt: 0, engageAt: 0, failAt: -1, useEnvironment: true }, true);
  try {
    for (const args of CALLS.slice(0, 5)) {
      coldThread().lastOutcome = 'none';
      const off = firstCall(w, args, true);
      t.is(coldThread().lastOutcome, 'worker');
      t.is(coldThread().lastMode, 'build');
      coldThread().lastOutcome = 'none';
      const on = firstCall(w, args, false);
      // The persisted index stands in for the build: the thread made only each note's title, tags and body start.
      t.is(coldThread().lastOutcome, 'worker');
      t.is(coldThread().lastMode, 'facts', 'the persisted index stands in for the build');
      t.is(JSON.stringify(on), JSON.stringify(off), JSON.stringify(args));
    }
  } finally {
    coldThread().configure({ startAt: 2_500, engageAt: 5_000, failAt: -1 }, true);
  }
});

test.serial('stale, new, removed, untrusted and newly denied notes: never taken from the file, same answer', (t) => {
  if (native === null) return t.pass();
  const w = corpusWorld();
  writeIndex(w);
  const total = fs.readdirSync(path.join(w.root, 'vault', 'Recipes')).length;
  t.true(total > 0);
  // Content changed (new words the file does not know), a note replaced, one added, one removed, one made writable by
  // the group (the scan refuses it), and the policy now denies a folder the file holds entries for.
  const recipes = path.join(w.root, 'vault', 'Recipes');
  const [first, second, third] = fs.readdirSync(recipes).filter((n) => n.endsWith('.md'));
  fs.appendFileSync(path.join(recipes, first!), '\nzanzibar quokka\n');
  const text = fs.readFileSync(path.join(recipes, second!));
  fs.rmSync(path.join(recipes, second!));
  writeNote(recipes, second!, text);
  fs.chmodSync(path.join(recipes, third!), 0o620);
  writeNote(w.root, 'vault/new-note.md', '# Quokka\n\nzanzibar quokka lantern\n');
  fs.rmSync(path.join(w.root, 'vault', 'Home.md'));
  w.setPolicy({ names: 'unicode', deny: ['ko/**'] });
  for (const args of [
    { query: 'zanzibar quokka', limit: 10 },
    { query: '파일', limit: 10 },
    { query: 'recipe', limit: 10 },
    { tags: ['recipe'], limit: 10 },
  ]) {
    const off = firstCall(w, args, true);
    const on = firstCall(w, args, false);
    t.is(JSON.stringify(on), JSON.stringify(off), JSON.stringify(args));
    if (on.ok) t.false(on.results.some((hit) => hit.id.startsWith('ko/') || hit.id === `vault/Recipes/${third}`));
    // Changed, replaced and new notes are rebuilt; the removed, refused and denied ones' entries are never used.
    t.like(lastUse(w), { state: 'used', rebuilt: 3 });
  }
  const zanzibar = firstCall(w, { query: 'zanzibar quokka', limit: 10 }, false);
  t.true(zanzibar.ok && zanzibar.results.length === 2, 'the changed and the new note are found by their new words');
});

/** This call's scan of `w` as a first search makes it (every note read), through the policy and trust rule. */
function scanOf(w: World): ScannedNote[] {
  const { policy, writers, rootFd } = policyAndRoot(parseCaller(w.caller), native!, () => undefined);
  try {
    const limits = { ...scanLimitsOf(policy), writers, racyMarginMs: 0 };
    return scanTree(rootFd, policy, limits, { has: () => false }, native!).notes;
  } finally {
    native!.close(rootFd);
  }
}

/** Queries over the held vocabulary: whole terms, prefixes, one-edit typos, several words, CJK. */
function queriesOf(index: NoteIndex): string[] {
  const terms = index.rank('a e i o u の は 파일', 40).flatMap((m) => m.terms);
  const out = ['ファイル 圧縮', '파일 목록', 'garden watering', 'irigation', 'backu', 'a', 'zz'];
  for (const term of [...new Set(terms)].slice(0, 60))
    out.push(term, term.slice(0, Math.max(1, term.length - 2)), `${term}x`, `${term} ${terms[0] ?? ''}`);
  return out;
}

/** Rankings (ids, coverage, scores, matched terms), statistics and answers of two indexes are the same. */
function sameIndex(t: ExecutionContext, a: NoteIndex, b: NoteIndex, label: string): void {
  t.deepEqual(a.stats(), b.stats(), `${label}: statistics`);
  const limits = { snippet_chars: 200, total_chars: 4000 };
  for (const query of queriesOf(b)) {
    t.deepEqual(a.rank(query), b.rank(query), `${label}: rank ${query}`);
    t.deepEqual(a.search(query, 10, limits), b.search(query, 10, limits), `${label}: search ${query}`);
  }
  t.deepEqual(a.recent(20, limits), b.recent(20, limits), `${label}: recent`);
}

test.serial('an index adopted from the persisted file is the freshly synced one: statistics, scores, terms', (t) => {
  if (native === null) return t.pass();
  const w = corpusWorld();
  writeIndex(w);
  const load = () => {
    const loaded = loadPersistedIndex(w.home, loadPolicy(w.home), native!);
    if (loaded.state !== 'loaded') throw new Error(loaded.state);
    return loaded.index;
  };
  const notes = scanOf(w);
  const adopted = new NoteIndex();
  t.true(adoptPersisted(adopted, notes, load(), 'view', () => undefined));
  const synced = new NoteIndex();
  synced.sync(notes);
  sameIndex(t, adopted, synced, 'fresh');
  // Notes changed and added after the file was written: rebuilt from their text, the rest adopted.
  fs.appendFileSync(path.join(w.root, 'vault', 'Home.md'), '\nzanzibar quokka\n');
  writeNote(w.root, 'vault/quokka.md', '# Quokka\n\nzanzibar quokka garden\n');
  fs.rmSync(path.join(w.root, 'ja', 'common', fs.readdirSync(path.join(w.root, 'ja', 'common'))[0]!));
  const later = scanOf(w);
  const partly = new NoteIndex();
  t.true(adoptPersisted(partly, later, load(), 'view', () => undefined));
  const fresh = new NoteIndex();
  fresh.sync(later);
  sameIndex(t, partly, fresh, 'stale');
  // And after the same later sync (a warm call that finds one more change) they stay the same.
  writeNote(w.root, 'vault/another.md', 'garden quokka\n');
  const third = scanOf(w);
  partly.sync(third.map((n) => (partly.has(n.id, n.key) ? { ...n, text: undefined } : n)));
  fresh.sync(third.map((n) => (fresh.has(n.id, n.key) ? { ...n, text: undefined } : n)));
  sameIndex(t, partly, fresh, 'warm');
});

test.serial('an entry written within the racy margin is never used, also by a first call within that margin', (t) => {
  if (native === null) return t.pass();
  const w = world();
  writeNote(w.root, 'a.md', '# A\n\nracy lantern\n');
  writeNote(w.root, 'b.md', '# B\n\nracy garden\n');
  // As `memory-bridge index` builds it right after the notes changed (the default margin): a write in the same
  // clock tick after the build read them would leave their identity as it was, so their entries must not stand.
  const build = buildPersistedIndex(w.home, native);
  t.is(build.racy, 2);
  replaceFile(persistedIndexPath(w.home), build.bytes, 0o600);
  const first = createBridge().search({ query: 'racy', limit: 10 }, w.caller) as SearchResult;
  t.true(first.ok && first.results.length === 2);
  t.like(lastUse(w), { state: 'used', revalidated: 0, rebuilt: 2 });
});
