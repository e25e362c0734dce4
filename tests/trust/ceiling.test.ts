import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { readNoteById } from '../../src/trust/note.js';
import { scanTree } from '../../src/trust/scan.js';
import { RAW_ENTRY_CEILING } from '../../src/trust/types.js';
import { makeTempDir, mkdirs, openDescriptorCount, removeTree, writeNote } from '../helpers/fixtures.js';
import { ALLOW_ALL, NONE_KNOWN, filterDenying, limits, realNative, reasonOf } from './support.js';

/**
 * The crowded tree lives on tmpfs (/dev/shm) when there is one: 1,000,001 directory entries take about four seconds
 * there and far longer on a virtual disk. /dev/shm is world-writable without being a system temp path, so
 * the root descriptor is opened directly here: these tests are about the scan's entry ceiling, not the walk.
 */
function makeBase(): string {
  if (fs.existsSync('/dev/shm') && fs.statSync('/dev/shm').isDirectory()) {
    try {
      const dir = fs.mkdtempSync('/dev/shm/mb-ceiling-');
      fs.chmodSync(dir, 0o700);
      return dir;
    } catch {
      // fall back to the system temp dir
    }
  }
  return makeTempDir('mb-ceiling-');
}

const base = makeBase();
test.after.always(() => {
  // rm(1) removes a million entries about three times faster than fs.rmSync; fall back to it when rm is absent.
  if (spawnSync('rm', ['-rf', '--', base]).status !== 0 || fs.existsSync(base)) removeTree(base);
});
const native = realNative();

// One directory with more than RAW_ENTRY_CEILING entries (hard links to empty files: the cheapest entries).
const root = mkdirs(base, 'root');
const crowded = mkdirs(root, 'crowded');
// A new target every 60,000 links: ext4 allows at most 65,000 links to one inode (tmpfs has no such limit).
let target = '';
for (let i = 0; i <= RAW_ENTRY_CEILING; i++) {
  if (i % 60_000 === 0) {
    target = path.join(crowded, `target${i}`);
    fs.writeFileSync(target, '');
  }
  fs.linkSync(target, path.join(crowded, `f${i}`));
}
writeNote(root, 'a.md', 'x');

function withRoot<T>(fn: (fd: number) => T): T {
  const fd = fs.openSync(root, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
  try {
    return fn(fd);
  } finally {
    fs.closeSync(fd);
  }
}

test('ceiling › a scan that would list more than 1,000,000 raw entries is unavailable', (t) => {
  const before = openDescriptorCount();
  t.is(
    withRoot((fd) => reasonOf(() => scanTree(fd, ALLOW_ALL, limits(), NONE_KNOWN, native))),
    'unavailable/entry_ceiling',
  );
  t.is(openDescriptorCount(), before, 'the failing scan closed every descriptor');
});

test('ceiling › a crowded directory the filter may not enter is never listed and costs nothing', (t) => {
  const r = withRoot((fd) => scanTree(fd, filterDenying('crowded/'), limits(), NONE_KNOWN, native));
  t.deepEqual(
    r.notes.map((n) => n.id),
    ['a.md'],
  );
  t.is(r.rawEntries, 2);
});

test('ceiling › the depth look-ahead counts toward the ceiling too', (t) => {
  t.is(
    withRoot((fd) => reasonOf(() => scanTree(fd, ALLOW_ALL, limits({ maxDepth: 1 }), NONE_KNOWN, native))),
    'unavailable/entry_ceiling',
  );
});

test('ceiling › read through a directory with more than 1,000,000 entries is unavailable', (t) => {
  writeNote(root, 'crowded-note.md', 'x');
  t.is(
    withRoot((fd) => reasonOf(() => readNoteById(fd, 'crowded/f1.md', ALLOW_ALL, limits(), native))),
    'unavailable/entry_ceiling',
  );
});
