#!/usr/bin/env node
// The project's test runner (`npm test` = `npm run build && node scripts/test.js`). Plain Node ESM, no dependencies.
//
// 1. ava over every dist/tests/**/*.test.js as the current user, TAP reporter.
// 1b. ava over dist/tests/scale/*.scale.js (tests on large trees, e.g. 100,000 notes), in a step of their own, one
//    file at a time, so they neither compete with the other files for the cores nor build their trees twice.
// 2. When running as root: the trust, policy, adversarial and audit tests again as an unprivileged user (uid/gid 65534, via setpriv),
//    from a copy of dist/, node_modules, package.json and tests/corpora in a fresh world-readable temp dir, because the trust rule
//    treats "root" and "the running user" differently and both sides must hold. Skipped (with the reason) otherwise.
// 3. The Python shim tests (`python3 -m unittest`) when tests/python exists.
// 4. ava over dist/tests/package/*.package.js, last: `npm pack` (whose prepack rebuilds dist/ in place, so nothing
//    else may be loading it), a global install into a temporary prefix, and the installed CLI.
// 0. Before all: the test-only folder tests/conformance gets its own pinned packages (the official MCP conformance
//    suite and the Node 22 it needs; docs/MCP.md §Conformance) with `npm ci --prefix tests/conformance`, unless they
//    are installed from the same lock already. A failed install counts as one failure (and the conformance test
//    then fails too, saying so).
// Output streams through as it comes; the last line is exactly `N passed, N failed` (skips are counted on the line before it, when any were
// skipped). Exit status is non-zero when any suite failed or could not run.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const UNPRIVILEGED = 65534;
/** Test directories re-run as the unprivileged user (compiled paths). */
const UNPRIVILEGED_DIRS = ['dist/tests/trust', 'dist/tests/policy', 'dist/tests/adversarial', 'dist/tests/audit'];

/** @typedef {{name: string, passed: number, failed: number, skipped: number, note?: string}} Tally */
/** @type {Tally[]} */
const tallies = [];

function banner(text) {
  process.stdout.write(`\n=== ${text}\n`);
}

/**
 * Run a child process, echo its stdout and stderr as they come, and hand every complete line to
 * `onLine(line, 'stdout' | 'stderr')`. Resolves to the exit status (a signal counts as 1), or null when the process could not be started.
 */
function run(cmd, args, opts, onLine) {
  return new Promise((resolve) => {
    let child;
    try {
      child = spawn(cmd, args, { ...opts, stdio: ['ignore', 'pipe', 'pipe'] });
    } catch {
      resolve(null);
      return;
    }
    const feed = (stream, sink, which) => {
      let rest = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk) => {
        sink.write(chunk);
        const lines = (rest + chunk).split('\n');
        rest = lines.pop() ?? '';
        for (const line of lines) onLine(line, which);
      });
      stream.on('end', () => {
        if (rest !== '') onLine(rest, which);
      });
    };
    feed(child.stdout, process.stdout, 'stdout');
    feed(child.stderr, process.stderr, 'stderr');
    child.on('error', () => resolve(null));
    child.on('close', (code, signal) => resolve(signal !== null ? 1 : code));
  });
}

/**
 * Count TAP results on stdout: `ok N`, `not ok N`, and `# SKIP` / `# TODO` directives (counted as skipped).
 * Lines on stderr (test logs) are never counted.
 */
function tapCounter() {
  const t = { passed: 0, failed: 0, skipped: 0 };
  const onLine = (line, which) => {
    if (which !== 'stdout') return;
    const m = /^(not )?ok\b(.*)$/.exec(line);
    if (m === null) return;
    if (/#\s*(SKIP|TODO)\b/i.test(m[2])) t.skipped++;
    else if (m[1] !== undefined) t.failed++;
    else t.passed++;
  };
  return { t, onLine };
}

/** Record a suite's tally; a non-zero exit with no failing test is itself one failure ("could not run"). */
function record(name, status, t, note) {
  const tally = { name, ...t };
  if (status === null) {
    tally.failed++;
    tally.note = note ?? 'could not be started';
  } else if (status !== 0 && t.failed === 0) {
    tally.failed++;
    tally.note = note ?? `exited with status ${status} without a failing test`;
  }
  tallies.push(tally);
}

function avaCli(root) {
  return path.join(root, 'node_modules', 'ava', 'entrypoints', 'cli.mjs');
}

async function avaAsCurrentUser() {
  banner(`ava: all tests as ${os.userInfo().username} (uid ${process.getuid?.() ?? '?'})`);
  const { t, onLine } = tapCounter();
  const status = await run(process.execPath, [avaCli(repo), '--tap'], { cwd: repo, env: process.env }, onLine);
  record('ava', status, t);
}

/**
 * Tests in a step of their own: one ava run over `dist/tests/<dir>/*<suffix>` (outside ava's `files` glob), one file
 * at a time, after or between the other suites.
 */
async function avaStep(dir, suffix, why) {
  const name = `ava: ${why} (dist/tests/${dir}/*${suffix})`;
  banner(name);
  const at = path.join(repo, 'dist', 'tests', dir);
  const files = fs.existsSync(at)
    ? fs
        .readdirSync(at)
        .filter((f) => f.endsWith(suffix))
        .sort()
        .map((f) => path.join('dist', 'tests', dir, f))
    : [];
  if (files.length === 0) {
    process.stdout.write(`SKIPPED: no ${suffix} test files were built.\n`);
    return;
  }
  const { t, onLine } = tapCounter();
  const args = [avaCli(repo), '--tap', '--concurrency', '1', ...files];
  const status = await run(process.execPath, args, { cwd: repo, env: process.env }, onLine);
  record(name, status, t);
}

/** Copy `from` to `to` and make everything world-readable (directories also searchable), as `chmod -R a+rX`. */
function copyReadable(from, to) {
  fs.cpSync(from, to, { recursive: true, verbatimSymlinks: true });
  const walk = (p) => {
    const st = fs.lstatSync(p);
    if (st.isSymbolicLink()) return;
    const x = st.isDirectory() || (st.mode & 0o111) !== 0 ? 0o555 : 0o444;
    fs.chmodSync(p, (st.mode & 0o7777) | x);
    if (st.isDirectory()) for (const name of fs.readdirSync(p)) walk(path.join(p, name));
  };
  walk(to);
}

async function avaAsUnprivileged() {
  const name = `ava: trust and policy tests as uid/gid ${UNPRIVILEGED}`;
  banner(name);
  if (process.getuid?.() !== 0) {
    process.stdout.write(`SKIPPED: not running as root, so there is no other user to switch to.\n`);
    return;
  }
  if (process.platform !== 'linux') {
    process.stdout.write(`SKIPPED: switching users uses setpriv, which is Linux-only.\n`);
    return;
  }
  const setpriv = spawnSync('setpriv', ['--version'], { stdio: 'ignore' });
  if (setpriv.error !== undefined || setpriv.status !== 0) {
    record(name, null, { passed: 0, failed: 0, skipped: 0 }, 'setpriv is not available');
    process.stdout.write('FAILED: setpriv (util-linux) is not available to drop privileges.\n');
    return;
  }
  const dirs = UNPRIVILEGED_DIRS.filter((d) => fs.existsSync(path.join(repo, d)));
  if (dirs.length === 0) {
    process.stdout.write(`SKIPPED: none of ${UNPRIVILEGED_DIRS.join(', ')} exists.\n`);
    return;
  }
  const made = fs.mkdtempSync(path.join(os.tmpdir(), 'memory-bridge-unpriv-'));
  try {
    const copy = path.join(made, 'p');
    fs.mkdirSync(copy);
    for (const part of ['dist', 'node_modules', 'package.json', 'tests/corpora'])
      copyReadable(path.join(repo, part), path.join(copy, part));
    // A private, writable home for the unprivileged user (ava and Node may want a cache or a config directory).
    const home = path.join(made, 'home');
    fs.mkdirSync(home, { mode: 0o700 });
    fs.chownSync(home, UNPRIVILEGED, UNPRIVILEGED);
    fs.chmodSync(made, 0o755);
    fs.chmodSync(copy, 0o755);
    const patterns = dirs.map((d) => `${d}/**/*.test.js`);
    process.stdout.write(`from a copy in ${copy}: ${patterns.join(' ')}\n`);
    const { t, onLine } = tapCounter();
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, LANG: process.env.LANG ?? 'C.UTF-8' };
    const args = [
      `--reuid=${UNPRIVILEGED}`,
      `--regid=${UNPRIVILEGED}`,
      '--clear-groups',
      process.execPath,
      avaCli(copy),
      '--tap',
      ...patterns,
    ];
    const status = await run('setpriv', args, { cwd: copy, env }, onLine);
    record(name, status, t);
  } finally {
    fs.rmSync(made, { recursive: true, force: true });
  }
}

/** Parse unittest's summary: "Ran N tests" then "OK" / "OK (skipped=S)" / "FAILED (failures=F, errors=E, skipped=S)". */
function unittestCounter() {
  const seen = { ran: -1, failures: 0, errors: 0, skipped: 0, unexpected: 0 };
  const onLine = (line) => {
    const ran = /^Ran (\d+) tests? in /.exec(line);
    if (ran !== null) seen.ran = Number(ran[1]);
    const summary = /^(OK|FAILED)(?: \((.*)\))?\s*$/.exec(line);
    if (summary !== null && summary[2] !== undefined) {
      for (const part of summary[2].split(',')) {
        const [key, value] = part.trim().split('=');
        const n = Number(value);
        if (key === 'failures') seen.failures = n;
        else if (key === 'errors') seen.errors = n;
        else if (key === 'skipped') seen.skipped = n;
        else if (key === 'unexpected successes') seen.unexpected = n;
      }
    }
  };
  return { seen, onLine };
}

async function pythonShim() {
  const name = 'python: tests/python (unittest)';
  banner(name);
  const dir = path.join(repo, 'tests', 'python');
  if (!fs.existsSync(dir)) {
    process.stdout.write('SKIPPED: tests/python does not exist.\n');
    return;
  }
  const { seen, onLine } = unittestCounter();
  const status = await run(
    'python3',
    ['-B', '-m', 'unittest', 'discover', '-v', '-s', 'tests/python', '-t', 'tests/python'],
    { cwd: repo, env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' } },
    onLine,
  );
  if (seen.ran < 0) {
    record(name, status === 0 ? 1 : status, { passed: 0, failed: 0, skipped: 0 }, 'no unittest summary was printed');
    return;
  }
  const failed = seen.failures + seen.errors + seen.unexpected;
  record(name, status, { passed: Math.max(0, seen.ran - failed - seen.skipped), failed, skipped: seen.skipped });
}

/** Install tests/conformance's packages from its lock when they are missing or older than the lock. */
async function installConformance() {
  const dir = path.join(repo, 'tests', 'conformance');
  const lock = path.join(dir, 'package-lock.json');
  const installed = path.join(dir, 'node_modules', '.package-lock.json');
  if (!fs.existsSync(lock)) return;
  if (fs.existsSync(installed) && fs.statSync(installed).mtimeMs >= fs.statSync(lock).mtimeMs) return;
  const name = 'npm ci --prefix tests/conformance';
  banner(name);
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const status = await run(
    npm,
    ['ci', '--prefix', dir, '--no-audit', '--no-fund'],
    { cwd: repo, env: process.env },
    () => {},
  );
  if (status !== 0)
    record(name, status, { passed: 0, failed: 0, skipped: 0 }, 'the conformance suite could not be installed');
}

await installConformance();
await avaAsCurrentUser();
await avaStep('scale', '.scale.js', 'scale tests');
await avaAsUnprivileged();
await pythonShim();
await avaStep(
  'package',
  '.package.js',
  'package tests: npm pack, a global install into a temporary prefix, the installed CLI',
);

banner('summary');
let passed = 0;
let failed = 0;
let skipped = 0;
for (const t of tallies) {
  passed += t.passed;
  failed += t.failed;
  skipped += t.skipped;
  const note = t.note === undefined ? '' : ` (${t.note})`;
  process.stdout.write(`${t.name}: ${t.passed} passed, ${t.failed} failed, ${t.skipped} skipped${note}\n`);
}
// Skips go on their own line so that the last line is exactly the plain summary CI reads.
if (skipped > 0) process.stdout.write(`skipped: ${skipped} (each skip above says why)\n`);
process.stdout.write(`${passed} passed, ${failed} failed\n`);
process.exitCode = failed > 0 ? 1 : 0;
