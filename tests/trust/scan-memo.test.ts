/**
 * The caller view's listings and kept answers (src/trust/view.ts `CallerView`): listings reused by directory identity, raw stat snapshots per note,
 * policy answers per filter object. Reuse must never change what a scan returns, and every change to a note or a
 * directory must be seen by the very next call. Tests that need reuse give the memo a clock far ahead of the
 * directories' timestamps (so the racy margin is passed) and wait one clock tick after a scan before changing the
 * tree, as the margin would in real use.
 */
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import test from 'ava';
import { openTrustedDir } from '../../src/trust/path.js';
import { scanTree, type ScanOptions } from '../../src/trust/scan.js';
import { CallerView } from '../../src/trust/view.js';
import type { KnownNotes, NoteFilter, ScanLimits, ScanResult } from '../../src/trust/types.js';
import {
  ACL_TAG,
  aclBytes,
  countingNative,
  makeTempDir,
  mkdirs,
  removeTree,
  setXattr,
  writeNote,
} from '../helpers/fixtures.js';
import { ALLOW_ALL, Learning, filterDenying, limits, realNative, reasonOf } from './support.js';

const base = makeTempDir('mb-memo-');
test.after.always(() => removeTree(base));
const native = realNative();

let counter = 0;
function freshRoot(): string {
  return mkdirs(base, `root-${++counter}`);
}

/** A memo that treats every listing as old enough to reuse (its clock is an hour ahead). */
function eagerMemo(): CallerView {
  return new CallerView(undefined, () => Date.now() + 3_600_000);
}

function scan(root: string, known: KnownNotes, filter: NoteFilter = ALLOW_ALL, lim: ScanLimits = limits()): ScanResult {
  const fd = openTrustedDir(root, 'root', native);
  try {
    return scanTree(fd, filter, lim, known, native, known instanceof Learning ? { view: known.memo } : {});
  } finally {
    native.close(fd);
  }
}

/** The same scan with a fresh, empty memo: what a new process would see. */
function fresh(root: string, filter: NoteFilter = ALLOW_ALL, lim: ScanLimits = limits()): ScanResult {
  return scan(root, { has: () => false }, filter, lim);
}

const ids = (r: ScanResult): string[] => r.notes.map((n) => n.id);

/** Past the kernel's coarse clock tick, so a change gets a later timestamp than the listing it follows. */
const nextTick = (): Promise<void> => sleep(30);

function tree(): string {
  const root = freshRoot();
  for (const id of ['a.md', 'b.md', 'd/c.md', 'd/e/f.md', 'd/e/g.txt', 'z.md']) writeNote(root, id, `text of ${id}`);
  return root;
}

test('scan memo › a reused listing gives the same notes, skips and raw entry count as a fresh scan', (t) => {
  const root = tree();
  const memo = eagerMemo();
  const known = new Learning(memo);
  const cold = known.learn(scan(root, known));
  t.is(memo.stats.listed, 3);
  const warm = scan(root, known);
  t.is(memo.stats.reused, 3, 'every directory listing reused');
  t.is(memo.stats.listed, 3);
  t.deepEqual(ids(warm), ids(cold));
  t.true(warm.notes.every((n) => n.text === undefined));
  const reference = fresh(root);
  t.deepEqual(ids(warm), ids(reference));
  t.deepEqual(warm.skipped, reference.skipped);
  t.is(warm.rawEntries, reference.rawEntries);
  t.is(warm.truncated, reference.truncated);
});

test('scan memo › an unchanged note keeps its stat and key objects; a chmod makes new ones and is judged', async (t) => {
  const root = tree();
  const known = new Learning(eagerMemo());
  known.learn(scan(root, known));
  const first = scan(root, known);
  const second = scan(root, known);
  t.is(second.notes[0]!.stat, first.notes[0]!.stat, 'no new FileStat for an unchanged note');
  t.is(second.notes[0]!.key, first.notes[0]!.key);
  await nextTick();
  fs.chmodSync(path.join(root, 'a.md'), 0o620);
  const after = scan(root, known);
  t.false(ids(after).includes('a.md'));
  t.is(after.skipped.group_writable, 1);
  fs.chmodSync(path.join(root, 'a.md'), 0o600);
  const back = scan(root, known);
  t.true(ids(back).includes('a.md'));
  t.not(back.notes[0]!.key, first.notes[0]!.key, 'the chmod moved ctime, so the identity changed');
  t.is(typeof back.notes[0]!.text, 'string', 'a changed note is read again');
});

test('scan memo › the very next call sees a new note, a removed note, a replaced note and an ACL change', async (t) => {
  const root = tree();
  const memo = eagerMemo();
  const known = new Learning(memo);
  known.learn(scan(root, known));
  await nextTick();

  writeNote(root, 'd/new.md', 'new');
  let r = known.learn(scan(root, known));
  t.deepEqual(ids(r), ids(fresh(root)));
  t.true(ids(r).includes('d/new.md'));
  await nextTick();

  fs.rmSync(path.join(root, 'd/c.md'));
  r = known.learn(scan(root, known));
  t.false(ids(r).includes('d/c.md'));
  await nextTick();

  // Replace by rename (an editor's atomic save): new inode under the old name.
  fs.writeFileSync(path.join(root, 'tmp-b'), 'replaced b', { mode: 0o600 });
  fs.renameSync(path.join(root, 'tmp-b'), path.join(root, 'b.md'));
  r = known.learn(scan(root, known));
  t.is(r.notes.find((n) => n.id === 'b.md')?.text, 'replaced b');
  await nextTick();

  const mode = fs.statSync(path.join(root, 'z.md')).mode;
  setXattr(
    path.join(root, 'z.md'),
    'system.posix_acl_access',
    aclBytes([
      { tag: ACL_TAG.USER_OBJ, perm: (mode >> 6) & 7 },
      { tag: ACL_TAG.USER, perm: 6, id: 4242 },
      { tag: ACL_TAG.GROUP_OBJ, perm: 0 },
      { tag: ACL_TAG.MASK, perm: 6 },
      { tag: ACL_TAG.OTHER, perm: 0 },
    ]),
  );
  r = known.learn(scan(root, known));
  t.false(ids(r).includes('z.md'), 'an ACL write grant is seen on the next call');
  t.is((r.skipped.acl_write ?? 0) + (r.skipped.group_writable ?? 0), 1, 'the ACL entry or its mask in the mode bits');
  t.deepEqual(ids(r), ids(fresh(root)));
});

test('scan memo › with the real clock a directory changed moments ago is listed afresh on every call', (t) => {
  const root = tree();
  const memo = new CallerView();
  const known = new Learning(memo);
  known.learn(scan(root, known));
  writeNote(root, 'd/e/same-tick.md', 'x');
  const r = scan(root, known);
  t.true(ids(r).includes('d/e/same-tick.md'), 'seen at once, whatever the clock tick');
  t.is(memo.stats.reused, 0);
  t.is(memo.stats.listed, 6);
});

test('scan memo › another filter object is asked again (a policy edit applies on the next call)', (t) => {
  const root = tree();
  const known = new Learning(eagerMemo());
  known.learn(scan(root, known));
  scan(root, known);
  const denying = filterDenying('d/', 'a.md');
  const r = scan(root, known, denying);
  t.deepEqual(ids(r), ['b.md', 'z.md']);
  t.deepEqual(ids(r), ids(fresh(root, denying)));
  t.deepEqual(r.skipped, fresh(root, denying).skipped);
  t.deepEqual(ids(scan(root, known)), ids(fresh(root)));
});

test('scan memo › another name rule or root starts over', (t) => {
  const root = tree();
  writeNote(root, 'with space.md', 'x');
  const known = new Learning(eagerMemo());
  scan(root, known);
  t.false(ids(scan(root, known)).includes('with space.md'));
  t.true(ids(scan(root, known, ALLOW_ALL, limits({ names: 'unicode' }))).includes('with space.md'));
  const other = tree();
  writeNote(other, 'only-here.md', 'x');
  t.deepEqual(ids(scan(other, known)), ids(fresh(other)));
});

test('scan memo › a moved directory is scanned under its new id', async (t) => {
  const root = tree();
  const known = new Learning(eagerMemo());
  known.learn(scan(root, known));
  await nextTick();
  fs.renameSync(path.join(root, 'd'), path.join(root, 'm'));
  const r = scan(root, known);
  t.deepEqual(ids(r), ids(fresh(root)));
  t.true(ids(r).includes('m/e/f.md'));
  t.false(ids(r).some((id) => id.startsWith('d/')));
});

test('scan memo › a reused listing still counts toward the raw entry ceiling', (t) => {
  // The ceiling lowered to 50,000 (ScanLimits.rawEntryCeiling): the same counting as at 1,000,000, on a small tree.
  const lowered = limits({ rawEntryCeiling: 50_000 });
  const root = freshRoot();
  const crowded = mkdirs(root, 'crowded');
  // Hard links to one empty file (not notes, never statted): one system call per directory entry.
  const seed = path.join(root, 'seed');
  fs.writeFileSync(seed, '');
  for (let i = 0; i < 30_000; i++) fs.linkSync(seed, path.join(crowded, `f${i}`));
  const memo = eagerMemo();
  const known = new Learning(memo);
  const first = scan(root, known, ALLOW_ALL, { ...lowered, maxEntries: 10 });
  const second = scan(root, known, ALLOW_ALL, { ...lowered, maxEntries: 10 });
  t.is(memo.stats.reused, 2);
  t.is(second.rawEntries, first.rawEntries);
  t.is(second.rawEntries, 30_002);
  // A second crowded directory pushes the same call over the ceiling, reused listings or not.
  const more = mkdirs(root, 'more');
  for (let i = 0; i < 20_000; i++) fs.linkSync(seed, path.join(more, `g${i}`));
  t.is(
    reasonOf(() => scan(root, known, ALLOW_ALL, lowered)),
    'unavailable/entry_ceiling',
  );
  t.is(
    reasonOf(() => fresh(root, ALLOW_ALL, lowered)),
    'unavailable/entry_ceiling',
  );
  // A value above the hard ceiling never raises it.
  t.is(scan(root, known, ALLOW_ALL, { ...lowered, rawEntryCeiling: 5_000_000 }).rawEntries, 50_003);
});

test('scan memo › directories no longer visited are forgotten', async (t) => {
  const root = tree();
  const memo = eagerMemo();
  const known = new Learning(memo);
  scan(root, known);
  t.deepEqual([...memo.listings.keys()].sort(), ['', 'd/', 'd/e/']);
  scan(root, known, filterDenying('d/'));
  t.deepEqual([...memo.listings.keys()], ['']);
  await nextTick();
  fs.rmSync(path.join(root, 'd'), { recursive: true });
  scan(root, known);
  t.deepEqual([...memo.listings.keys()], ['']);
});

test('scan memo › without a memo every call lists and stats everything; with one the same wrapper sees the reuse', (t) => {
  const root = tree();
  const known = new Learning(eagerMemo());
  const counting = countingNative(native);
  const once = (options: ScanOptions): ScanResult => {
    counting.reset();
    const fd = openTrustedDir(root, 'root', native);
    try {
      return scanTree(fd, ALLOW_ALL, limits(), known, counting.native, options);
    } finally {
      native.close(fd);
    }
  };
  for (let i = 0; i < 2; i++) {
    once({});
    t.is(counting.calls.listDir, 3);
    t.is(counting.calls.statAt, 10, 'one statAt per candidate, one more per note read (the settled check)');
  }
  t.is(known.memo.stats.listed + known.memo.stats.reused, 0);
  known.learn(once({ view: known.memo }));
  t.is(counting.calls.listDir, 3);
  const warm = once({ view: known.memo });
  t.deepEqual(ids(warm), ids(fresh(root)));
  t.is(counting.calls.listDir ?? 0, 0, 'every listing reused');
  t.is(counting.calls.statAt, 5, 'one stat per note; known notes are never read');
  t.is(counting.calls.openFileAt ?? 0, 0);
});

test('scan memo › a reused verdict of the metadata rule never outlives its inputs: a lower max_file_bytes skips the very next call', (t) => {
  const root = tree();
  const known = new Learning(eagerMemo());
  known.learn(scan(root, known));
  const warm = known.learn(scan(root, known));
  t.true(ids(warm).includes('a.md'));
  // Same stat words, other rule input: the note is judged again and refused.
  const lowered = scan(root, known, ALLOW_ALL, limits({ maxFileBytes: 4 }));
  t.deepEqual(ids(lowered), ids(fresh(root, ALLOW_ALL, limits({ maxFileBytes: 4 }))));
  t.false(ids(lowered).includes('a.md'));
  t.true((lowered.skipped.too_large ?? 0) > 0);
  // And back: passes again under the old inputs.
  t.deepEqual(ids(scan(root, known)), ids(warm));
});

test('scan memo › a reused verdict is per stat answer: an owner change with the same size is judged on the very next call', async (t) => {
  const root = tree();
  const known = new Learning(eagerMemo());
  known.learn(scan(root, known));
  known.learn(scan(root, known));
  if (process.getuid?.() !== 0) {
    t.pass('giving a note to another user needs root (the suite runs this file as root too)');
    return;
  }
  await nextTick();
  fs.chownSync(path.join(root, 'b.md'), 65534, 65534);
  const after = scan(root, known);
  t.false(ids(after).includes('b.md'));
  t.is(after.skipped.untrusted_owner, 1);
});
