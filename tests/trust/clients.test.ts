import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { FOREIGN_GID, FOREIGN_UID, isRoot, makeTempDir, mkdirs, removeTree } from '../helpers/fixtures.js';
import {
  authenticate,
  bearerToken,
  callerOf,
  ClientsFileError,
  loadClients,
  newToken,
  parseClientsBytes,
  readForEdit,
  tokenHash,
  writeClients,
  type ClientEntry,
} from '../../src/server/clients.js';

let base: string;
test.before(() => {
  base = makeTempDir('mb-clients-');
});
test.after.always(() => {
  if (base !== undefined) removeTree(base);
});

let n = 0;
/** A fresh owner-only directory for one case. */
function dir(): string {
  return mkdirs(base, `case-${n++}`);
}

function entry(name: string, token: string, runKind: ClientEntry['runKind'] = 'interactive'): ClientEntry {
  return { name, tokenSha256: tokenHash(token), home: '/srv/homes/x', runKind };
}

function reasonOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    if (err instanceof ClientsFileError) return err.reason;
    throw err;
  }
  return undefined;
}

const H = 'a'.repeat(64);
const doc = (clients: unknown[], extra: Record<string, unknown> = {}) =>
  Buffer.from(JSON.stringify({ version: 1, clients, ...extra }));
const good = { name: 'n', token_sha256: H, home: '/h', run_kind: 'interactive' };

test('clients file › strict shape: every malformed document is clients_invalid and the message never echoes a hash', (t) => {
  t.deepEqual(parseClientsBytes(doc([good])).clients, [
    { name: 'n', tokenSha256: H, home: '/h', runKind: 'interactive' },
  ]);
  const bad: [string, Buffer][] = [
    ['version 2', Buffer.from(JSON.stringify({ version: 2, clients: [] }))],
    ['unknown top key', doc([], { extra: true })],
    ['unknown entry key', doc([{ ...good, admin: true }])],
    ['missing key', doc([{ name: 'n', token_sha256: H, home: '/h' }])],
    ['duplicate name', doc([good, { ...good, token_sha256: 'b'.repeat(64) }])],
    ['duplicate hash', doc([good, { ...good, name: 'm' }])],
    ['upper-case hex', doc([{ ...good, token_sha256: 'A'.repeat(64) }])],
    ['short hash', doc([{ ...good, token_sha256: 'a'.repeat(63) }])],
    ['relative home', doc([{ ...good, home: 'homes/x' }])],
    ['dot-dot home', doc([{ ...good, home: '/srv/../etc' }])],
    ['root home', doc([{ ...good, home: '/' }])],
    ['unknown run kind', doc([{ ...good, run_kind: 'unknown' }])],
    ['name with a space', doc([{ ...good, name: 'a b' }])],
    ['name with a newline', doc([{ ...good, name: 'a\nclient=x' }])],
    ['duplicate JSON key', Buffer.from(`{"version":1,"clients":[],"version":1}`)],
    ['byte order mark', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), doc([])])],
    ['not an object', Buffer.from('[]')],
    ['trailing data', Buffer.from('{"version":1,"clients":[]} x')],
  ];
  for (const [what, bytes] of bad) {
    const err = t.throws(() => parseClientsBytes(bytes), { instanceOf: ClientsFileError }, what);
    t.is(err?.reason, 'clients_invalid', what);
    t.false(err?.message.includes(H) ?? true, what);
  }
});

test('clients file › the trust rule applies to the file and to every directory above it', (t) => {
  const token = newToken();
  const make = (): string => {
    const d = dir();
    const file = path.join(d, 'clients.json');
    writeClients(file, { clients: [entry('a', token)] }, null);
    return file;
  };

  const ok = make();
  t.is(loadClients(ok).clients.length, 1);
  t.is(authenticate(ok, token)?.name, 'a');

  t.is(
    reasonOf(() => loadClients(path.join(dir(), 'absent.json'))),
    'clients_missing',
  );

  const groupWritable = make();
  fs.chmodSync(groupWritable, 0o620);
  t.is(
    reasonOf(() => authenticate(groupWritable, token)),
    'clients_untrusted',
  );

  const openDir = make();
  fs.chmodSync(path.dirname(openDir), 0o777);
  t.is(
    reasonOf(() => authenticate(openDir, token)),
    'clients_untrusted',
  );

  const target = make();
  const link = path.join(dir(), 'clients.json');
  fs.symlinkSync(target, link);
  t.is(
    reasonOf(() => authenticate(link, token)),
    'clients_untrusted',
  );

  const hard = make();
  fs.linkSync(hard, path.join(path.dirname(hard), 'second-name.json'));
  t.is(
    reasonOf(() => authenticate(hard, token)),
    'clients_untrusted',
  );

  // Directly in /tmp (a shared sticky directory) is never trusted.
  t.is(
    reasonOf(() => readForEdit(`/tmp/mb-clients-${process.pid}-${n++}.json`)),
    'clients_untrusted',
  );

  if (isRoot) {
    const foreign = make();
    fs.chownSync(foreign, FOREIGN_UID, FOREIGN_GID);
    t.is(
      reasonOf(() => authenticate(foreign, token)),
      'clients_untrusted',
    );
  }
});

test('clients file › authenticate matches only the exact token; the caller comes from the entry alone', (t) => {
  const d = dir();
  const file = path.join(d, 'clients.json');
  const tokens = [newToken(), newToken(), newToken()];
  writeClients(
    file,
    {
      clients: [
        { ...entry('a', tokens[0]!), home: '/srv/a' },
        { ...entry('b', tokens[1]!, 'cron'), home: '/srv/b' },
        { ...entry('c', tokens[2]!, 'subagent'), home: '/srv/c' },
      ],
    },
    null,
  );
  t.deepEqual(callerOf(authenticate(file, tokens[0]!)!), {
    home: '/srv/a',
    cron: false,
    subagent: false,
    profile: 'a',
  });
  t.deepEqual(callerOf(authenticate(file, tokens[1]!)!), { home: '/srv/b', cron: true, subagent: false, profile: 'b' });
  t.deepEqual(callerOf(authenticate(file, tokens[2]!)!), { home: '/srv/c', cron: false, subagent: true, profile: 'c' });
  for (const wrong of [null, '', `${tokens[0]}x`, tokens[0]!.slice(0, -1), tokenHash(tokens[0]!), newToken()])
    t.is(authenticate(file, wrong), null, String(wrong));
});

test('clients file › bearerToken accepts exactly one b64token after the Bearer scheme', (t) => {
  const token = newToken();
  t.is(bearerToken(`Bearer ${token}`), token);
  t.is(bearerToken(`bearer ${token}`), token);
  t.is(bearerToken(`BEARER  ${token} `), token);
  for (const bad of [
    undefined,
    '',
    'Bearer',
    'Bearer ',
    `Basic ${token}`,
    `Bearer ${token} ${token}`,
    `Bearer ${token}\u0000`,
    'Bearer a=b',
    `Bearer ${'a'.repeat(513)}`,
    ['Bearer x', 'Bearer y'],
  ])
    t.is(bearerToken(bad as string | undefined), null, JSON.stringify(bad));
});

test('clients file › writes are atomic, 0600 whatever the umask, leave no temp file, and refuse a concurrent edit', (t) => {
  const d = dir();
  const file = path.join(d, 'clients.json');
  const old = process.umask(0);
  try {
    writeClients(file, { clients: [entry('a', newToken())] }, null);
  } finally {
    process.umask(old);
  }
  t.is(fs.statSync(file).mode & 0o777, 0o600);
  const { current, bytes } = readForEdit(file);
  t.is(current.clients.length, 1);
  // Someone else's edit lands between our read and our rename: nothing is written.
  fs.writeFileSync(file, `${fs.readFileSync(file, 'utf8')} `);
  const err = t.throws(() => writeClients(file, { clients: [] }, bytes), { instanceOf: ClientsFileError });
  t.regex(err!.message, /changed while this command ran/);
  t.is(loadClients(file).clients.length, 1);
  // Creating over an existing file, or replacing one that vanished, is refused the same way.
  t.throws(() => writeClients(file, { clients: [] }, null), { instanceOf: ClientsFileError });
  t.deepEqual(fs.readdirSync(d), ['clients.json']);
});
