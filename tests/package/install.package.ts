/**
 * The package as a user installs it (docs/INSTALL.md): `npm pack` in the repository (its `prepack` builds dist/ and
 * writes npm-shrinkwrap.json from the lockfile), then `npm install -g --prefix <temp> <tarball>` with dependencies
 * from the npm cache (`--prefer-offline`), then the installed `memory-bridge` — found through `<prefix>/bin`, never
 * the repository's dist/ — runs the demo, `init`, the MCP server over stdio with a real SDK client, the HTTP server with a
 * bearer token, and the Hermes plugin install whose worker passes the program-trust check and answers a call.
 * koffi's native binary must be the prebuilt one its platform package ships, with no compiler run at install.
 *
 * Runs in its own step of scripts/test.js (`*.package.js`, after every other suite) because `npm pack` rebuilds
 * dist/ in place, which must not happen under tests that are loading it.
 */
import test from 'ava';
import { spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { makeHome, makeTempDir, mkdirs, removeTree, writeNote } from '../helpers/fixtures.js';
import { UNTRUSTED_EXIT } from '../../src/hermes/launch.js';
import { REPO_ROOT } from '../cli/tree.js';
import { connectMcp } from '../adversarial/mcp-client.js';
import { callJson, connectHttp, waitFor } from '../server/http-world.js';

const PKG = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
};
const NODE_DIR = path.dirname(process.execPath);

let base = '';
let prefix = '';
let tarball = '';
/** The installed package directory and its CLI. */
let pkgDir = '';
let cli = '';
let root = '';
let home = '';
let packed: string[] = [];

/** PATH for the installed copy: its bin/ first, then node's directory and the system's (no repository path). */
function installedPath(): string {
  return [path.join(prefix, 'bin'), NODE_DIR, '/usr/bin', '/bin'].join(':');
}

function run(
  cmd: string,
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string } = {},
): SpawnSyncReturns<string> {
  return spawnSync(cmd, args, { encoding: 'utf8', timeout: 240_000, maxBuffer: 64 << 20, ...opts });
}

/** The installed `memory-bridge` through `<prefix>/bin`, as a shell would find it. */
function installed(args: string[], env: Record<string, string> = {}): SpawnSyncReturns<string> {
  return run('memory-bridge', args, { cwd: base, env: { PATH: installedPath(), HOME: base, ...env } });
}

test.before(() => {
  base = makeTempDir('mb-package-');
  prefix = mkdirs(base, 'prefix');
  const out = mkdirs(base, 'tarball');
  const pack = run('npm', ['pack', '--json', '--pack-destination', out], { cwd: REPO_ROOT, env: process.env });
  if (pack.status !== 0) throw new Error(`npm pack failed: ${pack.stderr}`);
  // prepack's own output (the build) may come first on stdout; the JSON report is the array that ends it.
  const report = pack.stdout.slice(Math.max(0, pack.stdout.lastIndexOf('\n[') + 1));
  const info = JSON.parse(report) as { filename: string; files: { path: string }[] }[];
  tarball = path.join(out, info[0]!.filename);
  packed = info[0]!.files.map((f) => f.path);
  const install = run(
    'npm',
    ['install', '-g', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', tarball],
    { cwd: base, env: process.env },
  );
  if (install.status !== 0) throw new Error(`npm install -g failed: ${install.stderr}`);
  pkgDir = path.join(prefix, 'lib', 'node_modules', PKG.name);
  cli = path.join(pkgDir, 'dist', 'src', 'cli', 'main.js');

  root = mkdirs(base, 'notes');
  writeNote(root, 'garden/watering.md', '# Watering\n\nThe drip line opens at dawn for twelve minutes.\n');
  writeNote(root, 'garden/frost.md', '# Frost\n\nDrain the regulators before the first frost.\n');
  home = makeHome(base, { version: 1, root, allow: ['**'] }, 'hermes').home;
});
test.after.always(() => {
  if (base !== '') removeTree(base);
});

test('package › the tarball holds the built program, the plugin, docs and a shrinkwrap, and no tests or sources', (t) => {
  t.is(path.basename(tarball), `${PKG.name}-${PKG.version}.tgz`);
  for (const file of [
    'dist/src/cli/main.js',
    'dist/native/index.js',
    'plugin/plugin.yaml',
    'plugin/__init__.py',
    'npm-shrinkwrap.json',
    'CHANGELOG.md',
    'LICENSE',
    'README.md',
    'docs/INSTALL.md',
    'examples/memory/workflows/visit.md',
  ])
    t.true(packed.includes(file), file);
  const unwanted = packed.filter(
    (f) =>
      /^(src|tests|bench|scripts|native)\//.test(f) || /^dist\/(tests|bench|scripts)\//.test(f) || f.endsWith('.map'),
  );
  t.deepEqual(unwanted, []);
  // The shrinkwrap written at pack time is gone again from the repository (postpack).
  t.false(fs.existsSync(path.join(REPO_ROOT, 'npm-shrinkwrap.json')));
});

test('package › the install has no development dependency, and the CLI reports the package version', (t) => {
  t.is(fs.realpathSync(path.join(prefix, 'bin', 'memory-bridge')), cli);
  // Every package the lockfile marks development-only is absent. (typescript is not among them: it is a peer
  // dependency of @qdrant/js-client-rest, which npm installs for it; nothing runs it.)
  const lock = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { dev?: boolean }>;
  };
  const devOnly = Object.entries(lock.packages)
    .filter(([key, entry]) => key !== '' && entry.dev === true)
    .map(([key]) => key);
  for (const dev of ['ava', '@biomejs/biome', 'fast-check', 'minisearch'])
    t.true(devOnly.includes(`node_modules/${dev}`), dev);
  t.deepEqual(
    devOnly.filter((key) => fs.existsSync(path.join(pkgDir, key))),
    [],
  );
  const version = installed(['--version']);
  t.is(version.status, 0, version.stderr);
  t.is(version.stdout.trim(), PKG.version);
});

test('package › the installed demo runs and every step behaves as described', (t) => {
  const demo = installed(['demo']);
  t.is(demo.status, 0, demo.stderr);
  t.regex(demo.stdout, /Every step behaved as described/);
});

test('package › koffi loads the prebuilt binary its platform package ships, and its install script compiles nothing', (t) => {
  // The installed native layer, loaded the way the CLI loads it: which koffi.node is mapped into the process?
  const probe = run(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `const { getNative } = await import(${JSON.stringify(path.join(pkgDir, 'dist', 'native', 'index.js'))});
       getNative();
       const maps = (await import('node:fs')).readFileSync('/proc/self/maps', 'utf8');
       console.log([...new Set(maps.split('\\n').filter((l) => l.endsWith('koffi.node')).map((l) => l.split(/\\s+/).pop()))].join('\\n'));`,
    ],
    { cwd: base, env: { PATH: installedPath() } },
  );
  t.is(probe.status, 0, probe.stderr);
  const mapped = probe.stdout.trim().split('\n');
  t.is(mapped.length, 1, probe.stdout);
  t.true(mapped[0]!.startsWith(path.join(pkgDir, 'node_modules', '@koromix')), mapped[0]);
  // npm before 11 runs koffi's install script by default. Run it in the installed copy with a PATH holding only
  // node: it must find the prebuilt binary and stop, since a build from source would need cmake and a compiler.
  const koffi = path.join(pkgDir, 'node_modules', 'koffi');
  const scripts = (
    JSON.parse(fs.readFileSync(path.join(koffi, 'package.json'), 'utf8')) as { scripts: { install: string } }
  ).scripts;
  const argv = scripts.install.split(' ');
  t.is(argv[0], 'node');
  const before = fs.readdirSync(koffi).sort();
  const script = run(process.execPath, argv.slice(1), { cwd: koffi, env: { PATH: NODE_DIR, HOME: base } });
  t.is(script.status, 0, `${script.stdout}\n${script.stderr}`);
  t.notRegex(`${script.stdout}${script.stderr}`, /rebuilding from source|Running build/);
  t.deepEqual(fs.readdirSync(koffi).sort(), before, 'nothing was built beside koffi');
});

test('package › the installed MCP server answers a real SDK client over stdio', async (t) => {
  const session = await connectMcp(home, {}, base, cli);
  try {
    const hits = JSON.parse((await session.call('memory_bridge_search', { query: 'drip dawn' })).text);
    t.deepEqual(
      hits.results.map((r: { id: string }) => r.id),
      ['garden/watering.md'],
    );
    const read = JSON.parse((await session.call('memory_bridge_read', { id: 'garden/frost.md' })).text);
    t.regex(read.content, /Drain the regulators/);
  } finally {
    await session.close();
  }
});

test('package › the installed HTTP server serves a client with its bearer token', async (t) => {
  const clients = path.join(mkdirs(base, 'serve-cfg'), 'clients.json');
  const added = installed(['clients', 'add', '--clients', clients, '--name', 'laptop', '--home', home]);
  t.is(added.status, 0, added.stderr);
  const token = added.stdout.trim();
  const child = spawn('memory-bridge', ['serve', '--listen', '127.0.0.1:0', '--clients', clients], {
    cwd: base,
    env: { PATH: installedPath(), HOME: base },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d: string) => (err += d));
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  try {
    const address = /listening on (http:\/\/[^ ]+:\d+)\/mcp/;
    t.true(await waitFor(() => address.test(err) || child.exitCode !== null), err);
    const origin = address.exec(err)![1]!;
    const c = await connectHttp(`${origin}/mcp`, token);
    const hits = await callJson(c, 'memory_bridge_search', { query: 'frost' });
    t.deepEqual(
      hits.results.map((r: { id: string }) => r.id),
      ['garden/frost.md'],
    );
    await c.close();
  } finally {
    child.kill('SIGTERM');
    t.is(await exit, 0, err);
  }
});

/**
 * The command the installed shim starts its worker with (its own worker-program check, the one Hermes runs before
 * it starts a worker, loaded from the plugin directory `install` wrote): the argv, or "refused <reason>".
 */
function shimCommand(pluginDir: string, node: string, program: string): string[] | string {
  const script = [
    'import importlib.util, json, sys',
    "spec = importlib.util.spec_from_file_location('memory_bridge_shim', sys.argv[1])",
    'shim = importlib.util.module_from_spec(spec)',
    'spec.loader.exec_module(shim)',
    'try:',
    '    print(json.dumps(shim._program(sys.argv[2], sys.argv[3])))',
    'except shim._Refused as refused:',
    "    print(json.dumps('refused ' + str(refused)))",
  ].join('\n');
  const r = run('python3', ['-B', '-c', script, path.join(pluginDir, '__init__.py'), node, program], {
    cwd: base,
    env: { PATH: installedPath(), HOME: base },
  });
  if (r.status !== 0) throw new Error(`the shim check did not run: ${r.stderr}`);
  return JSON.parse(r.stdout.trim()) as string[] | string;
}

test('package › the Hermes plugin installs from the installed copy; its worker passes the trust check and answers', (t) => {
  const inst = installed(['install', '--home', home]);
  t.is(inst.status, 0, inst.stderr);
  const pluginDir = path.join(home, 'plugins', 'memory-bridge');
  const record = JSON.parse(fs.readFileSync(path.join(pluginDir, 'install.json'), 'utf8'));
  t.is(record.cli, cli);
  t.is(record.node, process.execPath);
  t.is(record.version, PKG.version);
  // doctor walks everything Node would load for the worker (dist/, node_modules/ and every node_modules above).
  const doctor = installed(['doctor', '--home', home, '--json']);
  const report = JSON.parse(doctor.stdout) as { ok: boolean; checks: { name: string; ok: boolean; reason?: string }[] };
  const plugin = report.checks.find((c) => c.name === 'plugin');
  t.like(plugin, { ok: true }, doctor.stdout);
  t.is(plugin?.reason, undefined, doctor.stdout);
  // The shim checks node and the launch gate (which judges the CLI, package.json and the trees) and starts the
  // worker through the gate.
  const command = shimCommand(pluginDir, record.node, record.cli);
  t.deepEqual(command, [record.node, path.join(pkgDir, 'dist', 'src', 'hermes', 'launch.js'), record.cli, 'worker']);
  const argv = command as string[];
  // The check holds for the installed tree: one dependency file others could write makes the worker untrusted
  // for doctor (which names it: operator output may name paths) and for the worker the shim starts (its launch
  // gate refuses before any worker code loads, with the exit status the shim reports as worker_program_untrusted).
  const loose = path.join(pkgDir, 'node_modules', 'zod', 'package.json');
  const mode = fs.statSync(loose).mode & 0o7777;
  fs.chmodSync(loose, mode | 0o020);
  try {
    const refused = installed(['doctor', '--home', home]);
    t.is(refused.status, 1, refused.stdout);
    t.true(refused.stdout.includes(`not trusted: ${loose} (group_writable`), refused.stdout);
    t.regex(refused.stdout, /worker_program_untrusted/);
    const gated = run(argv[0]!, argv.slice(1), { cwd: base, env: { PATH: installedPath(), HOME: base }, input: '' });
    t.is(gated.status, UNTRUSTED_EXIT, gated.stderr);
    t.is(gated.stdout, '');
  } finally {
    fs.chmodSync(loose, mode);
  }
  // The worker as the shim starts it: `<node> <cli> worker`, one JSON line in, one out, with Hermes's signals in
  // place of a caller record (the worker decides the caller from them: src/hermes/caller.ts).
  const hermes = { plugin_host: '', home, registered_home: home, override: null, multiplex: false, subagent: false };
  const request = {
    v: 1,
    id: 'r1',
    tool: 'memory_bridge_search',
    args: { query: 'regulators' },
    hermes: { ...hermes, cron_flag: '', platform: '', profile_name: 'default' },
  };
  const worker = run(argv[0]!, argv.slice(1), {
    cwd: base,
    env: { PATH: installedPath(), HOME: base },
    input: `${JSON.stringify(request)}\n`,
  });
  t.is(worker.status, 0, worker.stderr);
  const reply = JSON.parse(worker.stdout.trim().split('\n')[0]!);
  t.is(reply.id, 'r1');
  t.deepEqual(
    reply.result.results.map((r: { id: string }) => r.id),
    ['garden/frost.md'],
  );
});

test('package › the installed init writes a policy and prints a host configuration that runs the installed copy', (t) => {
  const fresh = path.join(base, 'init-home');
  const init = installed(['init', '--home', fresh, '--root', root, '--host', 'claude-code']);
  t.is(init.status, 0, `${init.stdout}\n${init.stderr}`);
  t.is(fs.statSync(path.join(fresh, 'plugin-data', 'memory-bridge', 'policy.json')).mode & 0o777, 0o600);
  t.true(init.stdout.includes(`${cli} mcp --home ${fresh} --run-kind interactive`), init.stdout);
  const search = installed(['search', 'frost', '--home', fresh, '--run-kind', 'interactive']);
  t.is(search.status, 0, search.stderr);
  t.deepEqual(
    JSON.parse(search.stdout).results.map((r: { id: string }) => r.id),
    ['garden/frost.md'],
  );
});
