/**
 * Change notification through the search tool (createBridge and runSearch with change notification on; docs/DESIGN.md
 * §Change notification): warm searches stat only the notes they return, and a change made through a descriptor
 * opened before the warm-up, or one whose event never came (the stand-in for a write through a shared writable
 * mapping, which raises no inotify event), is never served from the kept answer. Every answer is compared with a
 * bridge without notification over the same tree.
 *
 * The search tool's caller view keeps a listing for reuse only when it was taken more than 3 s after its directory's
 * last change (CallerView's racy margin; BridgeOptions.racyMarginMs is the notes' margin, not the listings'), so the
 * trees are written when this file loads and the tests start once they are that old. Tests are serial: the count of
 * watches held is per process.
 */
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import test from 'ava';
import { getNative } from '../../native/index.js';
import { loadPolicy } from '../../src/policy/load.js';
import { createBridge } from '../../src/tools/bridge.js';
import { IndexCache, runSearch } from '../../src/tools/search.js';
import type { ErrorResult } from '../../src/errors.js';
import type { SearchResult } from '../../src/tools/types.js';
import { openTrustedDir } from '../../src/trust/path.js';
import { watchesHeld } from '../../src/trust/warm/watch.js';
import { writeNote } from '../helpers/fixtures.js';
import { worldTracker, type World } from './world.js';

const { world, removeAll } = worldTracker();
test.after.always(removeAll);
const native = getNative()!;

const NOTES = 20;
const DIRS = ['', 'a', 'b', 'b/c'];

/** A world with 20 notes n00 … n19 over four directories; `words[i]` is added to note i's body. */
function notesWorld(words: Record<number, string> = {}): { w: World; ids: string[] } {
  const w = world();
  const ids: string[] = [];
  for (let i = 0; i < NOTES; i++) {
    const dir = DIRS[i % DIRS.length]!;
    const id = `${dir === '' ? '' : `${dir}/`}n${String(i).padStart(2, '0')}.md`;
    writeNote(w.root, id, `# Note ${i}\n\nshared word${i} ${words[i] ?? ''}\n`, 0o644);
    ids.push(id);
  }
  return { w, ids };
}

const supported = native?.watchOpen !== undefined && native.localFilesystem !== undefined;
const watchTest = supported ? test.serial : test.skip;

// Written now, used once their directories are older than the listings' racy margin.
const written = Date.now();
const plain = notesWorld();
const writer = notesWorld({ 3: 'lantern' });
const missed = notesWorld({ 5: 'zephyr' });
const pair = notesWorld({ 7: 'yonder yonder yonder', 8: 'yonder' });
const second = notesWorld();
const MARGIN_MS = 3000;
test.before(async () => {
  const left = written + MARGIN_MS + 250 - Date.now();
  if (left > 0) await sleep(left);
});

/** Base names the real binding statted by name (statx) while `fn` ran, in order. */
function counted<T>(fn: () => T): { value: T; stats: string[] } {
  const original = native.statRawAt;
  const stats: string[] = [];
  native.statRawAt = (fd: number, cname: Uint8Array, out: Uint32Array): void => {
    stats.push(Buffer.from(cname.subarray(0, cname.length - 1)).toString('utf8'));
    original.call(native, fd, cname, out);
  };
  try {
    return { value: fn(), stats };
  } finally {
    native.statRawAt = original;
  }
}

const hitIds = (r: SearchResult | ErrorResult): string[] => (r.ok ? r.results.map((h) => h.id) : ['error']);
const names = (ids: readonly string[]): string[] => ids.map((id) => path.basename(id)).sort();

/** The answer of a bridge without notification and without any warm state: what a new process would answer. */
function freshAnswer(w: World, args: { query: string; limit?: number }): string {
  return JSON.stringify(createBridge({ log: () => undefined, racyMarginMs: 0, watch: false }).search(args, w.caller));
}

watchTest(
  'bridge watch › warm searches stat only the notes they return; a write through an old descriptor is seen',
  (t) => {
    const { w, ids } = writer;
    const target = ids[3]!;
    const fd = fs.openSync(path.join(w.root, target), 'r+');
    try {
      const bridge = createBridge({ log: () => undefined, racyMarginMs: 0, watch: true });
      const args = { query: 'shared', limit: 10 };
      counted(() => bridge.search(args, w.caller));
      counted(() => bridge.search(args, w.caller));
      const third = counted(() => bridge.search(args, w.caller));
      t.deepEqual(
        names(third.stats),
        names(hitIds(third.value)),
        'only the returned notes are statted again (their kept answers stood in for the scan)',
      );
      t.is(third.stats.length, 10);
      t.is(JSON.stringify(third.value), freshAnswer(w, args));
      // The note open for writing is refused (open_for_write) with or without notification.
      t.false(hitIds(bridge.search({ query: 'lantern' }, w.caller)).includes(target));

      fs.writeSync(fd, ' xylophone\n', fs.fstatSync(fd).size);
      fs.fsyncSync(fd);
      const open = counted(() => bridge.search({ query: 'xylophone' }, w.caller));
      t.true(open.stats.includes(path.basename(target)), 'the written note is statted');
      t.is(JSON.stringify(open.value), freshAnswer(w, { query: 'xylophone' }));
      fs.closeSync(fd);
      const found = bridge.search({ query: 'xylophone' }, w.caller);
      t.deepEqual(hitIds(found), [target], 'the word written through the descriptor opened before the warm-up');
      t.is(JSON.stringify(found), freshAnswer(w, { query: 'xylophone' }));
    } finally {
      try {
        fs.closeSync(fd);
      } catch {
        // closed above
      }
    }
  },
);

watchTest('bridge watch › a returned note directly in the root is statted once, not scanned again', (t) => {
  // n00.md sits in the root itself: its id has no directory segment, and the recheck must stat it there (a wrong
  // directory made every such answer look changed and the whole call scan twice).
  const { w, ids } = second;
  t.is(ids[0], 'n00.md');
  const bridge = createBridge({ log: () => undefined, racyMarginMs: 0, watch: true });
  const args = { query: 'word0', limit: 1 };
  for (let i = 0; i < 2; i++) bridge.search(args, w.caller);
  const warm = counted(() => bridge.search(args, w.caller));
  t.deepEqual(hitIds(warm.value), ['n00.md']);
  t.deepEqual(warm.stats, ['n00.md'], 'one stat: the returned note, in the root');
  t.is(JSON.stringify(warm.value), freshAnswer(w, args));
});

/** A search tool over its own IndexCache (notification on), with the view's caller view at hand. */
function toolOf(w: World) {
  const indexes = new IndexCache(8, undefined, 0, undefined, false, true);
  const key = IndexCache.keyOf(w.home, loadPolicy(w.home));
  return {
    search: (args: { query: string; limit?: number }): SearchResult => runSearch(args, w.caller, indexes),
    memo: () => indexes.callerOf(key),
    /**
     * Stands in for changes whose inotify events never came: reads the queued events (as the next call would),
     * then marks the entries of `lost` clean again, so their kept (now stale) answers would stand in for a statx.
     */
    loseEvents(lost: readonly string[]): void {
      const memo = indexes.callerOf(key);
      const fd = openTrustedDir(w.root, 'root', native);
      try {
        t_assert(memo.watch!.begin(native, fd));
      } finally {
        native.close(fd);
      }
      for (const id of lost) t_assert(memo.restoreCleanForTests(id), 'the event came and dirtied the entry');
    },
  };
}

function t_assert(ok: boolean, what = 'assertion'): void {
  if (!ok) throw new Error(what);
}

watchTest('bridge watch › a returned note whose change raised no event is statted again before it is returned', (t) => {
  const { w, ids } = missed;
  const target = ids[5]!;
  const tool = toolOf(w);
  const args = { query: 'zephyr' };
  tool.search(args);
  tool.search(args);
  const third = counted(() => tool.search(args));
  t.deepEqual(hitIds(third.value), [target]);
  t.deepEqual(third.stats, [path.basename(target)], 'the vouched hit statted again, nothing else');

  fs.chmodSync(path.join(w.root, target), 0o646);
  tool.loseEvents([target]);
  const after = counted(() => tool.search(args));
  t.deepEqual(hitIds(after.value), [], 'the world-writable note is not returned');
  t.is(JSON.stringify(after.value), freshAnswer(w, args));
  t.true(after.stats.filter((n) => n === path.basename(target)).length >= 2, 'statted again, then scanned again');
  // Back to a trusted mode: found again, and the next call is quiet again.
  fs.chmodSync(path.join(w.root, target), 0o644);
  t.deepEqual(hitIds(tool.search(args)), [target]);
  tool.search(args);
  t.deepEqual(counted(() => tool.search(args)).stats, [path.basename(target)]);
});

watchTest(
  'bridge watch › when the second scan brings other hits, those are never served from a stale kept answer',
  (t) => {
    const { w, ids } = pair;
    const [first, runnerUp] = [ids[7]!, ids[8]!];
    const tool = toolOf(w);
    const args = { query: 'yonder', limit: 1 };
    tool.search(args);
    tool.search(args);
    t.deepEqual(hitIds(tool.search(args)), [first]);
    // Both notes become world-writable and both events are lost: the first answer's hit is caught by the recheck;
    // the note that takes its place in the second scan must not be returned on its kept answer either.
    fs.chmodSync(path.join(w.root, first), 0o646);
    fs.chmodSync(path.join(w.root, runnerUp), 0o646);
    tool.loseEvents([first, runnerUp]);
    const r = tool.search(args);
    t.deepEqual(hitIds(r), []);
    t.is(JSON.stringify(r), freshAnswer(w, args));
  },
);

watchTest('bridge watch › MEMORY_BRIDGE_WATCH=0 turns notification off: every warm search stats every note', (t) => {
  const { w } = plain;
  const saved = process.env.MEMORY_BRIDGE_WATCH;
  process.env.MEMORY_BRIDGE_WATCH = '0';
  let bridge: ReturnType<typeof createBridge>;
  try {
    bridge = createBridge({ log: () => undefined, racyMarginMs: 0 });
  } finally {
    if (saved === undefined) delete process.env.MEMORY_BRIDGE_WATCH;
    else process.env.MEMORY_BRIDGE_WATCH = saved;
  }
  const held = watchesHeld();
  const args = { query: 'shared', limit: 3 };
  bridge.search(args, w.caller);
  bridge.search(args, w.caller);
  const third = counted(() => bridge.search(args, w.caller));
  t.is(third.stats.length, NOTES);
  t.is(watchesHeld(), held, 'no watch added');
  t.is(JSON.stringify(third.value), freshAnswer(w, args));
  // On by default.
  const on = createBridge({ log: () => undefined, racyMarginMs: 0 });
  on.search(args, w.caller);
  on.search(args, w.caller);
  t.is(watchesHeld(), held + NOTES);
  t.is(counted(() => on.search(args, w.caller)).stats.length, 3, 'only the 3 returned notes');
});

watchTest('bridge watch › a view dropped from the cache gives back its watches', (t) => {
  const bridge = createBridge({ log: () => undefined, racyMarginMs: 0, maxIndexes: 1, watch: true });
  const held = watchesHeld();
  const args = { query: 'shared' };
  for (let i = 0; i < 3; i++) bridge.search(args, plain.w.caller);
  t.is(watchesHeld(), held + NOTES);
  bridge.search(args, second.w.caller);
  t.is(watchesHeld(), held, 'the first view was dropped, and its memo closed');
  for (let i = 0; i < 2; i++) bridge.search(args, second.w.caller);
  t.is(watchesHeld(), held + NOTES);
  bridge.search(args, plain.w.caller);
  t.is(watchesHeld(), held);
});
