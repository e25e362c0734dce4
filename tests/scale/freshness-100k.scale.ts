/**
 * Freshness at scale: on a tree of 100,000 trusted notes in a folder tree like a real vault's (25 areas, 250
 * topics, 2,000 folders, notes at every level), under a policy that sets no limits, a chmod that makes a note
 * group-writable, an ACL write grant, a note replaced by rename and a policy edit, each made right after a warm
 * call, are seen by the very next search and read. The scenario runs twice on the same tree. Without change
 * notification, every warm call re-reads the policy file (one open of it per call) and re-stats every candidate
 * note (the binding's stats plus the stat thread's answers the scan took add up to the number of notes in view),
 * which is why the changes cannot be missed (docs/DESIGN.md, "Why warm calls are cheap and still safe"). With it
 * (the default), every candidate note is either statted or vouched for by its inotify watch (the two counts add up
 * to the notes in view), nearly all are vouched for once the watches are in place, and the changes are still seen
 * by the very next call (docs/DESIGN.md §Change notification).
 *
 * The runner (scripts/test.js) runs this file in a step of its own after the other ava files, so the tree is built
 * once and the calls do not compete with other test files for the two cores; `*.scale.js` is outside ava's
 * `files` glob. Alone: `npm run build && npx ava dist/tests/scale/freshness-100k.scale.js`.
 */
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { createBridge } from '../../src/tools/bridge.js';
import type { ReadResult, SearchResult } from '../../src/tools/types.js';
import { statPool } from '../../src/trust/warm/stat-pool.js';
import { notesVouched, watchCeiling, watchesRefusedForSpace } from '../../src/trust/warm/watch.js';
import { ACL_TAG, aclBytes, grantMaskedUserWrite, setXattr } from '../helpers/fixtures.js';
import { buildTree, NOTES, scaleWorld, stopwatch, treeIds, unmountTree } from './vault.js';

function ok(r: unknown): SearchResult {
  const s = r as SearchResult;
  if (!s.ok) throw new Error(`search refused: ${JSON.stringify(r)}`);
  return s;
}

const ids = treeIds();
// Notes the changes hit: near the start, in the middle and at the end of the walk, at every depth.
const A = ids[3]!;
const B = ids[Math.floor(NOTES / 2) + 123]!;
const C = ids[NOTES - 1]!;
const D = ids[41 + 5]!;
const LANTERN = (word: string): string => `# Festival\n\nThe lantern ${word} starts at dusk.\n`;

/** A server's pause between two calls: deferred index builds and the stat thread's start run here. */
const betweenCalls = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

test('freshness at 100,000 notes › chmod, ACL grant, replaced file and policy edit are each seen by the very next call', async (t) => {
  t.timeout(600_000);
  t.is(new Set(ids).size, NOTES);
  // As root the memory root is a tmpfs of its own (owned by root, 0700, with POSIX ACLs): 100,000 files are made
  // and removed in a few seconds there, where a journaling filesystem under load takes tens of seconds.
  const world = scaleWorld(t);
  if (world === undefined) return;
  const { native, w, mounted } = world;
  try {
    const lap = stopwatch();
    buildTree(
      w.root,
      ids,
      new Map([A, B, C, D].map((id, i) => [id, LANTERN(['parade', 'walk', 'market', 'dance'][i]!)])),
    );
    t.log(`tree of ${NOTES} notes built in ${lap()}`);
    const scenario = async (watch: boolean): Promise<void> => {
      const bridge = createBridge({ log: () => undefined, watch });
      const label = watch ? 'with change notification' : 'statting every note';
      const search = (query: string): SearchResult => ok(bridge.search({ query, limit: 10 }, w.caller));
      const idsOf = (query: string): string[] =>
        search(query)
          .results.map((h) => h.id)
          .sort();
      const readable = (id: string): boolean => bridge.read({ id }, w.caller).ok;

      // The cold call reads and verifies every note; a policy without limits covers all 100,000.
      const cold = search('lantern');
      t.log(`${label}: cold first search in ${lap()}`);
      t.deepEqual(cold.results.map((h) => h.id).sort(), [A, B, C, D].sort());
      t.false(cold.truncated);
      t.false('incomplete' in cold);
      // Between calls, as in a server: the index is built from the cold call's notes and the stat thread starts
      // (the warm calls below then run on the production path, the thread's answers included in the counts).
      await betweenCalls();
      const threaded = await statPool().whenReady();
      t.log(`index built and stat thread ${threaded ? 'ready' : 'not running'} in ${lap()}`);

      /**
       * One warm call, counted on the real binding: opens of the policy file, stats of candidate notes made by this
       * thread and answers of the stat thread that the scan took.
       */
      const pool = statPool();
      const counted = <T>(fn: () => T): { value: T; policyOpens: number; noteStats: number; vouched: number } => {
        const { openFileAt, statRawAt } = native;
        let policyOpens = 0;
        let ownStats = 0;
        native.openFileAt = (dirfd: number, name: string) => {
          if (name === 'policy.json') policyOpens++;
          return openFileAt.call(native, dirfd, name);
        };
        native.statRawAt = (dirfd: number, cname: Uint8Array, out: Uint32Array) => {
          ownStats++;
          statRawAt.call(native, dirfd, cname, out);
        };
        const taken = pool.counts.taken;
        const vouched = notesVouched();
        try {
          const value = fn();
          return {
            value,
            policyOpens,
            noteStats: ownStats + pool.counts.taken - taken,
            vouched: notesVouched() - vouched,
          };
        } finally {
          native.openFileAt = openFileAt;
          native.statRawAt = statRawAt;
        }
      };
      /** Notes the last warm call vouched for by notification instead of a statx. */
      let vouched = 0;
      const warm = async (query: string, inView = NOTES): Promise<string[]> => {
        const r = counted(() => idsOf(query));
        t.is(r.policyOpens, 1, 'the policy file is opened and read again by the call');
        if (watch) {
          // A hit vouched for is statted again before it is returned (CallerView.answer): up to 10 stats beyond the view.
          t.true(
            r.noteStats + r.vouched >= inView && r.noteStats + r.vouched <= inView + 10,
            `every candidate note is statted or vouched for: ${r.noteStats} + ${r.vouched} of ${inView}`,
          );
        } else {
          t.is(r.noteStats, inView, 'every candidate note is statted again by the call');
          t.is(r.vouched, 0);
        }
        vouched = r.vouched;
        await betweenCalls();
        return r.value;
      };

      t.deepEqual(await warm('lantern'), [A, B, C, D].sort());
      // Every note changed within the racy margin of the cold call, so this call verifies each one again.
      t.log(`${label}: first warm search in ${lap()}`);
      if (watch) {
        // Watches are added a bounded number per call, in calls whose listings are reused (past the racy margin).
        for (let i = 0; i < 12 && vouched < Math.min(NOTES, watchCeiling()) - 10; i++) {
          await new Promise((resolve) => setTimeout(resolve, i < 2 ? 1500 : 0));
          t.deepEqual(await warm('lantern'), [A, B, C, D].sort());
        }
        // As many as the watch ceiling allows (all 100,000 where max_user_watches is the default of a 2 GiB machine).
        const watchable = Math.min(NOTES, watchCeiling()) - 10;
        // Unless the kernel ran out of watches for this user (max_user_watches is per user: another process of the
        // same user holding many, such as a second test run, leaves fewer); the notes past that are statted.
        t.true(
          vouched >= watchable || watchesRefusedForSpace() > 0,
          `an unchanged tree is vouched for by notification: ${vouched} of ${watchable}`,
        );
        if (vouched < watchable) t.log(`the kernel refused watches (ENOSPC): ${vouched} of ${watchable} vouched for`);
        t.log(`${label}: watches in place in ${lap()}`);
      }

      fs.chmodSync(path.join(w.root, A), 0o620);
      t.deepEqual(await warm('lantern'), [B, C, D].sort(), 'chmod g+w');
      t.false(readable(A));

      // A named user with write, masked to read: the mode bits show no write at all, the ACL entry still does.
      grantMaskedUserWrite(path.join(w.root, B));
      t.is(fs.statSync(path.join(w.root, B)).mode & 0o077, 0o040);
      t.deepEqual(await warm('lantern'), [C, D].sort(), 'ACL write grant');
      t.false(readable(B));

      const tmp = path.join(w.root, path.dirname(C), '.replacement.tmp');
      fs.writeFileSync(tmp, '# Festival\n\nThe lantern market moved to the harbour.\n', { mode: 0o600 });
      fs.renameSync(tmp, path.join(w.root, C));
      t.deepEqual(await warm('harbour'), [C], 'replaced by rename');
      t.regex(search('harbour').results[0]!.snippet, /harbour/);
      t.regex((bridge.read({ id: C }, w.caller) as ReadResult).content, /harbour/);

      w.setPolicy({ allow: ['**'], deny: [D] });
      t.deepEqual(await warm('lantern', NOTES - 1), [C], 'policy edit');
      t.false(readable(D));

      // And back: each undone change is seen by the very next call too.
      w.setPolicy({ allow: ['**'] });
      fs.chmodSync(path.join(w.root, A), 0o600);
      setXattr(
        path.join(w.root, B),
        'system.posix_acl_access',
        aclBytes([
          { tag: ACL_TAG.USER_OBJ, perm: 6 },
          { tag: ACL_TAG.GROUP_OBJ, perm: 0 },
          { tag: ACL_TAG.OTHER, perm: 0 },
        ]),
      );
      t.deepEqual(await warm('lantern'), [A, B, C, D].sort(), 'all undone');
      t.true(readable(A) && readable(B) && readable(D));
      // Undo the replacement too, so that the second run starts from the tree the first one did.
      fs.writeFileSync(tmp, LANTERN('dance'), { mode: 0o600 });
      fs.writeFileSync(tmp, LANTERN(['parade', 'walk', 'market', 'dance'][2]!), { mode: 0o600 });
      fs.renameSync(tmp, path.join(w.root, C));
      t.deepEqual(await warm('lantern'), [A, B, C, D].sort(), 'replacement undone');
      t.log(
        `${label}: changes and their checks in ${lap()}; stat thread ${pool.status}, answered ${pool.counts.taken} stats`,
      );
    };
    for (const watch of [false, true]) await scenario(watch);
  } finally {
    // The stat thread may still hold a duplicate of one directory for a moment (src/trust/warm/stat-pool.ts, "Bounds").
    statPool().settleDeferred(10_000);
    if (mounted) unmountTree(w.root);
    fs.rmSync(w.tmp, { recursive: true, force: true });
  }
});
