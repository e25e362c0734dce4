import test from 'ava';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { removeTree } from '../helpers/fixtures.js';
import { createBridge } from '../../src/tools/bridge.js';
import { cli, makeTree, NOTES, REPO_ROOT, type Tree } from './tree.js';

const ALL_COMMANDS = [
  'mcp',
  'search',
  'read',
  'demo',
  'init',
  'worker',
  'install',
  'uninstall',
  'status',
  'doctor',
  'export-fleet',
];

let tree: Tree;
test.before(() => {
  tree = makeTree();
});
test.after.always(() => {
  if (tree !== undefined) removeTree(tree.base);
});

test('cli › --version prints the package version and exits 0', (t) => {
  const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
  const r = cli(['--version']);
  t.is(r.code, 0);
  t.is(r.stdout, `${pkg.version}\n`);
});

test('cli › --help lists every command and exits 0', (t) => {
  const r = cli(['--help']);
  t.is(r.code, 0);
  for (const name of ALL_COMMANDS) t.regex(r.stdout, new RegExp(`^  ${name} `, 'm'), name);
});

for (const name of ALL_COMMANDS) {
  test(`cli › ${name} --help prints its usage on stdout and exits 0`, (t) => {
    const r = cli([name, '--help']);
    t.is(r.code, 0, r.stderr);
    t.regex(r.stdout, new RegExp(`^usage: memory-bridge ${name}\\b`));
    t.is(cli(['help', name]).stdout, r.stdout);
    // Wrapped for a terminal: no line wider than the 120 columns the rest of the help uses.
    const wide = r.stdout.split('\n').filter((line) => [...line].length > 120);
    t.deepEqual(wide, []);
  });
}

test('cli › no command prints usage on stderr and exits 2', (t) => {
  const r = cli([]);
  t.is(r.code, 2);
  t.is(r.stdout, '');
  t.regex(r.stderr, /^usage: memory-bridge <command>/);
});

test('cli › an unknown command prints usage on stderr and exits 2', (t) => {
  const r = cli(['frobnicate']);
  t.is(r.code, 2);
  t.is(r.stdout, '');
  t.regex(r.stderr, /unknown command "frobnicate"/);
  t.regex(r.stderr, /usage: memory-bridge <command>/);
});

const usageErrors: Array<[string, string[], RegExp]> = [
  ['an unknown flag', ['search', 'garden', '--colour', 'red'], /unknown option --colour/],
  ['a non-integer --limit', ['search', 'garden', '--limit', '5x'], /--limit must be an integer/],
  ['a --limit without a value', ['search', 'garden', '--limit'], /--limit needs a value/],
  ['search without a query', ['search', '--home', '/x'], /missing QUERY/],
  ['read without an id', ['read'], /missing ID/],
  ['read with two ids', ['read', 'a.md', 'b.md'], /exactly one ID/],
  ['an unknown run kind', ['read', 'a.md', '--run-kind', 'nightly'], /--run-kind must be one of/],
  ['mcp with a positional argument', ['mcp', 'extra'], /unexpected argument/],
  ['demo with an unknown flag', ['demo', '--fast'], /unknown option --fast/],
];
for (const [what, args, message] of usageErrors) {
  test(`cli › ${what} is a usage error: message and usage on stderr, exit 2`, (t) => {
    const r = cli(args);
    t.is(r.code, 2);
    t.is(r.stdout, '');
    t.regex(r.stderr, message);
    t.regex(r.stderr, new RegExp(`usage: memory-bridge ${args[0]}`));
  });
}

test('cli › search prints the tool JSON on one line and exits 0', (t) => {
  const r = cli(['search', 'asters', '--home', tree.plainHome, '--run-kind', 'interactive']);
  t.is(r.code, 0, r.stderr);
  t.true(r.stdout.endsWith('\n'));
  t.is(r.stdout.trimEnd().split('\n').length, 1);
  const result = JSON.parse(r.stdout) as { ok: boolean; results: Array<{ id: string }> };
  t.true(result.ok);
  t.true(result.results.some((h) => h.id === 'projects/garden.md'));
});

test('cli › search and read print exactly what the tools return in-process', (t) => {
  const caller = { home: tree.plainHome, cron: false, subagent: false };
  const bridge = createBridge({ log: () => {} });
  const cases: Array<[string[], unknown]> = [
    [['search', 'garden', '--limit', '2'], bridge.call('memory_bridge_search', { query: 'garden', limit: 2 }, caller)],
    [['read', 'decisions/watering.md'], bridge.call('memory_bridge_read', { id: 'decisions/watering.md' }, caller)],
    [
      ['read', 'projects/private/gate-code.md'],
      bridge.call('memory_bridge_read', { id: 'projects/private/gate-code.md' }, caller),
    ],
  ];
  // A read's version is keyed per process (docs/DESIGN.md "Reading long notes"): it is the one field that differs.
  const noVersion = (json: string) => json.replace(/"version":"[A-Za-z0-9_-]{22}"/, '"version":"V"');
  for (const [args, expected] of cases) {
    const r = cli([...args, '--home', tree.plainHome, '--run-kind', 'interactive']);
    t.is(noVersion(r.stdout), noVersion(`${JSON.stringify(expected)}\n`), args.join(' '));
  }
});

test('cli › read prints the note and exits 0', (t) => {
  const r = cli(['read', 'projects/garden.md', '--home', tree.plainHome, '--run-kind=interactive']);
  t.is(r.code, 0, r.stderr);
  t.deepEqual(JSON.parse(r.stdout), {
    ok: true,
    id: 'projects/garden.md',
    title: 'Lantern Garden',
    content: NOTES['projects/garden.md'],
    truncated: false,
    offset: 0,
    version: JSON.parse(r.stdout).version,
  });
  t.regex(JSON.parse(r.stdout).version, /^[A-Za-z0-9_-]{22}$/);
});

test('cli › a denied read prints not_found_or_denied and exits 1', (t) => {
  const r = cli(['read', 'projects/private/gate-code.md', '--home', tree.plainHome, '--run-kind', 'interactive']);
  t.is(r.code, 1);
  t.deepEqual(JSON.parse(r.stdout), {
    ok: false,
    error: { code: 'not_found_or_denied', message: 'No readable document has that id.' },
  });
  t.false(r.stderr.includes(tree.root), 'operator log names no path of the tree');
});

test('cli › a --limit above the ceiling reaches the tool and comes back as invalid_request, exit 1', (t) => {
  const r = cli(['search', 'garden', '--limit', '11', '--home', tree.plainHome, '--run-kind', 'interactive']);
  t.is(r.code, 1);
  const result = JSON.parse(r.stdout) as { ok: boolean; error: { code: string; hint?: string } };
  t.is(result.error.code, 'invalid_request');
  t.regex(result.error.hint ?? '', /limit/);
});

test('cli › without --home or HERMES_HOME every call is unavailable, exit 1', (t) => {
  const r = cli(['search', 'garden', '--run-kind', 'interactive']);
  t.is(r.code, 1);
  t.is(JSON.parse(r.stdout).error.code, 'unavailable');
});

test('cli › HERMES_HOME names the home when --home is absent', (t) => {
  const r = cli(['read', 'workflows/visit.md', '--run-kind', 'interactive'], { HERMES_HOME: tree.plainHome });
  t.is(r.code, 0, r.stderr);
  t.is(JSON.parse(r.stdout).content, NOTES['workflows/visit.md']);
});

test('cli › --home wins over HERMES_HOME', (t) => {
  const r = cli(['read', 'workflows/visit.md', '--run-kind', 'interactive', '--home', tree.plainHome], {
    HERMES_HOME: path.join(tree.base, 'nowhere'),
  });
  t.is(r.code, 0, r.stderr);
});

test('cli › a relative HERMES_HOME is ignored (unavailable), with a warning on stderr', (t) => {
  const r = cli(['search', 'garden', '--run-kind', 'interactive'], { HERMES_HOME: 'relative/home' });
  t.is(r.code, 1);
  t.is(JSON.parse(r.stdout).error.code, 'unavailable');
  t.regex(r.stderr, /HERMES_HOME is not an absolute path/);
});

test('cli › the default run kind is unknown: refused unless the policy allows both cron and subagents', (t) => {
  t.is(JSON.parse(cli(['search', 'garden', '--home', tree.plainHome]).stdout).error.code, 'unavailable');
  t.is(JSON.parse(cli(['search', 'garden', '--home', tree.cronHome]).stdout).error.code, 'unavailable');
  const both = cli(['search', 'garden', '--home', tree.bothHome]);
  t.is(both.code, 0, both.stderr);
  t.true(JSON.parse(both.stdout).ok);
});

test('cli › --run-kind cron needs allow_cron, and subagent needs allow_subagents', (t) => {
  t.is(cli(['search', 'garden', '--home', tree.plainHome, '--run-kind', 'cron']).code, 1);
  t.is(cli(['search', 'garden', '--home', tree.cronHome, '--run-kind', 'cron']).code, 0);
  t.is(cli(['search', 'garden', '--home', tree.cronHome, '--run-kind', 'subagent']).code, 1);
  t.is(cli(['search', 'garden', '--home', tree.bothHome, '--run-kind', 'subagent']).code, 0);
});

test('cli › -- lets a query start with a dash', (t) => {
  const r = cli(['search', '--home', tree.plainHome, '--run-kind', 'interactive', '--', '-asters']);
  t.is(r.code, 0, r.stderr);
  t.true(JSON.parse(r.stdout).ok);
});

test('cli › a command whose module cannot load says it is not available and exits 1', (t) => {
  // A copy of the CLI with one command module missing: main.ts must keep every other command working.
  const dir = fs.mkdtempSync(path.join(tree.base, 'cli-copy-'));
  fs.cpSync(path.join(REPO_ROOT, 'dist', 'src', 'cli'), path.join(dir, 'dist', 'src', 'cli'), { recursive: true });
  fs.copyFileSync(path.join(REPO_ROOT, 'package.json'), path.join(dir, 'package.json'));
  fs.rmSync(path.join(dir, 'dist', 'src', 'cli', 'commands', 'status.js'), { force: true });
  const main = path.join(dir, 'dist', 'src', 'cli', 'main.js');
  const run = (args: string[]) => spawnSync(process.execPath, [main, ...args], { encoding: 'utf8' });
  const missing = run(['status']);
  t.is(missing.status, 1);
  t.regex(missing.stderr, /^memory-bridge: status is not available in this build$/m);
  const version = run(['--version']);
  t.is(version.status, 0);
  t.regex(run(['--help']).stdout, /status\s+\(not available in this build\)/);
});
