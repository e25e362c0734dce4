import test from 'ava';
import { HTTP_RESULT_REMEDIES, refusalRemedy, remedyOf } from '../../src/remedies.js';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { FOREIGN_UID, makeHome, mkdirs, removeTree, writeNote } from '../helpers/fixtures.js';
import { CLI } from '../cli/tree.js';
import { tokenHash } from '../../src/server/clients.js';
import {
  callJson,
  connectHttp,
  fetchTrusting,
  makeWorld,
  mcpHeaders,
  rawRequest,
  rawSocket,
  toolCallBody,
  waitFor,
  type World,
} from './http-world.js';

let world: World;
test.before(() => {
  world = makeWorld('mb-serve-');
});
test.after.always(() => {
  if (world !== undefined) removeTree(world.base);
});

const ENV = { PATH: process.env.PATH ?? '/usr/bin:/bin' };

function cli(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env: ENV, timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A fresh trusted directory for one test's clients file. */
function cfgDir(name: string): string {
  return mkdirs(world.base, `cfg-${name}`);
}

interface Served {
  child: ChildProcess;
  port: number;
  origin: string;
  stderr: () => string;
  exit: Promise<number | null>;
}

/** Spawn `memory-bridge serve` on an ephemeral port and wait for its "listening on" line. */
async function spawnServe(args: string[]): Promise<Served> {
  const child = spawn(process.execPath, [CLI, 'serve', '--listen', '127.0.0.1:0', ...args], {
    env: ENV,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (d: string) => (err += d));
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const listening = await waitFor(
    () => /listening on (https?:\/\/[^ ]+):(\d+)\/mcp/.test(err) || child.exitCode !== null,
  );
  const m = /listening on (https?:\/\/[^ ]+):(\d+)\/mcp/.exec(err);
  if (!listening || m === null) {
    child.kill('SIGKILL');
    throw new Error(`serve did not start: ${err}`);
  }
  return { child, port: Number(m[2]), origin: `${m[1]}:${m[2]}`, stderr: () => err, exit };
}

test('clients › add prints a 256-bit token once and stores only its SHA-256 in a 0600 file; list and remove', (t) => {
  const file = path.join(cfgDir('add'), 'clients.json');
  const added = cli(['clients', 'add', '--clients', file, '--name', 'work-laptop', '--home', world.workHome]);
  t.is(added.status, 0, added.stderr);
  const token = added.stdout.trim();
  t.regex(token, /^mbt_[A-Za-z0-9_-]{43}$/);
  t.is(Buffer.from(token.slice(4), 'base64url').length, 32);
  const text = fs.readFileSync(file, 'utf8');
  t.false(text.includes(token));
  t.false(added.stderr.includes(token));
  const doc = JSON.parse(text);
  t.deepEqual(doc, {
    version: 1,
    clients: [{ name: 'work-laptop', token_sha256: tokenHash(token), home: world.workHome, run_kind: 'interactive' }],
  });
  t.is(fs.statSync(file).mode & 0o777, 0o600);

  const second = cli([
    'clients',
    'add',
    '--clients',
    file,
    '--name',
    'nightly',
    '--home',
    world.cronHome,
    '--run-kind',
    'cron',
  ]);
  t.is(second.status, 0, second.stderr);
  t.not(second.stdout.trim(), token);
  const dup = cli(['clients', 'add', '--clients', file, '--name', 'nightly', '--home', world.cronHome]);
  t.is(dup.status, 1);
  t.regex(dup.stderr, /already exists/);

  const list = cli(['clients', 'list', '--clients', file]);
  t.is(list.status, 0);
  t.regex(list.stdout, /work-laptop\s+interactive\s+\S*work-home/);
  t.regex(list.stdout, /nightly\s+cron/);
  const listJson = cli(['clients', 'list', '--clients', file, '--json']);
  t.deepEqual(
    JSON.parse(listJson.stdout).map((c: { name: string }) => c.name),
    ['work-laptop', 'nightly'],
  );
  for (const out of [list.stdout, listJson.stdout]) {
    t.false(out.includes(token));
    t.false(out.includes(tokenHash(token)));
  }

  const removed = cli(['clients', 'remove', '--clients', file, '--name', 'work-laptop']);
  t.is(removed.status, 0, removed.stderr);
  t.deepEqual(
    JSON.parse(fs.readFileSync(file, 'utf8')).clients.map((c: { name: string }) => c.name),
    ['nightly'],
  );
  t.is(fs.statSync(file).mode & 0o777, 0o600);
  t.is(cli(['clients', 'remove', '--clients', file, '--name', 'work-laptop']).status, 1);
  // No temp files left beside it.
  t.deepEqual(fs.readdirSync(path.dirname(file)), ['clients.json']);
});

test('clients › refuses an untrusted directory or file, bad names and run kinds, and warns about a missing policy', (t) => {
  const open = mkdirs(world.base, 'cfg-open');
  fs.chmodSync(open, 0o777);
  const r = cli([
    'clients',
    'add',
    '--clients',
    path.join(open, 'clients.json'),
    '--name',
    'a',
    '--home',
    world.workHome,
  ]);
  t.is(r.status, 1);
  t.regex(r.stderr, /not trusted/);
  t.false(fs.existsSync(path.join(open, 'clients.json')));

  const dir = cfgDir('bad');
  const file = path.join(dir, 'clients.json');
  t.is(cli(['clients', 'add', '--clients', file, '--name', '../x', '--home', world.workHome]).status, 2);
  t.is(
    cli(['clients', 'add', '--clients', file, '--name', 'x', '--home', world.workHome, '--run-kind', 'unknown']).status,
    2,
  );
  // A relative home is refused, not resolved against the directory the command happens to run in.
  for (const rel of ['relative/home', './home', '../home']) {
    const relative = cli(['clients', 'add', '--clients', file, '--name', 'rel', '--home', rel]);
    t.is(relative.status, 2, rel);
    t.regex(relative.stderr, /--home must be an absolute path/, rel);
  }
  t.false(fs.existsSync(file));
  const noPolicy = cli([
    'clients',
    'add',
    '--clients',
    file,
    '--name',
    'x',
    '--home',
    path.join(world.base, 'nowhere'),
  ]);
  t.is(noPolicy.status, 0);
  t.regex(noPolicy.stderr, /warning: .*policy\.json does not load \(policy_missing\)/);

  fs.chmodSync(file, 0o620);
  const untrusted = cli(['clients', 'list', '--clients', file]);
  t.is(untrusted.status, 1);
  t.regex(untrusted.stderr, /not trusted \(group_writable\)/);
  fs.chmodSync(file, 0o600);
  fs.writeFileSync(file, '{"version": 1, "clients": [], "clients": []}');
  const dupKey = cli(['clients', 'list', '--clients', file]);
  t.is(dupKey.status, 1);
  t.regex(dupKey.stderr, /not strict JSON \(duplicate_key/);
});

test('serve › refuses plain HTTP on a non-loopback address unless --behind-proxy, and a missing clients file', async (t) => {
  const dir = cfgDir('refuse');
  const file = path.join(dir, 'clients.json');
  const missing = cli(['serve', '--clients', file]);
  t.is(missing.status, 1);
  t.regex(missing.stderr, /does not exist \(create it with: memory-bridge clients add/);

  t.is(cli(['clients', 'add', '--clients', file, '--name', 'a', '--home', world.workHome]).status, 0);
  const plain = cli(['serve', '--clients', file, '--listen', '0.0.0.0:0']);
  t.is(plain.status, 1);
  t.regex(
    plain.stderr,
    /refusing to serve plain HTTP on 0\.0\.0\.0.*--tls-cert FILE --tls-key FILE, or --behind-proxy/s,
  );
  t.is(cli(['serve', '--clients', file, '--listen', 'nonsense']).status, 2);
  for (const n of ['0', '1025', 'many']) {
    const bad = cli(['serve', '--clients', file, '--listen', '127.0.0.1:0', '--max-connections-per-peer', n]);
    t.is(bad.status, 2, n);
    t.regex(bad.stderr, /--max-connections-per-peer/, n);
  }
  t.is(cli(['serve', '--clients', file, '--tls-cert', file]).status, 2);

  const proxied = spawn(
    process.execPath,
    [CLI, 'serve', '--clients', file, '--listen', '0.0.0.0:0', '--behind-proxy'],
    {
      env: ENV,
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let err = '';
  proxied.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => proxied.once('exit', (code) => resolve(code)));
  t.true(await waitFor(() => err.includes('listening on')), err);
  t.regex(err, /no --allowed-host: every request will get 403/);
  proxied.kill('SIGTERM');
  t.is(await exited, 0);
});

const hasOpenssl = spawnSync('openssl', ['version']).status === 0;

(hasOpenssl ? test : test.skip)(
  'serve › TLS with a self-signed certificate; the key file must pass the trust rule',
  async (t) => {
    const dir = cfgDir('tls');
    const file = path.join(dir, 'clients.json');
    const add = cli(['clients', 'add', '--clients', file, '--name', 'work-laptop', '--home', world.workHome]);
    const token = add.stdout.trim();
    const cert = path.join(dir, 'cert.pem');
    const key = path.join(dir, 'key.pem');
    const made = spawnSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1,DNS:localhost',
        '-keyout',
        key,
        '-out',
        cert,
      ],
      { encoding: 'utf8' },
    );
    t.is(made.status, 0, made.stderr);
    fs.chmodSync(key, 0o600);

    // A key others could write, or owned by someone else, is refused before anything listens.
    fs.chmodSync(key, 0o660);
    const writable = cli(['serve', '--clients', file, '--tls-cert', cert, '--tls-key', key, '--listen', '0.0.0.0:0']);
    t.is(writable.status, 1);
    t.regex(writable.stderr, /--tls-key .* is not usable \(group_writable\)/);
    fs.chmodSync(key, 0o600);
    if (process.getuid?.() === 0) {
      fs.chownSync(key, FOREIGN_UID, FOREIGN_UID);
      const foreign = cli(['serve', '--clients', file, '--tls-cert', cert, '--tls-key', key]);
      t.is(foreign.status, 1);
      t.regex(foreign.stderr, /is not usable \(untrusted_owner\)/);
      fs.chownSync(key, 0, 0);
    }

    const s = await spawnServe(['--clients', file, '--tls-cert', cert, '--tls-key', key]);
    try {
      t.true(s.origin.startsWith('https://'));
      const c = await connectHttp(`${s.origin}/mcp`, token, fetchTrusting(fs.readFileSync(cert)));
      const hits = await callJson(c, 'memory_bridge_search', { query: 'heron' });
      t.deepEqual(hits.results.map((r: { id: string }) => r.id).sort(), ['shared/glossary.md', 'work/roadmap.md']);
      await c.close();
      // Without trusting the certificate the client cannot connect at all.
      await t.throwsAsync(connectHttp(`${s.origin}/mcp`, token));
    } finally {
      s.child.kill('SIGTERM');
      t.is(await s.exit, 0);
    }
  },
);

test('serve › names at start a client whose calls would all be refused, and logs each refusal remedy once', async (t) => {
  const dir = cfgDir('refused');
  const file = path.join(dir, 'clients.json');
  const lost = mkdirs(world.base, 'home-without-policy');
  const token = cli(['clients', 'add', '--clients', file, '--name', 'lost', '--home', lost]).stdout.trim();
  t.is(cli(['clients', 'add', '--clients', file, '--name', 'fine', '--home', world.workHome]).status, 0);
  const s = await spawnServe(['--clients', file]);
  try {
    t.true(
      s
        .stderr()
        .includes(
          `memory-bridge serve: client lost: every call will be unavailable until this is fixed: policy_missing → ${remedyOf('policy_missing')}\n`,
        ),
      s.stderr(),
    );
    t.false(s.stderr().includes('client fine:'));
    const c = await connectHttp(`${s.origin}/mcp`, token);
    for (let i = 0; i < 2; i++)
      t.is((await callJson(c, 'memory_bridge_search', { query: 'heron' })).error.code, 'unavailable');
    await c.close();
    const refusedLines = (): string[] =>
      s
        .stderr()
        .split('\n')
        .filter((l) => l.includes('reason=policy_missing'));
    // A request's line is written when its response closes.
    await waitFor(() => refusedLines().length >= 2);
    const refused = refusedLines();
    t.is(refused.length, 2, s.stderr());
    t.true(refused[0]!.endsWith(` → ${remedyOf('policy_missing')}`));
    t.false(refused[1]!.includes('→'));
  } finally {
    s.child.kill('SIGTERM');
    t.is(await s.exit, 0);
  }
});

test('serve › a refusal before any tool runs (a wrong token, a body that is not JSON) logs its remedy once', async (t) => {
  const file = path.join(cfgDir('http-refusals'), 'clients.json');
  const token = cli(['clients', 'add', '--clients', file, '--name', 'node-a', '--home', world.workHome]).stdout.trim();
  const s = await spawnServe(['--clients', file]);
  try {
    for (let i = 0; i < 2; i++) {
      t.is((await rawRequest(s.port, { headers: mcpHeaders(s.port, 'mbt_wrong'), body: '{}' })).status, 401);
      t.is((await rawRequest(s.port, { headers: mcpHeaders(s.port, token), body: '{"jsonrpc":' })).status, 400);
    }
    const lines = (result: string): string[] =>
      s
        .stderr()
        .split('\n')
        .filter((l) => l.includes(` result=${result} `));
    t.true(await waitFor(() => lines('unauthorized').length === 2 && lines('bad_json').length === 2), s.stderr());
    for (const result of ['unauthorized', 'bad_json']) {
      const [first, second] = lines(result);
      t.true(first!.endsWith(` → ${HTTP_RESULT_REMEDIES[result]}`), first);
      t.false(second!.includes('→'), second);
    }
    // The remedies name commands and roles, never the token, the clients file or the home.
    for (const l of s.stderr().split('\n')) {
      for (const secret of [token, 'mbt_wrong', file, world.workHome]) t.false(l.includes(secret), l);
    }
  } finally {
    s.child.kill('SIGTERM');
    t.is(await s.exit, 0);
  }
});

test('serve › SIGTERM stops accepting, lets the request in flight finish, and exits 0', async (t) => {
  const dir = cfgDir('term');
  const file = path.join(dir, 'clients.json');
  const token = cli([
    'clients',
    'add',
    '--clients',
    file,
    '--name',
    'work-laptop',
    '--home',
    world.workHome,
  ]).stdout.trim();
  const s = await spawnServe(['--clients', file]);
  const call = toolCallBody('memory_bridge_search', { query: 'heron' });
  const headers = mcpHeaders(s.port, token);
  t.is((await rawRequest(s.port, { headers, body: call })).status, 200);
  // "Expect: 100-continue": Node answers "100 Continue" when it hands the request to the server's handler, so once
  // it arrives the request is in flight (without it, a signal could race the server reading the headers).
  const slow = await rawSocket(
    s.port,
    `POST /mcp HTTP/1.1\r\n${Object.entries({
      ...headers,
      'Content-Length': String(Buffer.byteLength(call)),
      Expect: '100-continue',
    })
      .map(([k, v]) => `${k}: ${v}`)
      .join('\r\n')}\r\n\r\n`,
  );
  t.true(await waitFor(() => slow.received().includes('100 Continue')));
  s.child.kill('SIGTERM');
  t.true(await waitFor(() => s.stderr().includes('SIGTERM: stopping')));
  await t.throwsAsync(
    rawRequest(s.port, { method: 'GET', path: '/healthz', headers: { Host: `127.0.0.1:${s.port}` } }),
  );
  slow.socket.write(call);
  await slow.closed;
  t.regex(slow.received(), /^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 /);
  t.true(slow.received().includes('"ok\\":true'));
  t.is(await s.exit, 0);
  const lines = s
    .stderr()
    .split('\n')
    .filter((l) => l.includes('client=work-laptop'));
  t.is(lines.length, 2);
  for (const l of lines) t.false(l.includes(token) || l.includes('heron'));
});

test('serve › names at start a client whose root is group-writable as the root, and each refused request as the root', async (t) => {
  const dir = cfgDir('bad-root');
  const file = path.join(dir, 'clients.json');
  const root = mkdirs(world.base, 'group-notes');
  writeNote(root, 'heron.md', '# Heron\n\nThe heron visits the pond.\n');
  fs.chmodSync(root, 0o770);
  const { home } = makeHome(world.base, { version: 1, root, allow: ['**'] }, 'group-root-home');
  const token = cli(['clients', 'add', '--clients', file, '--name', 'team', '--home', home]).stdout.trim();
  const s = await spawnServe(['--clients', file]);
  try {
    const remedy = refusalRemedy('group_writable', 'root');
    t.true(
      s
        .stderr()
        .includes(
          `memory-bridge serve: client team: every call will be unavailable until this is fixed: root_untrusted root=group_writable (root ${root}) → ${remedy}\n`,
        ),
      s.stderr(),
    );
    const c = await connectHttp(`${s.origin}/mcp`, token);
    const refused = await callJson(c, 'memory_bridge_search', { query: 'heron' });
    t.deepEqual(refused, { ok: false, error: { code: 'unavailable', message: 'Memory is unavailable.' } });
    const lines = (): string[] =>
      s
        .stderr()
        .split('\n')
        .filter((l) => l.includes('tool=memory_bridge_search'));
    await waitFor(() => lines().length >= 1);
    t.regex(lines()[0]!, / reason=root_untrusted root=group_writable status=200 ms=[0-9.]+ → /, s.stderr());
    t.true(lines()[0]!.endsWith(` → ${remedy}`));
    // Fixed while serve runs: the next request is served.
    fs.chmodSync(root, 0o700);
    const hits = await callJson(c, 'memory_bridge_search', { query: 'heron' });
    t.deepEqual(
      hits.results.map((r: { id: string }) => r.id),
      ['heron.md'],
    );
    await c.close();
  } finally {
    s.child.kill('SIGTERM');
    t.is(await s.exit, 0);
  }
});
