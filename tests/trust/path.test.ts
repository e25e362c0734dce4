import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { WalkMemo, openTrustedDir, readTrustedFile, withDescriptor } from '../../src/trust/path.js';
import {
  ACL_TAG,
  FOREIGN_GID,
  FOREIGN_UID,
  aclBytes,
  isRoot,
  countingNative,
  makeFifo,
  makeTempDir,
  mkdirs,
  openDescriptorCount,
  removeTree,
  setXattr,
  writeNote,
  type AclEntrySpec,
} from '../helpers/fixtures.js';
import { realNative, reasonOf } from './support.js';

const rootTest = isRoot ? test : test.skip;
const dir = makeTempDir('mb-path-');
test.after.always(() => removeTree(dir));
const native = realNative();
const uid = process.getuid!();
/** Neither root nor the running user. */
const STRANGER = 4242;

/** An ACL on a directory whose named entry has rwx while the mask is r-x (mode bits show no group write). */
function aclWithMaskedWrite(p: string, kind: 'user' | 'group', id: number): void {
  const entries: AclEntrySpec[] = [{ tag: ACL_TAG.USER_OBJ, perm: 7 }];
  if (kind === 'user') entries.push({ tag: ACL_TAG.USER, perm: 7, id });
  entries.push({ tag: ACL_TAG.GROUP_OBJ, perm: 5 });
  if (kind === 'group') entries.push({ tag: ACL_TAG.GROUP, perm: 7, id });
  entries.push({ tag: ACL_TAG.MASK, perm: 5 }, { tag: ACL_TAG.OTHER, perm: 5 });
  setXattr(p, 'system.posix_acl_access', aclBytes(entries));
}

function inoOfFd(fd: number): bigint {
  return fs.fstatSync(fd, { bigint: true }).ino;
}

function opens(p: string): bigint {
  const fd = openTrustedDir(p, 'root', native);
  try {
    return inoOfFd(fd);
  } finally {
    native.close(fd);
  }
}

test('path › opens a trusted directory under /tmp and returns a descriptor of exactly that directory', (t) => {
  const target = mkdirs(dir, 'ok/inner');
  t.is(opens(target), fs.statSync(target, { bigint: true }).ino);
});

test('path › opens / itself', (t) => {
  t.is(opens('/'), fs.statSync('/', { bigint: true }).ino);
});

test('path › a symlink in the middle of the path is refused', (t) => {
  mkdirs(dir, 'mid/real/inner');
  fs.symlinkSync('real', path.join(dir, 'mid/link'));
  t.is(
    reasonOf(() => openTrustedDir(path.join(dir, 'mid/link/inner'), 'root', native)),
    'unavailable/symlink',
  );
});

test('path › a symlink as the last component is refused', (t) => {
  mkdirs(dir, 'last/real');
  fs.symlinkSync('real', path.join(dir, 'last/link'));
  t.is(
    reasonOf(() => openTrustedDir(path.join(dir, 'last/link'), 'policy_dir', native)),
    'unavailable/symlink',
  );
});

test('path › a dangling symlink is refused as a symlink', (t) => {
  mkdirs(dir, 'dangle');
  fs.symlinkSync('nowhere', path.join(dir, 'dangle/link'));
  t.is(
    reasonOf(() => openTrustedDir(path.join(dir, 'dangle/link'), 'root', native)),
    'unavailable/symlink',
  );
});

test('path › a file in the path is not a directory; a missing component is missing', (t) => {
  writeNote(dir, 'file/x.md', 'x');
  t.is(
    reasonOf(() => openTrustedDir(path.join(dir, 'file/x.md'), 'root', native)),
    'unavailable/not_directory',
  );
  t.is(
    reasonOf(() => openTrustedDir(path.join(dir, 'file/x.md/y'), 'root', native)),
    'unavailable/not_directory',
  );
  t.is(
    reasonOf(() => openTrustedDir(path.join(dir, 'file/absent/y'), 'root', native)),
    'unavailable/missing',
  );
});

test('path › a group-writable ancestor is refused', (t) => {
  const gw = mkdirs(dir, 'gw');
  mkdirs(gw, 'inner');
  fs.chmodSync(gw, 0o770);
  t.is(
    reasonOf(() => openTrustedDir(path.join(gw, 'inner'), 'root', native)),
    'unavailable/group_writable',
  );
});

test('path › a world-writable target is refused', (t) => {
  const ww = mkdirs(dir, 'ww');
  fs.chmodSync(ww, 0o757);
  t.is(
    reasonOf(() => openTrustedDir(ww, 'root', native)),
    'unavailable/world_writable',
  );
});

test('path › a sticky world-writable directory outside the temp paths is refused even as an intermediate', (t) => {
  const sticky = mkdirs(dir, 'sticky');
  mkdirs(sticky, 'mine');
  fs.chmodSync(sticky, 0o1757);
  t.is(
    reasonOf(() => openTrustedDir(path.join(sticky, 'mine'), 'root', native)),
    'unavailable/world_writable',
  );
});

test('path › an ACL write grant to a named user on an ancestor is refused, even with a mask without w', (t) => {
  const a = mkdirs(dir, 'acl-user');
  mkdirs(a, 'inner');
  aclWithMaskedWrite(a, 'user', STRANGER);
  t.is(fs.statSync(a).mode & 0o020, 0, 'mode bits show no group write');
  t.is(
    reasonOf(() => openTrustedDir(path.join(a, 'inner'), 'root', native)),
    'unavailable/acl_write',
  );
});

test('path › an ACL write grant to a named group on an ancestor is refused, even gid 0', (t) => {
  const a = mkdirs(dir, 'acl-group');
  mkdirs(a, 'inner');
  aclWithMaskedWrite(a, 'group', 0);
  t.is(
    reasonOf(() => openTrustedDir(path.join(a, 'inner'), 'root', native)),
    'unavailable/acl_write',
  );
});

test('path › an ACL write entry for the running user is accepted', (t) => {
  const a = mkdirs(dir, 'acl-self');
  aclWithMaskedWrite(a, 'user', uid);
  t.is(opens(a), fs.statSync(a, { bigint: true }).ino);
});

rootTest('path › a directory owned by another user is refused (needs root)', (t) => {
  const foreign = mkdirs(dir, 'foreign');
  mkdirs(foreign, 'inner');
  fs.chownSync(foreign, FOREIGN_UID, FOREIGN_GID);
  t.is(
    reasonOf(() => openTrustedDir(foreign, 'root', native)),
    'unavailable/untrusted_owner',
  );
  t.is(
    reasonOf(() => openTrustedDir(path.join(foreign, 'inner'), 'root', native)),
    'unavailable/untrusted_owner',
  );
});

test('path › /tmp is accepted as an intermediate ancestor but refused as the target', (t) => {
  t.true(dir.startsWith('/tmp/'), 'temp trees live directly under /tmp');
  t.notThrows(() => opens(dir));
  t.is(
    reasonOf(() => openTrustedDir('/tmp', 'root', native)),
    'unavailable/sticky_tmp',
  );
  t.is(
    reasonOf(() => openTrustedDir('/tmp', 'policy_dir', native)),
    'unavailable/sticky_tmp',
  );
  t.is(
    reasonOf(() => openTrustedDir('/var/tmp', 'home', native)),
    'unavailable/sticky_tmp',
  );
});

test('path › /proc and anything below it are refused before any open', (t) => {
  t.is(
    reasonOf(() => openTrustedDir('/proc', 'root', native)),
    'unavailable/denied',
  );
  t.is(
    reasonOf(() => openTrustedDir('/proc/self', 'root', native)),
    'unavailable/denied',
  );
  t.is(
    reasonOf(() => readTrustedFile('/proc/self/status', 1024, native)),
    'unavailable/denied',
  );
});

for (const bad of ['', 'relative/dir', './x', '/a/../b', '/a/./b', '//a', '/a//b', '/a/', '/a/..', '/a\0b']) {
  test(`path › the non-normal path ${JSON.stringify(bad)} is refused`, (t) => {
    t.is(
      reasonOf(() => openTrustedDir(bad, 'root', native)),
      'unavailable/bad_name',
    );
  });
}

test('path › failing walks close every descriptor they opened', (t) => {
  const before = openDescriptorCount();
  for (let i = 0; i < 50; i++) {
    reasonOf(() => openTrustedDir(path.join(dir, 'mid/link/inner'), 'root', native));
    reasonOf(() => openTrustedDir(path.join(dir, 'gw/inner'), 'root', native));
    reasonOf(() => openTrustedDir('/tmp', 'root', native));
    reasonOf(() => readTrustedFile(path.join(dir, 'file/absent.json'), 10, native));
    withDescriptor(openTrustedDir(dir, 'root', native), () => undefined, native);
  }
  t.is(openDescriptorCount(), before);
});

test('path › readTrustedFile returns the bytes of a trusted file', (t) => {
  const file = writeNote(dir, 'policy/ok.json', '{"version":1}');
  t.is(readTrustedFile(file, 64 * 1024, native).toString(), '{"version":1}');
});

test('path › readTrustedFile refuses a file over the size limit', (t) => {
  const file = writeNote(dir, 'policy/big.json', 'x'.repeat(101));
  t.is(
    reasonOf(() => readTrustedFile(file, 100, native)),
    'unavailable/too_large',
  );
  t.is(readTrustedFile(file, 101, native).length, 101);
});

test('path › readTrustedFile refuses a hard-linked, symlinked, group-writable or ACL-granted file', (t) => {
  const good = writeNote(dir, 'policy2/good.json', '{}');
  fs.linkSync(good, path.join(dir, 'policy2/hard.json'));
  t.is(
    reasonOf(() => readTrustedFile(path.join(dir, 'policy2/hard.json'), 100, native)),
    'unavailable/hard_link',
  );
  const other = writeNote(dir, 'policy3/target.json', '{}');
  fs.symlinkSync('target.json', path.join(dir, 'policy3/link.json'));
  t.is(
    reasonOf(() => readTrustedFile(path.join(dir, 'policy3/link.json'), 100, native)),
    'unavailable/symlink',
  );
  fs.chmodSync(other, 0o620);
  t.is(
    reasonOf(() => readTrustedFile(other, 100, native)),
    'unavailable/group_writable',
  );
  fs.chmodSync(other, 0o602);
  t.is(
    reasonOf(() => readTrustedFile(other, 100, native)),
    'unavailable/world_writable',
  );
  fs.chmodSync(other, 0o600);
  setXattr(
    other,
    'system.posix_acl_access',
    aclBytes([
      { tag: ACL_TAG.USER_OBJ, perm: 6 },
      { tag: ACL_TAG.USER, perm: 6, id: STRANGER },
      { tag: ACL_TAG.GROUP_OBJ, perm: 0 },
      { tag: ACL_TAG.MASK, perm: 4 },
      { tag: ACL_TAG.OTHER, perm: 0 },
    ]),
  );
  t.is(
    reasonOf(() => readTrustedFile(other, 100, native)),
    'unavailable/acl_write',
  );
});

test('path › readTrustedFile refuses a FIFO, a directory and a missing file', (t) => {
  mkdirs(dir, 'policy4/sub');
  makeFifo(path.join(dir, 'policy4/fifo.json'));
  t.is(
    reasonOf(() => readTrustedFile(path.join(dir, 'policy4/fifo.json'), 100, native)),
    'unavailable/not_regular',
  );
  t.is(
    reasonOf(() => readTrustedFile(path.join(dir, 'policy4/sub'), 100, native)),
    'unavailable/not_regular',
  );
  t.is(
    reasonOf(() => readTrustedFile(path.join(dir, 'policy4/absent.json'), 100, native)),
    'unavailable/missing',
  );
});

test('path › readTrustedFile refuses a file directly in /tmp (its directory may not be a sticky temp dir)', (t) => {
  const loose = path.join('/tmp', `mb-loose-${process.pid}.json`);
  fs.writeFileSync(loose, '{}');
  fs.chmodSync(loose, 0o600);
  try {
    t.is(
      reasonOf(() => readTrustedFile(loose, 100, native)),
      'unavailable/sticky_tmp',
    );
  } finally {
    fs.rmSync(loose, { force: true });
  }
});

rootTest('path › readTrustedFile refuses a file owned by another user (needs root)', (t) => {
  const file = writeNote(dir, 'policy5/foreign.json', '{}');
  fs.chownSync(file, FOREIGN_UID, FOREIGN_GID);
  t.is(
    reasonOf(() => readTrustedFile(file, 100, native)),
    'unavailable/untrusted_owner',
  );
});

test('path › root-owned system directories are trusted whoever runs the bridge', (t) => {
  if (fs.statSync('/usr').uid !== 0 || (fs.statSync('/usr').mode & 0o022) !== 0)
    return t.pass('this /usr is not a plain root-owned directory');
  t.is(opens('/usr'), fs.statSync('/usr', { bigint: true }).ino);
});

/** The counting wrapper of the real binding, asked how many directories were opened. */
function countingOpens(): { native: typeof native; opened: () => number } {
  const counting = countingNative(native);
  return { native: counting.native, opened: () => counting.calls.openDirAt ?? 0 };
}

test('path › a walk memo lets a second walk start below the directories the first judged, to the same directory', (t) => {
  const a = mkdirs(dir, 'memo/home/plugin-data');
  const b = mkdirs(dir, 'memo/vault');
  const before = openDescriptorCount();
  const counting = countingOpens();
  const memo = new WalkMemo(counting.native);
  try {
    withDescriptor(openTrustedDir(a, 'policy_dir', counting.native, memo), () => undefined, native);
    const first = counting.opened();
    t.is(first, a.split('/').length - 1, 'the first walk opens every component');
    const fd = openTrustedDir(b, 'root', counting.native, memo);
    try {
      // Only the last component is new: every directory above it was judged as an intermediate by the first walk.
      t.is(counting.opened() - first, 1);
      t.is(inoOfFd(fd), fs.statSync(b, { bigint: true }).ino);
    } finally {
      native.close(fd);
    }
  } finally {
    memo.close();
  }
  t.is(openDescriptorCount(), before, 'the memo closes every descriptor it held');
});

test('path › a walk memo never stands in for a target: /tmp judged as an intermediate is still refused as one', (t) => {
  const memo = new WalkMemo(native);
  try {
    withDescriptor(openTrustedDir(dir, 'root', native, memo), () => undefined, native);
    t.is(
      reasonOf(() => openTrustedDir('/tmp', 'root', native, memo)),
      'unavailable/sticky_tmp',
    );
    // And `/` as the target gets a descriptor of its own, which the caller closes without touching the memo's.
    const top = openTrustedDir('/', 'root', native, memo);
    native.close(top);
    withDescriptor(
      openTrustedDir(dir, 'root', native, memo),
      (fd) => t.is(inoOfFd(fd), fs.statSync(dir, { bigint: true }).ino),
      native,
    );
  } finally {
    memo.close();
  }
});

test('path › with a walk memo, a directory that turns group-writable below the shared prefix is still refused', (t) => {
  const shared = path.join(dir, 'memo2');
  const good = mkdirs(dir, 'memo2/good/x');
  const bad = mkdirs(dir, 'memo2/bad/y');
  fs.chmodSync(path.join(shared, 'bad'), 0o770);
  const memo = new WalkMemo(native);
  try {
    withDescriptor(openTrustedDir(good, 'root', native, memo), () => undefined, native);
    t.is(
      reasonOf(() => openTrustedDir(bad, 'root', native, memo)),
      'unavailable/group_writable',
    );
    t.is(
      reasonOf(() => readTrustedFile(path.join(bad, 'policy.json'), 1024, native, memo)),
      'unavailable/group_writable',
    );
  } finally {
    memo.close();
  }
});
