/**
 * Races (issue item 4): while a second process swaps a directory for a symlink to outside, a note for a hard link
 * to an outside file, a trusted note for an untrusted one, a note's mode and content, or the root itself for a
 * symlink, 10,000 in-process reads and searches (plus a few hundred over MCP) must return zero bytes from outside
 * the allowed, trusted set: no response ever carries a marker planted only in outside or untrusted content.
 * MB_SOAK=1 runs twenty times as many calls (see docs/DEVELOPMENT.md).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { getNative } from '../../native/index.js';
import type { Native } from '../../native/types.js';
import { parsePolicyBytes } from '../../src/policy/load.js';
import { readNoteById } from '../../src/trust/note.js';
import { readTrustedFile } from '../../src/trust/path.js';
import { scanTree } from '../../src/trust/scan.js';
import { scanLimitsOf } from '../../src/policy/scan-limits.js';
import { mkdirs, writeNote } from '../helpers/fixtures.js';
import { connectMcp } from './mcp-client.js';
import { ALL_MARKS, MARK, makeArena, planted, type Arena } from './support.js';

const SOAK = process.env.MB_SOAK === '1';
const CALLS = SOAK ? 200_000 : 10_000;
const SWAPPER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'swapper.js');
const SAFE = '# Safe\n\nlantern safe words only\n';

const arenas: Arena[] = [];
test.after.always(() => {
  for (const a of arenas) a.cleanup();
});

function arena(): Arena {
  const a = makeArena({ deny: ['private/**'] });
  arenas.push(a);
  writeNote(a.root, 'swap/inner.md', SAFE);
  writeNote(a.outside, 'inner.md', planted(MARK.outside));
  for (const id of ['hl.md', 'flip.md', 'cw.md', 'plain.md']) writeNote(a.root, id, SAFE);
  writeNote(a.root, 'private/denied.md', planted(MARK.denied));
  mkdirs(a.root, 'sub');
  return a;
}

/** Start the swapper and resolve once it has done one full round. */
function startSwapper(a: Arena, kinds: string[]): Promise<ChildProcess> {
  const cfg = { root: a.root, outside: a.outside, kinds, safe: SAFE, untrusted: planted(MARK.untrusted) };
  const child = spawn(process.execPath, [SWAPPER, JSON.stringify(cfg)], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`swapper exited early (${code})`)));
    child.stdout!.once('data', () => resolve(child));
  });
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.removeAllListeners('exit');
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

interface Tally {
  calls: number;
  ok: number;
  refused: number;
  leaks: string[];
}

function check(tally: Tally, text: string, what: string): void {
  tally.calls++;
  const lower = text.toLowerCase();
  for (const m of ALL_MARKS)
    if (lower.includes(m) && tally.leaks.length < 5) tally.leaks.push(`${what}: ${text.slice(0, 200)}`);
  if (text.startsWith('{"ok":true')) tally.ok++;
  else tally.refused++;
}

const READS = ['swap/inner.md', 'hl.md', 'flip.md', 'cw.md', 'plain.md', 'private/denied.md', 'sub/../hl.md'];
const QUERIES = ['lantern', MARK.outside, MARK.untrusted, `lantern ${MARK.untrusted} ${MARK.outside}`, 'safe'];

/** `calls` in-process calls: 2 reads for each search, cycling through the ids and queries. */
function hammer(a: Arena, calls: number, tally: Tally): void {
  for (let i = 0; i < calls; i++) {
    if (i % 3 === 2) {
      const q = QUERIES[i % QUERIES.length]!;
      check(tally, JSON.stringify(a.search(q, 10)), `search ${q}`);
    } else {
      const id = READS[i % READS.length]!;
      check(tally, JSON.stringify(a.read(id)), `read ${id}`);
    }
  }
}

test.serial(
  `races › ${CALLS} calls under directory, hard-link, trust-flip and chmod swaps return no outside or untrusted byte`,
  async (t) => {
    t.timeout(SOAK ? 3_600_000 : 240_000);
    const a = arena();
    const child = await startSwapper(a, ['dir', 'hardlink', 'flip', 'chmod']);
    const tally: Tally = { calls: 0, ok: 0, refused: 0, leaks: [] };
    try {
      // In slices, so the event loop can notice the child and the MCP session between them.
      const slice = 1000;
      for (let done = 0; done < CALLS; done += slice) {
        hammer(a, Math.min(slice, CALLS - done), tally);
        await new Promise((r) => setImmediate(r));
      }
      const s = await connectMcp(a.home);
      try {
        for (let i = 0; i < (SOAK ? 5000 : 300); i++) {
          const read = i % 2 === 0;
          const r = await s.call(
            read ? 'memory_bridge_read' : 'memory_bridge_search',
            read ? { id: READS[i % READS.length] } : { query: QUERIES[i % QUERIES.length], limit: 10 },
          );
          check(tally, r.text, `mcp ${i}`);
        }
      } finally {
        await s.close();
      }
    } finally {
      await stop(child);
    }
    t.deepEqual(tally.leaks, [], `leaks in ${tally.calls} calls`);
    t.true(tally.ok > 0, 'some calls succeeded while the swaps ran');
    t.true(tally.refused > 0, 'some calls were refused: the swaps were visible');
    t.log(`${tally.calls} calls: ${tally.ok} ok, ${tally.refused} refused`);
  },
);

test.serial(
  'races › calls while the root itself is swapped for a symlink to outside return no outside byte',
  async (t) => {
    t.timeout(SOAK ? 3_600_000 : 120_000);
    const a = arena();
    const child = await startSwapper(a, ['root']);
    const tally: Tally = { calls: 0, ok: 0, refused: 0, leaks: [] };
    try {
      const calls = SOAK ? 50_000 : 2_000;
      for (let done = 0; done < calls; done += 500) {
        hammer(a, 500, tally);
        await new Promise((r) => setImmediate(r));
      }
    } finally {
      await stop(child);
    }
    t.deepEqual(tally.leaks, []);
    t.true(tally.refused > 0);
    t.log(`${tally.calls} calls: ${tally.ok} ok, ${tally.refused} refused`);
  },
);

// ---------------------------------------------------------------------------------------------------------------
// Deterministic interleavings: a pass-through binding that performs a real filesystem change at one exact point
// of the check-then-read sequence (after open, after fstat, after the read). Every call still goes to the real
// binding; only the moment of the swap is chosen, so the narrow windows the swapper hits by chance are hit always.

type Point = 'afterOpen' | 'afterFstat' | 'afterRead';
const POINT_TEXT: Record<Point, string> = {
  afterOpen: 'after the open',
  afterFstat: 'after the fstat',
  afterRead: 'during the read',
};

/** Wrap the real binding so that `change()` runs once, at `point`, for the file named `name`. */
function interposed(real: Native, name: string, point: Point, change: () => void): Native {
  let armed = false;
  let done = false;
  let fdOfName = -1;
  const fire = (): void => {
    if (!done) {
      done = true;
      change();
    }
  };
  return {
    ...real,
    openFileAt(dirfd, n) {
      const fd = real.openFileAt(dirfd, n);
      if (n === name) {
        fdOfName = fd;
        armed = true;
        if (point === 'afterOpen') fire();
      }
      return fd;
    },
    fstat(fd) {
      const st = real.fstat(fd);
      if (armed && fd === fdOfName && point === 'afterFstat') fire();
      return st;
    },
    pread(fd, buf, off, len, pos) {
      const n = real.pread(fd, buf, off, len, pos);
      if (armed && fd === fdOfName && point === 'afterRead') fire();
      return n;
    },
    openRoot: () => real.openRoot(),
    openDirAt: (d, n) => real.openDirAt(d, n),
    close: (fd) => real.close(fd),
    statAt: (d, n) => real.statAt(d, n),
    readAcl: (fd) => real.readAcl(fd),
    listDir: (fd, m) => real.listDir(fd, m),
    flock: (fd, op) => real.flock(fd, op),
  };
}

const realNative = getNative() as Native;

/** The swaps, each applied to a fresh arena at one point: [name, file id, change]. */
function swaps(a: Arena): [string, string, () => void][] {
  return [
    [
      'an outside hard link swapped back out (link count drops to 1 under the open descriptor)',
      'hl.md',
      () => {
        writeNote(a.root, '.good', SAFE);
        fs.renameSync(path.join(a.root, '.good'), path.join(a.root, 'hl.md'));
      },
    ],
    [
      'a note made group-writable and written with untrusted text',
      'cw.md',
      () => {
        fs.chmodSync(path.join(a.root, 'cw.md'), 0o620);
        fs.writeFileSync(path.join(a.root, 'cw.md'), planted(MARK.untrusted));
      },
    ],
    [
      'a note that gains an outside link',
      'plain.md',
      () => fs.linkSync(path.join(a.root, 'plain.md'), path.join(a.outside, 'grab.md')),
    ],
  ];
}

/** Arena where hl.md is, at open time, a hard link to the outside secret. */
function raceArena(): Arena {
  const a = arena();
  fs.rmSync(path.join(a.root, 'hl.md'));
  fs.linkSync(path.join(a.outside, 'secret.md'), path.join(a.root, 'hl.md'));
  return a;
}

for (const point of ['afterOpen', 'afterFstat', 'afterRead'] as const) {
  test(`races › read refuses a note changed ${POINT_TEXT[point]} (deterministic interleaving)`, (t) => {
    for (let k = 0; k < 3; k++) {
      const a = raceArena();
      const [what, id, change] = swaps(a)[k]!;
      const policy = parsePolicyBytes(fs.readFileSync(a.policyPath));
      const native = interposed(realNative, id, point, change);
      const rootFd = fs.openSync(a.root, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
      let outcome: string;
      try {
        outcome = readNoteById(rootFd, id, policy, scanLimitsOf(policy), native);
      } catch (err) {
        outcome = `refused: ${String((err as Error).message)}`;
      } finally {
        fs.closeSync(rootFd);
      }
      t.true(outcome.startsWith('refused'), `${what}: ${outcome.slice(0, 80)}`);
      t.false(
        ALL_MARKS.some((m) => outcome.includes(m)),
        what,
      );
    }
  });

  test(`races › the scan skips a note changed ${POINT_TEXT[point]} (deterministic interleaving)`, (t) => {
    for (let k = 0; k < 3; k++) {
      const a = raceArena();
      const [what, id, change] = swaps(a)[k]!;
      // hl.md starts as an outside link, which the scan refuses before opening; start it trusted here instead.
      if (id === 'hl.md') {
        fs.rmSync(path.join(a.root, 'hl.md'));
        writeNote(a.root, 'hl.md', SAFE);
      }
      const policy = parsePolicyBytes(fs.readFileSync(a.policyPath));
      const swapIn =
        id === 'hl.md'
          ? () => {
              // Replace the trusted note by the outside link under the open descriptor's name, then swap it back.
              fs.linkSync(path.join(a.outside, 'secret.md'), path.join(a.root, '.tmp'));
              fs.renameSync(path.join(a.root, '.tmp'), path.join(a.root, 'hl.md'));
              change();
            }
          : change;
      const native = interposed(realNative, id, point, swapIn);
      const rootFd = fs.openSync(a.root, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
      try {
        const r = scanTree(rootFd, policy, scanLimitsOf(policy), { has: () => false }, native);
        const served = r.notes.find((n) => n.id === id);
        const text = JSON.stringify(r.notes.map((n) => n.text));
        t.false(
          ALL_MARKS.some((m) => text.includes(m)),
          what,
        );
        // A changed note is skipped for this call (the next call judges it afresh); its old text may not be served
        // as if nothing happened unless the change left it byte-identical and trusted.
        if (served !== undefined) t.is(served.text, SAFE, what);
        if (id === 'cw.md' || id === 'plain.md') t.is(served, undefined, `${what}: skipped`);
      } finally {
        fs.closeSync(rootFd);
      }
    }
  });
}

test('races › the policy file swapped for an outside hard link under the open descriptor is refused', (t) => {
  for (const point of ['afterOpen', 'afterFstat', 'afterRead'] as const) {
    const a = arena();
    const alt = path.join(a.outside, 'policy.json');
    fs.writeFileSync(alt, JSON.stringify({ version: 1, root: a.outside, allow: ['**'] }), { mode: 0o600 });
    const pdir = path.dirname(a.policyPath);
    // At open time policy.json is a hard link to the outside policy; right after, it is swapped back.
    const good = fs.readFileSync(a.policyPath);
    fs.rmSync(a.policyPath);
    fs.linkSync(alt, a.policyPath);
    const native = interposed(realNative, 'policy.json', point, () => {
      fs.writeFileSync(path.join(pdir, '.good'), good, { mode: 0o600 });
      fs.renameSync(path.join(pdir, '.good'), a.policyPath);
    });
    t.throws(() => readTrustedFile(a.policyPath, 65_536, native), undefined, point);
  }
});
