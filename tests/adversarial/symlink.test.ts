/**
 * Symlinks anywhere a model or a writer inside the folder can put them: a leaf note, a directory in the middle, a
 * loop, a dangling link, a link to a denied note, links into /proc/self, and symlinks in the root chain or the
 * policy root itself. End to end through createBridge: read answers exactly like a missing note, search never
 * carries a byte of the target.
 */
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { writeNote, mkdirs } from '../helpers/fixtures.js';
import { MARK, NOT_FOUND, UNAVAILABLE, assertClean, idsOf, makeArena, planted, type Arena } from './support.js';

const arenas: Arena[] = [];
test.after.always(() => {
  for (const a of arenas) a.cleanup();
});
function arena(fields: Record<string, unknown> = {}): Arena {
  const a = makeArena(fields);
  arenas.push(a);
  writeNote(a.root, 'notes/plain.md', '# Plain\n\nAn ordinary lantern note.\n');
  return a;
}

/** [id of the link, link target (relative to the link's directory or absolute), what it points at]. */
function links(a: Arena): [string, string, string][] {
  writeNote(a.root, 'private/denied.md', planted(MARK.denied));
  return [
    ['leaf.md', path.join(a.outside, 'secret.md'), 'a note outside the root (absolute)'],
    ['notes/rel.md', '../../outside/secret.md', 'a note outside the root (relative, through ..)'],
    ['to-denied.md', 'private/denied.md', 'a denied note inside the root'],
    ['loop.md', 'loop.md', 'itself (a loop)'],
    ['ping.md', 'pong.md', 'a two-link loop'],
    ['pong.md', 'ping.md', 'a two-link loop'],
    ['dangling.md', 'nowhere.md', 'nothing (dangling)'],
    ['environ.md', '/proc/self/environ', '/proc/self/environ'],
    ['cmdline.md', '/proc/self/cmdline', '/proc/self/cmdline'],
    ['fd0.md', '/proc/self/fd/0', '/proc/self/fd/0'],
    ['mem.md', '/proc/self/mem', '/proc/self/mem'],
  ];
}

test('symlink › read refuses every symlinked note exactly like a missing one', (t) => {
  const a = arena({ deny: ['private/**'] });
  for (const [id, target, what] of links(a)) {
    fs.symlinkSync(target, path.join(a.root, id));
    t.is(JSON.stringify(a.read(id)), NOT_FOUND, `${id} → ${what}`);
  }
  t.is(JSON.stringify(a.read('never-existed.md')), NOT_FOUND);
});

test('symlink › search over a tree full of symlinked notes returns only the real note', (t) => {
  const a = arena({ deny: ['private/**'] });
  for (const [id, target] of links(a)) fs.symlinkSync(target, path.join(a.root, id));
  for (const q of ['lantern', MARK.outside, MARK.denied, 'PATH', 'node']) {
    const r = a.search(q, 10);
    assertClean(t, r, a, q);
    t.deepEqual(
      idsOf(r)?.filter((id) => id !== 'notes/plain.md'),
      [],
      q,
    );
  }
});

test('symlink › a symlinked directory in the middle of an id is never entered (outside, /proc/self, root, cwd)', (t) => {
  const a = arena();
  const dirs: [string, string][] = [
    ['out', a.outside],
    ['outrel', '../outside'],
    ['self', '/proc/self'],
    ['procroot', '/proc/self/root'],
    ['proccwd', '/proc/self/cwd'],
    ['top', '/'],
    ['again', '.'],
    ['up', '..'],
  ];
  for (const [name, target] of dirs) fs.symlinkSync(target, path.join(a.root, name));
  const ids = [
    'out/secret.md',
    'outrel/secret.md',
    'again/notes/plain.md',
    'up/outside/secret.md',
    `procroot/${path.join(a.outside, 'secret.md').slice(1)}`,
    'proccwd/secret.md',
    'self/root/etc/passwd.md',
    'top/etc/hostname.md',
  ];
  for (const id of ids) {
    const r = a.read(id);
    t.true(JSON.stringify(r) === NOT_FOUND || (!r.ok && r.error.code === 'invalid_request'), id);
  }
  const r = a.search(MARK.outside, 10);
  assertClean(t, r, a);
  t.deepEqual(idsOf(r), []);
  t.deepEqual(idsOf(a.search('lantern', 10)), ['notes/plain.md']);
});

test('symlink › a directory swapped for a symlink between two calls is refused on the next call', (t) => {
  const a = arena();
  writeNote(a.root, 'swap/inner.md', '# Inner\n\nlantern inside\n');
  writeNote(a.outside, 'inner.md', planted(MARK.outside));
  t.true(a.read('swap/inner.md').ok);
  t.deepEqual(idsOf(a.search('lantern', 10))?.sort(), ['notes/plain.md', 'swap/inner.md']);
  fs.renameSync(path.join(a.root, 'swap'), path.join(a.tmp, 'swap-away'));
  fs.symlinkSync(a.outside, path.join(a.root, 'swap'));
  t.is(JSON.stringify(a.read('swap/inner.md')), NOT_FOUND);
  const r = a.search('lantern', 10);
  assertClean(t, r, a);
  t.deepEqual(idsOf(r), ['notes/plain.md']);
});

test('symlink › a policy root that is or passes through a symlink makes every call unavailable', (t) => {
  const a = arena();
  const alias = path.join(a.tmp, 'alias');
  fs.symlinkSync(a.root, alias);
  const viaMiddle = path.join(a.tmp, 'mid');
  fs.symlinkSync(a.tmp, viaMiddle);
  for (const root of [
    alias,
    path.join(viaMiddle, 'memory'),
    '/proc/self/cwd',
    `/proc/self/root${a.root}`,
    `/proc/1/root${a.root}`,
  ]) {
    a.setPolicy({ root });
    t.is(JSON.stringify(a.read('notes/plain.md')), UNAVAILABLE, root);
    t.is(JSON.stringify(a.search('lantern')), UNAVAILABLE, root);
  }
});

test('symlink › a symlinked home, policy directory or policy file makes every call unavailable', (t) => {
  const a = arena();
  const cases: [string, () => void][] = [];
  const pdir = path.dirname(a.policyPath);
  // Policy file → a trusted copy elsewhere.
  cases.push([
    'policy file',
    () => {
      const copy = path.join(a.tmp, 'policy-copy.json');
      fs.copyFileSync(a.policyPath, copy);
      fs.rmSync(a.policyPath);
      fs.symlinkSync(copy, a.policyPath);
    },
  ]);
  cases.push([
    'policy directory',
    () => {
      const real = mkdirs(a.tmp, 'real-pdir');
      fs.renameSync(pdir, path.join(real, 'memory-bridge'));
      fs.symlinkSync(path.join(real, 'memory-bridge'), pdir);
    },
  ]);
  for (const [what, make] of cases) {
    t.true(a.search('lantern').ok, `before ${what}`);
    make();
    t.is(JSON.stringify(a.search('lantern')), UNAVAILABLE, what);
    t.is(JSON.stringify(a.read('notes/plain.md')), UNAVAILABLE, what);
    // restore a plain policy for the next case
    fs.rmSync(pdir, { recursive: true, force: true });
    mkdirs(a.home, 'plugin-data/memory-bridge');
    a.setPolicy({});
    fs.chmodSync(a.policyPath, 0o600);
  }
  const homeLink = path.join(a.tmp, 'home-link');
  fs.symlinkSync(a.home, homeLink);
  const viaLink = { ...a.caller, home: homeLink };
  t.is(JSON.stringify(a.bridge.search({ query: 'lantern' }, viaLink)), UNAVAILABLE);
  t.is(JSON.stringify(a.bridge.read({ id: 'notes/plain.md' }, viaLink)), UNAVAILABLE);
});
