/**
 * Regressions from the writer-mode review (docs/EXPORT.md): a partial or garbage JSONL read never removes anything,
 * --redact writes cards whose names hold credentials, directories the operator made keep their mode and group,
 * `history` is reserved in any case, and pruned history is counted as removed.
 */
import test from 'ava';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FOREIGN_GID, isRoot } from '../helpers/fixtures.js';
import { ExportError } from '../../src/fleet/errors.js';
import { findSecrets, SECRET_KINDS } from '../../src/fleet/secrets.js';
import {
  allText,
  exportWith,
  fleetScratch,
  mdFiles,
  payload,
  qdrantOptions,
  SECRET_SAMPLES as SAMPLES,
  snapshot,
  uuid,
} from './helpers.js';
import type { ExportOptions } from '../../src/fleet/export.js';
import { MANIFEST_NAME, parseManifest } from '../../src/fleet/writer.js';

const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'src', 'cli', 'main.js');
const rootTest = isRoot ? test : test.skip;
const { tempOut, cleanup } = fleetScratch('mb-fleet-review-');
test.after.always(cleanup);

function jsonlOptions(out: string, file: string, over: Partial<ExportOptions> = {}): ExportOptions {
  const o = qdrantOptions({ url: 'http://127.0.0.1:9' } as never, out, over);
  return { ...o, source: { kind: 'jsonl', file } };
}

function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [CLI, 'export-fleet', ...args], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

/** 14 cards in two domains, one line each, with a trailing newline. */
function writeCards(file: string, n = 14): string {
  const lines = Array.from({ length: n }, (_, i) =>
    JSON.stringify({
      id: uuid(i + 1),
      payload: payload({ domain: i % 2 === 0 ? 'work' : 'shared', text: `card number ${i} with some words` }),
    }),
  );
  const text = `${lines.join('\n')}\n`;
  fs.writeFileSync(file, text);
  return text;
}

// ---------------------------------------------------------------- 1. partial or garbage JSONL

test('jsonl › a file cut mid-line exits 1 and removes nothing', async (t) => {
  const out = tempOut();
  const file = path.join(path.dirname(out), 'cards.jsonl');
  const full = writeCards(file);
  const first = await cli(['--out', out, '--from-jsonl', file]);
  t.is(first.code, 0, first.stderr);
  t.is(mdFiles(out).length, 14);
  const cut = full.slice(0, 1500);
  t.false(cut.endsWith('\n'));
  fs.writeFileSync(file, cut);
  const before = snapshot(out);
  const r = await cli(['--out', out, '--from-jsonl', file]);
  t.is(r.code, 1, r.stdout);
  t.regex(r.stderr, /line \d+ is not JSON/);
  t.deepEqual(snapshot(out), before);
});

test('jsonl › a file holding only garbage exits 1 and removes nothing', async (t) => {
  const out = tempOut();
  const file = path.join(path.dirname(out), 'cards.jsonl');
  writeCards(file);
  t.is((await cli(['--out', out, '--from-jsonl', file])).code, 0);
  fs.writeFileSync(file, 'garbage');
  const before = snapshot(out);
  const r = await cli(['--out', out, '--from-jsonl', file]);
  t.is(r.code, 1, r.stdout);
  t.false(r.stderr.includes('garbage'), 'the line itself is never echoed');
  t.deepEqual(snapshot(out), before);
});

test('jsonl › a complete last line without a newline is read as complete', async (t) => {
  const out = tempOut();
  const file = path.join(path.dirname(out), 'cards.jsonl');
  fs.writeFileSync(file, writeCards(file, 3).trimEnd());
  const r = await exportWith(jsonlOptions(out, file));
  t.like(r.summary, { ok: true, written: 3 });
});

test('jsonl › a byte-order mark at the start of the file is not a broken line', async (t) => {
  const out = tempOut();
  const file = path.join(path.dirname(out), 'cards.jsonl');
  fs.writeFileSync(file, `\uFEFF${writeCards(file, 2)}`);
  const r = await exportWith(jsonlOptions(out, file));
  t.like(r.summary, { ok: true, written: 2, skipped_invalid: 0 });
});

test('jsonl › a card that fails validation keeps its earlier file; a record without an id removes nothing', async (t) => {
  const out = tempOut();
  const file = path.join(path.dirname(out), 'cards.jsonl');
  writeCards(file, 4);
  await exportWith(jsonlOptions(out, file));
  const lines = fs.readFileSync(file, 'utf8').trimEnd().split('\n');
  // Card 1 turns invalid (text not a string); card 4 leaves the source.
  lines[0] = JSON.stringify({ id: uuid(1), payload: payload({ text: 42 }) });
  fs.writeFileSync(file, `${lines.slice(0, 3).join('\n')}\n`);
  const r = await exportWith(jsonlOptions(out, file));
  t.like(r.summary, { skipped_invalid: 1, removed: 1 });
  t.true(
    mdFiles(out).some((f) => f.endsWith(`${uuid(1)}.md`)),
    'the invalid card keeps its last good export',
  );
  t.false(mdFiles(out).some((f) => f.endsWith(`${uuid(4)}.md`)));
  // A JSON object with no id could be any card: nothing is removed this run.
  fs.writeFileSync(file, `${lines.slice(1, 2).join('\n')}\n${JSON.stringify({ payload: payload() })}\n`);
  const r2 = await exportWith(jsonlOptions(out, file));
  t.like(r2.summary, { skipped_invalid: 1, removed: 0 });
  t.true(
    r2.log.some((l) => /no point id/.test(l)),
    r2.log.join('\n'),
  );
  t.is(mdFiles(out).length, 3);
});

test('jsonl › an empty source does not empty the export unless --allow-empty is given', async (t) => {
  const out = tempOut();
  const file = path.join(path.dirname(out), 'cards.jsonl');
  writeCards(file, 4);
  t.is((await cli(['--out', out, '--from-jsonl', file])).code, 0);
  fs.writeFileSync(file, '');
  const before = snapshot(out);
  const r = await cli(['--out', out, '--from-jsonl', file]);
  t.is(r.code, 1);
  t.regex(r.stderr, /--allow-empty/);
  t.deepEqual(snapshot(out), before);
  const ok = await cli(['--out', out, '--from-jsonl', file, '--allow-empty', '--json']);
  t.is(ok.code, 0, ok.stderr);
  t.like(JSON.parse(ok.stdout), { removed: 4 });
  t.deepEqual(mdFiles(out), []);
});

// ---------------------------------------------------------------- 2. --redact and names

test('redact › each of the ten kinds in domain, client_id, slot_name or text is written redacted, and no secret reaches the disk', async (t) => {
  const out = tempOut();
  const file = path.join(path.dirname(out), 'cards.jsonl');
  const lines: string[] = [];
  let n = 0;
  for (const kind of SECRET_KINDS) {
    for (const field of ['domain', 'client_id', 'slot_name', 'text'] as const) {
      n += 1;
      const value = `x-${SAMPLES[kind]}`;
      lines.push(
        JSON.stringify({
          id: uuid(n),
          payload: payload({ memory_type: 'slot', slot_name: 'gpu', text: 'clean', [field]: value }),
        }),
      );
    }
  }
  fs.writeFileSync(file, `${lines.join('\n')}\n`);
  const r = await exportWith(jsonlOptions(out, file, { redact: true }));
  t.like(r.summary, { ok: true, written: n, skipped_secret: 0 });
  t.deepEqual(r.secretIds, []);
  const all = allText(out) + r.log.join('\n');
  t.deepEqual(findSecrets(all), []);
  for (const kind of SECRET_KINDS) t.false(all.includes(SAMPLES[kind]), kind);
  t.false(r.log.some((l) => l.includes('use --redact')));
});

// ---------------------------------------------------------------- 3. directories the operator made

rootTest('dirs › --group leaves the mode and group of a directory the operator made alone (needs root)', async (t) => {
  const out = tempOut();
  const file = path.join(path.dirname(out), 'cards.jsonl');
  writeCards(file, 2);
  const work = path.join(out, 'work');
  fs.mkdirSync(work, { mode: 0o700 });
  fs.writeFileSync(path.join(work, 'private.txt'), 'mine\n', { mode: 0o600 });
  const before = fs.statSync(work);
  const r = await exportWith(jsonlOptions(out, file, { group: String(FOREIGN_GID) }));
  t.true(r.summary.ok, r.log.join('\n'));
  const after = fs.statSync(work);
  t.is(after.mode & 0o7777, 0o700);
  t.is(after.gid, before.gid);
  // What the export made itself does get the group.
  const made = fs.statSync(path.join(work, 'hermes'));
  t.is(made.mode & 0o7777, 0o750);
  t.is(made.gid, FOREIGN_GID);
  t.true(
    r.log.some((l) => /not traversable by group/.test(l)),
    r.log.join('\n'),
  );
  // And it stays that way on the next run.
  await exportWith(jsonlOptions(out, file, { group: String(FOREIGN_GID) }));
  t.is(fs.statSync(work).mode & 0o7777, 0o700);
  t.is(fs.statSync(work).gid, before.gid);
});

rootTest(
  'dirs › a later --group run regroups the directories an earlier run created, recorded by inode (needs root)',
  async (t) => {
    const out = tempOut();
    const file = path.join(path.dirname(out), 'cards.jsonl');
    writeCards(file, 2);
    await exportWith(jsonlOptions(out, file));
    t.is(fs.statSync(path.join(out, 'work/hermes')).mode & 0o7777, 0o700);
    const manifest = JSON.parse(fs.readFileSync(path.join(out, MANIFEST_NAME), 'utf8')) as {
      dirs: Record<string, string>;
    };
    t.regex(manifest.dirs['work/hermes']!, new RegExp(`^${fs.statSync(path.join(out, 'work/hermes')).ino}(-[0-9]+)?$`));
    // The operator replaces one created directory with their own: it is no longer the export's.
    fs.rmSync(path.join(out, 'shared'), { recursive: true });
    fs.mkdirSync(path.join(out, 'shared'), { mode: 0o700 });
    await exportWith(jsonlOptions(out, file, { group: String(FOREIGN_GID) }));
    for (const d of ['work', 'work/hermes', 'shared/hermes']) {
      t.is(fs.statSync(path.join(out, d)).mode & 0o7777, 0o750, d);
      t.is(fs.statSync(path.join(out, d)).gid, FOREIGN_GID, d);
    }
    t.is(fs.statSync(path.join(out, 'shared')).mode & 0o7777, 0o700);
    t.not(fs.statSync(path.join(out, 'shared')).gid, FOREIGN_GID);
  },
);

rootTest(
  'dirs › a directory a killed run planned and made is still its own at the next run (needs root)',
  async (t) => {
    const out = tempOut();
    const file = path.join(path.dirname(out), 'cards.jsonl');
    writeCards(file, 1);
    // What a run killed right after its mkdir leaves: the plan in the manifest, the directory at 0700.
    fs.mkdirSync(path.join(out, 'work'), { mode: 0o700 });
    fs.writeFileSync(
      path.join(out, MANIFEST_NAME),
      JSON.stringify({ version: 1, files: {}, dirs: { work: '', 'work/hermes': '' }, temps: [] }),
      { mode: 0o600 },
    );
    await exportWith(jsonlOptions(out, file, { group: String(FOREIGN_GID) }));
    t.is(fs.statSync(path.join(out, 'work')).mode & 0o7777, 0o750);
    t.is(fs.statSync(path.join(out, 'work')).gid, FOREIGN_GID);
  },
);

test('dirs › a damaged manifest cannot claim a directory outside the layout', (t) => {
  const m = parseManifest(
    Buffer.from(
      JSON.stringify({
        version: 1,
        files: {},
        dirs: { '..': '', 'a/b/c': '1', 'a/b/history': '5-7', work: 'x', '': '', 'a/.b': '' },
        temps: [],
      }),
    ),
  );
  t.deepEqual(m.dirs, { 'a/b/history': '5-7' });
  t.deepEqual(
    parseManifest(Buffer.from('{"version":1,"files":{},"temps":[]}')).dirs,
    {},
    'a manifest of an earlier version claims no directory',
  );
});

test('dirs › without --group a 0755 directory the operator made stays 0755', async (t) => {
  const out = tempOut();
  const file = path.join(path.dirname(out), 'cards.jsonl');
  writeCards(file, 2);
  fs.mkdirSync(path.join(out, 'work'));
  fs.chmodSync(path.join(out, 'work'), 0o755);
  const r = await exportWith(jsonlOptions(out, file));
  t.true(r.summary.ok, r.log.join('\n'));
  t.is(fs.statSync(path.join(out, 'work')).mode & 0o7777, 0o755);
  t.is(fs.statSync(path.join(out, 'work/hermes')).mode & 0o7777, 0o700);
  t.is(fs.statSync(path.join(out, 'shared')).mode & 0o7777, 0o700);
});

// ---------------------------------------------------------------- 4. case

test('layout › a client named HISTORY (any case) never becomes a history folder, and case-only differences never share one', async (t) => {
  const out = tempOut();
  const file = path.join(path.dirname(out), 'cards.jsonl');
  const ids = ['HISTORY', 'History', 'hermes', 'Hermes', 'HERMES'];
  fs.writeFileSync(
    file,
    ids
      .map((c, i) => JSON.stringify({ id: uuid(i + 1), payload: payload({ client_id: c, text: `card ${c}` }) }))
      .join('\n'),
  );
  const r = await exportWith(jsonlOptions(out, file));
  t.like(r.summary, { written: 5 });
  const folders = fs.readdirSync(path.join(out, 'work'));
  t.false(
    folders.some((f) => f.toLowerCase() === 'history'),
    folders.join(' '),
  );
  t.is(new Set(folders.map((f) => f.toLowerCase())).size, 5, folders.join(' '));
  t.true(folders.includes('hermes'));
});

// ---------------------------------------------------------------- 5. summary

test('summary › history files pruned by --keep-history count as removed', async (t) => {
  const out = tempOut();
  const file = path.join(path.dirname(out), 'cards.jsonl');
  const put = (rev: number): void =>
    fs.writeFileSync(
      file,
      `${JSON.stringify({ id: uuid(1), payload: payload({ text: `rev ${rev}`, revision: rev, updated_at: 1_760_000_000 + rev }) })}\n`,
    );
  for (const rev of [1, 2, 3]) {
    put(rev);
    await exportWith(jsonlOptions(out, file));
  }
  t.is(fs.readdirSync(path.join(out, 'work/hermes/history')).length, 2);
  const r = await exportWith(jsonlOptions(out, file, { keepHistory: 0 }));
  t.like(r.summary, { removed: 2, unchanged: 1 });
  t.deepEqual(fs.readdirSync(path.join(out, 'work/hermes/history')), []);
});

test('cli › --help documents --allow-empty and that non-active cards count as skipped_expired', async (t) => {
  const h = await cli(['--help']);
  t.regex(h.stdout, /--allow-empty/);
  t.regex(h.stdout, /skipped_expired[^\n]*(status|active)/);
});

void ExportError;
