import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import {
  AclParseError,
  LINUX_ACL_TAG as T,
  LINUX_ACL_UNDEFINED_ID,
  linuxAclGrantsForeignWrite,
  parseLinuxAcl,
  type LinuxAclEntry,
} from '../../src/trust/acl-linux.js';
import { aclBytes, addAclEntry, makeTempDir, removeTree, setXattr, type AclEntrySpec } from '../helpers/fixtures.js';
import { realNative } from './support.js';

const dir = makeTempDir('mb-acl-');
test.after.always(() => removeTree(dir));

const U = LINUX_ACL_UNDEFINED_ID;
const base: AclEntrySpec[] = [
  { tag: T.USER_OBJ, perm: 6 },
  { tag: T.GROUP_OBJ, perm: 4 },
  { tag: T.OTHER, perm: 4 },
];

/** setfacl -m u:1001:rw,g:2002:w as read back on the project's machine (docs/PLATFORM.md). */
const EXAMPLE_HEX =
  '02000000' +
  '01000600ffffffff' +
  '02000600e9030000' +
  '04000400ffffffff' +
  '08000200d2070000' +
  '10000600ffffffff' +
  '20000400ffffffff';

test('acl-linux › parses the documented example bytes', (t) => {
  const entries = parseLinuxAcl(Buffer.from(EXAMPLE_HEX, 'hex'));
  t.deepEqual(entries, [
    { tag: T.USER_OBJ, perm: 6, id: U },
    { tag: T.USER, perm: 6, id: 1001 },
    { tag: T.GROUP_OBJ, perm: 4, id: U },
    { tag: T.GROUP, perm: 2, id: 2002 },
    { tag: T.MASK, perm: 6, id: U },
    { tag: T.OTHER, perm: 4, id: U },
  ]);
});

test('acl-linux › parses a minimal three-entry ACL', (t) => {
  t.is(parseLinuxAcl(aclBytes(base)).length, 3);
});

test('acl-linux › parses bytes the kernel stored and returns them unchanged through readAcl', (t) => {
  const file = path.join(dir, 'kernel-roundtrip');
  fs.writeFileSync(file, 'x');
  fs.chmodSync(file, 0o640);
  addAclEntry(file, 'user', 4242, 6);
  const native = realNative();
  const fd = fs.openSync(file, 'r');
  try {
    const acl = native.readAcl(fd);
    t.is(acl.kind, 'linux');
    if (acl.kind !== 'linux') return;
    const entries = parseLinuxAcl(acl.bytes);
    t.deepEqual(
      entries.find((e) => e.tag === T.USER),
      { tag: T.USER, perm: 6, id: 4242 },
    );
    t.deepEqual(
      entries.map((e) => e.tag),
      [T.USER_OBJ, T.USER, T.GROUP_OBJ, T.MASK, T.OTHER],
    );
  } finally {
    fs.closeSync(fd);
  }
});

test('acl-linux › accepts unsorted and duplicate named ids exactly as the kernel stores them', (t) => {
  const file = path.join(dir, 'unsorted');
  fs.writeFileSync(file, 'x');
  const spec: AclEntrySpec[] = [
    { tag: T.USER_OBJ, perm: 6 },
    { tag: T.USER, perm: 4, id: 1002 },
    { tag: T.USER, perm: 4, id: 1001 },
    { tag: T.USER, perm: 4, id: 1001 },
    { tag: T.GROUP_OBJ, perm: 4 },
    { tag: T.GROUP, perm: 4, id: 7 },
    { tag: T.GROUP, perm: 4, id: 3 },
    { tag: T.MASK, perm: 4 },
    { tag: T.OTHER, perm: 0 },
  ];
  setXattr(file, 'system.posix_acl_access', aclBytes(spec));
  const fd = fs.openSync(file, 'r');
  try {
    const acl = realNative().readAcl(fd);
    if (acl.kind !== 'linux') return t.fail(`expected linux ACL, got ${acl.kind}`);
    const ids = parseLinuxAcl(acl.bytes)
      .filter((e) => e.tag === T.USER || e.tag === T.GROUP)
      .map((e) => e.id);
    t.deepEqual(ids, [1002, 1001, 1001, 7, 3]);
  } finally {
    fs.closeSync(fd);
  }
});

const named = (tag: number, perm: number, id: number): AclEntrySpec => ({ tag, perm, id });
const malformed: Array<[string, Buffer]> = [
  ['an empty attribute', Buffer.alloc(0)],
  ['a length that is not 4 + 8N', Buffer.concat([aclBytes(base), Buffer.from([0])])],
  ['a truncated header', Buffer.from([2, 0])],
  [
    'version 1',
    (() => {
      const b = aclBytes(base);
      b.writeUInt32LE(1, 0);
      return b;
    })(),
  ],
  [
    'version 3',
    (() => {
      const b = aclBytes(base);
      b.writeUInt32LE(3, 0);
      return b;
    })(),
  ],
  [
    'fewer than three entries',
    aclBytes([
      { tag: T.USER_OBJ, perm: 6 },
      { tag: T.OTHER, perm: 4 },
    ]),
  ],
  ['a named user without MASK', aclBytes([base[0]!, named(T.USER, 4, 5), base[1]!, base[2]!])],
  ['a MASK without any named entry', aclBytes([base[0]!, base[1]!, { tag: T.MASK, perm: 4 }, base[2]!])],
  ['a named group without MASK', aclBytes([base[0]!, base[1]!, named(T.GROUP, 4, 5), base[2]!])],
  ['GROUP_OBJ before USER_OBJ', aclBytes([base[1]!, base[0]!, base[2]!])],
  [
    'a USER entry after GROUP_OBJ',
    aclBytes([base[0]!, base[1]!, named(T.USER, 4, 5), { tag: T.MASK, perm: 4 }, base[2]!]),
  ],
  ['MASK after OTHER', aclBytes([base[0]!, named(T.USER, 4, 5), base[1]!, base[2]!, { tag: T.MASK, perm: 4 }])],
  ['OTHER missing', aclBytes([base[0]!, base[1]!, { tag: T.MASK, perm: 4 }])],
  ['GROUP_OBJ missing', aclBytes([base[0]!, named(T.USER, 4, 5), { tag: T.MASK, perm: 4 }, base[2]!])],
  ['a duplicate USER_OBJ', aclBytes([base[0]!, base[0]!, base[1]!, base[2]!])],
  ['a duplicate GROUP_OBJ', aclBytes([base[0]!, base[1]!, base[1]!, base[2]!])],
  ['a duplicate OTHER', aclBytes([base[0]!, base[1]!, base[2]!, base[2]!])],
  [
    'a duplicate MASK',
    aclBytes([base[0]!, named(T.USER, 4, 5), base[1]!, { tag: T.MASK, perm: 4 }, { tag: T.MASK, perm: 4 }, base[2]!]),
  ],
  ['permission bit 8', aclBytes([{ tag: T.USER_OBJ, perm: 8 | 6 }, base[1]!, base[2]!])],
  ['permission bits 0xffff', aclBytes([base[0]!, base[1]!, { tag: T.OTHER, perm: 0xffff }])],
  ['an unknown tag', aclBytes([base[0]!, { tag: 0x40, perm: 4 }, base[1]!, base[2]!])],
  ['tag zero', aclBytes([base[0]!, { tag: 0, perm: 4 }, base[1]!, base[2]!])],
  ['a qualifier on USER_OBJ', aclBytes([{ tag: T.USER_OBJ, perm: 6, id: 0 }, base[1]!, base[2]!])],
  ['a qualifier on OTHER', aclBytes([base[0]!, base[1]!, { tag: T.OTHER, perm: 4, id: 1000 }])],
];

for (const [what, bytes] of malformed) {
  test(`acl-linux › rejects ${what}`, (t) => {
    t.throws(() => parseLinuxAcl(bytes), { instanceOf: AclParseError });
  });
}

test('acl-linux › a MASK without named entries is refused even though the kernel stores it (deliberately stricter)', (t) => {
  const file = path.join(dir, 'mask-only');
  fs.writeFileSync(file, 'x');
  setXattr(file, 'system.posix_acl_access', aclBytes([base[0]!, base[1]!, { tag: T.MASK, perm: 4 }, base[2]!]));
  const fd = fs.openSync(file, 'r');
  try {
    const acl = realNative().readAcl(fd);
    if (acl.kind !== 'linux') return t.fail(`expected the kernel to store it, got ${acl.kind}`);
    t.throws(() => parseLinuxAcl(acl.bytes), { instanceOf: AclParseError });
  } finally {
    fs.closeSync(fd);
  }
});

test('acl-linux › the kernel rejects tags out of order, so such bytes never come from a real file', (t) => {
  const file = path.join(dir, 'kernel-rejects');
  fs.writeFileSync(file, 'x');
  t.throws(() => setXattr(file, 'system.posix_acl_access', aclBytes([base[1]!, base[0]!, base[2]!])));
});

// Write-grant rule truth table. uid is the running user in production; the table fixes it at 1000.
const RUN = 1000;
const acl = (...middle: LinuxAclEntry[]): LinuxAclEntry[] => [
  { tag: T.USER_OBJ, perm: 7, id: U },
  ...middle.filter((e) => e.tag === T.USER),
  { tag: T.GROUP_OBJ, perm: 5, id: U },
  ...middle.filter((e) => e.tag === T.GROUP),
  ...(middle.some((e) => e.tag === T.MASK) ? middle.filter((e) => e.tag === T.MASK) : []),
  ...(middle.some((e) => e.tag === T.OTHER)
    ? middle.filter((e) => e.tag === T.OTHER)
    : [{ tag: T.OTHER, perm: 5, id: U }]),
];
const grantCases: Array<[string, LinuxAclEntry[], boolean]> = [
  ['owner rwx only', acl(), false],
  [
    'a named user other than the running user or root with w',
    acl({ tag: T.USER, perm: 2, id: 4242 }, { tag: T.MASK, perm: 7, id: U }),
    true,
  ],
  [
    'a named user with w even when the mask has no w',
    acl({ tag: T.USER, perm: 6, id: 4242 }, { tag: T.MASK, perm: 4, id: U }),
    true,
  ],
  [
    'a named user for the running uid with w (mask r-x)',
    acl({ tag: T.USER, perm: 7, id: RUN }, { tag: T.MASK, perm: 5, id: U }),
    false,
  ],
  [
    'a named user for uid 0 with w (mask r-x)',
    acl({ tag: T.USER, perm: 7, id: 0 }, { tag: T.MASK, perm: 5, id: U }),
    false,
  ],
  // The mask is an entry like any other: its w bit counts (it also shows as the group write bit of the mode).
  [
    'a named user for the running uid with w and a mask with w',
    acl({ tag: T.USER, perm: 7, id: RUN }, { tag: T.MASK, perm: 7, id: U }),
    true,
  ],
  ['a named user read-only', acl({ tag: T.USER, perm: 5, id: 4242 }, { tag: T.MASK, perm: 5, id: U }), false],
  ['a named group with w', acl({ tag: T.GROUP, perm: 2, id: 4242 }, { tag: T.MASK, perm: 7, id: U }), true],
  ['a named group gid 0 with w', acl({ tag: T.GROUP, perm: 2, id: 0 }, { tag: T.MASK, perm: 7, id: U }), true],
  [
    'a named group whose gid equals the running uid with w',
    acl({ tag: T.GROUP, perm: 2, id: RUN }, { tag: T.MASK, perm: 7, id: U }),
    true,
  ],
  [
    'a named group with w and a mask without w',
    acl({ tag: T.GROUP, perm: 6, id: 4242 }, { tag: T.MASK, perm: 4, id: U }),
    true,
  ],
  ['a named group read-only', acl({ tag: T.GROUP, perm: 4, id: 4242 }, { tag: T.MASK, perm: 4, id: U }), false],
  [
    'a MASK with w over read-only named entries',
    acl({ tag: T.USER, perm: 4, id: 4242 }, { tag: T.MASK, perm: 6, id: U }),
    true,
  ],
  ['OTHER with w', acl({ tag: T.OTHER, perm: 7, id: U }), true],
  [
    'duplicate named entries where the second grants w',
    acl({ tag: T.USER, perm: 4, id: 4242 }, { tag: T.USER, perm: 6, id: 4242 }, { tag: T.MASK, perm: 6, id: U }),
    true,
  ],
];
for (const [what, entries, refuses] of grantCases) {
  test(`acl-linux › write grant: ${what} → ${refuses ? 'refused' : 'accepted'}`, (t) => {
    t.is(linuxAclGrantsForeignWrite(entries, RUN), refuses);
  });
}

test('acl-linux › write grant: GROUP_OBJ with w is refused', (t) => {
  const entries: LinuxAclEntry[] = [
    { tag: T.USER_OBJ, perm: 6, id: U },
    { tag: T.GROUP_OBJ, perm: 6, id: U },
    { tag: T.OTHER, perm: 4, id: U },
  ];
  t.true(linuxAclGrantsForeignWrite(entries, RUN));
});

test('acl-linux › write grant: the documented example (u:1001:rw, g:2002:w) is refused for any running user', (t) => {
  const entries = parseLinuxAcl(Buffer.from(EXAMPLE_HEX, 'hex'));
  t.true(linuxAclGrantsForeignWrite(entries, 1001)); // the group entry still refuses
  t.true(linuxAclGrantsForeignWrite(entries, 0));
});
