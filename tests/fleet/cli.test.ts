/**
 * `memory-bridge export-fleet` as a real process: exit codes and output, the run lock between processes, SIGKILL
 * in the middle of an export, and the end-to-end promise of writer mode (export, then search through
 * memory-bridge with a work/shared policy and never see a personal card).
 */
import test from 'ava';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { getNative } from '../../native/index.js';
import { getWriteNative } from '../../native/write-linux.js';
import { createBridge } from '../../src/tools/bridge.js';
import { LOCK_NAME, MANIFEST_NAME } from '../../src/fleet/writer.js';
import { makeHome } from '../helpers/fixtures.js';
import { exportWith, fleetScratch, mdFiles, payload, qdrantOptions, snapshot, standardCards, uuid } from './helpers.js';

const { tempOut, standin, cleanup } = fleetScratch('mb-fleet-cli-');
test.after.always(cleanup);

const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'src', 'cli', 'main.js');

interface Run {
  child: ChildProcess;
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>;
  stderrSoFar: () => string;
}

/** Spawn the built CLI asynchronously (the stand-in lives in this process, so it must keep answering). */
function run(args: string[], env: Record<string, string> = {}): Run {
  const child = spawn(process.execPath, [CLI, 'export-fleet', ...args], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>(
    (resolve) => {
      child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
    },
  );
  return { child, done, stderrSoFar: () => stderr };
}

async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 3000; i++) {
    if (cond()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`gave up waiting for ${what}`);
}

test('cli › exports, prints the summary, and --json prints exactly the summary keys', async (t) => {
  const out = tempOut();
  const s = await standin(standardCards(), ['sekret-key']);
  const env = { FLEET_QDRANT_URL: s.url, FLEET_QDRANT_KEY: 'sekret-key' };
  const a = await run(['--out', out], env).done;
  t.is(a.code, 0, a.stderr);
  t.regex(
    a.stdout,
    /written 3, unchanged 0, removed 0, history 0, skipped_secret 1, skipped_invalid 1, skipped_expired 1, skipped_over_cap 0, hidden_controls 0/,
  );
  t.regex(a.stderr, new RegExp(uuid(5)));
  const b = await run(['--out', out, '--json'], env).done;
  t.is(b.code, 0);
  t.deepEqual(JSON.parse(b.stdout), {
    ok: true,
    written: 0,
    unchanged: 3,
    removed: 0,
    history: 0,
    skipped_secret: 1,
    skipped_invalid: 1,
    skipped_expired: 1,
    skipped_over_cap: 0,
    secret_ids: [uuid(5)],
    over_cap: [],
    hidden_controls: 0,
    invalid: [{ id: uuid(6), reason: 'text: expected string' }],
    hidden_control_ids: [],
  });
  t.true(b.stderr.includes(`skipped invalid card ${uuid(6)}: text: expected string`));
  t.false(a.stderr.includes('sekret-key') || b.stderr.includes('sekret-key'));
});

test('cli › the key is read from the variable --api-key-env names, and a refused key exits 1 without showing it', async (t) => {
  const out = tempOut();
  const s = await standin(standardCards(), ['right']);
  const ok = await run(['--out', out, '--url', s.url, '--api-key-env', 'HUB_KEY', '--domain', 'shared'], {
    HUB_KEY: 'right',
  }).done;
  t.is(ok.code, 0, ok.stderr);
  t.deepEqual(mdFiles(out), [`shared/fleet/episodic--${uuid(3)}.md`]);
  const before = snapshot(out);
  const bad = await run(['--out', out, '--url', s.url], { FLEET_QDRANT_KEY: 'wrong-value' }).done;
  t.is(bad.code, 1);
  t.regex(bad.stderr, /refused the request \(401\)/);
  t.false(bad.stderr.includes('wrong-value'));
  t.deepEqual(snapshot(out), before);
});

test('cli › command-line mistakes exit 2; --help exits 0', async (t) => {
  const out = tempOut();
  for (const args of [
    [],
    ['--out'],
    ['--out', out, '--api-key', 'x'],
    ['--out', out, '--keep-history', 'x'],
    ['--out', out, '--port', '99999'],
    ['--out', out, '--from-jsonl', 'f', '--url', 'http://x'],
    ['--out', out, 'extra'],
  ]) {
    const r = await run(args).done;
    t.is(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
  }
  const h = await run(['--help']).done;
  t.is(h.code, 0);
  t.regex(h.stdout, /--from-jsonl FILE/);
});

test('cli › a second export waits for the lock, or exits 1 at once with --no-wait', async (t) => {
  const out = tempOut();
  const s = await standin(standardCards());
  const env = { FLEET_QDRANT_URL: s.url };
  const native = getNative()!;
  const outFd = fs.openSync(out, 'r');
  const lockFd = getWriteNative()!.openOrCreate(outFd, LOCK_NAME, 0o600);
  fs.closeSync(outFd);
  native.flock(lockFd, 2);
  let held = true;
  try {
    const nw = await run(['--out', out, '--no-wait'], env).done;
    t.is(nw.code, 1);
    t.regex(nw.stderr, /another export into .* is running/);
    const waiting = run(['--out', out], env);
    await until(() => /waiting for it to finish/.test(waiting.stderrSoFar()), 'the waiting message');
    t.is(s.scrollCount, 0, 'nothing is read while waiting');
    native.close(lockFd);
    held = false;
    const r = await waiting.done;
    t.is(r.code, 0, r.stderr);
    t.is(mdFiles(out).length, 3);
  } finally {
    // Close once only: a descriptor number closed twice may already belong to someone else (libuv's pipes).
    if (held) native.close(lockFd);
  }
});

test('cli › two concurrent exports into one directory never interleave', async (t) => {
  const out = tempOut();
  const many = Array.from({ length: 700 }, (_, i) => ({ id: uuid(i + 1), payload: payload({ text: `card ${i}` }) }));
  const s = await standin(many, ['k1', 'k2']);
  // Slow pages keep the first export inside its lock long enough for the second to start and find it held.
  s.faults = { slowScroll: { at: 1, ms: 500 } };
  const a = run(['--out', out, '--url', s.url], { FLEET_QDRANT_KEY: 'k1' });
  const b = run(['--out', out, '--url', s.url], { FLEET_QDRANT_KEY: 'k2' });
  const [ra, rb] = await Promise.all([a.done, b.done]);
  t.is(ra.code, 0, ra.stderr);
  t.is(rb.code, 0, rb.stderr);
  const order = s.requests.map((r) => r.apiKey).join(',');
  t.true(/^(k1,)*k1,(k2,)*k2$/.test(order) || /^(k2,)*k2,(k1,)*k1$/.test(order), order);
  t.regex(ra.stderr + rb.stderr, /waiting for it to finish/);
  const counts = [ra.stdout, rb.stdout].map((o) => /written (\d+), unchanged (\d+)/.exec(o)!.slice(1).map(Number));
  t.deepEqual(counts.sort(), [
    [0, 700],
    [700, 0],
  ]);
});

test('cli › SIGKILL during a slow read changes nothing', async (t) => {
  const out = tempOut();
  const many = Array.from({ length: 600 }, (_, i) => ({ id: uuid(i + 1), payload: payload({ text: `card ${i}` }) }));
  const s = await standin(many);
  await exportWith(qdrantOptions(s, out));
  for (const p of many) p.payload = { ...p.payload, text: `changed ${String(p.id)}`, revision: 2 };
  const before = snapshot(out);
  const slowAt = s.scrollCount + 2;
  s.faults = { slowScroll: { at: slowAt, ms: 60_000, only: true } };
  const r = run(['--out', out, '--url', s.url]);
  s.faults.onScroll = (n) => {
    if (n === slowAt) r.child.kill('SIGKILL');
  };
  const res = await r.done;
  t.is(res.signal, 'SIGKILL');
  t.deepEqual(snapshot(out), before);
});

test('cli › SIGKILL in the middle of writing leaves only complete notes, and the next run converges', async (t) => {
  const out = tempOut();
  const reference = tempOut();
  const n = 3000;
  const v1 = Array.from({ length: n }, (_, i) => ({
    id: uuid(i + 1),
    payload: payload({ client_id: `c${i % 7}`, text: `first ${i}` }),
  }));
  const v2 = v1.map((p) => ({
    id: p.id,
    payload: { ...p.payload, text: `second ${String(p.id)}`, revision: 2, updated_at: 1_760_500_000 },
  }));
  const s = await standin(v1);
  // 3,000 cards in one domain: explicit caps, so the test does not depend on the defaults.
  const caps = { maxPerDomain: 10_000 };
  await exportWith(qdrantOptions(s, out, caps));
  await exportWith(qdrantOptions(s, reference, caps));
  const firstBytes = new Map(mdFiles(out).map((f) => [f, fs.readFileSync(path.join(out, f))]));
  s.collections.set('hermes_fleet_memory', v2);
  await exportWith(qdrantOptions(s, reference, caps));
  const finalBytes = new Map(mdFiles(reference).map((f) => [f, fs.readFileSync(path.join(reference, f))]));

  // Kill the moment the run records its plan (the first manifest rename), i.e. as the writes begin.
  const r = run(['--out', out, '--url', s.url, '--max-cards-per-domain', '10000']);
  const watcher = fs.watch(out, (_event, name) => {
    if (name === MANIFEST_NAME) r.child.kill('SIGKILL');
  });
  const res = await r.done;
  watcher.close();
  t.is(res.signal, 'SIGKILL', 'killed before it finished');
  // Every visible note is complete: byte for byte the old or the new version of that path.
  let old = 0;
  let fresh = 0;
  for (const f of mdFiles(out)) {
    const bytes = fs.readFileSync(path.join(out, f));
    if (firstBytes.get(f)?.equals(bytes)) old += 1;
    else if (finalBytes.get(f)?.equals(bytes)) fresh += 1;
    else t.fail(`partial or unknown note ${f}`);
  }
  t.true(old + fresh >= n);
  // Temp files, if any, are hidden and not Markdown.
  for (const rel of snapshot(out).keys()) {
    const name = rel.split('/').pop()!;
    if (!name.endsWith('.md')) continue;
    t.false(name.startsWith('.'), rel);
  }
  const again = await run(['--out', out, '--url', s.url, '--max-cards-per-domain', '10000']).done;
  t.is(again.code, 0, again.stderr);
  t.deepEqual(mdFiles(out), mdFiles(reference));
  for (const [f, bytes] of finalBytes) t.true(fs.readFileSync(path.join(out, f)).equals(bytes), f);
  const leftovers = [...snapshot(out).keys()].filter((k) => k.split('/').pop()!.startsWith('.mb-tmp-'));
  t.deepEqual(leftovers, []);
  const manifest = JSON.parse(fs.readFileSync(path.join(out, MANIFEST_NAME), 'utf8')) as {
    temps: string[];
    files: object;
  };
  t.deepEqual(manifest.temps, []);
  t.is(Object.keys(manifest.files).length, mdFiles(reference).length);
});

test('end to end › export, then search through memory-bridge with allow work/** and shared/** finds no personal card', async (t) => {
  const out = tempOut();
  const s = await standin([
    ...standardCards(),
    { id: uuid(7), payload: payload({ domain: 'Work', text: 'Look-alike domain lantern.' }) },
    {
      id: uuid(8),
      payload: payload({ domain: 'personal', client_id: 'work', text: 'Personal lantern under a client named work.' }),
    },
  ]);
  const r = await run(['--out', out, '--url', s.url]).done;
  t.is(r.code, 0, r.stderr);
  const parent = path.dirname(out);
  const { home } = makeHome(parent, { version: 1, root: out, allow: ['work/**', 'shared/**'] }, 'home-work');
  const { home: all } = makeHome(parent, { version: 1, root: out, allow: ['**'] }, 'home-all');
  const bridge = createBridge({ log: () => {} });
  const caller = { home, cron: false, subagent: false };
  const res = bridge.search({ query: 'lantern', limit: 10 }, caller);
  if (!res.ok) return t.fail(JSON.stringify(res));
  const ids = res.results.map((h) => h.id);
  t.true(
    ids.some((id) => id.startsWith('work/')),
    ids.join(' '),
  );
  t.true(
    ids.some((id) => id.startsWith('shared/')),
    ids.join(' '),
  );
  t.false(
    ids.some((id) => !id.startsWith('work/') && !id.startsWith('shared/')),
    ids.join(' '),
  );
  t.false(JSON.stringify(res).includes('Personal lantern'));
  // The heading, not the front matter, is what the reader sees as the title.
  t.is(res.results.find((h) => h.id === `work/hermes/gpu_profile--${uuid(1)}.md`)?.title, 'gpu_profile');
  t.false(res.results.some((h) => h.snippet.includes('client_id')));
  t.false(JSON.stringify(res).includes('Look-alike'));
  const personal = `personal/hermes/episodic--${uuid(2)}.md`;
  t.like(bridge.read({ id: personal }, caller), { ok: false, error: { code: 'not_found_or_denied' } });
  // Control: a policy that allows everything does find the personal cards, so the search could have.
  const everything = bridge.search({ query: 'lantern', limit: 10 }, { home: all, cron: false, subagent: false });
  if (!everything.ok) return t.fail(JSON.stringify(everything));
  t.true(everything.results.some((h) => h.id.startsWith('personal/')));
  t.like(bridge.read({ id: personal }, { home: all, cron: false, subagent: false }), { ok: true });
});
