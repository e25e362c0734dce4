/**
 * The read tool's kept directory names (src/trust/warm/name-sets.ts): a kept set answers exactly what a fresh listing
 * of the same directory answers, and only while the directory's fstat is the one it was listed under, more than the
 * racy margin after its last change. Real directories and the real bindings; the clock is moved instead of waiting.
 */
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { NameSets } from '../../src/trust/warm/name-sets.js';
import { readNoteById } from '../../src/trust/note.js';
import { openTrustedDir } from '../../src/trust/path.js';
import { readNames } from '../../src/trust/view.js';
import { makeTempDir, removeTree, writeNote } from '../helpers/fixtures.js';
import { ALLOW_ALL, limits, realNative, reasonOf } from './support.js';

const native = realNative();
const root = makeTempDir('mb-names-');
test.after.always(() => removeTree(root));

/** A clock `ahead` ms past the real one: the directories just written count as changed that long ago. */
function sets(ahead: number, bounds?: ConstructorParameters<typeof NameSets>[2]): NameSets {
  return new NameSets(3000, () => Date.now() + ahead, bounds);
}

/** `find` of `name` in `dir` through a fresh descriptor and its fstat, as the read path asks. */
function findIn(s: NameSets, dir: string, name: string, max = 10_000) {
  const fd = fs.openSync(dir, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
  try {
    return s.find(native, fd, native.fstat(fd), Buffer.from(name, 'utf8'), max);
  } finally {
    fs.closeSync(fd);
  }
}

test('a set is kept only past the racy margin, and then answers as the listing did', (t) => {
  const dir = path.join(root, 'a');
  for (const n of ['one.md', 'two.md', 'Three.md']) writeNote(root, `a/${n}`, n);
  const fresh = sets(0);
  t.deepEqual(findIn(fresh, dir, 'one.md'), { count: 3, found: true });
  t.deepEqual(findIn(fresh, dir, 'one.md'), { count: 3, found: true });
  t.is(fresh.stats.reused, 0, 'a directory changed just now is listed on every read');
  t.is(fresh.size, 0);

  const old = sets(10_000);
  t.deepEqual(findIn(old, dir, 'one.md'), { count: 3, found: true });
  t.deepEqual(findIn(old, dir, 'two.md'), { count: 3, found: true });
  t.deepEqual(findIn(old, dir, 'three.md'), { count: 3, found: false }, 'byte for byte: no case folding');
  t.deepEqual(findIn(old, dir, 'Three.md'), { count: 3, found: true });
  t.deepEqual(findIn(old, dir, 'one.m'), { count: 3, found: false });
  t.is(old.stats.listed, 1);
  t.is(old.stats.reused, 4);
  t.is(findIn(old, dir, 'one.md', 2), 'too_many', 'a kept set is charged to the ceiling like a listing');
});

test('any entry added, removed or renamed moves the directory, and the next find lists it afresh', (t) => {
  const dir = path.join(root, 'b');
  writeNote(root, 'b/keep.md', 'keep');
  writeNote(root, 'b/gone.md', 'gone');
  // A clock far ahead stands for "listed long after the change" at every step below.
  const s = sets(60_000);
  t.deepEqual(findIn(s, dir, 'gone.md'), { count: 2, found: true });
  fs.unlinkSync(path.join(dir, 'gone.md'));
  t.deepEqual(findIn(s, dir, 'gone.md'), { count: 1, found: false });
  writeNote(root, 'b/new.md', 'new');
  t.deepEqual(findIn(s, dir, 'new.md'), { count: 2, found: true });
  fs.renameSync(path.join(dir, 'new.md'), path.join(dir, 'renamed.md'));
  t.deepEqual(findIn(s, dir, 'new.md'), { count: 2, found: false });
  t.deepEqual(findIn(s, dir, 'renamed.md'), { count: 2, found: true });
  t.is(s.stats.listed, 4);
  t.is(s.stats.reused, 1);
});

test('an NFD name and its NFC spelling are different names', (t) => {
  const nfd = 'cafe\u0301.md';
  writeNote(root, `c/${nfd}`, 'x');
  const s = sets(10_000);
  const dir = path.join(root, 'c');
  t.deepEqual(findIn(s, dir, nfd), { count: 1, found: true });
  t.deepEqual(findIn(s, dir, nfd.normalize('NFC')), { count: 1, found: false });
});

test('the bounds hold: directories and names kept, and a large directory is searched in place', (t) => {
  for (const d of ['d1', 'd2', 'd3']) writeNote(root, `${d}/n.md`, d);
  const s = sets(10_000, { maxDirs: 2, maxNames: 100, maxDirBytes: 1 << 20 });
  for (const d of ['d1', 'd2', 'd3']) t.deepEqual(findIn(s, path.join(root, d), 'n.md'), { count: 1, found: true });
  t.is(s.size, 2, 'the least recently used directory left');
  t.deepEqual(findIn(s, path.join(root, 'd1'), 'n.md'), { count: 1, found: true });
  t.is(s.stats.listed, 4);
  const tiny = sets(10_000, { maxDirs: 8, maxNames: 8, maxDirBytes: 0 });
  t.deepEqual(findIn(tiny, path.join(root, 'd1'), 'n.md'), { count: 1, found: true });
  t.is(tiny.size, 0, 'a directory above maxDirBytes is never kept');
});

test('reads through the process set: reused once the directories are past the margin, and every change seen', async (t) => {
  writeNote(root, 'e/f/first.md', 'first');
  writeNote(root, 'e/f/Other.md', 'other');
  t.true(readNames.racyMarginMs >= 3000, 'the process set keeps the view margin');
  // Past the real margin, so the read path's own set (real clock) keeps these directories.
  await new Promise((resolve) => setTimeout(resolve, readNames.racyMarginMs + 300));
  const fd = openTrustedDir(root, 'root', native);
  try {
    const read = (id: string) => reasonOf(() => readNoteById(fd, id, ALLOW_ALL, limits(), native));
    t.is(readNoteById(fd, 'e/f/first.md', ALLOW_ALL, limits(), native), 'first');
    const reused = readNames.stats.reused;
    t.is(readNoteById(fd, 'e/f/first.md', ALLOW_ALL, limits(), native), 'first');
    t.true(readNames.stats.reused >= reused + 3, 'root, e and e/f answered from their kept names');
    t.is(read('e/f/other.md'), 'not_found_or_denied/missing', 'still byte for byte');
    writeNote(root, 'e/f/second.md', 'second');
    t.is(readNoteById(fd, 'e/f/second.md', ALLOW_ALL, limits(), native), 'second');
    fs.unlinkSync(path.join(root, 'e/f/first.md'));
    t.is(read('e/f/first.md'), 'not_found_or_denied/missing');
  } finally {
    native.close(fd);
  }
});
