/**
 * Case and Unicode-normalisation variants of denied names. This kernel's filesystems (ext4, tmpfs) compare names
 * byte for byte, so the threat is the other direction: a policy or an id spelled in another case or normal form
 * than the name on disk. Deny patterns match case-insensitively and must also hold whatever normal form the
 * operator typed them in; read resolves ids byte-exactly; a name stored in NFD is served by its own bytes and is
 * allowed and denied exactly as its NFC spelling.
 */
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { writeNote } from '../helpers/fixtures.js';
import { MARK, NOT_FOUND, UNAVAILABLE, assertClean, idsOf, makeArena, planted, type Arena } from './support.js';

const arenas: Arena[] = [];
test.after.always(() => {
  for (const a of arenas) a.cleanup();
});
function arena(fields: Record<string, unknown>): Arena {
  const a = makeArena({ names: 'unicode', ...fields });
  arenas.push(a);
  writeNote(a.root, 'notes/plain.md', '# Plain\n\nlantern\n');
  return a;
}

const NFC = 'caf\u00e9';
const NFD = 'cafe\u0301';

test('unicode-case › a deny pattern in any letter case denies the note whatever its on-disk case', (t) => {
  for (const [pattern, onDisk] of [
    ['**/secret.md', 'notes/Secret.md'],
    ['**/SECRET.md', 'notes/secret.md'],
    ['notes/sEcReT.md', 'notes/SeCrEt.md'],
    ['**/private/**', 'Private/x.md'],
    ['**/PRIVATE/**', 'notes/private/x.md'],
    ['**/Stra\u00dfe.md', 'notes/STRA\u00dfE.md'],
    ['**/\u00e9t\u00e9.md', 'notes/\u00c9T\u00c9.md'],
    ['**/\u0434\u043e\u043c.md', 'notes/\u0414\u041e\u041c.md'],
    ['**/k*.md', 'notes/\u212aelvin.md'],
  ] as const) {
    const a = arena({ deny: [pattern] });
    writeNote(a.root, onDisk, planted(MARK.denied));
    t.is(JSON.stringify(a.read(onDisk)), NOT_FOUND, `${pattern} vs ${onDisk}`);
    const r = a.search(`lantern ${MARK.denied}`, 10);
    assertClean(t, r, a, pattern);
    t.deepEqual(idsOf(r), ['notes/plain.md'], pattern);
  }
});

test('unicode-case › a deny pattern typed in NFD (or NFKD-looking) form denies the NFC note, or the policy is refused', (t) => {
  for (const pattern of [
    `notes/${NFD}.md`,
    `**/${NFD}*`,
    `notes/{${NFD},x}.md`,
    `notes/[${NFD.slice(0, 3)}]*e\u0301.md`,
  ]) {
    const a = arena({ deny: [pattern] });
    writeNote(a.root, `notes/${NFC}.md`, planted(MARK.denied));
    const read = JSON.stringify(a.read(`notes/${NFC}.md`));
    t.true(read === NOT_FOUND || read === UNAVAILABLE, `${JSON.stringify(pattern)}: ${read.slice(0, 100)}`);
    const r = a.search(`lantern ${MARK.denied}`, 10);
    assertClean(t, r, a, pattern);
  }
});

test('unicode-case › read resolves byte-exactly: case and NFC/NFD variants of a name never alias it', (t) => {
  const a = arena({ deny: ['notes/secret.md', `notes/${NFC}.md`] });
  writeNote(a.root, 'notes/secret.md', planted(MARK.denied));
  writeNote(a.root, `notes/${NFC}.md`, planted(MARK.denied));
  writeNote(a.root, 'notes/file.md', planted(MARK.denied));
  a.setPolicy({ names: 'unicode', deny: ['notes/secret.md', `notes/${NFC}.md`, 'notes/file.md'] });
  for (const id of [
    'notes/Secret.md',
    'notes/SECRET.md',
    'NOTES/secret.md',
    'notes/secret.MD',
    'notes/secret.Md',
    `notes/${NFD}.md`,
    `notes/${NFC.toUpperCase()}.md`,
    `notes/${NFD.toUpperCase()}.md`,
    'notes/\ufb01le.md',
    'notes/\uff46ile.md',
    'notes/file\u200d.md',
    'notes/\u0455ecret.md',
    'notes/s\u0435cret.md',
  ]) {
    const r = a.read(id);
    t.true(JSON.stringify(r) === NOT_FOUND || (!r.ok && r.error.code === 'invalid_request'), id);
    assertClean(t, r, a, id);
  }
});

test('unicode-case › a note stored under an NFD name is served by its own bytes, never by its NFC spelling', (t) => {
  const a = arena({});
  writeNote(a.root, `notes/${NFD}.md`, '# Espresso\n\nlantern crema\n');
  fs.mkdirSync(path.join(a.root, `${NFD}-dir`), { mode: 0o700 });
  writeNote(a.root, `${NFD}-dir/inner.md`, '# Inner\n\nlantern inner\n');
  // The names on disk are the decomposed bytes (ext4 keeps them as written).
  t.true(fs.readdirSync(path.join(a.root, 'notes')).includes(`${NFD}.md`));
  t.false(fs.readdirSync(path.join(a.root, 'notes')).includes(`${NFC}.md`));
  const own = a.read(`notes/${NFD}.md`);
  t.true(own.ok && 'content' in own && own.content.includes('crema'));
  t.true(a.read(`${NFD}-dir/inner.md`).ok);
  t.is(JSON.stringify(a.read(`notes/${NFC}.md`)), NOT_FOUND);
  t.is(JSON.stringify(a.read(`${NFC}-dir/inner.md`)), NOT_FOUND);
  const r = a.search('lantern', 10);
  assertClean(t, r, a);
  t.deepEqual(idsOf(r)?.sort(), [`${NFD}-dir/inner.md`, `notes/${NFD}.md`, 'notes/plain.md'].sort());
  // Name terms are folded (NFKC), so the composed and the decomposed query both find the note by its name.
  for (const query of [NFC, NFD]) t.deepEqual(idsOf(a.search(query, 10)), [`notes/${NFD}.md`], query);
});

test('unicode-case › an NFC deny or allow pattern covers the NFD spelling of a name (note and folder)', (t) => {
  const a = arena({ deny: [`notes/${NFC}.md`, `${NFC}-dir/**`] });
  writeNote(a.root, `notes/${NFD}.md`, planted(MARK.denied));
  writeNote(a.root, `${NFD}-dir/inner.md`, planted(MARK.denied));
  t.is(JSON.stringify(a.read(`notes/${NFD}.md`)), NOT_FOUND);
  t.is(JSON.stringify(a.read(`${NFD}-dir/inner.md`)), NOT_FOUND);
  const r = a.search(`lantern ${MARK.denied}`, 10);
  assertClean(t, r, a);
  t.deepEqual(idsOf(r), ['notes/plain.md']);
  // Upper case and NFD together: still denied.
  a.setPolicy({ names: 'unicode', deny: [`**/${NFC.toUpperCase()}*.md`, `${NFC.toUpperCase()}-DIR/**`] });
  t.is(JSON.stringify(a.read(`notes/${NFD}.md`)), NOT_FOUND);
  t.is(JSON.stringify(a.read(`${NFD}-dir/inner.md`)), NOT_FOUND);
  assertClean(t, a.search(`lantern ${MARK.denied}`, 10), a);
  // Allow in NFC admits exactly the NFD-stored note, and `within` in NFC narrows to it.
  a.setPolicy({ names: 'unicode', allow: [`notes/${NFC}.md`, 'notes/plain.md'] });
  t.true(a.read(`notes/${NFD}.md`).ok);
  t.is(JSON.stringify(a.read(`${NFD}-dir/inner.md`)), NOT_FOUND);
  const within = a.bridge.search({ query: 'lantern', within: [`**/${NFC}.md`] }, a.caller);
  t.deepEqual(idsOf(within), [`notes/${NFD}.md`]);
});

test('unicode-case › an NFC name is served by its NFC id, and a denied directory stays denied in every case', (t) => {
  const a = arena({ deny: ['private/**'] });
  writeNote(a.root, `notes/${NFC}.md`, '# Caf\u00e9\n\nlantern espresso\n');
  for (const dir of ['Private', 'PRIVATE', 'pRiVaTe']) writeNote(a.root, `${dir}/x.md`, planted(MARK.denied));
  const ok = a.read(`notes/${NFC}.md`);
  t.true(ok.ok);
  for (const dir of ['Private', 'PRIVATE', 'pRiVaTe', 'private'])
    t.is(JSON.stringify(a.read(`${dir}/x.md`)), NOT_FOUND, dir);
  const r = a.search(`lantern ${MARK.denied}`, 10);
  assertClean(t, r, a);
  t.deepEqual(idsOf(r)?.sort(), [`notes/${NFC}.md`, 'notes/plain.md']);
});
