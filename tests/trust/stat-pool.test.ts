/**
 * The stat pool (src/trust/warm/stat-pool.ts, native/stat-worker.ts): a worker thread performs part of a warm scan's
 * per-note statx calls on the main thread's descriptors. Scans with the pool must return exactly what scans without
 * it return, through every kind of change; the worker's answers must equal the main thread's own raw stat (or its
 * errno); no descriptor may leak; and a process that started the pool must still exit normally.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import test, { type ExecutionContext } from 'ava';
import { NativeError, RAW_STAT_WORDS } from '../../native/types.js';
import { openTrustedDir } from '../../src/trust/path.js';
import { scanTree } from '../../src/trust/scan.js';
import { nextPause, statPool } from '../../src/trust/warm/stat-pool.js';
import { NOT_TAKEN, TAKEN } from '../../src/trust/warm/stat-thread.js';
import type { NoteFilter, ScanLimits, ScanResult } from '../../src/trust/types.js';
import {
  addAclEntry,
  countingNative,
  makeTempDir,
  mkdirs,
  openDescriptorCount,
  removeTree,
  scanTwoWays,
  writeNote,
} from '../helpers/fixtures.js';
import { ALLOW_ALL, Learning, limits, realNative } from './support.js';

const linux = process.platform === 'linux';
const linuxTest = linux ? test.serial : test.serial.skip;
const base = makeTempDir('mb-pool-');
test.after.always(() => removeTree(base));
const native = realNative();
const pool = statPool();
// Every scan of this process may use the pool, whatever the environment says.
pool.configure({ minCandidates: 0, useEnvironment: false, adaptive: false });

function scan(root: string, known: Learning, filter: NoteFilter = ALLOW_ALL, lim: ScanLimits = limits()): ScanResult {
  const fd = openTrustedDir(root, 'root', native);
  try {
    return known.learn(scanTree(fd, filter, lim, known, native, { view: known.memo, statThread: pool }));
  } finally {
    native.close(fd);
  }
}

/** Everything a scan returns, in a comparable shape (stat fields as strings). */
function shape(r: ScanResult): unknown {
  return {
    notes: r.notes.map((n) => ({
      id: n.id,
      key: n.key,
      text: n.text,
      stat: Object.fromEntries(Object.entries(n.stat).map(([k, v]) => [k, String(v)])),
    })),
    truncated: r.truncated,
    rawEntries: r.rawEntries,
    skipped: r.skipped,
  };
}

/** A tree of `dirs` directories (two levels) with `perDir` notes each, a few notes in the root and one non-note. */
function makeTree(name: string, dirs: number, perDir: number): string {
  const root = mkdirs(base, name);
  for (let d = 0; d < dirs; d++) {
    for (let i = 0; i < perDir; i++) {
      const dir = d % 3 === 0 ? `d${d}` : `d${d - (d % 3)}/s${d}`;
      writeNote(root, `${dir}/n${String(i).padStart(3, '0')}.md`, `note ${d} ${i}`);
    }
  }
  for (const id of ['a.md', 'b.md', 'z.md']) writeNote(root, id, `root ${id}`);
  writeNote(root, 'd0/readme.txt', 'not a note');
  return root;
}

/** Starts the pool with one scan of `root` and waits for the worker (it starts asynchronously). */
async function started(root: string): Promise<boolean> {
  pool.configure({ paused: false });
  scan(root, new Learning());
  return pool.whenReady();
}

/** One scan with the pool and one without, each with its own memo and known notes; both results. */
function both(root: string, withPool: Learning, without: Learning, lim?: ScanLimits): [ScanResult, ScanResult] {
  pool.configure({ paused: false });
  const a = scan(root, withPool, ALLOW_ALL, lim);
  pool.configure({ paused: true });
  const b = scan(root, without, ALLOW_ALL, lim);
  pool.configure({ paused: false });
  return [a, b];
}

test('stat pool › scans skip the pool for 1, 2, 4 … 32 scans while the worker answers under an eighth of the entries', (t) => {
  t.is(nextPause(1000, 0, 0), 1);
  t.is(nextPause(1000, 124, 1), 2);
  t.is(nextPause(1000, 0, 16), 32);
  t.is(nextPause(1000, 0, 32), 32);
  t.is(nextPause(1000, 125, 8), 0, 'an eighth ends the pause');
  t.is(nextPause(1000, 600, 32), 0);
  t.is(nextPause(100, 0, 4), 4, 'too few entries to judge');
  t.is(nextPause(100, 0, 0), 0);
});

linuxTest('stat pool › the worker starts after a scan and reports ready', async (t) => {
  const root = makeTree('start', 6, 20);
  t.true(await started(root));
  t.is(pool.status, 'starting');
});

linuxTest(
  'stat pool › the worker answers with the same raw words as the main thread, and the errno of a missing name',
  async (t) => {
    const root = makeTree('words', 3, 40);
    t.true(await started(root));
    const dir = path.join(root, 'd0');
    const names = fs.readdirSync(dir).sort();
    names.push('gone-1.md', 'gone-2.md');
    const entries = names.map((n) => ({ cname: Buffer.from(`${n}\0`), note: true }));
    // The startup scan's last job may still be in the worker's hands: let it finish, so that the count below is ours.
    t.true(await until(() => !pool.workerHolding, 120_000), 'the worker let go of the startup scan');
    const fd = openTrustedDir(dir, 'root', native);
    try {
      t.true(pool.beginScan());
      const before = pool.workerStatted;
      const job = pool.publish(fd, { entries, arena: null }, () => true);
      t.true(job >= 0);
      // Leave every entry to the worker before the main thread asks for any.
      // The worker runs at nice 19: on a crowded machine it may wait a long time for a processor.
      t.true(
        await until(() => pool.workerStatted - before >= entries.length && !pool.workerHolding, 120_000),
        `worker statted ${pool.workerStatted - before} of ${entries.length} (ready ${pool.ready}, holding ${pool.workerHolding}, sleeps ${pool.workerSleeps}, wakes ${pool.workerWakes})`,
      );
      const got = new Uint32Array(RAW_STAT_WORDS);
      const own = new Uint32Array(RAW_STAT_WORDS);
      for (let i = 0; i < entries.length; i++) {
        if (names[i]!.startsWith('gone-')) {
          const err = t.throws(() => pool.take(job, i, got), { instanceOf: NativeError });
          t.is(err?.code, 'ENOENT', 'ENOENT from the worker');
          continue;
        }
        t.is(pool.take(job, i, got), TAKEN);
        native.statRawAt(fd, entries[i]!.cname, own);
        t.deepEqual([...got], [...own], names[i]);
      }
      pool.retire(job);
    } finally {
      pool.endScan();
      native.close(fd);
    }
  },
);

linuxTest('stat pool › the main thread stats an entry itself when it claims it first', async (t) => {
  const root = makeTree('claim', 3, 5);
  t.true(await started(root));
  const dir = path.join(root, 'd0');
  const entries = fs
    .readdirSync(dir)
    .sort()
    .map((n) => ({ cname: Buffer.from(`${n}\0`), note: true }));
  const fd = openTrustedDir(dir, 'root', native);
  try {
    t.true(pool.beginScan());
    const job = pool.publish(fd, { entries, arena: null }, (e) => e !== entries[2]);
    const out = new Uint32Array(RAW_STAT_WORDS);
    // Entry 2 is not in the job: the scan must stat it itself, whatever the worker does.
    for (let i = 0; i < entries.length; i++) {
      const taken = pool.take(job, i, out);
      if (i === 2) t.is(taken, NOT_TAKEN);
      else t.true(taken === NOT_TAKEN || taken === 0);
    }
    pool.retire(job);
  } finally {
    pool.endScan();
    native.close(fd);
  }
});

linuxTest(
  'stat pool › scans with and without the pool return the same notes, keys, skips and flags through changes',
  async (t) => {
    const root = makeTree('same', 12, 90);
    t.true(await started(root));
    const withPool = new Learning();
    const without = new Learning();
    const rounds: [string, () => void][] = [
      ['first', () => undefined],
      ['warm', () => undefined],
      ['chmod g+w', () => fs.chmodSync(path.join(root, 'd0/n005.md'), 0o620)],
      [
        'replaced file',
        () => {
          const file = path.join(root, 'd3/s4/n010.md');
          fs.writeFileSync(`${file}.tmp`, 'replacement text');
          fs.renameSync(`${file}.tmp`, file);
        },
      ],
      ['deleted note', () => fs.unlinkSync(path.join(root, 'd6/n020.md'))],
      ['new note', () => writeNote(root, 'd6/s7/new.md', 'a new note')],
      ['ACL write grant', () => addAclEntry(path.join(root, 'd9/n001.md'), 'user', 4242, 6)],
      [
        'note turned into a symlink',
        () => {
          const file = path.join(root, 'd9/s10/n030.md');
          fs.unlinkSync(file);
          fs.symlinkSync('n031.md', file);
        },
      ],
      ['chmod back', () => fs.chmodSync(path.join(root, 'd0/n005.md'), 0o600)],
      ['warm again', () => undefined],
    ];
    for (const [label, change] of rounds) {
      change();
      const [a, b] = both(root, withPool, without);
      t.deepEqual(shape(a), shape(b), label);
    }
    // Budget stops in the middle of a directory: the job is retired with entries nobody claimed.
    for (const maxEntries of [250, 501, 1000]) {
      const [a, b] = both(root, withPool, without, limits({ maxEntries }));
      t.true(a.truncated);
      t.deepEqual(shape(a), shape(b), `maxEntries ${maxEntries}`);
    }
    // The worker must actually have answered some stats (repeat warm rounds until it has, on a busy machine).
    const before = pool.workerStatted;
    for (let i = 0; i < 200 && pool.workerStatted === before; i++) {
      const [a, b] = both(root, withPool, without);
      t.deepEqual(shape(a), shape(b), `warm round ${i}`);
    }
    t.true(pool.workerStatted > before, 'the worker statted entries of these scans');
    t.is(withPool.keys.size, without.keys.size);
    t.is(withPool.keys.get('d0/n005.md'), without.keys.get('d0/n005.md'));
  },
);

linuxTest('stat pool › a note removed between listing and stat gives the same missing skip', async (t) => {
  const root = makeTree('removed', 3, 60);
  t.true(await started(root));
  const results: ScanResult[] = [];
  for (const paused of [false, true]) {
    const victim = path.join(root, 'd0/n050.md');
    writeNote(root, 'd0/n050.md', 'short-lived');
    // The filter is asked about d0's notes after d0 was listed and before any of them is statted: it removes
    // one of them there (a fresh filter object each scan, so the listing keeps no earlier answer).
    const filter: NoteFilter = {
      allowsNote: (id) => {
        if (id === 'd0/n000.md' && fs.existsSync(victim)) fs.unlinkSync(victim);
        return true;
      },
      mayEnter: () => true,
    };
    pool.configure({ paused });
    results.push(scan(root, new Learning(), filter));
  }
  pool.configure({ paused: false });
  t.is(results[0]!.skipped.missing, 1);
  t.deepEqual(shape(results[0]!), shape(results[1]!));
});

linuxTest('stat pool › many scans with the pool leave no descriptor open', async (t) => {
  const root = makeTree('fds', 9, 40);
  t.true(await started(root));
  const known = new Learning();
  scan(root, known);
  const before = openDescriptorCount();
  const statted = pool.workerStatted;
  for (let i = 0; i < 60; i++) scan(root, known, ALLOW_ALL, i % 5 === 4 ? limits({ maxEntries: 100 }) : limits());
  t.is(openDescriptorCount(), before);
  t.true(pool.workerStatted >= statted);
});

/** Polls `done` every few milliseconds until it holds (the test waits for the worker; the code under test never does). */
async function until(done: () => boolean, limitMs = 120_000): Promise<boolean> {
  const end = Date.now() + limitMs;
  while (!done() && Date.now() < end) await new Promise((r) => setTimeout(r, 2));
  return done();
}

/**
 * Descriptors of this process right now, as the paths they name (no settling of the pool's deferred ones; the
 * descriptor that lists /proc/self/fd is closed before the links are read, so it is not among them).
 */
function openPaths(): string[] {
  const out: string[] = [];
  for (const f of fs.readdirSync('/proc/self/fd')) {
    try {
      out.push(fs.readlinkSync(`/proc/self/fd/${f}`));
    } catch {
      // The descriptor that listed the directory is gone already.
    }
  }
  return out;
}

/** The note entries of directory `dir`, in name order, as `publish` takes them. */
function entriesOf(dir: string): { cname: Buffer; note: boolean }[] {
  return fs
    .readdirSync(dir)
    .filter((n) => n.endsWith('.md'))
    .sort()
    .map((n) => ({ cname: Buffer.from(`${n}\0`), note: true }));
}

/**
 * Holds the worker in the middle of a claim (the test seam `holdWorker`: what a worker descheduled by a busy
 * machine looks like) on a job of `dir`; returns once the job is retired and its scan ended, with the worker still
 * held. Every entry is the main thread's to stat (`take` never waits).
 */
async function heldInJob(t: ExecutionContext, dir: string): Promise<void> {
  const entries = entriesOf(dir);
  // Out of every earlier job first (a worker descheduled in an earlier scan may still be inside one of its jobs),
  // so that the job the worker holds below is this one.
  t.is(pool.settleDeferred(120_000), 0);
  t.true(await until(() => !pool.workerHolding));
  const fd = openTrustedDir(dir, 'root', native);
  pool.holdWorker(true);
  try {
    t.true(pool.beginScan());
    const job = pool.publish(fd, { entries, arena: null }, () => true);
    t.true(job >= 0);
    t.true(await until(() => pool.workerHolding), 'the worker claimed an entry and stopped');
    const own = pool.counts.ownStats;
    const out = new Uint32Array(RAW_STAT_WORDS);
    for (let i = 0; i < entries.length; i++) t.is(pool.take(job, i, out), NOT_TAKEN, `entry ${i} is the scan's`);
    t.is(pool.counts.ownStats - own, 1, 'one entry was found held by the worker, and statted by the main thread');
    pool.retire(job);
  } finally {
    pool.endScan();
    native.close(fd);
  }
}

linuxTest(
  'stat pool › a worker stopped in the middle of a claim never holds up the main thread, and its descriptor closes once it lets go',
  async (t) => {
    const root = makeTree('held', 9, 40);
    try {
      t.true(await started(root));
      const before = openDescriptorCount();
      const dir = fs.realpathSync(path.join(root, 'd0'));
      await heldInJob(t, dir);
      // The scan's own descriptor is closed; the pool's duplicate of it stays open while the worker may use it.
      t.is(pool.deferredDescriptors, 1);
      t.is(openPaths().length, before + 1);
      t.true(openPaths().includes(dir), 'the deferred descriptor names the directory of the held job');
      // Whole scans with the worker still stopped: they end (the main thread never waits for it), return exactly
      // what single-threaded scans return with the same calls and names (scanTwoWays), the main thread makes every
      // stat (the worker answers none), and no other descriptor is deferred or left open.
      const statted = pool.workerStatted;
      const own = pool.counts.ownStats;
      const deferrals = pool.counts.deferredCloses;
      for (let round = 0; round < 3; round++) {
        const counting = countingNative(native);
        const fd = openTrustedDir(root, 'root', native);
        try {
          const r = scanTwoWays(fd, ALLOW_ALL, limits(), new Learning(), counting.native);
          t.is(r.notes.length, 363);
          // scanTwoWays holds the threaded scan to these same calls; the worker answered none (below), so the main
          // thread made all of them.
          t.is(counting.calls.statRawAt, 363, 'every candidate note statted once');
        } finally {
          native.close(fd);
        }
      }
      t.is(pool.workerStatted, statted, 'the held worker answered nothing');
      t.is(pool.counts.ownStats, own, 'no entry of these scans was ever the worker’s');
      t.is(pool.counts.deferredCloses, deferrals, 'no descriptor of these scans was deferred');
      t.is(pool.deferredDescriptors, 1);
      t.is(openPaths().length, before + 1);
      // Let go: the worker finishes its stat on the still-open duplicate, leaves the job, and the duplicate is closed.
      pool.holdWorker(false);
      t.is(pool.settleDeferred(20_000), 0);
      t.false(openPaths().includes(dir));
      t.is(openDescriptorCount(), before);
      // And it takes part again.
      const again = pool.workerStatted;
      t.true(
        await until(() => {
          scan(root, new Learning());
          return pool.workerStatted > again;
        }),
      );
    } finally {
      pool.holdWorker(false);
    }
  },
);

linuxTest('stat pool › with nothing to claim the worker sleeps, and the next job wakes it', async (t) => {
  const root = makeTree('sleep', 3, 30);
  t.true(await started(root));
  const dir = path.join(root, 'd0');
  const entries = entriesOf(dir);
  const fd = openTrustedDir(dir, 'root', native);
  try {
    const sleeps = pool.workerSleeps;
    t.true(pool.beginScan());
    // A scan that publishes nothing (a cold scan reading notes, say): the worker stops spinning and sleeps.
    t.true(await until(() => pool.workerSleeps > sleeps), 'the idle worker went to sleep');
    const wakes = pool.workerWakes;
    const statted = pool.workerStatted;
    const job = pool.publish(fd, { entries, arena: null }, () => true);
    t.true(job >= 0);
    // Nothing taken by the main thread: the woken worker answers every entry.
    t.true(await until(() => pool.workerStatted - statted === entries.length));
    t.true(pool.workerWakes > wakes, 'the publish woke the sleeping worker');
    const out = new Uint32Array(RAW_STAT_WORDS);
    for (let i = 0; i < entries.length; i++) t.is(pool.take(job, i, out), TAKEN);
    pool.retire(job);
  } finally {
    pool.endScan();
    native.close(fd);
  }
  t.is(pool.settleDeferred(20_000), 0);
});

/** Runs `code` (an ES module) in a child node process from this directory; its exit status and output. */
function child(code: string, env: NodeJS.ProcessEnv = {}): { status: number | null; stdout: string; stderr: string } {
  const script = path.join(base, `child-${Math.random().toString(36).slice(2)}.mjs`);
  fs.writeFileSync(script, code);
  const r = spawnSync(process.execPath, [script], {
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, ...env },
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const here = path.dirname(fileURLToPath(import.meta.url));
const moduleUrl = (rel: string): string => new URL(`file://${path.resolve(here, rel)}`).href;

/** A child script that scans `root` until the worker answered some stats, prints the pool state and just ends. */
function scanningChild(root: string): string {
  return `
import { getNative } from ${JSON.stringify(moduleUrl('../../native/index.js'))};
import { openTrustedDir } from ${JSON.stringify(moduleUrl('../../src/trust/path.js'))};
import { scanTree } from ${JSON.stringify(moduleUrl('../../src/trust/scan.js'))};
import { CallerView } from ${JSON.stringify(moduleUrl('../../src/trust/view.js'))};
import { statPool } from ${JSON.stringify(moduleUrl('../../src/trust/warm/stat-pool.js'))};
const native = getNative();
const pool = statPool();
pool.configure({ minCandidates: 0 });
const known = { has: () => false };
const memo = new CallerView();
const lim = { names: 'portable', maxEntries: 5000, maxDepth: 8, maxTotalBytes: 1 << 24, maxFileBytes: 1 << 18, racyMarginMs: 0 };
const once = () => { const fd = openTrustedDir(${JSON.stringify(root)}, 'root', native); try { return scanTree(fd, { allowsNote: () => true, mayEnter: () => true }, lim, known, native, { view: memo, statThread: pool }); } finally { native.close(fd); } };
once();
const afterFirst = pool.status;
const ready = await pool.whenReady();
for (let i = 0; i < 300 && pool.workerStatted === 0 && ready; i++) once();
console.log(JSON.stringify({ afterFirst, status: pool.status, ready, statted: pool.workerStatted > 0, notes: once().notes.length }));
`;
}

linuxTest('stat pool › a process that started the pool exits normally when its work is done', (t) => {
  const root = makeTree('exit', 6, 40);
  const r = child(scanningChild(root), { MEMORY_BRIDGE_STAT_THREADS: '1' });
  t.is(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout.trim()) as {
    afterFirst: string;
    status: string;
    ready: boolean;
    statted: boolean;
    notes: number;
  };
  // The scan that asks for the thread only schedules it: the call it belongs to never pays for starting it.
  t.deepEqual(out, { afterFirst: 'scheduled', status: 'starting', ready: true, statted: true, notes: 243 });
  t.false(r.stderr.includes('stat thread off'), 'no failure reported at exit');
});

linuxTest(
  'stat pool › when the worker dies the pool turns off with one reason code and scans return the same results',
  (t) => {
    const root = makeTree('death', 6, 40);
    const code = `${scanningChild(root)}
const shape = (r) => JSON.stringify([r.notes.map((n) => [n.id, n.key]), r.truncated, r.skipped]);
const reference = shape(once());
// The real failure path: the thread ends while scans go on (a private field, reached from plain JavaScript).
const worker = pool.worker;
const exited = new Promise((resolve) => worker.once('exit', resolve));
void worker.terminate();
const during = shape(once());
await exited;
await new Promise((resolve) => setTimeout(resolve, 20));
const statted = pool.workerStatted;
const after = [shape(once()), shape(once())];
console.log(JSON.stringify({ status: pool.status, same: during === reference && after.every((a) => a === reference), idle: pool.workerStatted === statted }));
`;
    const r = child(code, { MEMORY_BRIDGE_STAT_THREADS: '1' });
    t.is(r.status, 0, r.stderr);
    const lines = r.stdout.trim().split('\n');
    t.deepEqual(JSON.parse(lines[0]!), {
      afterFirst: 'scheduled',
      status: 'starting',
      ready: true,
      statted: true,
      notes: 243,
    });
    t.deepEqual(JSON.parse(lines[1]!), { status: 'failed', same: true, idle: true });
    // Exactly one line, without a path, whether the thread ended between scans or in the middle of a claim.
    const logged = r.stderr.trim().split('\n');
    t.is(logged.length, 1, r.stderr);
    t.regex(logged[0]!, /^memory-bridge: stat thread off \(stat_worker_exit\)$/);
  },
);

linuxTest('stat pool › a descriptor deferred for a stopped worker is closed when the pool turns off', (t) => {
  const root = makeTree('off', 6, 40);
  const dir = fs.realpathSync(path.join(root, 'd0'));
  const code = `${scanningChild(root)}
const { readdirSync, readlinkSync } = await import('node:fs');
const dirOpen = () => readdirSync('/proc/self/fd').some((f) => { try { return readlinkSync('/proc/self/fd/' + f) === ${JSON.stringify(dir)}; } catch { return false; } });
const names = readdirSync(${JSON.stringify(dir)}).filter((n) => n.endsWith('.md')).sort();
const entries = names.map((n) => ({ cname: Buffer.from(n + '\\0'), note: true }));
// Out of every earlier job first (see heldInJob in the parent), so that the job held below is this one.
pool.settleDeferred(120000);
for (let i = 0; i < 60000 && pool.workerHolding; i++) await new Promise((r) => setTimeout(r, 2));
const fd = openTrustedDir(${JSON.stringify(dir)}, 'root', native);
pool.holdWorker(true);
pool.beginScan();
const job = pool.publish(fd, { entries, arena: null }, () => true);
for (let i = 0; i < 5000 && !pool.workerHolding; i++) await new Promise((r) => setTimeout(r, 2));
const holding = pool.workerHolding;
const out = new Uint32Array(16);
for (let i = 0; i < entries.length; i++) pool.take(job, i, out);
pool.retire(job);
pool.endScan();
native.close(fd);
const afterScan = { deferred: pool.deferredDescriptors, dirOpen: dirOpen() };
// The pool turns off (the thread ends) while the worker still holds the job.
const worker = pool.worker;
const exited = new Promise((resolve) => worker.once('exit', resolve));
void worker.terminate();
await exited;
await new Promise((resolve) => setTimeout(resolve, 20));
console.log(JSON.stringify({ holding, afterScan, afterExit: { deferred: pool.deferredDescriptors, dirOpen: dirOpen() }, status: pool.status }));
`;
  const r = child(code, { MEMORY_BRIDGE_STAT_THREADS: '1' });
  t.is(r.status, 0, r.stderr);
  const lines = r.stdout.trim().split('\n');
  t.deepEqual(JSON.parse(lines[1]!), {
    holding: true,
    // The scan's own descriptor of the directory is closed; the pool's duplicate stays open while the worker holds it.
    afterScan: { deferred: 1, dirOpen: true },
    afterExit: { deferred: 0, dirOpen: false },
    status: 'failed',
  });
  t.regex(r.stderr.trim(), /^memory-bridge: stat thread off \(stat_worker_exit\)$/);
});

linuxTest('stat pool › MEMORY_BRIDGE_STAT_THREADS=0 keeps scans single-threaded', (t) => {
  const root = makeTree('env', 3, 20);
  const r = child(scanningChild(root), { MEMORY_BRIDGE_STAT_THREADS: '0' });
  t.is(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout.trim()) as {
    afterFirst: string;
    status: string;
    ready: boolean;
    statted: boolean;
    notes: number;
  };
  t.deepEqual(out, { afterFirst: 'disabled', status: 'disabled', ready: false, statted: false, notes: 63 });
});
