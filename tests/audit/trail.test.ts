/**
 * The audit trail through the bridge (docs/AUDIT.md): one record per call with what was released, refusals with
 * their reason, the query only as an HMAC, the hash chain, rotation by day and size with an injected clock,
 * retention, and failing closed when the directory is untrusted. Real files, real descriptors.
 */
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { createBridge } from '../../src/tools/bridge.js';
import type { LogEvent, ReadResult } from '../../src/tools/types.js';
import { queryTrail } from '../../src/audit/query.js';
import { CHUNK_BYTES } from '../../src/audit/read.js';
import { verifyTrail } from '../../src/audit/verify.js';
import { lineHash } from '../../src/audit/record.js';
import { GENESIS } from '../../src/audit/files.js';
import { PolicySchema } from '../../src/policy/schema.js';
import { isRoot, removeTree, writeNote } from '../helpers/fixtures.js';
import { makeWorld, type World } from '../tools/world.js';

const worlds: World[] = [];
test.after.always(() => {
  for (const w of worlds) removeTree(w.tmp);
});

function world(audit: Record<string, unknown> = { enabled: true }): World {
  const w = makeWorld({ audit });
  worlds.push(w);
  writeNote(w.root, 'projects/garden.md', '# Garden\nthe garden needs rain\n');
  writeNote(w.root, 'secret/gate.md', '# Gate\nthe gate code is 4711\n');
  w.setPolicy({ allow: ['**'], deny: ['secret/**'], audit });
  return w;
}

function auditDir(w: World): string {
  return path.join(w.home, 'plugin-data', 'memory-bridge', 'audit');
}

function files(w: World): string[] {
  return fs.existsSync(auditDir(w)) ? fs.readdirSync(auditDir(w)).sort() : [];
}

function lines(w: World): string[] {
  return files(w).flatMap((f) =>
    fs
      .readFileSync(path.join(auditDir(w), f), 'utf8')
      .split('\n')
      .filter((l) => l !== ''),
  );
}

function records(w: World): Record<string, unknown>[] {
  return lines(w).map((l) => JSON.parse(l) as Record<string, unknown>);
}

test('policy › audit is strict, off by default, with documented ranges', (t) => {
  const base = { version: 1, root: '/srv/notes', allow: ['**'] };
  const off = PolicySchema.parse(base);
  t.deepEqual(off.audit, { enabled: false, queries: 'none', retain_days: 30, max_file_bytes: 16_777_216 });
  t.false(PolicySchema.safeParse({ ...base, audit: { enabled: true, verbose: true } }).success);
  t.false(PolicySchema.safeParse({ ...base, audit: { queries: 'text' } }).success);
  t.false(PolicySchema.safeParse({ ...base, audit: { retain_days: 0 } }).success);
  t.false(PolicySchema.safeParse({ ...base, audit: { max_file_bytes: 1024 } }).success);
  t.true(PolicySchema.safeParse({ ...base, audit: { enabled: true, queries: 'hmac', retain_days: 3660 } }).success);
});

test('trail › audit off writes nothing at all', (t) => {
  const w = world({ enabled: false });
  const bridge = createBridge({ log: () => undefined });
  t.true(bridge.search({ query: 'garden' }, w.caller).ok);
  t.false(fs.existsSync(auditDir(w)));
});

test('trail › one record per call: what was released, refusals with their reason, never the query or a hidden id', async (t) => {
  const w = world({ enabled: true, queries: 'hmac' });
  const bridge = createBridge({ log: () => undefined, transport: 'stdio' });
  const found = bridge.call('memory_bridge_search', { query: 'garden rain' }, w.caller, {
    traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
    client: 'laptop',
  });
  t.true(found.ok);
  const read = bridge.read({ id: 'projects/garden.md', offset: 4 }, w.caller) as ReadResult;
  t.true(read.ok);
  t.false(bridge.read({ id: 'secret/gate.md' }, w.caller).ok);
  t.false(bridge.read({ id: 'projects/absent-plan.md' }, w.caller).ok);
  t.false(bridge.search({ query: 'garden', limit: 0 }, w.caller).ok);
  bridge.search({ query: 'garden rain' }, { ...w.caller, cron: true });
  bridge.search({ query: 'other words' }, w.caller);
  const rs = records(w);
  t.is(rs.length, 7);
  const [search, ok, denied, missing, invalid, cron, other] = rs as Record<string, unknown>[];
  t.like(search, {
    'mcp.method.name': 'tools/call',
    'gen_ai.tool.name': 'memory_bridge_search',
    'memory_bridge.home': w.home,
    'memory_bridge.transport': 'stdio',
    'memory_bridge.run_kind': 'interactive',
    'memory_bridge.client': 'laptop',
    'memory_bridge.outcome': 'ok',
    trace_id: '4bf92f3577b34da6a3ce929d0e0e4736',
    'memory_bridge.notes': [{ id: 'projects/garden.md' }],
    'memory_bridge.truncated': false,
    'memory_bridge.incomplete': false,
    prev: GENESIS,
  });
  t.is(typeof search!['mcp.server.operation.duration'], 'number');
  t.regex(String(search!['memory_bridge.query_hmac']), /^[0-9a-f]{64}$/);
  t.is(search!['memory_bridge.query_hmac'], cron!['memory_bridge.query_hmac'], 'equal queries group together');
  t.not(search!['memory_bridge.query_hmac'], other!['memory_bridge.query_hmac']);
  const chars = [...'# Garden\nthe garden needs rain\n'.slice(4)].length;
  t.deepEqual(ok!['memory_bridge.notes'], [{ id: 'projects/garden.md', version: read.version, offset: 4, chars }]);
  t.like(denied, { 'memory_bridge.outcome': 'not_found_or_denied', 'error.type': 'denied' });
  t.like(missing, { 'memory_bridge.outcome': 'not_found_or_denied', 'error.type': 'missing' });
  t.like(invalid, { 'memory_bridge.outcome': 'invalid_request', 'error.type': 'bad_arguments' });
  t.like(cron, {
    'memory_bridge.outcome': 'unavailable',
    'error.type': 'cron_refused',
    'memory_bridge.run_kind': 'cron',
  });
  t.false('memory_bridge.notes' in denied!);
  const all = lines(w).join('\n');
  for (const leak of ['garden rain', 'other words', 'secret', 'gate', 'absent-plan', '4711'])
    t.false(all.includes(leak), leak);
  // The chain: each prev is the SHA-256 of the line before it.
  const ls = lines(w);
  for (let i = 1; i < ls.length; i++) t.is(rs[i]!.prev, lineHash(Buffer.from(ls[i - 1]!)));
  t.like(await verifyTrail(w.home), { records: 7, start: GENESIS, files: 1 });
  t.is((await verifyTrail(w.home)).broken, undefined);
  const st = fs.statSync(path.join(auditDir(w), files(w)[0]!));
  t.is(st.mode & 0o777, 0o600);
  t.is(fs.statSync(auditDir(w)).mode & 0o777, 0o700);
  t.is(fs.statSync(path.join(w.home, 'plugin-data', 'memory-bridge', 'audit.key')).mode & 0o777, 0o600);
});

test('trail › rotation across midnight (injected clock), by size, and retention keep the chain whole', async (t) => {
  const w = world({ enabled: true, max_file_bytes: 65_536, retain_days: 2 });
  let now = Date.parse('2026-03-01T23:59:59.000Z');
  const bridge = createBridge({ log: () => undefined, clock: () => now });
  t.true(bridge.search({ query: 'garden' }, w.caller).ok);
  now = Date.parse('2026-03-02T00:00:00.500Z');
  t.true(bridge.search({ query: 'garden' }, w.caller).ok);
  t.deepEqual(files(w), ['audit-2026-03-01.000001.jsonl', 'audit-2026-03-02.000001.jsonl']);
  // Size: about 500 bytes a record, so 65,536 bytes hold about 130.
  for (let i = 0; i < 300; i++) bridge.read({ id: 'projects/garden.md' }, w.caller);
  const day2 = files(w).filter((f) => f.startsWith('audit-2026-03-02'));
  t.true(day2.length >= 3, day2.join(','));
  for (const f of files(w)) t.true(fs.statSync(path.join(auditDir(w), f)).size <= 65_536);
  t.like(await verifyTrail(w.home), { records: 302, start: GENESIS });
  t.is((await verifyTrail(w.home)).broken, undefined);
  // Retention: three days later the first day's file goes when the new day's file starts; the chain still verifies.
  now = Date.parse('2026-03-04T00:00:01.000Z');
  t.true(bridge.search({ query: 'garden' }, w.caller).ok);
  t.false(files(w).includes('audit-2026-03-01.000001.jsonl'));
  const report = await verifyTrail(w.home);
  t.is(report.broken, undefined);
  t.is(report.records, 302);
  t.not(report.start, GENESIS, 'the oldest kept record chains to the removed file');
  // On threads or on one, the same report; a link broken between two files is named at the second file's line 1.
  t.deepEqual(await verifyTrail(w.home, { threads: 2 }), await verifyTrail(w.home, { threads: 0 }));
  const kept = files(w);
  const first = path.join(auditDir(w), kept[0]!);
  const ls = fs.readFileSync(first, 'utf8').split('\n');
  ls[ls.length - 2] = ls[ls.length - 2]!.replace('"memory_bridge.outcome":"ok"', '"memory_bridge.outcome":"OK"');
  fs.writeFileSync(first, ls.join('\n'));
  for (const threads of [0, 2])
    t.like(await verifyTrail(w.home, { threads }), { records: 302, broken: { file: kept[1], line: 1, why: 'chain' } });
});

test('verify › names the first broken record', async (t) => {
  const w = world();
  const bridge = createBridge({ log: () => undefined });
  for (let i = 0; i < 5; i++) bridge.search({ query: 'garden' }, w.caller);
  const file = path.join(auditDir(w), files(w)[0]!);
  const ls = fs.readFileSync(file, 'utf8').split('\n');
  ls[2] = ls[2]!.replace('"memory_bridge.outcome":"ok"', '"memory_bridge.outcome":"OK"');
  fs.writeFileSync(file, ls.join('\n'));
  t.like((await verifyTrail(w.home)).broken, { file: files(w)[0], line: 4, why: 'chain' });
});

test('verify › a line longer than any record is named, never buffered; a half-written last line is not read', async (t) => {
  const w = world();
  const bridge = createBridge({ log: () => undefined });
  for (let i = 0; i < 3; i++) bridge.search({ query: 'garden' }, w.caller);
  const file = path.join(auditDir(w), files(w)[0]!);
  const whole = fs.readFileSync(file, 'utf8');
  // A partial last line (a write in progress) is left out: the chain is whole and three records are read.
  fs.appendFileSync(file, '{"time":"2026');
  t.like(await verifyTrail(w.home), { records: 3, broken: undefined });
  t.is(queryTrail(w.home, {}, () => undefined).scanned, 3);
  // A 5 MiB line (more than a read chunk) between records 2 and 3: verify names it as line 3, the query skips it.
  const ls = whole.split('\n');
  ls.splice(2, 0, 'x'.repeat(CHUNK_BYTES + 1024));
  fs.writeFileSync(file, ls.join('\n'));
  t.like(await verifyTrail(w.home), { records: 4, broken: { file: files(w)[0], line: 3, why: 'not_a_record' } });
  let seen = 0;
  queryTrail(w.home, {}, () => seen++);
  t.is(seen, 3);
});

test('fail closed › an untrusted audit directory answers unavailable and logs audit_unwritable', (t) => {
  const w = world();
  const logs: LogEvent[] = [];
  const bridge = createBridge({ log: (e) => logs.push(e) });
  t.true(bridge.search({ query: 'garden' }, w.caller).ok);
  fs.chmodSync(auditDir(w), 0o770);
  t.deepEqual(bridge.read({ id: 'projects/garden.md' }, w.caller), {
    ok: false,
    error: { code: 'unavailable', message: 'Memory is unavailable.' },
  });
  t.deepEqual(logs, [{ tool: 'memory_bridge_read', reason: 'audit_unwritable', profile: 'test' }]);
  fs.chmodSync(auditDir(w), 0o700);
  // A symlinked audit file is never followed.
  const current = path.join(auditDir(w), files(w)[0]!);
  fs.renameSync(current, `${current}.moved`);
  fs.symlinkSync(`${current}.moved`, current);
  t.false(bridge.search({ query: 'garden' }, w.caller).ok);
  t.is(fs.readFileSync(`${current}.moved`, 'utf8').split('\n').length, 2);
});

test('fail closed › a full disk answers unavailable with audit_unwritable and leaves no half record', async (t) => {
  if (!isRoot) {
    t.pass('needs root to mount a tmpfs');
    return;
  }
  const w = world();
  const mnt = path.join(w.tmp, 'small');
  fs.mkdirSync(mnt, { mode: 0o700 });
  const { execFileSync } = require_();
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k,mode=0700', 'tmpfs', mnt]);
  try {
    fs.mkdirSync(path.join(mnt, 'audit'), { mode: 0o700 });
    fs.rmSync(auditDir(w), { recursive: true, force: true });
    // The audit directory is the small filesystem's (a mount point is a directory like any other to the walk).
    execFileSync('mount', ['--bind', path.join(mnt, 'audit'), mkdirAudit(w)]);
    try {
      const logs: LogEvent[] = [];
      const bridge = createBridge({ log: (e) => logs.push(e) });
      t.true(bridge.search({ query: 'garden' }, w.caller).ok);
      // Fill the filesystem.
      try {
        fs.writeFileSync(path.join(mnt, 'filler'), Buffer.alloc(1 << 20));
      } catch {
        // ENOSPC: it is full now.
      }
      // The audit file's last page may still hold a few records; the call after it is refused.
      let released = 0;
      let refused = false;
      for (let i = 0; i < 64 && !refused; i++) {
        const answer = bridge.read({ id: 'projects/garden.md' }, w.caller);
        if (answer.ok) released++;
        else {
          t.deepEqual(answer, { ok: false, error: { code: 'unavailable', message: 'Memory is unavailable.' } });
          refused = true;
        }
      }
      t.true(refused);
      t.true(logs.some((e) => e.reason === 'audit_unwritable'));
      const report = await verifyTrail(w.home);
      t.is(report.broken, undefined);
      t.is(report.records, 1 + released, 'every released answer has its record, and nothing else is there');
      fs.rmSync(path.join(mnt, 'filler'));
      t.true(bridge.read({ id: 'projects/garden.md' }, w.caller).ok);
      t.is((await verifyTrail(w.home)).records, 2 + released);
    } finally {
      execFileSync('umount', [auditDir(w)]);
    }
  } finally {
    execFileSync('umount', [mnt]);
  }
});

function mkdirAudit(w: World): string {
  fs.mkdirSync(auditDir(w), { mode: 0o700 });
  return auditDir(w);
}

import { createRequire } from 'node:module';
function require_(): typeof import('node:child_process') {
  return createRequire(import.meta.url)('node:child_process') as typeof import('node:child_process');
}

test('trail › a read of several ids names only the notes it answered; an outline says so', (t) => {
  const w = world();
  const bridge = createBridge({ log: () => undefined });
  const many = bridge.read({ ids: ['projects/garden.md', 'secret/gate.md'] }, w.caller);
  t.true(many.ok);
  const outline = bridge.read({ id: 'projects/garden.md', outline: true }, w.caller);
  t.true(outline.ok);
  const [m, o] = records(w);
  t.is((m!['memory_bridge.notes'] as { id: string }[]).map((n) => n.id).join(','), 'projects/garden.md');
  t.like((o!['memory_bridge.notes'] as object[])[0], { id: 'projects/garden.md', outline: true });
  t.false(lines(w).join('\n').includes('gate'));
});
