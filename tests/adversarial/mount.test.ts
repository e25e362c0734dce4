/**
 * Another filesystem mounted inside the root (tmpfs), and a bind mount of a directory from outside the root: the
 * notes below either are never served. Mounting needs root; the tests skip visibly otherwise, and every mount is
 * undone in `finally`.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { isRoot, mkdirs, writeNote } from '../helpers/fixtures.js';
import { MARK, NOT_FOUND, assertClean, idsOf, makeArena, planted, type Arena } from './support.js';

const arenas: Arena[] = [];
test.after.always(() => {
  for (const a of arenas) a.cleanup();
});
const rootTest = isRoot ? test.serial : test.skip;

function arena(): Arena {
  const a = makeArena();
  arenas.push(a);
  writeNote(a.root, 'notes/plain.md', '# Plain\n\nlantern\n');
  return a;
}

/** Mount, run, always unmount (lazily if busy). */
function withMount(args: string[], target: string, fn: () => void): void {
  execFileSync('mount', [...args, target], { stdio: 'ignore' });
  try {
    fn();
  } finally {
    if (spawnSync('umount', [target]).status !== 0) spawnSync('umount', ['-l', target]);
  }
}

rootTest('mount › notes on a tmpfs mounted inside the root are never served (needs root)', (t) => {
  const a = arena();
  const mnt = mkdirs(a.root, 'mnt');
  withMount(['-t', 'tmpfs', '-o', 'mode=0700,size=1m', 'tmpfs'], mnt, () => {
    writeNote(mnt, 'in.md', planted(MARK.untrusted));
    writeNote(mnt, 'deep/er.md', planted(MARK.untrusted));
    t.is(JSON.stringify(a.read('mnt/in.md')), NOT_FOUND);
    t.is(JSON.stringify(a.read('mnt/deep/er.md')), NOT_FOUND);
    const r = a.search(`lantern ${MARK.untrusted}`, 10);
    assertClean(t, r, a);
    t.deepEqual(idsOf(r), ['notes/plain.md']);
  });
});

rootTest('mount › a tmpfs mounted over a directory of indexed notes hides them at once (needs root)', (t) => {
  const a = arena();
  writeNote(a.root, 'shadow/kept.md', '# Kept\n\nlantern kept\n');
  t.deepEqual(idsOf(a.search('kept', 10)), ['shadow/kept.md']);
  const mnt = path.join(a.root, 'shadow');
  withMount(['-t', 'tmpfs', '-o', 'mode=0700,size=1m', 'tmpfs'], mnt, () => {
    writeNote(mnt, 'kept.md', planted(MARK.untrusted));
    t.is(JSON.stringify(a.read('shadow/kept.md')), NOT_FOUND);
    const r = a.search(`kept ${MARK.untrusted}`, 10);
    assertClean(t, r, a);
    t.deepEqual(idsOf(r), []);
  });
  t.deepEqual(idsOf(a.search('kept', 10)), ['shadow/kept.md']);
});

rootTest('mount › a bind mount of a directory outside the root (same filesystem) is never served (needs root)', (t) => {
  const a = arena();
  const bind = mkdirs(a.root, 'bind');
  withMount(['--bind', a.outside], bind, () => {
    t.true(fs.existsSync(path.join(bind, 'secret.md')));
    t.is(JSON.stringify(a.read('bind/secret.md')), NOT_FOUND);
    const r = a.search(`lantern ${MARK.outside}`, 10);
    assertClean(t, r, a);
    t.deepEqual(idsOf(r), ['notes/plain.md']);
  });
});

rootTest('mount › a single file bind-mounted over a note is never served (needs root)', (t) => {
  const a = arena();
  const target = writeNote(a.root, 'notes/target.md', '# Target\n\nlantern target\n');
  withMount(['--bind', path.join(a.outside, 'secret.md')], target, () => {
    t.is(JSON.stringify(a.read('notes/target.md')), NOT_FOUND);
    const r = a.search(`lantern ${MARK.outside}`, 10);
    assertClean(t, r, a);
    t.deepEqual(idsOf(r), ['notes/plain.md']);
  });
});

rootTest('mount › a root that is itself a mount point serves its own notes (needs root)', (t) => {
  const a = arena();
  withMount(['-t', 'tmpfs', '-o', 'mode=0700,size=1m', 'tmpfs'], a.root, () => {
    writeNote(a.root, 'own.md', '# Own\n\nlantern own\n');
    const mnt = mkdirs(a.root, 'nested');
    withMount(['-t', 'tmpfs', '-o', 'mode=0700,size=1m', 'tmpfs'], mnt, () => {
      writeNote(mnt, 'x.md', planted(MARK.untrusted));
      t.true(a.read('own.md').ok);
      t.is(JSON.stringify(a.read('nested/x.md')), NOT_FOUND);
      const r = a.search(`lantern ${MARK.untrusted}`, 10);
      assertClean(t, r, a);
      t.deepEqual(idsOf(r), ['own.md']);
    });
  });
});

rootTest(
  'mount › a procfs mounted outside /proc is never a root: its magic links and directories are refused (needs root)',
  (t) => {
    const a = arena();
    const p = mkdirs(a.tmp, 'proc');
    withMount(['-t', 'proc', 'proc'], p, () => {
      for (const root of [
        `${p}/self/cwd`,
        `${p}/self/root${a.root}`,
        `${p}/1/root${a.root}`,
        `${p}/self`,
        `${p}/${process.pid}`,
        `${p}/${process.pid}/fd`,
        `${p}/sys`,
        p,
      ]) {
        a.setPolicy({ root });
        t.is(
          JSON.stringify(a.search('lantern')),
          JSON.stringify({ ok: false, error: { code: 'unavailable', message: 'Memory is unavailable.' } }),
          root,
        );
        t.false(a.read('notes/plain.md').ok, root);
      }
    });
  },
);
