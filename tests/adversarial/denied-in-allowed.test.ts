/**
 * A file denied inside an allowed folder (allow `projects/**`, deny a name, a sub-folder, a suffix): never served,
 * never opened or statted by the scan, refused by read before any filesystem call, and whatever the denied file
 * is (a huge file, a FIFO, binary, foreign-owned, a symlink) the responses do not change.
 */
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { getNative } from '../../native/index.js';
import type { Native } from '../../native/types.js';
import { parsePolicyBytes } from '../../src/policy/load.js';
import { readNoteById } from '../../src/trust/note.js';
import { scanLimitsOf } from '../../src/policy/scan-limits.js';
import {
  FOREIGN_UID,
  countingNative,
  readyStatThread,
  scanTwoWays,
  isRoot,
  makeFifo,
  writeNote,
} from '../helpers/fixtures.js';
import { MARK, NOT_FOUND, assertClean, makeArena, planted, type Arena } from './support.js';

const native = getNative() as Native;
// Scans with a counting binding run with the stat thread and without (scanTwoWays), and must agree on both.
test.before(() => readyStatThread(native));
const arenas: Arena[] = [];
test.after.always(() => {
  for (const a of arenas) a.cleanup();
});

const DENY = ['projects/secret.md', 'projects/**/private/**', 'projects/**/*.secret.md', 'projects/archive'];
const DENIED_IDS = [
  'projects/secret.md',
  'projects/private/a.md',
  'projects/x/private/b.md',
  'projects/plan.secret.md',
  'projects/x/y.secret.md',
];

function arena(): Arena {
  const a = makeArena({ allow: ['projects/**'], deny: DENY });
  arenas.push(a);
  writeNote(a.root, 'projects/garden.md', '# Garden\n\nlantern garden\n');
  writeNote(a.root, 'projects/x/visit.md', '# Visit\n\nlantern visit\n');
  writeNote(a.root, 'projects/archive/old.md', '# Old\n\nlantern old\n'); // `projects/archive` denies only that id
  for (const id of DENIED_IDS) writeNote(a.root, id, planted(MARK.denied));
  return a;
}

function policyOf(a: Arena) {
  return parsePolicyBytes(fs.readFileSync(a.policyPath));
}

test('denied-in-allowed › read refuses each denied note exactly like a missing one, and serves its allowed neighbours', (t) => {
  const a = arena();
  for (const id of DENIED_IDS) t.is(JSON.stringify(a.read(id)), NOT_FOUND, id);
  for (const id of ['projects/garden.md', 'projects/x/visit.md', 'projects/archive/old.md']) t.true(a.read(id).ok, id);
  const r = a.search(`lantern ${MARK.denied}`, 10);
  assertClean(t, r, a);
  t.true(r.ok && 'results' in r && r.results.length === 3);
});

test('denied-in-allowed › the scan never opens, stats or lists a denied name', (t) => {
  const a = arena();
  const policy = policyOf(a);
  const counting = countingNative(native);
  const rootFd = fs.openSync(a.root, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
  try {
    const r = scanTwoWays(rootFd, policy, scanLimitsOf(policy), { has: () => false }, counting.native);
    t.deepEqual(r.notes.map((n) => n.id).sort(), [
      'projects/archive/old.md',
      'projects/garden.md',
      'projects/x/visit.md',
    ]);
  } finally {
    fs.closeSync(rootFd);
  }
  for (const touched of counting.touched) {
    t.false(/secret|private/.test(touched), touched);
  }
  t.true(counting.touched.includes('statAt:garden.md'));
});

test('denied-in-allowed › read of a denied id makes no filesystem call at all', (t) => {
  const a = arena();
  const policy = policyOf(a);
  const counting = countingNative(native);
  const rootFd = fs.openSync(a.root, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
  try {
    for (const id of DENIED_IDS) {
      counting.reset();
      t.throws(() => readNoteById(rootFd, id, policy, scanLimitsOf(policy), counting.native), undefined, id);
      t.deepEqual(counting.calls, {}, id);
    }
  } finally {
    fs.closeSync(rootFd);
  }
});

test('denied-in-allowed › replacing a denied note with anything (huge, FIFO, binary, symlink, foreign) changes no response byte', (t) => {
  const a = arena();
  const before = [a.search('lantern', 10), a.search('lantern garden', 1), a.read('projects/garden.md')].map((r) =>
    JSON.stringify(r),
  );
  const target = path.join(a.root, 'projects/secret.md');
  const variants: [string, () => void][] = [
    ['huge', () => fs.writeFileSync(target, Buffer.alloc(2 * 1024 * 1024, 0x61))],
    ['fifo', () => makeFifo(target)],
    ['binary', () => fs.writeFileSync(target, Buffer.from([0, 1, 2, 0xff]))],
    ['symlink', () => fs.symlinkSync(path.join(a.outside, 'secret.md'), target)],
    [
      'world-writable',
      () => {
        fs.writeFileSync(target, planted(MARK.denied));
        fs.chmodSync(target, 0o666);
      },
    ],
  ];
  if (isRoot)
    variants.push([
      'foreign',
      () => {
        fs.writeFileSync(target, planted(MARK.denied));
        fs.chownSync(target, FOREIGN_UID, FOREIGN_UID);
      },
    ]);
  for (const [what, make] of variants) {
    fs.rmSync(target, { force: true });
    make();
    const after = [a.search('lantern', 10), a.search('lantern garden', 1), a.read('projects/garden.md')].map((r) =>
      JSON.stringify(r),
    );
    t.deepEqual(after, before, what);
    t.is(JSON.stringify(a.read('projects/secret.md')), NOT_FOUND, what);
  }
});
