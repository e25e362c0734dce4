/**
 * What a newcomer meets first on the command line: a refusal for an unknown run kind says what to pass, a search
 * that found nothing because of the names rule says so with the remedy, doctor lists the paths behind a reason,
 * reads continue with --offset and searches narrow with --within.
 */
import test from 'ava';
import { makeHome, makeTempDir, mkdirs, removeTree, writeNote } from '../helpers/fixtures.js';
import { cli, makeTree, type Tree } from './tree.js';

let tree: Tree;
let base = '';
let portableHome = '';
test.before(() => {
  tree = makeTree();
  base = makeTempDir('mb-friction-');
  const root = mkdirs(base, 'vault');
  writeNote(root, 'Custom domains.md', '# Custom domains\nPoint a domain at the site.\n');
  writeNote(root, 'Getting started/First steps.md', 'Open the app.\n');
  writeNote(root, 'Ärger.md', 'Trouble.\n');
  writeNote(root, 'notes.txt', 'not a note\n');
  portableHome = makeHome(base, { version: 1, root, allow: ['**'], names: 'portable' }, 'portable').home;
});
test.after.always(() => {
  if (tree !== undefined) removeTree(tree.base);
  if (base !== '') removeTree(base);
});

const UNKNOWN_LINE =
  /^memory-bridge (search|read): refused: the run kind is unknown \(no --run-kind\)\. Pass --run-kind interactive for a person at a terminal, or set both "allow_cron": true and "allow_subagents": true in the policy\n$/;

test('cli › search and read without --run-kind print one operator line saying what to pass', (t) => {
  for (const args of [
    ['search', 'garden', '--home', tree.plainHome],
    ['read', 'projects/garden.md', '--home', tree.plainHome],
    ['search', 'garden', '--home', tree.cronHome],
  ]) {
    const r = cli(args);
    t.is(r.code, 1, args.join(' '));
    t.regex(r.stderr, UNKNOWN_LINE, args.join(' '));
    t.is(JSON.parse(r.stdout).error.code, 'unavailable');
  }
  // With both opt-ins the unknown run kind is served; with --run-kind interactive too.
  t.is(cli(['search', 'garden', '--home', tree.bothHome]).code, 0);
  t.is(cli(['search', 'garden', '--home', tree.plainHome, '--run-kind', 'interactive']).code, 0);
  // A cron refusal keeps its own reason line.
  t.regex(cli(['search', 'garden', '--home', tree.plainHome, '--run-kind', 'cron']).stderr, /cron_refused/);
});

test('cli › a search with no candidate because every name failed the portable rule says so with the remedy', (t) => {
  const r = cli(['search', 'domains', '--home', portableHome, '--run-kind', 'interactive']);
  t.is(r.code, 0, r.stderr);
  t.deepEqual(JSON.parse(r.stdout), { ok: true, results: [], truncated: false });
  t.regex(r.stderr, /no_candidate_names .*every name failed the "portable" names rule; set "names": "unicode"/);
  // A search that did search something says nothing of the kind.
  const plain = cli(['search', 'nothing-matches-this', '--home', tree.plainHome, '--run-kind', 'interactive']);
  t.is(plain.stderr, '');
});

test('cli › doctor --list REASON prints the paths skipped for that reason', (t) => {
  const r = cli(['doctor', '--home', portableHome, '--list', 'bad_name']);
  t.is(r.code, 0, r.stderr);
  t.deepEqual(r.stdout.trimEnd().split('\n').sort(), ['Custom domains.md', 'Getting started', 'Ärger.md']);
  t.regex(r.stderr, /3 skipped as bad_name under .*vault/);
  const md = cli(['doctor', '--home', portableHome, '--list', 'not_markdown']);
  t.is(md.stdout, 'notes.txt\n');
  const denied = cli(['doctor', '--home', tree.plainHome, '--list', 'denied', '--json']);
  t.deepEqual(JSON.parse(denied.stdout).paths, ['projects/private']);
  const bad = cli(['doctor', '--home', portableHome, '--list', 'no_such_reason']);
  t.is(bad.code, 2);
  t.regex(bad.stderr, /unknown reason "no_such_reason"; one of .*bad_name/);
});

test('cli › read --offset continues a note and search --within narrows it', (t) => {
  const r = cli(['read', 'projects/garden.md', '--offset', '2', '--home', tree.plainHome, '--run-kind', 'interactive']);
  t.is(r.code, 0, r.stderr);
  const j = JSON.parse(r.stdout);
  t.true(j.content.startsWith('Lantern Garden'));
  t.is(j.offset, 2);
  const s = cli([
    'search',
    'garden',
    '--within',
    'decisions/**',
    '--home',
    tree.plainHome,
    '--run-kind',
    'interactive',
  ]);
  t.deepEqual(
    JSON.parse(s.stdout).results.map((h: { id: string }) => h.id),
    ['decisions/watering.md'],
  );
});
