/**
 * Issue 22 point 6: inotify watches are a per-user budget (max_user_watches), so a bridge counts what the user's
 * other processes hold and leaves the reserve however many bridges run. Real inotify instances in real processes:
 * a helper that holds watches, and bridge processes run as one fresh uid (setpriv), so that only this test's
 * processes count for that user.
 */
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { RACY_MARGIN_MS } from '../../src/trust/view.js';
import { userWatchUsage, watchAllowance } from '../../src/trust/warm/watch-budget.js';
import { isRoot, makeHome, makeTempDir, removeTree, writeNote } from '../helpers/fixtures.js';

const DIST = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const linux = process.platform === 'linux';
const rootTest = isRoot && linux ? test.serial : test.skip;
const trees: string[] = [];
test.after.always(() => {
  for (const dir of trees) removeTree(dir);
});

/** A uid no account uses, fresh for this run: only this test's processes run as it. */
const UID = 40_000 + (process.pid % 20_000);

/**
 * Waits until the trees made so far are older than the racy margin: a listing of a directory changed within it is
 * not kept for reuse, so a bridge adds no watch over it yet (on a quiet machine a bridge started at once would
 * settle at 0 watches before the margin has passed).
 */
async function pastRacyMargin(): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, RACY_MARGIN_MS + 250));
}

/** A world-readable tree of `n` root-owned notes (trusted for any user), and a home whose policy allows them. */
function world(n: number): { root: string; home: string } {
  const base = makeTempDir('mb-watch-budget-');
  trees.push(base);
  fs.chmodSync(base, 0o755);
  const root = path.join(base, 'notes');
  fs.mkdirSync(root, { mode: 0o755 });
  for (let i = 0; i < n; i++) writeNote(root, `n${i}.md`, `# Note ${i}\n\nlantern ${i}\n`, 0o644);
  const { home, policyPath } = makeHome(base, { version: 1, root, allow: ['**'] });
  for (const dir of [home, path.join(home, 'plugin-data'), path.dirname(policyPath)]) fs.chmodSync(dir, 0o755);
  fs.chmodSync(policyPath, 0o644);
  return { root, home };
}

/** A node process (as UID when root) running `script`; it prints one JSON line when ready and ends with stdin. */
function proc(script: string, args: string[]): { child: ChildProcessWithoutNullStreams; ready: Promise<unknown> } {
  const node = [process.execPath, '--input-type=module', '-e', script, DIST, ...args];
  const child = isRoot
    ? spawn('setpriv', [`--reuid=${UID}`, `--regid=${UID}`, '--clear-groups', ...node])
    : spawn(node[0]!, node.slice(1));
  let out = '';
  let err = '';
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const ready = new Promise<unknown>((resolve, reject) => {
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      const nl = out.indexOf('\n');
      if (nl !== -1) resolve(JSON.parse(out.slice(0, nl)));
    });
    child.on('close', (code) => reject(new Error(`exited ${code}: ${err}`)));
  });
  return { child, ready };
}

/**
 * Ends `children` (their stdin closes) and waits until each has exited, so that a test's watches are given back
 * before the next test counts the same uid's watches.
 */
async function stopAll(children: ChildProcessWithoutNullStreams[]): Promise<void> {
  await Promise.all(
    children.map(
      (c) =>
        new Promise<void>((resolve) => {
          if (c.exitCode !== null || c.signalCode !== null) return resolve();
          c.once('close', () => resolve());
          c.stdin.end();
        }),
    ),
  );
}

/** Holds one inotify watch on each note of `root` (argv: dist, root). */
const HOLDER = `
const fs = await import('node:fs');
const [dist, root] = process.argv.slice(1);
const native = (await import(dist + '/native/index.js')).getNative();
const ifd = native.watchOpen();
const dfd = fs.openSync(root, 'r');
let held = 0;
for (const name of fs.readdirSync(root)) if (native.watchAdd(ifd, dfd, Buffer.from(name + '\\0'), 0x4) > 0) held++;
process.stdout.write(JSON.stringify({ held }) + '\\n');
process.stdin.resume();
process.stdin.on('end', () => process.exit(0));
`;

/** A bridge over `home` with the given user limit and reserve, warm-searched until it adds no more watches. */
const BRIDGE = `
const [dist, home, limit, reserve] = process.argv.slice(1);
const watch = await import(dist + '/src/trust/warm/watch.js');
watch.setUserWatchLimitsForTests({ limit: Number(limit), reserve: Number(reserve), ttlMs: 100 });
const { setTimeout: sleep } = await import('node:timers/promises');
const bridge = (await import(dist + '/src/tools/bridge.js')).createBridge({ log: () => undefined });
const caller = { home, cron: false, subagent: false };
let ok = true;
// Watches are added from the second call on (once a listing is reused), each call taking its share of what is
// free at its count: sixteen calls at least, then on until the count has stood still for five calls (at most 80
// calls), so a slow, loaded machine settles as a quiet one does.
for (let i = 0, still = 0, last = -1; i < 80 && (i < 16 || still < 5); i++) {
  ok &&= bridge.search({ query: 'lantern' }, caller).ok;
  await sleep(120);
  const now = watch.watchesHeld();
  still = now === last ? still + 1 : 0;
  last = now;
}
process.stdout.write(JSON.stringify({ held: watch.watchesHeld(), ok, enospc: watch.watchesRefusedForSpace() }) + '\\n');
process.stdin.resume();
process.stdin.on('end', () => process.exit(0));
`;

test('watch budget › the allowance leaves the reserve and what others hold, sharing half of what is free', (t) => {
  t.is(watchAllowance(1000, 100, 300, 0), 300);
  t.is(watchAllowance(1000, 100, 300, 0, 2), 100, 'half of the free 600, shared with two other holders');
  t.is(watchAllowance(1000, 100, 300, 599), 600);
  t.is(watchAllowance(1000, 100, 300, 600), 600);
  t.is(watchAllowance(1000, 100, 950, 40), 40, 'never below what is held');
});

(linux ? test.serial : test.skip)(
  'watch budget › a helper process’s real watches are counted from /proc',
  async (t) => {
    const { root, home } = world(150);
    const uid = isRoot ? UID : process.getuid!();
    const before = userWatchUsage(uid);
    const h = proc(HOLDER, [root]);
    try {
      t.deepEqual(await h.ready, { held: 150 });
      const during = userWatchUsage(uid);
      t.true(during.complete);
      // As root the uid is this test's alone: exactly the helper's watches. Otherwise other processes of the user
      if (isRoot) t.like(during, { watches: 150, instances: 1, holders: 1 });
      // may hold watches too, and may give some back meanwhile: the helper's 150 are a floor of the count.
      else t.true(during.watches >= 150, `${before.watches} then ${during.watches}`);
      // doctor, run as the same user, shows the count.
      const cli = path.join(DIST, 'src', 'cli', 'main.js');
      const doctor = isRoot
        ? spawnSync(
            'setpriv',
            [`--reuid=${UID}`, `--regid=${UID}`, '--clear-groups', process.execPath, cli, 'doctor', '--home', home],
            { encoding: 'utf8' },
          )
        : spawnSync(process.execPath, [cli, 'doctor', '--home', home], { encoding: 'utf8' });
      const m =
        /this user's processes hold (\d+) of the \d+ watches of max_user_watches in (\d+) inotify instances/.exec(
          doctor.stdout,
        );
      t.not(m, null, doctor.stdout);
      if (isRoot) t.deepEqual([m![1], m![2]], ['150', '1']);
      else t.true(Number(m![1]) >= 100);
    } finally {
      await stopAll([h.child]);
    }
  },
);

rootTest('watch budget › two bridges and a helper of one user hold at most the limit less the reserve', async (t) => {
  const limit = 1000;
  const reserve = 100;
  const helped = world(300);
  const { home } = world(500);
  await pastRacyMargin();
  const running: ChildProcessWithoutNullStreams[] = [];
  try {
    const h = proc(HOLDER, [helped.root]);
    running.push(h.child);
    t.deepEqual(await h.ready, { held: 300 });
    const first = proc(BRIDGE, [home, String(limit), String(reserve)]);
    running.push(first.child);
    const a = (await first.ready) as { held: number; ok: boolean };
    const second = proc(BRIDGE, [home, String(limit), String(reserve)]);
    running.push(second.child);
    const b = (await second.ready) as { held: number; ok: boolean; enospc: number };
    t.true(a.ok && b.ok);
    // The first bridge watches all of its 500 notes (300 + 500 ≤ 900); the second at most what is left of 900,
    // approaching it by shares (100 free, shared with two holders: 17, then 14 of the 83 left, …).
    t.is(a.held, 500);
    t.true(b.held >= 40 && b.held <= limit - reserve - 300 - 500, String(b.held));
    t.is(b.enospc, 0);
    t.log(`held: helper 300, first bridge ${a.held}, second bridge ${b.held}`);
    const total = userWatchUsage(UID).watches;
    t.true(total <= limit - reserve, `${total}: the reserve is left`);
  } finally {
    await stopAll(running);
  }
});

rootTest('watch budget › two bridges started at the same moment beside a helper leave the reserve', async (t) => {
  const limit = 1000;
  const reserve = 100;
  const helped = world(300);
  const one = world(500);
  const two = world(500);
  await pastRacyMargin();
  const running: ChildProcessWithoutNullStreams[] = [];
  try {
    const h = proc(HOLDER, [helped.root]);
    running.push(h.child);
    await h.ready;
    const both = [one, two].map((w) => proc(BRIDGE, [w.home, String(limit), String(reserve)]));
    for (const b of both) running.push(b.child);
    const held = (await Promise.all(both.map((b) => b.ready))) as { held: number; ok: boolean; enospc: number }[];
    t.log(`held: helper 300, bridges ${held.map((x) => x.held).join(' and ')}`);
    t.true(held.every((x) => x.ok && x.held > 0 && x.enospc === 0));
    const total = userWatchUsage(UID).watches;
    t.true(total <= limit - reserve, `${total}: the reserve is left`);
  } finally {
    await stopAll(running);
  }
});
