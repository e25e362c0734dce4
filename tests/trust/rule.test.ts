import fs from 'node:fs';
import test from 'ava';
import type { FileStat } from '../../native/types.js';
import type { Reason } from '../../src/errors.js';
import {
  aclReason,
  decodeNoteText,
  dirStatReason,
  identityKey,
  noteStatReason,
  readExactly,
} from '../../src/trust/rule.js';
import { ACL_TAG, aclBytes, makeTempDir, removeTree, writeNote } from '../helpers/fixtures.js';
import { realNative } from './support.js';

const dir = makeTempDir('mb-rule-');
test.after.always(() => removeTree(dir));
const native = realNative();
const RUN = 1000;

/** An fstat result as data (the checks are pure functions of it). */
function st(over: Partial<FileStat>): FileStat {
  return {
    dev: 1n,
    ino: 2n,
    mode: 0o100600,
    nlink: 1,
    uid: RUN,
    gid: RUN,
    size: 10,
    mtimeNs: 3n,
    ctimeNs: 4n,
    ...over,
  };
}
const DIR = 0o040000;

const dirCases: Array<[string, FileStat, { path: string; intermediate: boolean } | undefined, Reason | null]> = [
  ['an owner-only directory of the running user', st({ mode: DIR | 0o700 }), undefined, null],
  ['a root-owned 0755 directory', st({ mode: DIR | 0o755, uid: 0 }), undefined, null],
  ['a regular file', st({ mode: 0o100700 }), undefined, 'not_directory'],
  ['a directory of another user', st({ mode: DIR | 0o700, uid: 4242 }), undefined, 'untrusted_owner'],
  ['a group-writable directory', st({ mode: DIR | 0o770 }), undefined, 'group_writable'],
  ['a world-writable directory', st({ mode: DIR | 0o707 }), undefined, 'world_writable'],
  [
    'root-owned sticky /tmp as an intermediate',
    st({ mode: DIR | 0o1777, uid: 0 }),
    { path: '/tmp', intermediate: true },
    null,
  ],
  [
    'root-owned sticky /private/var/tmp as an intermediate',
    st({ mode: DIR | 0o1777, uid: 0 }),
    { path: '/private/var/tmp', intermediate: true },
    null,
  ],
  [
    'root-owned sticky /tmp as the target',
    st({ mode: DIR | 0o1777, uid: 0 }),
    { path: '/tmp', intermediate: false },
    'sticky_tmp',
  ],
  [
    'root-owned non-sticky world-writable /tmp',
    st({ mode: DIR | 0o777, uid: 0 }),
    { path: '/tmp', intermediate: true },
    'group_writable',
  ],
  [
    'a sticky /tmp owned by the running user',
    st({ mode: DIR | 0o1777 }),
    { path: '/tmp', intermediate: true },
    'group_writable',
  ],
  [
    'root-owned sticky /tmp/x (not exactly a temp path)',
    st({ mode: DIR | 0o1777, uid: 0 }),
    { path: '/tmp/x', intermediate: true },
    'group_writable',
  ],
  [
    'root-owned sticky /dev/shm',
    st({ mode: DIR | 0o1777, uid: 0 }),
    { path: '/dev/shm', intermediate: true },
    'group_writable',
  ],
];
for (const [what, s, sticky, expected] of dirCases) {
  test(`rule › directory: ${what} → ${expected ?? 'trusted'}`, (t) => {
    t.is(dirStatReason(s, RUN, sticky), expected);
  });
}

const noteCases: Array<[string, FileStat, Reason | null]> = [
  ['a 0600 note of the running user', st({}), null],
  ['a 0644 note owned by root', st({ uid: 0, mode: 0o100644 }), null],
  ['a directory', st({ mode: DIR | 0o700 }), 'not_regular'],
  ['a FIFO', st({ mode: 0o010600 }), 'not_regular'],
  ['a symlink', st({ mode: 0o120777 }), 'not_regular'],
  ['another user’s note', st({ uid: 4242 }), 'untrusted_owner'],
  ['a group-writable note', st({ mode: 0o100660 }), 'group_writable'],
  ['a world-writable note', st({ mode: 0o100606 }), 'world_writable'],
  ['a hard-linked note', st({ nlink: 2 }), 'hard_link'],
  ['a note with link count 0 (unlinked while open)', st({ nlink: 0 }), 'hard_link'],
  ['a note on another device', st({ dev: 9n }), 'other_device'],
  ['a note one byte over the limit', st({ size: 101 }), 'too_large'],
  ['a note exactly at the limit', st({ size: 100 }), null],
];
for (const [what, s, expected] of noteCases) {
  test(`rule › note metadata: ${what} → ${expected ?? 'trusted'}`, (t) => {
    t.is(noteStatReason(s, RUN, 1n, 100), expected);
  });
}

test('rule › ACL reads: none passes, errors and malformed bytes are unreadable, write grants refuse', (t) => {
  t.is(aclReason({ kind: 'none' }, RUN), null);
  t.is(aclReason({ kind: 'error', errno: 95 }, RUN), 'acl_unreadable');
  t.is(aclReason({ kind: 'linux', bytes: Buffer.from([2, 0, 0, 0, 1]) }, RUN), 'acl_unreadable');
  const readOnly = aclBytes([
    { tag: ACL_TAG.USER_OBJ, perm: 6 },
    { tag: ACL_TAG.USER, perm: 4, id: 4242 },
    { tag: ACL_TAG.GROUP_OBJ, perm: 4 },
    { tag: ACL_TAG.MASK, perm: 4 },
    { tag: ACL_TAG.OTHER, perm: 4 },
  ]);
  t.is(aclReason({ kind: 'linux', bytes: readOnly }, RUN), null);
  const grant = Buffer.from(readOnly);
  grant.writeUInt16LE(6, 4 + 8 + 2); // the named user's perm: rw
  t.is(aclReason({ kind: 'linux', bytes: grant }, RUN), 'acl_write');
  t.is(aclReason({ kind: 'darwin', entries: [{ tag: 1, perms: 0x4n, idType: 'uid', id: 4242 }] }, RUN), 'acl_write');
  t.is(aclReason({ kind: 'darwin', entries: [{ tag: 1, perms: 0x2n, idType: 'uid', id: 4242 }] }, RUN), null);
});

const contentCases: Array<[string, number[], string]> = [
  ['plain ASCII', [0x61, 0x0a], 'text'],
  ['a 4-byte sequence (emoji)', [0xf0, 0x9f, 0x8c, 0xb1], 'text'],
  ['a NUL byte', [0x61, 0x00, 0x62], 'binary'],
  ['an overlong encoding of "/"', [0xc0, 0xaf], 'invalid_utf8'],
  ['an encoded surrogate', [0xed, 0xa0, 0x80], 'invalid_utf8'],
  ['a truncated sequence at the end', [0x61, 0xe2, 0x82], 'invalid_utf8'],
  ['a lone continuation byte', [0x80], 'invalid_utf8'],
  ['a code point above U+10FFFF', [0xf4, 0x90, 0x80, 0x80], 'invalid_utf8'],
];
for (const [what, bytes, expected] of contentCases) {
  test(`rule › content: ${what} → ${expected}`, (t) => {
    const r = decodeNoteText(Uint8Array.from(bytes));
    t.is('text' in r ? 'text' : r.reason, expected);
  });
}

test('rule › content: a leading byte order mark is dropped from the text', (t) => {
  t.deepEqual(decodeNoteText(Uint8Array.from([0xef, 0xbb, 0xbf, 0x23, 0x20, 0x41])), { text: '# A' });
});

test('rule › the identity key joins device, inode, size, mtime and ctime', (t) => {
  t.is(identityKey(st({ dev: 65024n, ino: 77n, size: 5, mtimeNs: 1n, ctimeNs: 2n })), '65024:77:5:1:2');
});

test('rule › readExactly refuses a file that grew or shrank after its fstat', (t) => {
  const file = writeNote(dir, 'change.md', '0123456789');
  const fd = fs.openSync(file, 'r+');
  try {
    const size = native.fstat(fd).size;
    t.is(readExactly(native, fd, size)?.toString(), '0123456789');
    fs.appendFileSync(file, 'more');
    t.is(readExactly(native, fd, size), null);
    fs.ftruncateSync(fd, 4);
    t.is(readExactly(native, fd, size), null);
    t.is(readExactly(native, fd, 4)?.toString(), '0123');
  } finally {
    fs.closeSync(fd);
  }
});
