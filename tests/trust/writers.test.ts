/**
 * Team memory (docs/TRUST.md §Named writers): the policy's `writers` widen the trust rule below
 * the root to named users and groups, and nothing else. The rule's parts are checked on their own first (any user);
 * then, as root, with real users and groups (useradd, groupadd), real owners (chown), real ACLs (fsetxattr of
 * system.posix_acl_access, what setfacl writes), through the real bridge and the real CLI run as a member and as a
 * non-member of the team group (setpriv), and the open-for-writing check on a teammate's note with and without
 * CAP_LEASE (issue 22 point 5).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import type { FileStat } from '../../native/types.js';
import { parseDatabase, resolveWriters, WritersError } from '../../src/policy/accounts.js';
import { explainPolicyError, parsePolicyBytes } from '../../src/policy/load.js';
import { createBridge } from '../../src/tools/bridge.js';
import type { Caller, SearchResult } from '../../src/tools/types.js';
import { LINUX_ACL_TAG as T, linuxAclGrantsForeignWrite } from '../../src/trust/acl-linux.js';
import { darwinAclGrantsForeignWrite } from '../../src/trust/acl-darwin.js';
import { dirStatReason, noteStatReason } from '../../src/trust/rule.js';
import { hasLeaseCapability, writeCheckLine } from '../../src/trust/lease-reach.js';
import { NO_WRITERS, writersOf } from '../../src/trust/writers.js';
import { Accounts, cliFor, type Account } from '../helpers/accounts.js';
import { payload, uuid } from '../fleet/helpers.js';
import { addAclEntry, isRoot, makeHome, makeTempDir, removeTree, writeNote } from '../helpers/fixtures.js';
import { holder } from './write-holder.js';

const ME = process.getuid!();
const stat = (over: Partial<FileStat>): FileStat => ({
  dev: 1n,
  ino: 1n,
  mode: 0o100640,
  nlink: 1,
  uid: ME,
  gid: 0,
  size: 1,
  mtimeNs: 0n,
  ctimeNs: 0n,
  ...over,
});
const W = writersOf([5001], [6001]);

test('writers › owner and mode: a named writer user may own, a named writer group may write, others never', (t) => {
  const judge = (over: Partial<FileStat>, writers = W) => noteStatReason(stat(over), ME, 1n, 1 << 20, writers);
  t.is(judge({ uid: 5001 }), null);
  t.is(judge({ uid: 5002 }), 'untrusted_owner');
  t.is(judge({ uid: 5001 }, NO_WRITERS), 'untrusted_owner');
  t.is(judge({ mode: 0o100660, gid: 6001 }), null);
  t.is(judge({ mode: 0o100660, gid: 6002 }), 'group_writable');
  t.is(judge({ mode: 0o100660, gid: 6001 }, NO_WRITERS), 'group_writable');
  t.is(judge({ mode: 0o100662, gid: 6001 }), 'world_writable');
  // A writer uid is not a writer gid, and the other way round.
  t.is(judge({ mode: 0o100660, gid: 5001 }), 'group_writable');
  t.is(judge({ uid: 6001 }), 'untrusted_owner');
  // Link count, size and type stay as they were.
  t.is(judge({ uid: 5001, nlink: 2 }), 'hard_link');
  t.is(noteStatReason(stat({ uid: 5001, size: 10 }), ME, 1n, 5, W), 'too_large');
  t.is(dirStatReason(stat({ mode: 0o042770, uid: 5001, gid: 6001 }), ME, undefined, W), null);
  t.is(dirStatReason(stat({ mode: 0o042770, uid: 5001, gid: 6001 }), ME), 'untrusted_owner');
  t.is(dirStatReason(stat({ mode: 0o040777, uid: 5001, gid: 6001 }), ME, undefined, W), 'world_writable');
});

test('writers › ACL entries with write must name root, the running user, a writer user or a writer group', (t) => {
  const acl = (...extra: { tag: number; perm: number; id?: number }[]) => [
    { tag: T.USER_OBJ, perm: 6, id: 0xffffffff },
    ...extra.map((e) => ({ id: 0xffffffff, ...e })),
    { tag: T.OTHER, perm: 4, id: 0xffffffff },
  ];
  const grants = (entries: ReturnType<typeof acl>, gid = 6001, writers = W) =>
    linuxAclGrantsForeignWrite(entries, ME, writers, gid);
  const g = (perm: number) => ({ tag: T.GROUP_OBJ, perm });
  const mask = (perm: number) => ({ tag: T.MASK, perm });
  t.false(grants(acl(g(6), { tag: T.USER, perm: 6, id: 5001 }, mask(6))));
  t.false(grants(acl(g(6), { tag: T.GROUP, perm: 6, id: 6001 }, mask(6))));
  t.false(grants(acl(g(4), { tag: T.USER, perm: 6, id: ME }, { tag: T.USER, perm: 6, id: 0 }, mask(6))));
  t.true(grants(acl(g(4), { tag: T.USER, perm: 6, id: 5002 }, mask(6))), 'an unnamed user');
  t.true(grants(acl(g(4), { tag: T.GROUP, perm: 6, id: 6002 }, mask(6))), 'an unnamed group');
  t.true(grants(acl(g(4), { tag: T.GROUP, perm: 6, id: 0 }, mask(6))), 'gid 0 is not root');
  t.true(grants(acl(g(4), { tag: T.GROUP, perm: 6, id: 6002 }, mask(4))), 'the mask never excuses');
  // The owning group's entry and the mask (the group bits) carry write only when the object's group is a writer.
  t.false(grants(acl(g(6), { tag: T.GROUP, perm: 4, id: 6002 }, mask(6)), 6001));
  t.true(grants(acl(g(6), { tag: T.GROUP, perm: 4, id: 6002 }, mask(4)), 6002));
  t.true(grants(acl(g(4), { tag: T.USER, perm: 6, id: 5001 }, mask(6)), 6002));
  t.true(grants([...acl(g(4)).slice(0, 2), { tag: T.OTHER, perm: 6, id: 0xffffffff }]), 'others never');
  // Without writers: the rule for the operator and root alone.
  t.true(grants(acl(g(6), { tag: T.GROUP, perm: 6, id: 6001 }, mask(6)), 6001, NO_WRITERS));
  t.true(grants(acl(g(4), { tag: T.USER, perm: 6, id: 5001 }, mask(6)), 6001, NO_WRITERS));
  // macOS entries follow the same rule.
  const allow = (idType: 'uid' | 'gid', id: number) => ({ tag: 1, perms: 0x4n, idType, id });
  t.false(darwinAclGrantsForeignWrite([allow('uid', 5001), allow('gid', 6001)], ME, W));
  t.true(darwinAclGrantsForeignWrite([allow('gid', 6002)], ME, W));
  t.true(darwinAclGrantsForeignWrite([allow('uid', 5001)], ME));
});

test('writers › the policy key: names or ids, at most 64 each, nothing else', (t) => {
  const doc = (writers: unknown) =>
    Buffer.from(JSON.stringify({ version: 1, root: '/srv/notes', allow: ['**'], writers }));
  const ok = parsePolicyBytes(doc({ users: ['alice', 1001], groups: ['team'] }));
  t.deepEqual(ok.writers, { users: ['alice', 1001], groups: ['team'] });
  t.deepEqual(parsePolicyBytes(Buffer.from('{"version":1,"root":"/srv/n","allow":["**"]}')).writers, {
    users: [],
    groups: [],
  });
  t.deepEqual(parsePolicyBytes(doc({ groups: ['team'] })).writers.users, []);
  for (const bad of [
    { users: ['a:b'] },
    { users: [-1] },
    { users: [4294967295] },
    { users: [1.5] },
    { users: ['-x'] },
    { users: [''] },
    { groups: [true] },
    { users: Array.from({ length: 65 }, (_, i) => `u${i}`) },
    { users: [], others: [] },
    { users: 'alice' },
  ]) {
    t.throws(() => parsePolicyBytes(doc(bad)), { message: /policy_invalid|unavailable/ }, JSON.stringify(bad));
    t.not(explainPolicyError(doc(bad)), 'valid', JSON.stringify(bad));
  }
  t.regex(explainPolicyError(doc({ users: Array.from({ length: 65 }, (_, i) => i) })), /at most 64 users/);
});

test('writers › the databases: first entry wins, comments and NIS lines ignored, unknown names refused', (t) => {
  const db = parseDatabase('# c\nalice:x:1001:1001::/h:/bin/sh\n+nis\nalice:x:2002:1::/:/\nbad\nbob:x:abc:1\n\n');
  t.is(db.byName.get('alice'), 1001);
  t.false(db.byName.has('bob'));
  t.false(db.byName.has('+nis'));
  const dir = makeTempDir('mb-accounts-');
  try {
    const passwd = path.join(dir, 'passwd');
    const group = path.join(dir, 'group');
    fs.writeFileSync(passwd, 'alice:x:1001:1001::/h:/bin/sh\n', { mode: 0o644 });
    fs.writeFileSync(group, 'team:x:3000:alice\n', { mode: 0o644 });
    const files = { passwd, group };
    const r = resolveWriters({ users: ['alice', 77], groups: ['team'] }, files);
    t.deepEqual([...r.writers.uids], [77, 1001]);
    t.deepEqual([...r.writers.gids], [3000]);
    t.is(r.writers.tag, 'u77,1001g3000');
    t.deepEqual(r.list, [
      { kind: 'user', entry: 'alice', id: 1001, name: 'alice' },
      { kind: 'user', entry: 77, id: 77 },
      { kind: 'group', entry: 'team', id: 3000, name: 'team' },
    ]);
    const unknown = t.throws(() => resolveWriters({ users: [], groups: ['team', 'nobody-here'] }, files));
    t.true(unknown instanceof WritersError);
    t.is((unknown as WritersError).reason, 'policy_invalid');
    t.regex((unknown as WritersError).detail, /writers\.groups\[1\]: no group named "nobody-here"/);
    t.is(
      resolveWriters({ users: [], groups: [] }, { passwd: '/nonexistent', group: '/nonexistent' }).writers,
      NO_WRITERS,
    );
    // A database others can write is not believed.
    fs.chmodSync(group, 0o666);
    t.regex(
      (t.throws(() => resolveWriters({ users: [], groups: ['team'] }, files)) as WritersError).detail,
      /could not be read/,
    );
  } finally {
    removeTree(dir);
  }
});

// ------------------------------------------------------------------------------------------------------------------
// Real users and groups (root only).

const rootTest = isRoot && process.platform === 'linux' ? test.serial : test.skip;
const accounts = new Accounts();
const trees: string[] = [];
test.after.always(() => {
  runnable?.cleanup();
  accounts.cleanup();
  for (const dir of trees) removeTree(dir);
});

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const CLI = path.join(REPO, 'dist', 'src', 'cli', 'main.js');
let runnable: ReturnType<typeof cliFor> | undefined;
/** The CLI as the team's users can run it (the repository's, or a readable copy). */
function teamCli(): string {
  const p = teamPeople();
  runnable ??= cliFor(REPO, p.x1, p.other);
  return runnable.cli;
}

interface Team {
  team: Account;
  other: Account;
  /** Named writer user, member of team. */
  w1: Account;
  /** Member of team, never named as a user. */
  w2: Account;
  /** Named (in some policies) only through an ACL entry. */
  w3: Account;
  /** In no team group. */
  x1: Account;
}

let people: Team | undefined;
function teamPeople(): Team {
  if (people !== undefined) return people;
  const team = accounts.group();
  const other = accounts.group();
  const w1 = accounts.user(team);
  const w2 = accounts.user(team);
  const w3 = accounts.user(other);
  const x1 = accounts.user(other);
  people = { team, other, w1, w2, w3, x1 };
  return people;
}

/** A world-readable base (so setpriv runs can reach it) holding a team root (root:team 2770) and a home. */
function teamWorld(writers: unknown): { root: string; home: string; policyPath: string; setWriters(w: unknown): void } {
  const p = teamPeople();
  const base = makeTempDir('mb-writers-');
  trees.push(base);
  fs.chmodSync(base, 0o755);
  const root = path.join(base, 'team');
  fs.mkdirSync(root);
  fs.chownSync(root, 0, p.team.id);
  fs.chmodSync(root, 0o2770);
  const policy = (w: unknown) => ({ version: 1, root, allow: ['**'], ...(w === undefined ? {} : { writers: w }) });
  const { home, policyPath } = makeHome(base, policy(writers));
  for (const dir of [home, path.join(home, 'plugin-data'), path.dirname(policyPath)]) fs.chmodSync(dir, 0o755);
  fs.chmodSync(policyPath, 0o644);
  return {
    root,
    home,
    policyPath,
    setWriters(w: unknown) {
      fs.writeFileSync(policyPath, JSON.stringify(policy(w)));
    },
  };
}

/** A note at `root/id` with owner, group and mode; `acl` adds one real ACL write entry. */
function put(
  root: string,
  id: string,
  owner: Account | 0,
  group: Account,
  mode: number,
  acl?: ['user' | 'group', Account],
): void {
  const file = writeNote(root, id, `# ${id}\n\nlantern note ${id}\n`, mode);
  fs.chownSync(file, owner === 0 ? 0 : owner.id, group.id);
  fs.chmodSync(file, mode);
  if (acl !== undefined) addAclEntry(file, acl[0], acl[1].id, 6);
}

/** A directory below the root with owner, group and mode (setgid like the team root). */
function dir(root: string, rel: string, owner: Account | 0, group: Account, mode = 0o2770): void {
  const d = path.join(root, rel);
  fs.mkdirSync(d);
  fs.chownSync(d, owner === 0 ? 0 : owner.id, group.id);
  fs.chmodSync(d, mode);
}

const callerOf = (home: string): Caller => ({ home, cron: false, subagent: false });
function ids(r: unknown): string[] | string {
  const s = r as SearchResult | { ok: false; error: { code: string } };
  if (!s.ok) return s.error.code;
  return s.results.map((h) => h.id).sort();
}

rootTest(
  'writers › a team folder: a named writer user or a named writer group is trusted, nothing else widens',
  (t) => {
    const p = teamPeople();
    const w = teamWorld({ users: [p.w1.name], groups: [p.team.name] });
    put(w.root, 'a.md', p.w1, p.team, 0o660);
    put(w.root, 'b-unnamed-owner.md', p.w2, p.team, 0o640);
    put(w.root, 'c-other-group.md', 0, p.other, 0o660);
    put(w.root, 'd-acl-other-group.md', p.w1, p.team, 0o640, ['group', p.other]);
    put(w.root, 'e-acl-team.md', p.w1, p.team, 0o640, ['group', p.team]);
    put(w.root, 'f-acl-unnamed-user.md', p.w1, p.team, 0o640, ['user', p.w2]);
    put(w.root, 'g-others.md', p.w1, p.team, 0o662);
    dir(w.root, 'sub-unnamed', p.w2, p.team);
    put(w.root, 'sub-unnamed/h.md', 0, p.team, 0o640);
    dir(w.root, 'sub-writer', p.w1, p.team);
    put(w.root, 'sub-writer/i.md', p.w1, p.team, 0o660);
    dir(w.root, 'sub-other', 0, p.other);
    put(w.root, 'sub-other/j.md', 0, p.team, 0o640);
    const bridge = createBridge({ log: () => undefined });
    const visible = ['a.md', 'e-acl-team.md', 'sub-writer/i.md'];
    t.deepEqual(ids(bridge.search({ query: 'lantern', limit: 10 }, callerOf(w.home))), visible);
    for (const id of ['b-unnamed-owner.md', 'c-other-group.md', 'd-acl-other-group.md', 'f-acl-unnamed-user.md']) {
      t.is((bridge.read({ id }, callerOf(w.home)) as { ok: boolean }).ok, false, id);
    }
    for (const id of ['g-others.md', 'sub-unnamed/h.md', 'sub-other/j.md'])
      t.is((bridge.read({ id }, callerOf(w.home)) as { ok: boolean }).ok, false, id);
    t.is((bridge.read({ id: 'a.md' }, callerOf(w.home)) as { ok: boolean }).ok, true);
    // Without writers the group-writable team root itself is refused: today's rule.
    w.setWriters(undefined);
    t.is(ids(bridge.search({ query: 'lantern' }, callerOf(w.home))), 'unavailable');
    // Naming only the other group: the root's group (team) is not a writer group.
    w.setWriters({ users: [p.w1.name], groups: [p.other.name] });
    t.is(ids(bridge.search({ query: 'lantern' }, callerOf(w.home))), 'unavailable');
    // Ids work like names.
    w.setWriters({ users: [p.w1.id], groups: [p.team.id] });
    t.deepEqual(ids(bridge.search({ query: 'lantern', limit: 10 }, callerOf(w.home))), visible);
  },
);

rootTest('writers › removing a writer makes their files untrusted on the very next call, warm index and all', (t) => {
  const p = teamPeople();
  const all = { users: [p.w1.name, p.w3.name], groups: [p.team.name] };
  const w = teamWorld(all);
  put(w.root, 'a.md', p.w1, p.team, 0o660);
  // Owned by root, writable by w3 only through its ACL entry: only the ACL names the writer.
  put(w.root, 'b-acl-w3.md', 0, p.team, 0o640, ['user', p.w3]);
  dir(w.root, 'by-w3', p.w3, p.team);
  put(w.root, 'by-w3/c.md', 0, p.team, 0o640);
  put(w.root, 'd-acl-other.md', 0, p.team, 0o640, ['group', p.other]);
  // Racy margin 0: an identity verified once vouches for the note on the next call at once (no 3 s wait), which is
  // exactly the warm path a writer's removal must not slip through.
  const bridge = createBridge({ log: () => undefined, racyMarginMs: 0 });
  const search = () => ids(bridge.search({ query: 'lantern', limit: 10 }, callerOf(w.home)));
  t.deepEqual(search(), ['a.md', 'b-acl-w3.md', 'by-w3/c.md']);
  t.deepEqual(search(), ['a.md', 'b-acl-w3.md', 'by-w3/c.md'], 'warm');
  w.setWriters({ users: [p.w1.name], groups: [p.team.name] });
  t.deepEqual(search(), ['a.md'], 'w3 removed: the ACL note and the directory w3 owns are refused at once');
  w.setWriters({ users: [], groups: [p.team.name] });
  t.deepEqual(search(), [], 'w1 removed');
  w.setWriters({ users: [p.w1.name, p.w3.name], groups: [p.team.name, p.other.name] });
  t.deepEqual(search(), ['a.md', 'b-acl-w3.md', 'by-w3/c.md', 'd-acl-other.md'], 'a group added takes effect too');
  w.setWriters(all);
  t.deepEqual(search(), ['a.md', 'b-acl-w3.md', 'by-w3/c.md']);
  // The same holds for read.
  t.is((bridge.read({ id: 'b-acl-w3.md' }, callerOf(w.home)) as { ok: boolean }).ok, true);
  w.setWriters({ users: [p.w1.name], groups: [p.team.name] });
  t.is((bridge.read({ id: 'b-acl-w3.md' }, callerOf(w.home)) as { ok: boolean }).ok, false);
});

rootTest('writers › an unknown name makes the policy invalid; status names it; status lists resolved writers', (t) => {
  const p = teamPeople();
  const w = teamWorld({ users: [p.w1.name, 'mbw-no-such-user'], groups: [p.team.name] });
  put(w.root, 'a.md', p.w1, p.team, 0o660);
  const bridge = createBridge({ log: () => undefined });
  t.is(ids(bridge.search({ query: 'lantern' }, callerOf(w.home))), 'unavailable');
  const cli = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8' });
  const bad = JSON.parse(cli('status', '--home', w.home, '--json').stdout);
  t.false(bad.policy.loads);
  t.is(bad.policy.reason, 'policy_invalid');
  t.regex(bad.policy.detail, /writers\.users\[1\]: no user named "mbw-no-such-user"/);
  w.setWriters({ users: [p.w1.name, p.w3.id], groups: [p.team.name] });
  const good = JSON.parse(cli('status', '--home', w.home, '--json').stdout);
  t.deepEqual(good.policy.writers, [
    { kind: 'user', entry: p.w1.name, id: p.w1.id, name: p.w1.name },
    { kind: 'user', entry: p.w3.id, id: p.w3.id, name: p.w3.name },
    { kind: 'group', entry: p.team.name, id: p.team.id, name: p.team.name },
  ]);
  const text = cli('status', '--home', w.home).stdout;
  t.true(text.includes(`user ${p.w1.name} (uid ${p.w1.id})`), text);
  t.true(text.includes(`group ${p.team.name} (gid ${p.team.id})`), text);
  // Deleting the user from the system makes the same policy invalid on the next call.
  const gone = accounts.user(p.team);
  w.setWriters({ users: [gone.name], groups: [p.team.name] });
  t.deepEqual(ids(bridge.search({ query: 'lantern' }, callerOf(w.home))), []);
  spawnSync('userdel', [gone.name]);
  t.is(ids(bridge.search({ query: 'lantern' }, callerOf(w.home))), 'unavailable');
});

rootTest('writers › the server run as a team member and as a non-member (setpriv)', (t) => {
  const p = teamPeople();
  const w = teamWorld({ users: [p.w1.name], groups: [p.team.name] });
  put(w.root, 'a.md', p.w1, p.team, 0o660);
  put(w.root, 'b-by-w2.md', p.w2, p.team, 0o640);
  put(w.root, 'c-other-group.md', 0, p.other, 0o664);
  const as = (who: Account, group: Account) =>
    spawnSync(
      'setpriv',
      [
        `--reuid=${who.id}`,
        `--regid=${group.id}`,
        '--init-groups',
        process.execPath,
        teamCli(),
        'search',
        '--home',
        w.home,
        '--run-kind',
        'interactive',
        '--limit',
        '10',
        '--',
        'lantern',
      ],
      { encoding: 'utf8' },
    );
  const member = as(p.w2, p.team);
  t.is(member.status, 0, member.stderr);
  // w2 runs the server: its own note is trusted (the running user), w1's as a named writer; the other group's not.
  t.deepEqual(ids(JSON.parse(member.stdout)), ['a.md', 'b-by-w2.md']);
  // A non-member cannot open the team root at all (2770): memory is unavailable, and nothing leaks.
  const outsider = as(p.x1, p.other);
  t.deepEqual(ids(JSON.parse(outsider.stdout)), 'unavailable');
  t.false(outsider.stdout.includes(w.root));
});

rootTest(
  'writers › export-fleet --group writes into a team root, and the result passes the rule with that group named',
  (t) => {
    const p = teamPeople();
    const w = teamWorld({ users: [p.w1.name], groups: [p.team.name] });
    const cards = path.join(path.dirname(w.root), 'cards.jsonl');
    const card = (n: number) =>
      JSON.stringify({ id: uuid(n), payload: payload({ text: `lantern card ${n} from the fleet`, domain: 'work' }) });
    fs.writeFileSync(cards, `${card(1)}\n${card(2)}\n`, { mode: 0o644 });
    const exportAs = (who: Account, ...flags: string[]) =>
      spawnSync(
        'setpriv',
        [
          `--reuid=${who.id}`,
          `--regid=${p.team.id}`,
          '--init-groups',
          process.execPath,
          teamCli(),
          'export-fleet',
          '--from-jsonl',
          cards,
          '--out',
          w.root,
          ...flags,
        ],
        { encoding: 'utf8', env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } },
      );
    // Without --group the group-writable team root is refused, as is a group that is not the root's.
    const plain = exportAs(p.w1);
    t.not(plain.status, 0);
    t.regex(plain.stderr, /does not pass the trust rule \(group_writable\)/);
    t.not(exportAs(p.w1, '--group', p.other.name).status, 0);
    // With the team group it writes, as w1 (a named writer user), files of group team.
    const done = exportAs(p.w1, '--group', p.team.name);
    t.is(done.status, 0, done.stderr);
    const bridge = createBridge({ log: () => undefined });
    const found = ids(bridge.search({ query: 'lantern fleet', limit: 10 }, callerOf(w.home)));
    t.true(Array.isArray(found) && found.length === 2, JSON.stringify(found));
    for (const id of found as string[]) {
      const st = fs.statSync(path.join(w.root, id));
      t.is(st.uid, p.w1.id, id);
      t.is(st.gid, p.team.id, id);
    }
    // Every directory and note the export made passes the rule only because w1 and team are named writers.
    w.setWriters({ users: [], groups: [p.team.name] });
    t.deepEqual(ids(bridge.search({ query: 'lantern fleet', limit: 10 }, callerOf(w.home))), []);
  },
);

rootTest('writers › doctor and doctor --explain name the writer rule that admitted or refused each object', (t) => {
  const p = teamPeople();
  const w = teamWorld({ users: [p.w1.name], groups: [p.team.name] });
  put(w.root, 'a.md', p.w1, p.team, 0o660);
  dir(w.root, 'sub', p.w1, p.team);
  put(w.root, 'sub/b-unnamed.md', p.w2, p.team, 0o640);
  put(w.root, 'c-acl.md', p.w1, p.team, 0o640, ['group', p.other]);
  const cli = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8' });
  const doctor = cli('doctor', '--home', w.home);
  t.regex(
    doctor.stdout,
    new RegExp(
      `the root: owner root; writable by its group gid ${p.team.id} \\(${p.team.name}\\), a named writer group`,
    ),
  );
  t.regex(doctor.stdout, new RegExp(`admitted 1 × owner uid ${p.w1.id} \\(${p.w1.name}\\): a named writer user`));
  t.regex(doctor.stdout, /skipped 1 × untrusted_owner: its owner is not root, you or a named writer user/);
  t.regex(doctor.stdout, /skipped 1 × acl_write: an ACL entry lets someone who is not root, you or a named writer/);
  const admitted = cli('doctor', '--home', w.home, '--explain', 'a.md');
  t.is(admitted.status, 0, admitted.stdout);
  t.regex(
    admitted.stdout,
    new RegExp(`a\\.md: admitted: owner uid ${p.w1.id} \\(${p.w1.name}\\) is a named writer user`),
  );
  const refused = cli('doctor', '--home', w.home, '--explain', 'sub/b-unnamed.md');
  t.is(refused.status, 1);
  t.regex(refused.stdout, new RegExp(`sub: admitted: owner uid ${p.w1.id}`));
  t.regex(
    refused.stdout,
    new RegExp(
      `sub/b-unnamed\\.md: REFUSED \\(untrusted_owner\\): owner uid ${p.w2.id} is not root, you or a named writer user`,
    ),
  );
  const acl = cli('doctor', '--home', w.home, '--explain', 'c-acl.md');
  t.regex(
    acl.stdout,
    new RegExp(`c-acl\\.md: REFUSED \\(acl_write\\).*group gid ${p.other.id}: NOT a named writer group`),
  );
  // Without writers, the team root itself is what doctor points at.
  w.setWriters(undefined);
  const plain = cli('doctor', '--home', w.home);
  t.is(plain.status, 1);
  t.regex(plain.stdout, /the root: owner root; writable by its group .*which is not a named writer group/);
});

/** The CLI as `who` (group team), with CAP_LEASE as an ambient capability when `lease`. */
function asMember(who: Account, lease: boolean, ...args: string[]): { status: number | null; stdout: string } {
  const caps = lease ? ['--inh-caps', '+lease', '--ambient-caps', '+lease'] : [];
  const r = spawnSync(
    'setpriv',
    [
      `--reuid=${who.id}`,
      `--regid=${teamPeople().team.id}`,
      '--init-groups',
      ...caps,
      process.execPath,
      teamCli(),
      ...args,
    ],
    { encoding: 'utf8', env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } },
  );
  return { status: r.status, stdout: r.stdout };
}

rootTest(
  'writers › an outsider’s descriptor on a named writer’s note, written after chmod 660: refused with CAP_LEASE, counted by doctor without',
  async (t) => {
    // w1 (a named writer) owns the note, w2 (a team member, not named) runs memory-bridge, x1 is an outsider.
    const p = teamPeople();
    const w = teamWorld({ users: [p.w1.name], groups: [p.team.name] });
    fs.chmodSync(w.root, 0o2775); // the outsider can reach a note that is world-writable
    put(w.root, 'plan.md', p.w1, p.team, 0o666);
    const note = path.join(w.root, 'plan.md');
    const h = holder(note, p.x1.id);
    await h.ready;
    // The owner takes the world's write access away; the outsider's descriptor keeps it.
    fs.chmodSync(note, 0o660);
    await h.write('qzoutsiderqz written after the chmod');
    t.true(fs.readFileSync(note, 'utf8').includes('qzoutsiderqz'), 'the old descriptor still writes');
    const kind = ['--home', w.home, '--run-kind', 'interactive', '--'];
    try {
      // With CAP_LEASE the check reaches a note w2 does not own: refused, read and search alike.
      const read = asMember(p.w2, true, 'read', ...kind, 'plan.md');
      t.is(read.status, 1, read.stdout);
      t.is(JSON.parse(read.stdout).error.code, 'not_found_or_denied');
      const found = asMember(p.w2, true, 'search', ...kind, 'qzoutsiderqz');
      t.deepEqual(JSON.parse(found.stdout).results, [], found.stdout);
      const doctor = asMember(p.w2, true, 'doctor', '--home', w.home);
      t.regex(doctor.stdout, /open-for-writing check: every note \(this process has CAP_LEASE\)/);
      t.regex(doctor.stdout, /skipped 1 × open_for_write/);
      // Without it the kernel refuses w2 a lease on w1's file: the exact remaining case (docs/THREAT-MODEL.md),
      // which doctor names with its count and remedies instead of leaving it silent.
      const plain = asMember(p.w2, false, 'doctor', '--home', w.home);
      t.regex(
        plain.stdout,
        /open-for-writing check: 1 note owned by another user \(a named writer or root\) cannot be checked by this process: .*CAP_LEASE.*replace/,
      );
      const served = asMember(p.w2, false, 'read', ...kind, 'plan.md');
      t.true(JSON.parse(served.stdout).content.includes('qzoutsiderqz'), 'the stated limit: served without CAP_LEASE');
    } finally {
      await h.stop();
    }
    // Once the descriptor is gone the note passes again under CAP_LEASE.
    const after = asMember(p.w2, true, 'read', ...kind, 'plan.md');
    t.is(after.status, 0, after.stdout);
  },
);

test('writers › CAP_LEASE is read from the effective set of /proc/self/status; doctor’s line counts other owners', (t) => {
  t.true(hasLeaseCapability('Name:\tnode\nCapInh:\t0\nCapEff:\t0000000010000000\n'));
  t.true(hasLeaseCapability('CapEff:\t000001ffffffffff\n'));
  t.false(hasLeaseCapability('CapPrm:\t0000000010000000\nCapEff:\t0000000000000000\n'));
  t.false(hasLeaseCapability('CapEff:\tzz\n'));
  t.false(hasLeaseCapability(''));
  t.regex(writeCheckLine([5, 5], 5, false), /every note \(all are yours\)/);
  t.regex(writeCheckLine([5, 0, 7], 5, false), /2 notes owned by another user/);
  t.regex(writeCheckLine([0], 5, true), /every note \(this process has CAP_LEASE\)/);
});
