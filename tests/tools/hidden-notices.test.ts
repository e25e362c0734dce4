/**
 * Nothing hidden is silent (docs/TRUST.md §Hidden notes): a trusted note just over max_file_bytes, a note its owner's
 * own program holds open for appending and a name the names rule refuses each give one operator line per view and
 * reason, with the count and the doctor command, never a name; doctor counts the same; an NFD name is served. Real
 * files, a real held descriptor, and the real servers: `memory-bridge mcp` over stdio with the SDK client, `serve`
 * over HTTP with the SDK client, and the Hermes `worker` over its JSON lines.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import test from 'ava';
import { runDoctor } from '../../src/hermes/doctor.js';
import { createBridge } from '../../src/tools/bridge.js';
import { HIDING_REASONS, HiddenNotices } from '../../src/tools/hidden-notices.js';
import type { Caller, LogEvent, SearchResult } from '../../src/tools/types.js';
import { makeHome, makeTempDir, mkdirs, removeTree, writeNote } from '../helpers/fixtures.js';
import { CLI } from '../cli/tree.js';
import { connectMcp } from '../adversarial/mcp-client.js';
import { callJson, client, connectHttp, startLogged, type World } from '../server/http-world.js';

const MAX_FILE_BYTES = 1024;
const NFD_NAME = 'Cafe\u0301 notes.md';
const BIDI_NAME = 'invoice\u202egpj.md';

interface Vault {
  base: string;
  root: string;
  home: string;
  caller: Caller;
  /** Descriptor of `appending.md` opened for appending, as an editor or a logger holds it; closed by `release`. */
  release: () => void;
}

const bases: string[] = [];
test.after.always(() => {
  for (const b of bases) removeTree(b);
});

/**
 * A vault with the three silent cases of issue 22 and two ordinary notes: `big.md` one byte over max_file_bytes,
 * `appending.md` held open for appending by this process (its owner), a name with a bidi override (refused by the
 * names rule), and an NFD-named note, which is served.
 */
function vault(fields: Record<string, unknown> = {}): Vault {
  const base = makeTempDir('mb-hidden-');
  bases.push(base);
  const root = mkdirs(base, 'vault');
  writeNote(root, 'plain.md', '# Plain\n\nlantern\n');
  writeNote(root, NFD_NAME, '# Crema\n\nlantern crema\n');
  writeNote(root, 'big.md', `# Big\n\nlantern ${'x'.repeat(MAX_FILE_BYTES)}`.slice(0, MAX_FILE_BYTES + 1));
  writeNote(root, BIDI_NAME, '# Bidi\n\nlantern\n');
  const appending = writeNote(root, 'appending.md', '# Log\n\nlantern log\n');
  const fd = fs.openSync(appending, 'a');
  let open = true;
  const release = (): void => {
    if (open) fs.closeSync(fd);
    open = false;
  };
  const policy = { version: 1, root, allow: ['**'], limits: { max_file_bytes: MAX_FILE_BYTES }, ...fields };
  const home = makeHome(base, policy).home;
  return { base, root, home, release, caller: { home, cron: false, subagent: false, profile: 'p' } };
}

/** The ids of a search answer. */
function ids(r: unknown): string[] {
  return ((r as SearchResult).results ?? []).map((h) => h.id).sort();
}

/** True when no line names a note, the root, the home or the temporary directory holding them. */
function nameless(lines: readonly string[], v: Vault): boolean {
  const names = ['plain', 'Cafe', 'big', 'invoice', 'appending', v.base];
  return lines.every((l) => names.every((n) => !l.includes(n)));
}

test('hidden › one line per reason with count and doctor command; the answer stays complete; an NFD name is served', (t) => {
  const v = vault();
  const events: LogEvent[] = [];
  const bridge = createBridge({ log: (e) => events.push(e) });
  const r = bridge.search({ query: 'lantern', limit: 10 }, v.caller) as SearchResult;
  t.true(r.ok);
  t.deepEqual(ids(r), [NFD_NAME, 'plain.md']);
  // Per-note verdicts of the trust and names rules never set a flag (docs/TRUST.md §Hidden notes).
  t.false(r.truncated);
  t.is(r.incomplete, undefined);
  const lines = events.map((e) => `${e.reason} (${e.detail})`);
  t.deepEqual(lines.sort(), [
    `hidden_notes (bad_name count=1; list them: memory-bridge doctor --home <home> --list bad_name)`,
    `hidden_notes (open_for_write count=1; list them: memory-bridge doctor --home <home> --list open_for_write)`,
    `hidden_notes (too_large count=1; list them: memory-bridge doctor --home <home> --list too_large)`,
  ]);
  t.true(nameless(lines, v));
  t.true(events.every((e) => e.tool === 'memory_bridge_search' && e.profile === 'p'));
  // The same view with the same counts stays quiet, call after call.
  for (let i = 0; i < 3; i++) bridge.search({ query: 'lantern', limit: 10 }, v.caller);
  t.is(events.length, 3);
  // The NFD note reads by its own bytes.
  const read = bridge.read({ id: NFD_NAME }, v.caller);
  t.true(read.ok && 'content' in read && read.content.includes('crema'));
  // doctor counts the same three, and no NFD name.
  const { report } = runDoctor(v.home);
  t.is(report.counts.too_large, 1);
  t.is(report.counts.open_for_write, 1);
  t.is(report.counts.bad_name, 1);
  v.release();
});

test('hidden › a count that changes is told again (once the interval allows); a reason that goes away is quiet', (t) => {
  const v = vault();
  const events: LogEvent[] = [];
  const bridge = createBridge({ log: (e) => events.push(e), noticeIntervalMs: 0 });
  bridge.search({ query: 'lantern' }, v.caller);
  t.is(events.length, 3);
  v.release(); // the program closed the note: served again, nothing to tell
  writeNote(v.root, 'big2.md', 'y'.repeat(MAX_FILE_BYTES + 5));
  const r = bridge.search({ query: 'lantern', limit: 10 }, v.caller);
  t.deepEqual(ids(r), [NFD_NAME, 'appending.md', 'plain.md']);
  t.deepEqual(
    events.slice(3).map((e) => e.detail),
    [`too_large count=2; list them: memory-bridge doctor --home <home> --list too_large`],
  );
  bridge.search({ query: 'lantern' }, v.caller);
  t.is(events.length, 4);
});

test('hidden › a budget cut is told at the moment it happens, with the notes searched before it', (t) => {
  const v = vault({ limits: { max_file_bytes: MAX_FILE_BYTES, max_entries: 1 } });
  v.release();
  const events: LogEvent[] = [];
  const bridge = createBridge({ log: (e) => events.push(e) });
  const r = bridge.search({ query: 'lantern' }, v.caller) as SearchResult;
  t.true(r.incomplete);
  const cut = events.filter((e) => e.reason === 'scan_cut');
  t.deepEqual(
    cut.map((e) => e.detail),
    [`max_entries searched=1; count what was left out: memory-bridge doctor --home <home>`],
  );
});

test('hidden › a depth cut names the doctor command that lists the notes below max_depth', (t) => {
  const v = vault({ limits: { max_file_bytes: MAX_FILE_BYTES, max_depth: 1 } });
  writeNote(v.root, 'folder/below.md', '# below\nlantern\n');
  v.release();
  const events: LogEvent[] = [];
  const bridge = createBridge({ log: (e) => events.push(e) });
  const r = bridge.search({ query: 'lantern' }, v.caller) as SearchResult;
  t.true(r.incomplete);
  const cut = events.filter((e) => e.reason === 'scan_cut');
  t.is(cut.length, 1);
  t.regex(
    cut[0]!.detail ?? '',
    /^max_depth searched=\d+; list what was left out: memory-bridge doctor --home <home> --list too_deep$/,
  );
});

/** A 17-segment id: `d0/d1/…/d15/<name>`, one segment below the 16-segment id limit. */
function belowIdLimit(name: string): string {
  return `${Array.from({ length: 16 }, (_, i) => `d${i}`).join('/')}/${name}`;
}

for (const maxDepth of [16, undefined]) {
  test(`hidden › a note below the 16-segment id limit is a depth cut (max_depth ${maxDepth ?? 'default'}): incomplete, one line, doctor counts it`, (t) => {
    const limits = { max_file_bytes: MAX_FILE_BYTES, ...(maxDepth === undefined ? {} : { max_depth: maxDepth }) };
    const v = vault({ limits });
    v.release();
    writeNote(v.root, belowIdLimit('kestrel.md'), '# Kestrel\n\nkestrel hovering\n');
    const events: LogEvent[] = [];
    const bridge = createBridge({ log: (e) => events.push(e) });
    const first = bridge.search({ query: 'kestrel' }, v.caller) as SearchResult;
    t.deepEqual(first.results, []);
    t.true(first.truncated);
    t.true(first.incomplete);
    // Narrowing never changes the flag: a within that selects nothing answers the same (no name oracle).
    const narrowed = bridge.search({ query: 'kestrel', within: ['nothing/**'] }, v.caller) as SearchResult;
    t.true(narrowed.incomplete);
    bridge.search({ query: 'lantern' }, v.caller);
    const cut = events.filter((e) => e.reason === 'scan_cut');
    t.is(cut.length, 1, JSON.stringify(events));
    t.regex(
      cut[0]!.detail ?? '',
      /^max_depth searched=\d+; list what was left out: memory-bridge doctor --home <home> --list too_deep$/,
    );
    t.false(JSON.stringify(events).includes('kestrel'));
    const text = [...runDoctor(v.home).details.values()].flat().join('\n');
    t.regex(text, /the scan was cut by max_depth: 1 of \d+ visible notes were left out/);
    t.true(text.includes(belowIdLimit('kestrel.md')), text);
  });
}

test('hidden › below the id limit, a denied, untrusted or non-Markdown name sets no flag and gives no line', (t) => {
  const v = vault({ limits: { max_file_bytes: MAX_FILE_BYTES, max_depth: 16 }, deny: ['**/secret.md'] });
  v.release();
  writeNote(v.root, belowIdLimit('secret.md'), '# Secret\n');
  writeNote(v.root, belowIdLimit('open.md'), '# Open\n', 0o666);
  writeNote(v.root, belowIdLimit('picture.png'), 'x');
  const events: LogEvent[] = [];
  const bridge = createBridge({ log: (e) => events.push(e) });
  const r = bridge.search({ query: 'secret' }, v.caller) as SearchResult;
  t.is(r.incomplete, undefined);
  t.deepEqual(
    events.filter((e) => e.reason === 'scan_cut'),
    [],
  );
});

test('hidden › notes hidden on purpose (denied, dot names, not Markdown) give no line', (t) => {
  const v = vault({ deny: ['big.md', 'appending.md', 'invoice*'] });
  writeNote(v.root, '.obsidian/workspace.md', 'x');
  writeNote(v.root, '.trash/old.md', 'x');
  writeNote(v.root, 'Pasted image 1.png', 'x');
  const events: LogEvent[] = [];
  const bridge = createBridge({ log: (e) => events.push(e) });
  t.deepEqual(ids(bridge.search({ query: 'lantern', limit: 10 }, v.caller)), [NFD_NAME, 'plain.md']);
  t.deepEqual(events, []);
  v.release();
});

test('hidden › the rate limit: one line per home and reason per interval across views, the held count later', (t) => {
  let now = 1_000_000;
  const notices = new HiddenNotices(60_000, () => now);
  const scan = (n: number) => ({ skipped: { too_large: n, denied: 7, hidden: 2 }, notes: [] });
  t.deepEqual(
    notices.report('/h', 'view-a', scan(1)).map((l) => l.detail),
    ['too_large count=1; list them: memory-bridge doctor --home <home> --list too_large'],
  );
  t.deepEqual(notices.report('/h', 'view-a', scan(1)), []);
  now += 1000;
  // Another view of the same home (a `within` list) and a changed count wait for the interval.
  t.deepEqual(notices.report('/h', 'view-b', scan(1)), []);
  t.deepEqual(notices.report('/h', 'view-a', scan(2)), []);
  // Another home is told at once.
  t.is(notices.report('/other', 'view-c', scan(1)).length, 1);
  now += 60_000;
  t.deepEqual(
    notices.report('/h', 'view-a', scan(2)).map((l) => l.detail),
    ['too_large count=2; list them: memory-bridge doctor --home <home> --list too_large'],
  );
  now += 60_000;
  t.is(notices.report('/h', 'view-b', scan(1)).length, 1);
  // Every reason named in the docs is a hiding reason the scan counts, and the policy's own choices are not.
  for (const r of ['denied', 'hidden', 'not_markdown', 'missing']) t.false(HIDING_REASONS.includes(r), r);
});

test('hidden › memory-bridge mcp (stdio, SDK client) writes each line once on stderr', async (t) => {
  const v = vault();
  const s = await connectMcp(v.home);
  try {
    for (let i = 0; i < 3; i++) await s.call('memory_bridge_search', { query: 'lantern' });
  } finally {
    await s.close();
  }
  const lines = s.stderr().trimEnd().split('\n');
  t.deepEqual(
    lines.filter((l) => l.includes('too_large')),
    [
      'memory-bridge: memory_bridge_search hidden_notes (too_large count=1; list them: memory-bridge doctor --home <home> --list too_large)',
    ],
  );
  t.is(lines.filter((l) => l.includes('hidden_notes')).length, 3);
  t.true(nameless(lines, v));
  v.release();
});

test('hidden › memory-bridge serve (HTTP, SDK client) writes each line once, apart from the request line', async (t) => {
  const v = vault();
  const laptop = client('laptop', v.home);
  const { server, lines } = await startLogged({ cfg: mkdirs(v.base, 'cfg') } as World, [laptop]);
  try {
    const c = await connectHttp(`${server.origin}/mcp`, laptop.token);
    for (let i = 0; i < 3; i++) t.true((await callJson(c, 'memory_bridge_search', { query: 'lantern' })).ok);
    await c.close();
  } finally {
    await server.close(1000);
  }
  t.deepEqual(
    lines.filter((l) => l.includes('too_large')),
    [
      `client=laptop tool=memory_bridge_search notice=hidden_notes too_large count=1; list them: memory-bridge doctor --home <home> --list too_large`,
    ],
  );
  t.is(lines.filter((l) => l.includes('notice=hidden_notes')).length, 3);
  // The request lines still say the calls were answered, without a reason.
  t.is(
    lines.filter((l) => /tool=memory_bridge_search result=ok status=200/.test(l) && !l.includes('reason')).length,
    3,
  );
  t.true(nameless(lines, v));
  v.release();
});

test('hidden › the Hermes worker writes each line once on stderr', async (t) => {
  const v = vault();
  const child = spawn(process.execPath, [CLI, 'worker'], { stdio: ['pipe', 'pipe', 'pipe'], env: {} });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on('data', (c: Buffer) => out.push(c));
  child.stderr.on('data', (c: Buffer) => err.push(c));
  const request = (id: string): string =>
    `${JSON.stringify({
      v: 1,
      id,
      tool: 'memory_bridge_search',
      args: { query: 'lantern' },
      caller: { home: v.home, profile: 'work', cron: false, subagent: false },
    })}\n`;
  child.stdin.write(request('a'));
  child.stdin.write(request('b'));
  child.stdin.end(request('c'));
  t.is(await new Promise<number | null>((resolve) => child.on('close', resolve)), 0);
  const replies = Buffer.concat(out).toString('utf8').trimEnd().split('\n');
  t.is(replies.length, 3);
  const lines = Buffer.concat(err).toString('utf8').trimEnd().split('\n');
  t.deepEqual(
    lines.filter((l) => l.includes('too_large')),
    [
      `memory-bridge worker: memory_bridge_search hidden_notes (${JSON.stringify(`too_large count=1; list them: memory-bridge doctor --home <home> --list too_large`)}) profile=work`,
    ],
  );
  t.is(lines.filter((l) => l.includes('hidden_notes')).length, 3);
  t.true(nameless(lines, v));
  v.release();
});
