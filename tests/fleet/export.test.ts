/**
 * The export end to end, in process, against real files in a real trusted temp directory and the local Qdrant
 * stand-in (or a JSONL file): layout, skips, secrets, incremental runs, history, mirror scope, failures that must
 * change nothing, and objects in the tree the export must never touch.
 */
import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { FOREIGN_GID, FOREIGN_UID, isRoot, mkdirs } from '../helpers/fixtures.js';
import type { QdrantStandin, StandinPoint } from '../helpers/qdrant-standin.js';
import { ExportError } from '../../src/fleet/errors.js';
import { MANIFEST_NAME } from '../../src/fleet/writer.js';
import { compactUtc } from '../../src/fleet/layout.js';
import { allText, exportWith, fleetScratch, mdFiles, payload, qdrantOptions, snapshot, uuid } from './helpers.js';

const rootTest = isRoot ? test : test.skip;
const { tempOut, standin, cleanup } = fleetScratch('mb-fleet-');
test.after.always(cleanup);

function points(s: QdrantStandin): StandinPoint[] {
  return s.collections.get('hermes_fleet_memory')!;
}

function setPayload(s: QdrantStandin, id: string, over: Record<string, unknown>): void {
  const p = points(s).find((x) => x.id === id)!;
  p.payload = { ...p.payload, ...over };
}

const EXPECTED = [
  `personal/hermes/episodic--${uuid(2)}.md`,
  `shared/fleet/episodic--${uuid(3)}.md`,
  `work/hermes/gpu_profile--${uuid(1)}.md`,
];

test('export › writes one owner-only file per live card, laid out by domain, and counts every skip', async (t) => {
  const out = tempOut();
  const s = await standin(undefined, ['k']);
  const r = await exportWith(qdrantOptions(s, out, {}, 'k'));
  t.deepEqual(r.summary, {
    ok: true,
    written: 3,
    unchanged: 0,
    removed: 0,
    history: 0,
    skipped_secret: 1,
    skipped_invalid: 1,
    skipped_expired: 1,
    skipped_over_cap: 0,
    hidden_controls: 0,
  });
  t.deepEqual(mdFiles(out), EXPECTED);
  t.deepEqual(r.secretIds, [uuid(5)]);
  t.true(
    r.log.some((l) => l.includes(uuid(5))),
    'the skipped id is reported',
  );
  for (const [rel, info] of snapshot(out)) {
    const mode = info.split(':')[4];
    t.is(mode, info.startsWith('d:') ? '700' : '600', rel);
  }
  const text = fs.readFileSync(path.join(out, EXPECTED[2]!), 'utf8');
  t.true(
    text.startsWith(
      `---\nid: "${uuid(1)}"\ndomain: "work"\nclient_id: "hermes"\nslot_name: "gpu_profile"\nmemory_type: "slot"\nrevision: 2\npinned: true\n`,
    ),
  );
  t.true(
    text.includes(
      '\ncreated_at: "2025-10-09T08:53:20Z"\nupdated_at: "2025-10-09T08:53:20Z"\nexpires_at: null\nentities: ["lantern"]\nrelations: []\n---\n\n# gpu_profile\n\nWork lantern: GPU is an RTX 4090.\n',
    ),
  );
  t.true(fs.existsSync(path.join(out, MANIFEST_NAME)));
});

test('export › reads a JSONL file, including the cleaner archive shape, and --include-expired writes expired cards', async (t) => {
  const out = tempOut();
  const file = path.join(path.dirname(out), 'archive.jsonl');
  const lines = [
    JSON.stringify({
      id: uuid(10),
      payload: payload({ text: 'archived lantern', expires_at: 1_000 }),
      archived_at: 1_700_000_000,
      archived_iso: '2023-11-14T22:13:20Z',
    }),
    JSON.stringify({
      id: uuid(11),
      payload: payload({
        domain: 'shared',
        text: 'live lantern',
        memory_type: undefined,
        revision: undefined,
        entities: undefined,
        relations: undefined,
        updated_at: undefined,
      }),
    }),
    JSON.stringify({ payload: payload() }),
    '',
  ];
  fs.writeFileSync(file, lines.join('\n'));
  const base = { source: { kind: 'jsonl' as const, file } };
  const r1 = await exportWith({ ...qdrantOptions(await standin([]), out), ...base });
  t.like(r1.summary, { written: 1, skipped_expired: 1, skipped_invalid: 1 });
  t.deepEqual(mdFiles(out), [`shared/hermes/episodic--${uuid(11)}.md`]);
  t.true(fs.readFileSync(path.join(out, mdFiles(out)[0]!), 'utf8').includes('revision: 1\n'));
  const r2 = await exportWith({ ...qdrantOptions(await standin([]), out), ...base, includeExpired: true });
  // The live card is rewritten once: with --include-expired every file carries status and live.
  t.like(r2.summary, { written: 2, unchanged: 0, history: 0, skipped_expired: 0 });
  t.true(mdFiles(out).includes(`work/hermes/episodic--${uuid(10)}.md`));
  t.true(fs.readFileSync(path.join(out, `work/hermes/episodic--${uuid(10)}.md`), 'utf8').includes('\nlive: false\n'));
});

test('export › a card with a credential is skipped by default and nothing of it reaches any file', async (t) => {
  const out = tempOut();
  const secret = 'ghp_' + 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8';
  const s = await standin([
    { id: uuid(1), payload: payload({ text: `token ${secret}` }) },
    { id: uuid(2), payload: payload({ client_id: `ci-${secret}`, text: 'clean text' }) },
    { id: uuid(3), payload: payload({ slot_name: 'AKIAIOSFODNN7EXAMPLE', memory_type: 'slot', text: 'clean' }) },
    { id: uuid(4), payload: payload({ entities: [secret], text: 'clean' }) },
    { id: uuid(5), payload: payload({ text: 'fine' }) },
  ]);
  const r = await exportWith(qdrantOptions(s, out));
  t.like(r.summary, { written: 1, skipped_secret: 4 });
  t.deepEqual(r.secretIds.sort(), [uuid(1), uuid(2), uuid(3), uuid(4)]);
  const everything = allText(out) + r.log.join('\n');
  t.false(everything.includes(secret));
  t.false(everything.includes('AKIAIOSFODNN7EXAMPLE'));
});

test('export › --redact writes such cards with [redacted:<kind>] in text, names and front matter', async (t) => {
  const out = tempOut();
  const secret = 'ghp_' + 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8';
  const s = await standin([
    { id: uuid(1), payload: payload({ text: `token ${secret} end` }) },
    { id: uuid(2), payload: payload({ client_id: `ci-${secret}`, text: 'clean text' }) },
  ]);
  const r = await exportWith(qdrantOptions(s, out, { redact: true }));
  t.like(r.summary, { written: 2, skipped_secret: 0 });
  const all = allText(out);
  t.false(all.includes(secret));
  t.true(
    fs
      .readFileSync(path.join(out, `work/hermes/episodic--${uuid(1)}.md`), 'utf8')
      .endsWith('token [redacted:github_token] end\n'),
  );
  const other = mdFiles(out).find((f) => f.endsWith(`${uuid(2)}.md`))!;
  t.regex(other, /^work\/ci-redacted-github-token-[0-9a-f]{12}\//);
  t.true(fs.readFileSync(path.join(out, other), 'utf8').includes('client_id: "ci-[redacted:github_token]"'));
});

test('export › an unchanged card is not rewritten: inode and mtime stay the same', async (t) => {
  const out = tempOut();
  const s = await standin();
  await exportWith(qdrantOptions(s, out));
  const before = snapshot(out);
  await new Promise((r) => setTimeout(r, 20));
  const r = await exportWith(qdrantOptions(s, out));
  t.like(r.summary, { written: 0, unchanged: 3, removed: 0, history: 0 });
  const after = snapshot(out);
  for (const f of EXPECTED) t.is(after.get(f), before.get(f), f);
});

test('export › a new revision keeps the previous file under history/ and --keep-history N keeps the newest N', async (t) => {
  const out = tempOut();
  const s = await standin();
  const file = path.join(out, EXPECTED[2]!);
  await exportWith(qdrantOptions(s, out));
  const v2 = fs.readFileSync(file);
  setPayload(s, uuid(1), { text: 'Work lantern: GPU is an RTX 5090.', revision: 3, updated_at: 1_760_100_000 });
  const r = await exportWith(qdrantOptions(s, out));
  t.like(r.summary, { written: 1, history: 1, unchanged: 2 });
  const hist = path.join(out, `work/hermes/history/gpu_profile--${uuid(1)}--r2-20251009T085320Z.md`);
  t.deepEqual(fs.readFileSync(hist), v2, 'the history file holds the previous export byte for byte');
  t.true(fs.readFileSync(file, 'utf8').includes('RTX 5090'));
  // Only a change of pinned (same revision and text) rewrites without history.
  setPayload(s, uuid(1), { pinned: false });
  t.like((await exportWith(qdrantOptions(s, out))).summary, { written: 1, history: 0 });
  for (const [rev, when] of [
    [4, 1_760_200_000],
    [5, 1_760_300_000],
  ] as const) {
    setPayload(s, uuid(1), { text: `rev ${rev}`, revision: rev, updated_at: when });
    await exportWith(qdrantOptions(s, out));
  }
  const list = (): string[] => fs.readdirSync(path.join(out, 'work/hermes/history')).sort();
  const expected = [
    [2, 1_760_000_000],
    [3, 1_760_100_000],
    [4, 1_760_200_000],
  ].map(([r, w]) => `r${r}-${compactUtc(w!)}.md`);
  t.deepEqual(
    list().map((n) => n.replace(/^.*--r/, 'r')),
    expected,
  );
  await exportWith(qdrantOptions(s, out, { keepHistory: 1 }));
  t.deepEqual(
    list().map((n) => n.replace(/^.*--r/, 'r')),
    expected.slice(2),
  );
});

test('export › a card gone from the source is removed; out-of-scope and foreign files are not', async (t) => {
  const out = tempOut();
  const s = await standin();
  await exportWith(qdrantOptions(s, out));
  // A file the export never wrote, in a folder it did write.
  fs.writeFileSync(path.join(out, 'work/hermes/notes-by-hand.md'), '# mine\n');
  // Another source's card in the same tree.
  const file = path.join(path.dirname(out), 'other.jsonl');
  fs.writeFileSync(file, `${JSON.stringify({ id: uuid(20), payload: payload({ text: 'from jsonl' }) })}\n`);
  await exportWith({ ...qdrantOptions(s, out), source: { kind: 'jsonl', file } });
  // Both the personal and the work card vanish from Qdrant.
  s.collections.set(
    'hermes_fleet_memory',
    points(s).filter((p) => p.id !== uuid(2) && p.id !== uuid(1)),
  );
  const scoped = await exportWith(qdrantOptions(s, out, { domains: ['work'] }));
  t.like(scoped.summary, { removed: 1 });
  t.false(fs.existsSync(path.join(out, EXPECTED[2]!)), 'the work card went');
  t.true(fs.existsSync(path.join(out, EXPECTED[0]!)), 'the personal card is outside --domain work and stays');
  t.true(fs.existsSync(path.join(out, `work/hermes/episodic--${uuid(20)}.md`)), "the JSONL source's card stays");
  t.true(fs.existsSync(path.join(out, 'work/hermes/notes-by-hand.md')));
  const full = await exportWith(qdrantOptions(s, out));
  t.like(full.summary, { removed: 1 });
  t.false(fs.existsSync(path.join(out, EXPECTED[0]!)));
  t.true(fs.existsSync(path.join(out, 'work/hermes/notes-by-hand.md')));
  t.true(fs.existsSync(path.join(out, `work/hermes/episodic--${uuid(20)}.md`)));
});

test('export › a card that expires is removed at the next run', async (t) => {
  const out = tempOut();
  const s = await standin();
  await exportWith(qdrantOptions(s, out));
  setPayload(s, uuid(3), { expires_at: 1_000, pinned: false });
  const r = await exportWith(qdrantOptions(s, out));
  t.like(r.summary, { removed: 1, skipped_expired: 2 });
  t.false(fs.existsSync(path.join(out, EXPECTED[1]!)));
});

for (const [name, setup, message] of [
  ['a wrong key (401)', (s: QdrantStandin) => void s, /refused the request \(401\)/],
  [
    'an unknown collection (404)',
    (s: QdrantStandin) => s.collections.delete('hermes_fleet_memory'),
    /does not exist \(404\)/,
  ],
  [
    'a 500 on the second page',
    (s: QdrantStandin) => (s.faults = { failScroll: { at: s.scrollCount + 2, status: 500 } }),
    /HTTP 500 after 1 complete page/,
  ],
  [
    'a reply slower than the timeout',
    (s: QdrantStandin) => (s.faults = { slowScroll: { at: s.scrollCount + 2, ms: 30_000 } }),
    /did not answer within 5s after 1 complete page/,
  ],
] as const) {
  test(`export › ${name} fails the run and changes nothing in the tree`, async (t) => {
    const out = tempOut();
    const many = Array.from({ length: 300 }, (_, i) => ({
      id: uuid(100 + i),
      payload: payload({ text: `card ${i}` }),
    }));
    const s = await standin(many, ['good']);
    await exportWith(qdrantOptions(s, out, {}, 'good'));
    t.is(mdFiles(out).length, 300);
    // Two pages still, and a successful read now would remove 20 files.
    s.collections.set('hermes_fleet_memory', many.slice(0, 280));
    const before = snapshot(out);
    (setup as (s: QdrantStandin) => void)(s);
    const key = name.startsWith('a wrong key') ? 'bad' : 'good';
    const opts = qdrantOptions(s, out, {}, key);
    // 5 s, not 1 s: the stand-in shares this process's event loop with the other tests of the file, whose
    // synchronous file work could otherwise delay the first (prompt) page past the timeout.
    if (opts.source.kind === 'qdrant' && name.includes('timeout')) opts.source.settings.timeoutSeconds = 5;
    const err = await t.throwsAsync(() => exportWith(opts), { instanceOf: ExportError });
    t.regex(err!.message, message);
    t.false(err!.message.includes('good'), 'the key never appears in a message');
    t.deepEqual(snapshot(out), before);
  });
}

test('export › a symlink and a foreign-owned file in the tree are never followed, overwritten or deleted', async (t) => {
  const out = tempOut();
  const outside = mkdirs(path.dirname(out), 'outside');
  const victim = path.join(outside, 'victim.md');
  fs.writeFileSync(victim, 'precious\n');
  mkdirs(out, 'work/hermes');
  mkdirs(out, 'shared');
  // A symlink exactly where a card would go, and a symlinked client directory.
  fs.symlinkSync(victim, path.join(out, EXPECTED[2]!));
  fs.symlinkSync(outside, path.join(out, 'shared/fleet'));
  const before = snapshot(out);
  const s = await standin();
  const r = await exportWith(qdrantOptions(s, out));
  t.false(r.summary.ok);
  t.is(r.summary.written, 1, 'only the personal card had a clean place to go');
  t.is(fs.readFileSync(victim, 'utf8'), 'precious\n');
  t.deepEqual(fs.readdirSync(outside), ['victim.md']);
  t.is(fs.readlinkSync(path.join(out, EXPECTED[2]!)), victim);
  t.is(snapshot(out).get(EXPECTED[2]!), before.get(EXPECTED[2]!));
  t.true(r.blocked.length === 2);
  // Removing the card from the source must not delete the symlink either.
  s.collections.set('hermes_fleet_memory', []);
  await exportWith(qdrantOptions(s, out, { allowEmpty: true }));
  t.true(fs.lstatSync(path.join(out, EXPECTED[2]!)).isSymbolicLink());
  t.is(fs.readFileSync(victim, 'utf8'), 'precious\n');
});

rootTest('export › a file owned by another user where a card goes is left alone (needs root)', async (t) => {
  const out = tempOut();
  const s = await standin();
  await exportWith(qdrantOptions(s, out));
  const target = path.join(out, EXPECTED[2]!);
  fs.chownSync(target, FOREIGN_UID, FOREIGN_GID);
  const before = snapshot(out).get(EXPECTED[2]!);
  setPayload(s, uuid(1), { text: 'changed', revision: 9 });
  const r = await exportWith(qdrantOptions(s, out));
  t.false(r.summary.ok);
  t.is(snapshot(out).get(EXPECTED[2]!), before);
  s.collections.set('hermes_fleet_memory', []);
  await exportWith(qdrantOptions(s, out, { allowEmpty: true }));
  t.true(fs.existsSync(target), 'never deleted either');
});

rootTest('export › --group gives directories 0750 and files 0640 owned by that group (needs root)', async (t) => {
  const out = tempOut();
  const s = await standin();
  const r = await exportWith(qdrantOptions(s, out, { group: String(FOREIGN_GID) }));
  t.true(r.summary.ok);
  for (const [rel, info] of snapshot(out)) {
    if (rel.startsWith('.')) continue;
    const [type, , , , mode, , gid] = info.split(':');
    t.is(mode, type === 'd' ? '750' : '640', rel);
    t.is(Number(gid), FOREIGN_GID, rel);
  }
});

test('export › --dry-run reports the counts and creates nothing', async (t) => {
  const out = tempOut();
  const s = await standin();
  const r = await exportWith(qdrantOptions(s, out, { dryRun: true }));
  t.like(r.summary, { written: 3, skipped_secret: 1 });
  t.deepEqual(fs.readdirSync(out), []);
});

test('export › an --out that fails the trust rule is refused before the source is read', async (t) => {
  const out = tempOut();
  fs.chmodSync(out, 0o770);
  const s = await standin();
  const err = await t.throwsAsync(() => exportWith(qdrantOptions(s, out)), { instanceOf: ExportError });
  t.regex(err!.message, /group_writable/);
  t.is(s.requests.length, 0);
  t.deepEqual(fs.readdirSync(out), []);
});

test('export › a card moved to another client by an overwrite keeps its old text as history in its old folder', async (t) => {
  const out = tempOut();
  const s = await standin([{ id: uuid(1), payload: payload({ client_id: 'alice', text: 'alice note' }) }]);
  await exportWith(qdrantOptions(s, out));
  setPayload(s, uuid(1), { client_id: 'bob', text: 'bob note' });
  const r = await exportWith(qdrantOptions(s, out));
  t.like(r.summary, { written: 1, removed: 1, history: 1 });
  t.deepEqual(mdFiles(out), [
    `work/alice/history/episodic--${uuid(1)}--r1-20251009T085320Z.md`,
    `work/bob/episodic--${uuid(1)}.md`,
  ]);
});

test('export › --keep-history 0 keeps no earlier revisions and clears those of earlier runs', async (t) => {
  const out = tempOut();
  const s = await standin();
  await exportWith(qdrantOptions(s, out));
  setPayload(s, uuid(1), { text: 'second', revision: 3 });
  t.like((await exportWith(qdrantOptions(s, out))).summary, { history: 1 });
  t.is(fs.readdirSync(path.join(out, 'work/hermes/history')).length, 1);
  setPayload(s, uuid(1), { text: 'third', revision: 4 });
  t.like((await exportWith(qdrantOptions(s, out, { keepHistory: 0 }))).summary, { history: 0, written: 1 });
  t.deepEqual(fs.readdirSync(path.join(out, 'work/hermes/history')), []);
  const manifest = JSON.parse(fs.readFileSync(path.join(out, MANIFEST_NAME), 'utf8')) as {
    files: Record<string, unknown>;
  };
  t.false(Object.keys(manifest.files).some((k) => k.includes('/history/')));
});

test('export › a JSONL run with --domain only writes and removes inside that domain', async (t) => {
  const out = tempOut();
  const file = path.join(path.dirname(out), 'cards.jsonl');
  const write = (cards: Array<[number, string]>): void =>
    fs.writeFileSync(
      file,
      cards
        .map(([n, d]) => JSON.stringify({ id: uuid(n), payload: payload({ domain: d, text: `card ${n}` }) }))
        .join('\n'),
    );
  write([
    [1, 'work'],
    [2, 'personal'],
  ]);
  const opts = { ...qdrantOptions(await standin([]), out), source: { kind: 'jsonl' as const, file } };
  await exportWith(opts);
  t.is(mdFiles(out).length, 2);
  write([[3, 'work']]);
  // No personal card is left in the source: emptying that scope needs --allow-empty.
  await t.throwsAsync(() => exportWith({ ...opts, domains: ['personal'] }), {
    instanceOf: ExportError,
    message: /--allow-empty/,
  });
  t.is(mdFiles(out).length, 2);
  const r = await exportWith({ ...opts, domains: ['personal'], allowEmpty: true });
  t.like(r.summary, { written: 0, removed: 1 });
  t.deepEqual(mdFiles(out), [`work/hermes/episodic--${uuid(1)}.md`]);
});
