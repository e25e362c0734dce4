import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import test from 'ava';
import { BridgeError } from '../../src/errors.js';
import { loadPolicy, MAX_POLICY_BYTES, policyPath } from '../../src/policy/load.js';
import { readTrustedFile } from '../../src/trust/path.js';
import {
  ACL_TAG,
  FOREIGN_GID,
  FOREIGN_UID,
  aclBytes,
  addAclEntry,
  isRoot,
  makeHome,
  makeTempDir,
  removeTree,
  setXattr,
  type AclEntrySpec,
} from '../helpers/fixtures.js';

const rootTest = isRoot ? test : test.skip;
const linuxTest = process.platform === 'linux' ? test : test.skip;

/** A uid and gid that are neither root nor the running user (65534 is the running user in the unprivileged run). */
const uid = process.getuid?.() ?? 0;
const OTHER_UID = uid === 12345 ? 12346 : 12345;
const OTHER_GID = 12345;

const VALID = Object.freeze({ version: 1, root: '/srv/memory', allow: ['projects/**'], deny: ['**/private/**'] });

let parent = '';
let counter = 0;
test.before(() => {
  parent = makeTempDir('mb-policy-');
});
test.after.always(() => {
  if (parent !== '') removeTree(parent);
});

/** A fresh profile home with `policy` written to its policy file. */
function home(policy: unknown = VALID): { home: string; policyPath: string } {
  counter += 1;
  return makeHome(parent, policy, `home-${counter}`);
}

function reasonOf(fn: () => unknown): string {
  try {
    fn();
    return 'ok';
  } catch (err) {
    if (err instanceof BridgeError) return `${err.code}/${err.reason}`;
    return `other: ${String(err)}`;
  }
}

/** The trust layer's own verdict on the file, to show that a fixture is what its test says it is. */
function trustReason(file: string): string {
  return reasonOf(() => readTrustedFile(file, MAX_POLICY_BYTES));
}

/** A Linux access ACL that grants `perm` to one named user or group while the mask stays read-only. */
function aclWithReadOnlyMask(file: string, kind: 'user' | 'group', id: number, perm: number): void {
  const mode = fs.statSync(file).mode;
  const entries: AclEntrySpec[] = [{ tag: ACL_TAG.USER_OBJ, perm: (mode >> 6) & 7 }];
  if (kind === 'user') entries.push({ tag: ACL_TAG.USER, perm, id });
  entries.push({ tag: ACL_TAG.GROUP_OBJ, perm: 0 });
  if (kind === 'group') entries.push({ tag: ACL_TAG.GROUP, perm, id });
  entries.push({ tag: ACL_TAG.MASK, perm: 4 }, { tag: ACL_TAG.OTHER, perm: mode & 7 });
  setXattr(file, 'system.posix_acl_access', aclBytes(entries));
}

test('load › policyPath is <home>/plugin-data/memory-bridge/policy.json', (t) => {
  t.is(policyPath('/home/h/.hermes'), '/home/h/.hermes/plugin-data/memory-bridge/policy.json');
});

test('load › a valid policy in a trusted home loads', (t) => {
  const h = home();
  const p = loadPolicy(h.home);
  t.is(p.root, '/srv/memory');
  t.deepEqual([...p.allow], ['projects/**']);
  t.true(p.allowsNote('projects/garden.md'));
  t.false(p.allowsNote('projects/private/a.md'));
  t.false(p.mayEnter('projects/private'));
  t.true(Object.isFrozen(p));
});

test('load › a read-only (0400) and a world-readable (0644) policy file both load', (t) => {
  const a = home();
  fs.chmodSync(a.policyPath, 0o400);
  t.is(
    reasonOf(() => loadPolicy(a.home)),
    'ok',
  );
  const b = home();
  fs.chmodSync(b.policyPath, 0o644);
  t.is(
    reasonOf(() => loadPolicy(b.home)),
    'ok',
  );
});

test('load › a policy of exactly 64 KiB loads and one byte more is policy_too_large', (t) => {
  const body = JSON.stringify(VALID);
  const exact = home(body + ' '.repeat(MAX_POLICY_BYTES - body.length));
  t.is(fs.statSync(exact.policyPath).size, MAX_POLICY_BYTES);
  t.is(
    reasonOf(() => loadPolicy(exact.home)),
    'ok',
  );
  const over = home(body + ' '.repeat(MAX_POLICY_BYTES + 1 - body.length));
  t.is(
    reasonOf(() => loadPolicy(over.home)),
    'unavailable/policy_too_large',
  );
});

test('load › a missing policy file is policy_missing', (t) => {
  const h = home();
  fs.unlinkSync(h.policyPath);
  t.is(
    reasonOf(() => loadPolicy(h.home)),
    'unavailable/policy_missing',
  );
});

test('load › a missing home is policy_missing', (t) => {
  t.is(
    reasonOf(() => loadPolicy(path.join(parent, 'no-such-home'))),
    'unavailable/policy_missing',
  );
});

for (const bad of ['relative/home', '', '/a/../b', '/a/./b', '/a//b', '/a/b/', 'a\0b', '/a/b\0']) {
  test(`load › a home of ${JSON.stringify(bad)} is bad_home before any filesystem call`, (t) => {
    t.is(
      reasonOf(() => loadPolicy(bad)),
      'unavailable/bad_home',
    );
  });
}

test('load › malformed content is policy_invalid and never falls back to defaults', (t) => {
  for (const body of [
    '',
    '{}',
    '{"version": 1, "root": "/srv/memory", "allow": ["a/**"], "allow": ["b/**"]}',
    Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify(VALID))]),
    Buffer.from(JSON.stringify(VALID), 'utf16le'),
    `${JSON.stringify(VALID)}\n#`,
    JSON.stringify({ ...VALID, limits: { max_results: 11 } }),
    JSON.stringify({ ...VALID, allow: ['@(x)'] }),
  ]) {
    const h = home(body);
    t.is(
      reasonOf(() => loadPolicy(h.home)),
      'unavailable/policy_invalid',
    );
  }
});

test('load › a group-writable policy file is policy_untrusted', (t) => {
  const h = home();
  fs.chmodSync(h.policyPath, 0o620);
  t.is(trustReason(h.policyPath), 'unavailable/group_writable');
  t.is(
    reasonOf(() => loadPolicy(h.home)),
    'unavailable/policy_untrusted',
  );
});

test('load › a world-writable policy file is policy_untrusted', (t) => {
  const h = home();
  fs.chmodSync(h.policyPath, 0o602);
  t.is(trustReason(h.policyPath), 'unavailable/world_writable');
  t.is(
    reasonOf(() => loadPolicy(h.home)),
    'unavailable/policy_untrusted',
  );
});

test('load › a policy file that is a symlink to a trusted file is policy_untrusted', (t) => {
  const h = home();
  const real = path.join(path.dirname(h.policyPath), 'real.json');
  fs.renameSync(h.policyPath, real);
  fs.symlinkSync(real, h.policyPath);
  t.is(trustReason(h.policyPath), 'unavailable/symlink');
  t.is(
    reasonOf(() => loadPolicy(h.home)),
    'unavailable/policy_untrusted',
  );
});

test('load › a symlinked policy directory is policy_untrusted', (t) => {
  const h = home();
  const dir = path.dirname(h.policyPath);
  const real = path.join(path.dirname(dir), 'real-dir');
  fs.renameSync(dir, real);
  fs.symlinkSync(real, dir);
  t.is(trustReason(h.policyPath), 'unavailable/symlink');
  t.is(
    reasonOf(() => loadPolicy(h.home)),
    'unavailable/policy_untrusted',
  );
});

test('load › a symlinked home is policy_untrusted', (t) => {
  const h = home();
  const link = path.join(parent, `link-${counter}`);
  fs.symlinkSync(h.home, link);
  t.is(
    reasonOf(() => loadPolicy(link)),
    'unavailable/policy_untrusted',
  );
  t.is(
    reasonOf(() => loadPolicy(h.home)),
    'ok',
  );
});

test('load › a hard-linked policy file is policy_untrusted', (t) => {
  const h = home();
  fs.linkSync(h.policyPath, path.join(path.dirname(h.policyPath), 'second-name.json'));
  t.is(trustReason(h.policyPath), 'unavailable/hard_link');
  t.is(
    reasonOf(() => loadPolicy(h.home)),
    'unavailable/policy_untrusted',
  );
});

test('load › a directory in place of the policy file is policy_untrusted', (t) => {
  const h = home();
  fs.unlinkSync(h.policyPath);
  fs.mkdirSync(h.policyPath, 0o700);
  t.is(
    reasonOf(() => loadPolicy(h.home)),
    'unavailable/policy_untrusted',
  );
});

const hasMkfifo = spawnSync('mkfifo', ['--version']).status === 0;
(hasMkfifo ? test : test.skip)(
  `load › a FIFO in place of the policy file is policy_untrusted without blocking${hasMkfifo ? '' : ' (needs mkfifo)'}`,
  (t) => {
    const h = home();
    fs.unlinkSync(h.policyPath);
    t.is(spawnSync('mkfifo', ['-m', '600', h.policyPath]).status, 0);
    t.is(
      reasonOf(() => loadPolicy(h.home)),
      'unavailable/policy_untrusted',
    );
  },
);

test('load › a group-writable policy directory is policy_untrusted', (t) => {
  const h = home();
  fs.chmodSync(path.dirname(h.policyPath), 0o770);
  t.is(
    reasonOf(() => loadPolicy(h.home)),
    'unavailable/policy_untrusted',
  );
});

test('load › a world-writable home is policy_untrusted', (t) => {
  const h = home();
  fs.chmodSync(h.home, 0o703);
  t.is(
    reasonOf(() => loadPolicy(h.home)),
    'unavailable/policy_untrusted',
  );
});

linuxTest('load › an ACL granting write to a named user on the policy file is policy_untrusted', (t) => {
  const h = home();
  aclWithReadOnlyMask(h.policyPath, 'user', OTHER_UID, 6);
  t.is(fs.statSync(h.policyPath).mode & 0o022, 0, 'the mode alone shows no group or world write');
  t.is(trustReason(h.policyPath), 'unavailable/acl_write');
  t.is(
    reasonOf(() => loadPolicy(h.home)),
    'unavailable/policy_untrusted',
  );
});

linuxTest('load › an ACL granting write to a named group on the policy file is policy_untrusted', (t) => {
  const h = home();
  aclWithReadOnlyMask(h.policyPath, 'group', OTHER_GID, 2);
  t.is(trustReason(h.policyPath), 'unavailable/acl_write');
  t.is(
    reasonOf(() => loadPolicy(h.home)),
    'unavailable/policy_untrusted',
  );
});

linuxTest('load › an ACL granting write to a named user on the policy directory is policy_untrusted', (t) => {
  const h = home();
  aclWithReadOnlyMask(path.dirname(h.policyPath), 'user', OTHER_UID, 7);
  t.is(trustReason(h.policyPath), 'unavailable/acl_write');
  t.is(
    reasonOf(() => loadPolicy(h.home)),
    'unavailable/policy_untrusted',
  );
});

linuxTest('load › an ACL granting write to a named group on the policy directory is policy_untrusted', (t) => {
  const h = home();
  aclWithReadOnlyMask(path.dirname(h.policyPath), 'group', OTHER_GID, 3);
  t.is(trustReason(h.policyPath), 'unavailable/acl_write');
  t.is(
    reasonOf(() => loadPolicy(h.home)),
    'unavailable/policy_untrusted',
  );
});

linuxTest('load › a read-only ACL entry for a named user leaves the policy loadable', (t) => {
  const h = home();
  addAclEntry(h.policyPath, 'user', OTHER_UID, 4);
  fs.chmodSync(h.policyPath, 0o640); // chmod rewrites the mask from the group bits: read-only
  t.is(
    reasonOf(() => loadPolicy(h.home)),
    'ok',
  );
});

rootTest('load › a policy file owned by another user is policy_untrusted (needs root)', (t) => {
  const h = home();
  fs.chownSync(h.policyPath, FOREIGN_UID, FOREIGN_GID);
  t.is(trustReason(h.policyPath), 'unavailable/untrusted_owner');
  t.is(
    reasonOf(() => loadPolicy(h.home)),
    'unavailable/policy_untrusted',
  );
});

rootTest('load › a policy directory owned by another user is policy_untrusted (needs root)', (t) => {
  const h = home();
  fs.chownSync(path.dirname(h.policyPath), FOREIGN_UID, FOREIGN_GID);
  t.is(
    reasonOf(() => loadPolicy(h.home)),
    'unavailable/policy_untrusted',
  );
});

test('load › an edit between two loads is seen by the second', (t) => {
  const h = home();
  t.true(loadPolicy(h.home).allowsNote('projects/a.md'));
  fs.writeFileSync(h.policyPath, JSON.stringify({ ...VALID, allow: ['decisions/**'] }));
  const second = loadPolicy(h.home);
  t.false(second.allowsNote('projects/a.md'));
  t.true(second.allowsNote('decisions/a.md'));
});

test('load › a revocation (file replaced by an invalid one, then removed) applies on the next load', (t) => {
  const h = home();
  t.is(
    reasonOf(() => loadPolicy(h.home)),
    'ok',
  );
  fs.writeFileSync(h.policyPath, '{"version": 1}');
  t.is(
    reasonOf(() => loadPolicy(h.home)),
    'unavailable/policy_invalid',
  );
  fs.unlinkSync(h.policyPath);
  t.is(
    reasonOf(() => loadPolicy(h.home)),
    'unavailable/policy_missing',
  );
});

test('load › the thrown error names no path, file name or system error text', (t) => {
  const h = home();
  fs.chmodSync(h.policyPath, 0o666);
  const err = t.throws(() => loadPolicy(h.home), { instanceOf: BridgeError });
  t.false(err!.message.includes(parent));
  t.false(err!.message.includes('policy.json'));
  t.is(err!.message, 'unavailable: policy_untrusted');
});

test('load › identical policy bytes give the identical frozen Policy, and one changed byte gives a new one', (t) => {
  const a = home();
  const b = home();
  const first = loadPolicy(a.home);
  t.is(loadPolicy(b.home), first);
  fs.writeFileSync(b.policyPath, JSON.stringify({ ...VALID, allow: ['projects/*'] }));
  const edited = loadPolicy(b.home);
  t.not(edited, first);
  t.false(edited.allowsNote('projects/deep/a.md'));
  t.true(first.allowsNote('projects/deep/a.md'));
});
