/**
 * The warm first call on the worker's side (docs/HERMES.md, "Warm first call"): a `warm_up` request builds the
 * caller's view through the search path, a tool call that arrives behind it is answered from that view (no note is
 * read twice), the warm-up is recorded for `status` and `doctor` (view.json), and a refused warm-up is recorded with
 * its reason. The worker runs in process over real files, with the real bridge.
 */
import fs from 'node:fs';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import test from 'ava';
import { loadPolicyAndWriters } from '../../src/policy/load.js';
import { pluginDirOf } from '../../src/hermes/home.js';
import { collectStatus, formatStatus } from '../../src/hermes/status.js';
import { readViewState, type ViewState, viewWarmth, writeViewState } from '../../src/hermes/view-state.js';
import { runWorker } from '../../src/hermes/worker.js';
import { createBridge } from '../../src/tools/bridge.js';
import { viewDigest } from '../../src/tools/warm.js';
import { openCounter } from '../tools/world.js';
import { makeHome, makeTempDir, mkdirs, removeTree, writeNote, type ParsedJson } from '../helpers/fixtures.js';

const tmp = makeTempDir('mb-warm-');
test.after.always(() => removeTree(tmp));

const root = mkdirs(tmp, 'notes');
const NOTES = 12;
for (let i = 0; i < NOTES; i++) writeNote(root, `projects/note-${i}.md`, `# Note ${i}\n\nThe lantern ${i} is lit.\n`);
writeNote(root, 'private/salary.md', '# Salary\n\nlantern figures\n');
const { home } = makeHome(tmp, { version: 1, root, allow: ['projects/**'] }, 'home');
const missing = mkdirs(tmp, 'no-policy-home');

function line(id: string, tool: string, args: unknown, who = home): string {
  return `${JSON.stringify({ v: 1, id, tool, args, caller: { home: who, profile: 'p', cron: false, subagent: false } })}\n`;
}

/** Serve `lines` with a real bridge; the replies, the view records written, and how many notes were opened. */
async function serve(lines: string[]): Promise<{ replies: ParsedJson[]; records: ViewState[]; opens: number }> {
  const counter = openCounter();
  const output = new PassThrough();
  const chunks: Buffer[] = [];
  output.on('data', (c: Buffer) => chunks.push(c));
  const records: ViewState[] = [];
  try {
    await runWorker({
      input: Readable.from(lines.map((l) => Buffer.from(l))),
      output,
      // No racy margin: the notes were written just now, and the test counts their opens (BridgeOptions.racyMarginMs).
      bridge: createBridge({ log: () => undefined, racyMarginMs: 0 }),
      log: () => undefined,
      recordViewState: (_home, state) => records.push(state),
    });
  } finally {
    counter.stop();
  }
  const text = Buffer.concat(chunks).toString('utf8').trimEnd();
  return { replies: text === '' ? [] : text.split('\n').map((l) => JSON.parse(l)), records, opens: counter.opens() };
}

test.serial(
  'warm-up › builds the view once; the call behind it is answered from it and reads no note again',
  async (t) => {
    const { replies, records, opens } = await serve([
      line('w', 'warm_up', {}),
      line('s', 'memory_bridge_search', { query: 'lantern', limit: 3 }),
    ]);
    t.deepEqual(
      replies.map((r) => r.id),
      ['w', 's'],
    );
    t.deepEqual(Object.keys(replies[0].result).sort(), ['ms', 'notes', 'ok']);
    t.is(replies[0].result.notes, NOTES, 'the allowed notes only');
    t.is(replies[1].result.ok, true);
    t.is(replies[1].result.results.length, 3);
    t.false(JSON.stringify(replies).includes('salary'));
    t.is(opens, NOTES, 'every allowed note read once, by the warm-up');

    const [building, warm] = records;
    t.is(records.length, 2);
    t.is(building!.state, 'building');
    t.is(warm!.state, 'warm');
    t.is(warm!.pid, process.pid);
    t.is(warm!.notes, NOTES);
    const { policy } = loadPolicyAndWriters(home);
    t.is(warm!.view, viewDigest(home, policy));
  },
);

test.serial('warm-up › without it, the same first call reads every note itself', async (t) => {
  // The comparison that gives the first test its meaning: the call alone does the build's reading.
  const { opens } = await serve([line('s', 'memory_bridge_search', { query: 'lantern', limit: 3 })]);
  t.is(opens, NOTES);
});

test.serial('warm-up › a refused warm-up answers unavailable and is recorded with its reason', async (t) => {
  const { replies, records } = await serve([line('w', 'warm_up', {}, missing)]);
  t.deepEqual(replies[0].result, { ok: false, error: { code: 'unavailable', message: 'Memory is unavailable.' } });
  t.is(records[1]!.state, 'refused');
  t.is(records[1]!.reason, 'policy_missing');
  t.is(records[1]!.notes, null);
});

test('warm-up › the record lands in the plugin directory only when that directory is safe', (t) => {
  const other = makeHome(tmp, { version: 1, root, allow: ['projects/**'] }, 'home-record').home;
  const record: ViewState = {
    v: 1,
    pid: process.pid,
    state: 'building',
    started_at: new Date().toISOString(),
    finished_at: null,
    ms: null,
    notes: null,
    view: null,
    reason: null,
  };
  t.false(writeViewState(other, record), 'no plugin directory: nothing written');
  const dir = pluginDirOf(other);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  fs.chmodSync(dir, 0o770);
  t.false(writeViewState(other, record), 'a group-writable directory is not written into');
  fs.chmodSync(dir, 0o700);
  t.true(writeViewState(other, record));
  t.is(fs.statSync(path.join(dir, 'view.json')).mode & 0o777, 0o600);
  const read = readViewState(dir);
  t.is(read.state, 'found');
  t.deepEqual(read.state === 'found' ? read.record : undefined, record);
  fs.writeFileSync(path.join(dir, 'view.json'), '{"v": 1, "pid": "x"}');
  t.is(readViewState(dir).state, 'unreadable');
});

test('warm-up › status says whether the view is warm, and why not', (t) => {
  const { policy } = loadPolicyAndWriters(home);
  const base: ViewState = {
    v: 1,
    pid: 4242,
    state: 'warm',
    started_at: '2026-12-02T07:00:00.000Z',
    finished_at: '2026-12-02T07:00:04.200Z',
    ms: 4200,
    notes: 100000,
    view: viewDigest(home, policy),
    reason: null,
  };
  const runs = (pid: number): boolean => pid === 4242;
  const found = (record: ViewState) => ({ state: 'found' as const, record });
  const warm = viewWarmth(home, found(base), policy, runs);
  t.true(warm.warm);
  t.is(warm.line, 'warm: 100000 notes, built at 2026-12-02T07:00:04.200Z in 4.2 s by worker pid 4242');
  const cold = (record: ViewState) => viewWarmth(home, found(record), policy, runs);
  t.regex(cold({ ...base, pid: 7 }).line, /^not warm: the worker \(pid 7\) that built the view has exited/);
  t.regex(cold({ ...base, state: 'building', finished_at: null }).line, /^building since 2026-12-02T07:00:00/);
  t.regex(cold({ ...base, view: '0000000000000000' }).line, /root or names rule changed/);
  t.regex(cold({ ...base, state: 'refused', reason: 'root_untrusted' }).line, /refused \(root_untrusted\)/);
  for (const record of [
    { ...base, pid: 7 },
    { ...base, state: 'building' as const },
    { ...base, view: 'x' },
  ])
    t.false(cold(record).warm);
  t.false(viewWarmth(home, { state: 'absent' }, policy, runs).warm);
  t.false(viewWarmth(home, { state: 'unreadable' }, policy, runs).warm);
});

test('warm-up › status of an installed plugin carries the view line', (t) => {
  const installed = makeHome(tmp, { version: 1, root, allow: ['projects/**'] }, 'home-status').home;
  const dir = pluginDirOf(installed);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  fs.writeFileSync(path.join(dir, 'plugin.yaml'), 'name: memory-bridge\nversion: 0.0.1\n');
  fs.writeFileSync(
    path.join(dir, 'install.json'),
    JSON.stringify({ marker: 'memory-bridge-plugin', version: '0.0.1', node: '/n', cli: '/c', files: {} }),
  );
  const before = collectStatus(installed);
  t.false(before.view?.warm);
  t.regex(formatStatus(before), /\nView: {10}not warm: no warm-up recorded/);
  const { policy } = loadPolicyAndWriters(installed);
  writeViewState(installed, {
    v: 1,
    pid: process.pid,
    state: 'warm',
    started_at: new Date().toISOString(),
    finished_at: new Date().toISOString(),
    ms: 12,
    notes: NOTES,
    view: viewDigest(installed, policy),
    reason: null,
  });
  const after = collectStatus(installed);
  // This test process is not a worker (its command line does not end with `worker`), so on Linux it does not count.
  t.is(after.view?.warm, process.platform !== 'linux');
});
