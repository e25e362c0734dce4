import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import type { Native } from '../../native/types.js';
import { readNoteById } from '../../src/trust/note.js';
import { openTrustedDir } from '../../src/trust/path.js';
import type { NoteFilter, ScanLimits } from '../../src/trust/types.js';
import {
  FOREIGN_GID,
  FOREIGN_UID,
  addAclEntry,
  countingNative,
  isRoot,
  makeTempDir,
  mkdirs,
  openDescriptorCount,
  removeTree,
  writeNote,
} from '../helpers/fixtures.js';
import { ALLOW_ALL, filterDenying, limits, realNative, reasonOf } from './support.js';

const rootTest = isRoot ? test : test.skip;
const root = makeTempDir('mb-read-');
test.after.always(() => removeTree(root));
const native = realNative();

writeNote(root, 'projects/garden.md', '# Lantern Garden\n');
writeNote(root, 'top.md', 'top');
writeNote(root, 'private/secret.md', 'secret');
writeNote(root, 'denied.md', 'denied');
const filter = filterDenying('private/', 'denied.md');

function read(id: string, f: NoteFilter = filter, lim: ScanLimits = limits(), nat: Native = native): string {
  const fd = openTrustedDir(root, 'root', native);
  try {
    return readNoteById(fd, id, f, lim, nat);
  } finally {
    native.close(fd);
  }
}

const refusal = (id: string, f: NoteFilter = filter, lim: ScanLimits = limits(), nat: Native = native) =>
  reasonOf(() => read(id, f, lim, nat));

test('read › returns the verified text of an allowed note', (t) => {
  t.is(read('projects/garden.md'), '# Lantern Garden\n');
  t.is(read('top.md'), 'top');
});

test('read › a denied note or a note in a directory that may not be entered is refused before any filesystem call', (t) => {
  const counting = countingNative(native);
  t.is(refusal('denied.md', filter, limits(), counting.native), 'not_found_or_denied/denied');
  t.is(refusal('private/secret.md', filter, limits(), counting.native), 'not_found_or_denied/denied');
  const enterOnly: NoteFilter = { allowsNote: () => true, mayEnter: (d) => d !== 'private' };
  t.is(refusal('private/secret.md', enterOnly, limits(), counting.native), 'not_found_or_denied/denied');
  t.deepEqual(counting.calls, {});
});

test('read › too deep, bad names, hidden names and non-notes are refused before any filesystem call', (t) => {
  const counting = countingNative(native);
  const nat = counting.native;
  t.is(refusal('projects/garden.md', ALLOW_ALL, limits({ maxDepth: 1 }), nat), 'not_found_or_denied/too_deep');
  t.is(refusal('with space.md', ALLOW_ALL, limits(), nat), 'not_found_or_denied/bad_name');
  t.is(refusal('.hidden/x.md', ALLOW_ALL, limits(), nat), 'not_found_or_denied/hidden');
  t.is(refusal('projects', ALLOW_ALL, limits(), nat), 'not_found_or_denied/not_markdown');
  t.is(refusal('top.MD', ALLOW_ALL, limits(), nat), 'not_found_or_denied/not_markdown');
  t.deepEqual(counting.calls, {});
});

test('read › a case variant of a name does not resolve', (t) => {
  t.is(refusal('Top.md', ALLOW_ALL), 'not_found_or_denied/missing');
  t.is(refusal('Projects/garden.md', ALLOW_ALL), 'not_found_or_denied/missing');
  t.is(refusal('projects/GARDEN.md', ALLOW_ALL), 'not_found_or_denied/missing');
});

test('read › a name is matched byte for byte against the listing (an NFC id never opens an NFD name)', (t) => {
  writeNote(root, 'nfd/e\u0301.md', 'decomposed');
  const unicode = limits({ names: 'unicode' });
  t.is(refusal('nfd/\u00e9.md', ALLOW_ALL, unicode), 'not_found_or_denied/missing');
});

test('read › a missing note is not found', (t) => {
  t.is(refusal('absent.md', ALLOW_ALL), 'not_found_or_denied/missing');
  t.is(refusal('absent/x.md', ALLOW_ALL), 'not_found_or_denied/missing');
});

test('read › symlinked notes and directories are refused', (t) => {
  fs.symlinkSync('top.md', path.join(root, 'link.md'));
  fs.symlinkSync('projects', path.join(root, 'linkdir'));
  t.is(refusal('link.md', ALLOW_ALL), 'not_found_or_denied/symlink');
  t.is(refusal('linkdir/garden.md', ALLOW_ALL), 'not_found_or_denied/symlink');
});

test('read › a hard-linked note is refused', (t) => {
  const a = writeNote(root, 'hard/a.md', 'x');
  fs.linkSync(a, path.join(root, 'hard/b.md'));
  t.is(refusal('hard/a.md', ALLOW_ALL), 'not_found_or_denied/hard_link');
});

test('read › untrusted notes and directories are refused', (t) => {
  writeNote(root, 'untrusted/gw.md', 'x', 0o620);
  const acl = writeNote(root, 'untrusted/acl.md', 'x');
  addAclEntry(acl, 'group', 4242, 2);
  writeNote(root, 'gwdir/x.md', 'x');
  fs.chmodSync(path.join(root, 'gwdir'), 0o770);
  t.is(refusal('untrusted/gw.md', ALLOW_ALL), 'not_found_or_denied/group_writable');
  // addAclEntry sets a mask of rwx, which shows as the group write bit: either reason refuses it.
  t.regex(refusal('untrusted/acl.md', ALLOW_ALL), /^not_found_or_denied\/(acl_write|group_writable)$/);
  t.is(refusal('gwdir/x.md', ALLOW_ALL), 'not_found_or_denied/group_writable');
});

rootTest('read › a note owned by another user is refused (needs root)', (t) => {
  const f = writeNote(root, 'foreign/x.md', 'x');
  fs.chownSync(f, FOREIGN_UID, FOREIGN_GID);
  t.is(refusal('foreign/x.md', ALLOW_ALL), 'not_found_or_denied/untrusted_owner');
});

test('read › oversized, binary and invalid UTF-8 notes are refused', (t) => {
  writeNote(root, 'content/big.md', 'x'.repeat(20));
  writeNote(root, 'content/nul.md', Buffer.from('a\0b'));
  writeNote(root, 'content/latin1.md', Buffer.from([0xe9]));
  t.is(refusal('content/big.md', ALLOW_ALL, limits({ maxFileBytes: 19 })), 'not_found_or_denied/too_large');
  t.is(read('content/big.md', ALLOW_ALL, limits({ maxFileBytes: 20 })).length, 20);
  t.is(refusal('content/nul.md', ALLOW_ALL), 'not_found_or_denied/binary');
  t.is(refusal('content/latin1.md', ALLOW_ALL), 'not_found_or_denied/invalid_utf8');
});

test('read › a directory named like a note is not a note', (t) => {
  mkdirs(root, 'dir.md');
  t.is(refusal('dir.md', ALLOW_ALL), 'not_found_or_denied/not_regular');
});

test('read › refusals and reads leave the descriptor count unchanged', (t) => {
  const before = openDescriptorCount();
  for (let i = 0; i < 100; i++) {
    read('projects/garden.md');
    refusal('absent/x.md', ALLOW_ALL);
    refusal('Projects/garden.md', ALLOW_ALL);
    refusal('hard/a.md', ALLOW_ALL);
    refusal('gwdir/x.md', ALLOW_ALL);
  }
  t.is(openDescriptorCount(), before);
});
