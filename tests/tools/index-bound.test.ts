/**
 * The per-view cache's byte bound (src/tools/index-cache.ts) against real memory: what it counts for a view is what
 * the view holds (texts, postings, terms, per-note records, scan memo), and a worker serving several large homes
 * keeps the views it holds within the bound by dropping the least recently used ones.
 */
import test from 'ava';
import { loadPolicy } from '../../src/policy/load.js';
import { releaseMemory } from '../../src/tools/collect.js';
import { IndexCache, runSearch } from '../../src/tools/search.js';
import type { SearchResult } from '../../src/tools/types.js';
import { writeNote } from '../helpers/fixtures.js';
import { addHome, worldTracker } from './world.js';

const { world, removeAll } = worldTracker();
test.after.always(removeAll);

const WORDS =
  'river stone moss lichen fern bark cedar alder birch heron otter willow meadow orchard harvest lantern garden quiet evening morning'.split(
    ' ',
  );

/** A seeded note text of about `words` words (a linear congruential generator: the same notes every run). */
function noteText(seed: number, words: number): string {
  let x = seed * 2654435761;
  const next = (): number => {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    return x;
  };
  const out: string[] = [`# Note ${seed}`];
  for (let i = 0; i < words; i++) out.push(`${WORDS[next() % WORDS.length]}${next() % 7 === 0 ? next() % 1000 : ''}`);
  return out.join(' ');
}

/** `count` notes below `dir`, in folders of 50. */
function writeNotes(root: string, dir: string, count: number, words: number): void {
  for (let i = 0; i < count; i++)
    writeNote(root, `${dir}/f${Math.floor(i / 50)}/n${i}.md`, noteText(i + dir.length * 100_000, words));
}

function ok(r: unknown): SearchResult {
  if ((r as SearchResult).ok !== true) throw new Error(JSON.stringify(r));
  return r as SearchResult;
}

test.serial('the bytes counted for a view are within a factor of what building it costs in memory', async (t) => {
  const w = world({ allow: ['**'] });
  writeNotes(w.root, 'vault', 3000, 300);
  // After a full collection V8 frees dead array buffers' memory from a background task: wait for it, and collect
  // again, so both figures count live memory only.
  const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 100));
  const used = async (): Promise<number> => {
    releaseMemory();
    await settle();
    releaseMemory();
    await settle();
    const m = process.memoryUsage();
    return m.heapUsed + m.arrayBuffers;
  };
  // Load every module and warm the stat thread up on a view of its own first, so only the view's memory is new.
  const warm = addHome(w, 'warm', { allow: ['vault/f0/**'] });
  const scratch = new IndexCache(8, undefined, 0);
  ok(runSearch({ query: 'river' }, warm, scratch));
  ok(runSearch({ query: 'river' }, warm, scratch));
  const before = await used();
  const cache = new IndexCache(8, undefined, 0);
  ok(runSearch({ query: 'river' }, w.caller, cache));
  await new Promise((resolve) => setImmediate(resolve));
  ok(runSearch({ query: 'heron' }, w.caller, cache));
  const grown = (await used()) - before;
  const counted = cache.bytes;
  t.log(`counted ${(counted / 1e6).toFixed(1)} MB, measured ${(grown / 1e6).toFixed(1)} MB`);
  t.true(counted >= 0.6 * grown && counted <= 1.6 * grown, `counted ${counted}, measured ${grown}`);
  // Texts alone are about 6 MB here: counting note file bytes only would have been well under the measured figure.
  t.true(counted > 1.5 * 3000 * noteText(1, 300).length);
});

test.serial('a worker serving several large homes keeps the views it holds within the bound', async (t) => {
  const w = world({ allow: ['a/**'] });
  for (const dir of ['a', 'b', 'c', 'd']) writeNotes(w.root, dir, 400, 120);
  const callers = [w.caller, ...['b', 'c', 'd'].map((dir) => addHome(w, `home-${dir}`, { allow: [`${dir}/**`] }))];
  // Each view alone, built.
  const sizes = callers.map((caller) => {
    const cache = new IndexCache(8, undefined, 0);
    ok(runSearch({ query: 'river' }, caller, cache));
    ok(runSearch({ query: 'river' }, caller, cache));
    return cache.bytes;
  });
  const bound = Math.floor(2.5 * Math.max(...sizes));
  const cache = new IndexCache(8, bound, 0);
  const order = [0, 1, 2, 3, 0, 0, 2, 1, 3, 3, 1, 0, 2, 2, 3, 1];
  let most = 0;
  for (const i of order) {
    ok(runSearch({ query: 'heron moss' }, callers[i]!, cache));
    // The view just used is held; whatever else is held fits the bound with it (a view whose first call's notes
    // are pending counts them, until its build, which applies the bound again).
    t.true(cache.bytes <= bound || cache.size === 1, `${cache.bytes} > ${bound} with ${cache.size} views`);
    most = Math.max(most, cache.size);
    await new Promise((resolve) => setImmediate(resolve));
    t.true(cache.bytes <= bound || cache.size === 1, `after the build: ${cache.bytes} > ${bound}`);
    t.true(cache.holds(IndexCache.keyOf(callers[i]!.home!, loadPolicy(callers[i]!.home!))), 'the view in use is kept');
  }
  t.true(
    most >= 2 && most < callers.length,
    `${most} views held at most: the bound dropped views, and held more than one`,
  );
  t.true(cache.bytes <= bound);
});
