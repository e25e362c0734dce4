/**
 * Hard links: a writer inside the folder links a file from outside the root, a denied note, or a foreign-owned
 * file into an allowed place. A link count above 1 refuses the note under every name, for read and search, and
 * the content never leaks.
 */
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { FOREIGN_GID, FOREIGN_UID, isRoot, mkdirs, writeNote } from '../helpers/fixtures.js';
import { MARK, NOT_FOUND, assertClean, idsOf, makeArena, planted, type Arena } from './support.js';

const arenas: Arena[] = [];
test.after.always(() => {
  for (const a of arenas) a.cleanup();
});
function arena(fields: Record<string, unknown> = {}): Arena {
  const a = makeArena({ deny: ['private/**', '**/*.secret.md'], ...fields });
  arenas.push(a);
  writeNote(a.root, 'notes/plain.md', '# Plain\n\nlantern\n');
  return a;
}

test('hardlink › a hard link to a note outside the root is refused by read and search', (t) => {
  const a = arena();
  mkdirs(a.root, 'in');
  fs.linkSync(path.join(a.outside, 'secret.md'), path.join(a.root, 'in/linked.md'));
  fs.linkSync(path.join(a.outside, 'secret.md'), path.join(a.root, 'top.md'));
  t.is(JSON.stringify(a.read('in/linked.md')), NOT_FOUND);
  t.is(JSON.stringify(a.read('top.md')), NOT_FOUND);
  const r = a.search(`lantern ${MARK.outside}`, 10);
  assertClean(t, r, a);
  t.deepEqual(idsOf(r), ['notes/plain.md']);
});

test('hardlink › a hard link to a denied note is refused, and so is the denied original', (t) => {
  const a = arena();
  writeNote(a.root, 'private/keys.md', planted(MARK.denied));
  writeNote(a.root, 'notes/plan.secret.md', planted(MARK.denied));
  fs.linkSync(path.join(a.root, 'private/keys.md'), path.join(a.root, 'notes/keys.md'));
  fs.linkSync(path.join(a.root, 'notes/plan.secret.md'), path.join(a.root, 'notes/plan.md'));
  for (const id of ['notes/keys.md', 'notes/plan.md', 'private/keys.md', 'notes/plan.secret.md'])
    t.is(JSON.stringify(a.read(id)), NOT_FOUND, id);
  const r = a.search(`lantern ${MARK.denied}`, 10);
  assertClean(t, r, a);
  t.deepEqual(idsOf(r), ['notes/plain.md']);
});

test('hardlink › a note that gains a second link between calls drops out of the very next call, even when indexed', (t) => {
  const a = arena();
  writeNote(a.root, 'notes/watched.md', '# Watched\n\nlantern watched\n');
  t.deepEqual(idsOf(a.search('watched', 10)), ['notes/watched.md']);
  t.true(a.read('notes/watched.md').ok);
  fs.linkSync(path.join(a.root, 'notes/watched.md'), path.join(a.outside, 'grab.md'));
  t.deepEqual(idsOf(a.search('watched', 10)), []);
  t.is(JSON.stringify(a.read('notes/watched.md')), NOT_FOUND);
  fs.rmSync(path.join(a.outside, 'grab.md'));
  t.deepEqual(idsOf(a.search('watched', 10)), ['notes/watched.md']);
});

(isRoot ? test : test.skip)(
  'hardlink › a hard link to a foreign-owned file is refused for its owner and its links (needs root)',
  (t) => {
    const a = arena();
    const foreign = writeNote(a.outside, 'foreign.md', planted(MARK.untrusted));
    fs.chownSync(foreign, FOREIGN_UID, FOREIGN_GID);
    fs.linkSync(foreign, path.join(a.root, 'notes/foreign.md'));
    // A foreign-owned note with one link only: refused for its owner.
    const lone = writeNote(a.root, 'notes/lone.md', planted(MARK.untrusted));
    fs.chownSync(lone, FOREIGN_UID, FOREIGN_GID);
    for (const id of ['notes/foreign.md', 'notes/lone.md']) t.is(JSON.stringify(a.read(id)), NOT_FOUND, id);
    const r = a.search(`lantern ${MARK.untrusted}`, 10);
    assertClean(t, r, a);
    t.deepEqual(idsOf(r), ['notes/plain.md']);
  },
);
