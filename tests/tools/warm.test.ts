/**
 * The warm-up's passes (src/tools/warm.ts `warmUpView`): one build, then passes as the view's next calls would run
 * while change notification still adds watches, at most MAX_SETTLE_PASSES; a refusal ends them. And one pass over
 * real files builds the whole view through the search path.
 */
import test from 'ava';
import { createBridge } from '../../src/tools/bridge.js';
import { MAX_SETTLE_PASSES, type WarmOutcome, warmUpView } from '../../src/tools/warm.js';
import { writeNote } from '../helpers/fixtures.js';
import { worldTracker } from './world.js';

const worlds = worldTracker();
test.after.always(() => worlds.removeAll());

const ok = (ms = 1): WarmOutcome => ({ ok: true, notes: 3, ms, view: 'v' });

test('warm-up passes › settle passes go on while watches are added, then stop', async (t) => {
  const watches = [0, 20_000, 40_000, 45_000, 45_000];
  let passes = 0;
  const settles: boolean[] = [];
  const outcome = await warmUpView(
    (settle) => {
      settles.push(settle);
      passes++;
      return ok(10);
    },
    () => false,
    () => watches[Math.min(passes, watches.length - 1)]!,
  );
  // Build (passes = 1: 20,000 held), a pass adding to 40,000, one to 45,000, one adding none: four in all.
  t.deepEqual(settles, [false, true, true, true]);
  t.true(outcome.ok);
  t.is(outcome.ms, 40, 'the time of every pass');
});

test('warm-up passes › at most MAX_SETTLE_PASSES after the build; a waiting request or a refusal ends them', async (t) => {
  let passes = 0;
  await warmUpView(
    () => {
      passes++;
      return ok();
    },
    () => false,
    () => passes * 1000,
  );
  t.is(passes, 1 + MAX_SETTLE_PASSES);
  let early = 0;
  await warmUpView(
    () => {
      early++;
      return ok();
    },
    () => early >= 2,
    () => early * 1000,
  );
  t.is(early, 2, 'a request waiting ends the passes: it waits for the build only');
  let tried = 0;
  const refused = await warmUpView(
    () => (++tried === 1 ? ok() : { ok: false, reason: 'policy_missing', ms: 1 }),
    () => false,
    () => tried,
  );
  t.is(tried, 2);
  t.deepEqual(refused, { ok: false, reason: 'policy_missing', ms: 2 });
  let once = 0;
  const notBuilt = await warmUpView(() => {
    once++;
    return { ok: false, reason: 'root_untrusted', ms: 1 };
  });
  t.is(once, 1, 'nothing after a refused build');
  t.false(notBuilt.ok);
});

test('warm-up passes › over real files the view holds exactly the allowed notes', async (t) => {
  const w = worlds.world({ allow: ['projects/**'], deny: ['**/private/**'] });
  writeNote(w.root, 'projects/a.md', '# A\n\nlantern\n');
  writeNote(w.root, 'projects/b.md', '# B\n\nlantern\n');
  writeNote(w.root, 'projects/private/c.md', '# C\n\nlantern\n');
  writeNote(w.root, 'other/d.md', '# D\n\nlantern\n');
  const bridge = createBridge({ log: () => undefined });
  const outcome = await warmUpView((settle) => bridge.warm!(w.caller, settle));
  t.true(outcome.ok);
  t.is(outcome.ok ? outcome.notes : -1, 2);
  const refused = await warmUpView((settle) => bridge.warm!({ ...w.caller, cron: true }, settle));
  t.deepEqual(refused.ok ? undefined : refused.reason, 'cron_refused');
});
