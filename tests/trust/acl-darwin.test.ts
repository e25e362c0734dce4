import test from 'ava';
import type { DarwinAclEntry } from '../../native/types.js';
import { DARWIN_ACL_TAG, DARWIN_WRITE_CLASS, darwinAclGrantsForeignWrite } from '../../src/trust/acl-darwin.js';

const RUN = 501;
const ALLOW = DARWIN_ACL_TAG.ALLOW;
const DENY = DARWIN_ACL_TAG.DENY;
const READ_DATA = 0x2n;
const READ_ATTRIBUTES = 0x80n;
const user = (tag: number, perms: bigint, id: number): DarwinAclEntry => ({ tag, perms, idType: 'uid', id });
const group = (tag: number, perms: bigint, id: number): DarwinAclEntry => ({ tag, perms, idType: 'gid', id });

const WRITE_BITS: Array<[string, bigint]> = [
  ['write_data/add_file', 0x4n],
  ['delete', 0x10n],
  ['append_data/add_subdirectory', 0x20n],
  ['delete_child', 0x40n],
  ['writeattr', 0x100n],
  ['writeextattr', 0x400n],
  ['writesecurity', 0x1000n],
  ['chown', 0x2000n],
];

test('acl-darwin › the write class is exactly the eight documented bits', (t) => {
  t.is(
    DARWIN_WRITE_CLASS,
    WRITE_BITS.reduce((a, [, b]) => a | b, 0n),
  );
});

for (const [what, bit] of WRITE_BITS) {
  test(`acl-darwin › an allow entry granting ${what} to another user is refused`, (t) => {
    t.true(darwinAclGrantsForeignWrite([user(ALLOW, bit, 777)], RUN));
  });
}

const cases: Array<[string, DarwinAclEntry[], boolean]> = [
  ['no entries', [], false],
  [
    'read-only allow entries for others',
    [user(ALLOW, READ_DATA | READ_ATTRIBUTES, 777), group(ALLOW, READ_DATA, 20)],
    false,
  ],
  ['a write allow for the running user', [user(ALLOW, 0x4n | 0x20n, RUN)], false],
  ['a write allow for root', [user(ALLOW, 0x4n, 0)], false],
  ['a write allow for a group, even gid 0', [group(ALLOW, 0x4n, 0)], true],
  ['a write allow for another user after a deny for that user', [user(DENY, 0x4n, 777), user(ALLOW, 0x4n, 777)], true],
  ['a write allow for another user before a deny for that user', [user(ALLOW, 0x4n, 777), user(DENY, 0x4n, 777)], true],
  ['deny entries alone', [user(DENY, 0x4n | 0x2000n, 777), group(DENY, 0x4n, 20)], false],
  ['an unknown tag', [{ tag: 3, perms: READ_DATA, idType: 'uid', id: RUN }], true],
  ['an unresolved qualifier on a read-only allow', [{ tag: ALLOW, perms: READ_DATA, idType: null, id: null }], true],
  ['an unresolved qualifier on a write allow', [{ tag: ALLOW, perms: 0x4n, idType: null, id: null }], true],
  ['an unresolved qualifier on a deny', [{ tag: DENY, perms: 0x4n, idType: null, id: null }], true],
  ['a gid equal to the running uid with write', [group(ALLOW, 0x4n, RUN)], true],
];
for (const [what, entries, refuses] of cases) {
  test(`acl-darwin › ${what} → ${refuses ? 'refused' : 'accepted'}`, (t) => {
    t.is(darwinAclGrantsForeignWrite(entries, RUN), refuses);
  });
}
