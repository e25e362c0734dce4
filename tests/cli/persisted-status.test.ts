/**
 * `status` and `doctor` on the view's persisted index, through the built CLI on real files (docs/CLI.md §status,
 * §doctor; docs/DESIGN.md §The persisted index, "What status and doctor show"): no file says so with the command that
 * builds it; after `index` the file is trusted, with its build time, age, entries and a dry load in which every entry
 * revalidates; after one note changes that note is counted rebuilt (and a real first call agrees); a file readable by
 * others or corrupt is refused with its reason code and remedy. Both commands write nothing.
 */
import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { type ParsedJson, removeTree } from '../helpers/fixtures.js';
import { persistedIndexPath } from '../../src/tools/persisted-index.js';
import { humanDuration } from '../../src/text/operator.js';
import { cli, makeTree, type Tree } from './tree.js';

/** More than the trust layer's racy margin (3 s): notes older than this are indexed under their plain identity. */
const PAST_RACY_MS = 3200;

let tree: Tree;
let home: string;
let file: string;
test.before(async () => {
  tree = makeTree();
  home = tree.plainHome;
  file = persistedIndexPath(home);
  // Notes written a moment ago are always indexed again by a first call (their entries hold a racy identity).
  await new Promise((resolve) => setTimeout(resolve, PAST_RACY_MS));
});
test.after.always(() => {
  if (tree !== undefined) removeTree(tree.base);
});

function json(args: string[]): { code: number | null; json: ParsedJson } {
  const r = cli([...args, '--json']);
  try {
    return { code: r.code, json: JSON.parse(r.stdout) };
  } catch {
    throw new Error(`no JSON from ${args.join(' ')}: ${r.code} ${r.stderr} ${r.stdout}`);
  }
}

const indexCheck = (report: ParsedJson): ParsedJson => report.checks.find((c: ParsedJson) => c.name === 'index');

/** Every file below the tree with its mode, size and times: what a read-only command must leave as it was. */
function snapshot(dir: string): string[] {
  const out: string[] = [];
  for (const name of fs.readdirSync(dir, { recursive: true }).map(String).sort()) {
    const st = fs.lstatSync(path.join(dir, name));
    out.push(`${name} ${st.mode} ${st.size} ${st.mtimeMs} ${st.ctimeMs}`);
  }
  return out;
}

test.serial('no persisted index: status and doctor say so and give the command that builds it', (t) => {
  const command = `memory-bridge index --home ${home}`;
  const status = json(['status', '--home', home]);
  t.is(status.code, 0);
  t.like(status.json.persistedIndex, {
    file,
    state: 'absent',
    reason: null,
    builtAt: null,
    entries: null,
    dryLoad: null,
    refresh: command,
    enabled: true,
  });
  t.true(status.json.persistedIndex.remedy.includes(command), status.json.persistedIndex.remedy);
  const text = cli(['status', '--home', home]).stdout;
  t.true(text.includes(`Persisted index: none at ${file}`), text);
  t.true(text.includes(`    ${command} (run it again, e.g. from a timer, to keep it fresh)`), text);
  const doctor = json(['doctor', '--home', home]);
  t.is(doctor.code, 0, 'a missing index is no failure');
  t.like(indexCheck(doctor.json), { ok: true, reason: 'index_missing' });
  t.true(indexCheck(doctor.json).remedy.includes(command));
  t.is(doctor.json.persistedIndex.state, 'absent');
  const doctorText = cli(['doctor', '--home', home]).stdout;
  t.regex(doctorText, /\[warn\] index: index_missing\n {7}none at .*search-index\.mbi\n/);
  t.is(
    doctorText.split(command).length - 1,
    1,
    `doctor gives the build command once, on its remedy line: ${doctorText}`,
  );
});

test.serial(
  'after index: trusted, its age and entries, every entry revalidated by the dry load; nothing written',
  (t) => {
    const before = Date.now();
    t.is(cli(['index', '--home', home, '--quiet']).code, 0);
    const files = snapshot(tree.base);
    const status = json(['status', '--home', home]);
    t.is(status.code, 0);
    const p = status.json.persistedIndex;
    t.like(p, { file, state: 'trusted', reason: null, remedy: null, entries: 3, dryLoadSkipped: null });
    t.is(p.bytes, fs.statSync(file).size);
    t.true(Date.parse(p.builtAt) >= before - 1000 && Date.parse(p.builtAt) <= Date.now(), p.builtAt);
    t.true(p.ageMs >= 0 && p.ageMs < 60_000, String(p.ageMs));
    t.regex(p.age, /^\d+ s$/);
    t.deepEqual(p.dryLoad, { kind: 'dry', notes: 3, revalidated: 3, rebuilt: 0, unused: 0, cut: null });
    const text = cli(['status', '--home', home]).stdout;
    t.true(text.includes(`Persisted index: ${file}: trusted`), text);
    t.regex(text, /\n {2}built \d{4}-\d\d-\d\dT[\d:.]+Z \(\d+ s ago\), 3 entries, \d+ bytes\n/);
    t.regex(text, /dry load now \(this command's own load.*\): 3 visible notes, 3 revalidated, 0 rebuilt/);
    t.true(text.includes(`  refresh: memory-bridge index --home ${home} (run it again, e.g. from a timer`), text);
    const doctor = json(['doctor', '--home', home]);
    t.is(doctor.code, 0);
    t.deepEqual(indexCheck(doctor.json), { name: 'index', ok: true });
    t.deepEqual(doctor.json.persistedIndex.dryLoad, p.dryLoad);
    t.deepEqual(snapshot(tree.base), files, 'status and doctor wrote nothing');
  },
);

test.serial('one note edited after the build: the dry load counts it rebuilt, as the first call does', (t) => {
  const note = path.join(tree.root, 'projects', 'garden.md');
  fs.writeFileSync(note, '# Lantern Garden\n\nRed asters grow by the west gate now.\n');
  const later = new Date(Date.now() + 60_000);
  fs.utimesSync(note, later, later);
  const status = json(['status', '--home', home]);
  t.like(status.json.persistedIndex, { state: 'trusted', entries: 3 });
  t.deepEqual(status.json.persistedIndex.dryLoad, {
    kind: 'dry',
    notes: 3,
    revalidated: 2,
    rebuilt: 1,
    unused: 1,
    cut: null,
  });
  t.true(status.json.persistedIndex.remedy.includes(`memory-bridge index --home ${home}`));
  const doctor = json(['doctor', '--home', home]);
  t.is(doctor.code, 0);
  t.like(indexCheck(doctor.json), { ok: true, reason: 'index_stale' });
  t.deepEqual(doctor.json.persistedIndex.dryLoad, status.json.persistedIndex.dryLoad);
  // A real first call (a fresh process) rebuilds the same one note.
  const search = cli(['search', 'asters', '--home', home, '--run-kind', 'interactive']);
  t.is(search.code, 0, search.stderr);
  t.regex(search.stderr, /index_stale \(1 of 3 notes were indexed again from their text/);
  t.is(cli(['index', '--home', home, '--quiet']).code, 0);
});

test.serial('a file others may read, or a corrupt one, is refused with its reason code and the remedy', (t) => {
  fs.chmodSync(file, 0o644);
  try {
    const status = json(['status', '--home', home]);
    t.is(status.code, 0);
    t.like(status.json.persistedIndex, { state: 'refused', reason: 'index_readable', builtAt: null, dryLoad: null });
    t.regex(status.json.persistedIndex.remedy, new RegExp(`mode 0600|memory-bridge index --home ${home}`));
    const text = cli(['status', '--home', home]).stdout;
    t.true(text.includes(`Persisted index: ${file}: refused, index_readable: tool calls ignore it`), text);
    t.true(text.includes(`  what to do: ${status.json.persistedIndex.remedy}`), text);
    const doctor = json(['doctor', '--home', home]);
    t.is(doctor.code, 0, 'a refused index is no failure: calls answer without it');
    t.like(indexCheck(doctor.json), { ok: true, reason: 'index_readable' });
  } finally {
    fs.chmodSync(file, 0o600);
  }
  const bytes = fs.readFileSync(file);
  bytes[Math.floor(bytes.length / 2)]! ^= 0xff;
  fs.writeFileSync(file, bytes);
  const status = json(['status', '--home', home]);
  t.like(status.json.persistedIndex, { state: 'refused', reason: 'index_corrupt' });
  t.true(status.json.persistedIndex.remedy.includes(`run memory-bridge index --home ${home} again`));
  const doctor = cli(['doctor', '--home', home]);
  t.regex(doctor.stdout, /\[warn\] index: index_corrupt\n.*refused, index_corrupt/);
  t.true(doctor.stdout.includes(`→ ${status.json.persistedIndex.remedy}`));
  t.false(doctor.stdout.includes('what to do:'), 'the remedy is said once, on the → line');
});

test('humanDuration › seconds, minutes, hours and days as an operator reads them', (t) => {
  t.is(humanDuration(-5), '0 s');
  t.is(humanDuration(42_900), '42 s');
  t.is(humanDuration(7 * 60_000 + 59_000), '7 min');
  t.is(humanDuration((3 * 60 + 12) * 60_000), '3 h 12 min');
  t.is(humanDuration(25 * 3_600_000), '1 day 1 h');
  t.is(humanDuration((2 * 24 + 5) * 3_600_000), '2 days 5 h');
});
