/**
 * A policy edit keeps the view's index (docs/DESIGN.md "The first search of a view", issue 24 point 3): over real
 * corpora copied into a trusted root (the shipped Obsidian-style vault, tldr Chinese and Korean pages), a warm view
 * whose policy is narrowed (one more deny pattern) and then widened back keeps the same `NoteIndex`; the narrowing
 * call opens no note at all (the notes both policies allow keep their postings and are not read again), the widening
 * call opens exactly the notes it lets back in; and every answer — CJK, typo, prefix, `within`, tight budgets —
 * equals the first call of a fresh bridge under the same policy, and the answer of a view that never saw the edit.
 */
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import test from 'ava';
import { createBridge } from '../../src/tools/bridge.js';
import { DEFAULT_MAX_INDEXES, IndexCache, runSearch } from '../../src/tools/search.js';
import { RACY_MARGIN_MS } from '../../src/trust/view.js';
import { markdownFiles } from '../helpers/corpora.js';
import { withCorpora } from './corpus-world.js';
import { countingOpens, type World, worldTracker } from './world.js';

const { world, removeAll } = worldTracker();
test.after.always(removeAll);

/** A world whose root holds the vault under `vault/` and two tldr languages under `zh/` and `ko/`. */
function corpusWorld(): World {
  return withCorpora(world({ names: 'unicode' }), ['zh', 'ko']);
}

/**
 * Waits until the copied notes are older than the racy margin: until then a warm call verifies each of them again
 * (a descriptor each), which a narrowing edit would count as opens; on a quiet machine the test reaches the edit
 * within the margin.
 */
async function pastRacyMargin(): Promise<void> {
  await sleep(RACY_MARGIN_MS + 250);
}

const CALLS: Record<string, unknown>[] = [
  { query: 'garden watering', limit: 10 },
  { query: 'irigation', limit: 10 },
  { query: 'backu', limit: 10 },
  { query: '压缩 文件', limit: 10 },
  { query: '파일 목록', limit: 10 },
  { query: 'tar', limit: 10 },
  { query: 'git commit', limit: 3, within: ['zh/**', 'vault/Projects/**'] },
  { query: 'file', limit: 10 },
];

/** The answers of a fresh bridge (each call the first of its view) under the world's current policy. */
function freshAnswers(w: World): string[] {
  return CALLS.map((args) => JSON.stringify(createBridge({}).search(args, w.caller)));
}

function warmAnswers(w: World, indexes: IndexCache): string[] {
  return CALLS.map((args) => JSON.stringify(runSearch(args, w.caller, indexes)));
}

test('narrowing and widening the policy keeps the index, reads no kept note, and answers as a fresh view', async (t) => {
  const w = corpusWorld();
  await pastRacyMargin();
  const ko = markdownFiles(path.join(w.root, 'ko')).length;
  t.true(ko > 200);
  const indexes = new IndexCache(DEFAULT_MAX_INDEXES);
  const key = IndexCache.keyOf(w.home, { root: w.root, names: 'unicode' });
  const before = warmAnswers(w, indexes);
  t.deepEqual(before, freshAnswers(w));
  const index = indexes.get(key);
  const held = index.size;

  w.setPolicy({ names: 'unicode', deny: ['ko/**'] });
  const narrowed = countingOpens(() => runSearch(CALLS[0]!, w.caller, indexes));
  t.is(narrowed.opens, 0, 'no note both policies allow is opened again');
  t.is(indexes.get(key), index, 'the same index');
  t.is(index.size, held - ko);
  t.deepEqual(warmAnswers(w, indexes), freshAnswers(w));
  t.false(
    freshAnswers(w).some((a) => a.includes('"ko/')),
    'nothing denied is answered',
  );

  w.setPolicy({ names: 'unicode' });
  const widened = countingOpens(() => runSearch(CALLS[0]!, w.caller, indexes));
  t.is(widened.opens, ko, 'only the notes let back in are read');
  t.is(indexes.get(key), index, 'the same index');
  t.is(index.size, held);
  const after = warmAnswers(w, indexes);
  t.deepEqual(after, freshAnswers(w));
  t.deepEqual(after, before);
});
