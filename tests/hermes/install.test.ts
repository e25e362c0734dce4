import test from 'ava';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { inspectPluginDir, manifestName } from '../../src/hermes/install.js';
import { resolveHermesHome } from '../../src/hermes/home.js';
import { makeTempDir, mkdirs, removeTree } from '../helpers/fixtures.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const cli = path.join(repo, 'dist', 'src', 'cli', 'main.js');
const tmp = makeTempDir('mb-install-');
test.after.always(() => removeTree(tmp));

let n = 0;
function freshHome(): string {
  return mkdirs(tmp, `home-${n++}`);
}

function run(...args: string[]): { code: number; stdout: string; stderr: string } {
  const env = { ...process.env };
  delete env.HERMES_HOME;
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', env });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string): void => {
    for (const name of fs.readdirSync(d).sort()) {
      const p = path.join(d, name);
      const st = fs.lstatSync(p);
      const mode = (st.mode & 0o7777).toString(8);
      if (st.isDirectory()) {
        out[`${path.relative(dir, p)}/`] = mode;
        walk(p);
      } else out[path.relative(dir, p)] = `${mode} ${fs.readFileSync(p).toString('base64')} ${st.ino}`;
    }
  };
  walk(dir);
  return out;
}

test('install › a dry run prints the plan and writes nothing', (t) => {
  const home = freshHome();
  const r = run('install', '--home', home, '--dry-run');
  t.is(r.code, 0, r.stderr);
  t.regex(r.stdout, /Would create .*plugins\/memory-bridge/);
  t.regex(r.stdout, /install\.json/);
  t.regex(r.stdout, /hermes plugins enable memory-bridge/);
  t.deepEqual(fs.readdirSync(home), []);
});

test('install › writes the plugin with owner-only modes and an install record naming node and the CLI', (t) => {
  const home = freshHome();
  const r = run('install', '--home', home);
  t.is(r.code, 0, r.stderr);
  const dir = path.join(home, 'plugins', 'memory-bridge');
  t.is(fs.statSync(dir).mode & 0o777, 0o700);
  t.deepEqual(fs.readdirSync(dir).sort(), ['__init__.py', 'install.json', 'plugin.yaml', 'tools.json']);
  for (const f of fs.readdirSync(dir)) t.is(fs.statSync(path.join(dir, f)).mode & 0o777, 0o600, f);
  t.deepEqual(
    fs.readFileSync(path.join(dir, '__init__.py')),
    fs.readFileSync(path.join(repo, 'plugin', '__init__.py')),
  );
  const record = JSON.parse(fs.readFileSync(path.join(dir, 'install.json'), 'utf8'));
  t.is(record.marker, 'memory-bridge-plugin');
  t.is(record.node, process.execPath);
  t.is(record.cli, cli);
  t.is(record.version, JSON.parse(fs.readFileSync(path.join(repo, 'package.json'), 'utf8')).version);
  t.regex(r.stdout, /policy\.example\.json/);
  t.regex(r.stdout, /chmod 600/);
  t.is(inspectPluginDir(dir).kind, 'ours');
});

test('install › does not suggest copying the example over an existing policy', (t) => {
  const home = freshHome();
  const dataDir = mkdirs(home, 'plugin-data/memory-bridge');
  fs.writeFileSync(path.join(dataDir, 'policy.json'), '{}');
  const r = run('install', '--home', home, '--dry-run');
  t.is(r.code, 0, r.stderr);
  t.regex(r.stdout, /already exists/);
  t.notRegex(r.stdout, /policy\.example\.json/);
});

test('install › reinstalling the same version changes nothing', (t) => {
  const home = freshHome();
  t.is(run('install', '--home', home).code, 0);
  const before = snapshot(home);
  const again = run('install', '--home', home);
  t.is(again.code, 0, again.stderr);
  t.regex(again.stdout, /already this install/);
  t.deepEqual(snapshot(home), before);
});

test('install › replaces an unmodified older install of ours without --force', (t) => {
  const home = freshHome();
  t.is(run('install', '--home', home).code, 0);
  const record = path.join(home, 'plugins', 'memory-bridge', 'install.json');
  const old = JSON.parse(fs.readFileSync(record, 'utf8'));
  old.version = '0.0.1';
  fs.writeFileSync(record, JSON.stringify(old));
  const r = run('install', '--home', home);
  t.is(r.code, 0, r.stderr);
  t.regex(r.stdout, /Replacing/);
  t.not(JSON.parse(fs.readFileSync(record, 'utf8')).version, '0.0.1');
});

test('install › our install with local changes needs --force', (t) => {
  const home = freshHome();
  t.is(run('install', '--home', home).code, 0);
  const shim = path.join(home, 'plugins', 'memory-bridge', '__init__.py');
  fs.appendFileSync(shim, '\n# local edit\n');
  const refused = run('install', '--home', home);
  t.is(refused.code, 1);
  t.regex(refused.stderr, /modified_plugin/);
  t.regex(fs.readFileSync(shim, 'utf8'), /local edit/);
  const forced = run('install', '--home', home, '--force');
  t.is(forced.code, 0, forced.stderr);
  t.notRegex(fs.readFileSync(shim, 'utf8'), /local edit/);
});

test('install › a different plugin named memory-bridge is left untouched, even with --force', (t) => {
  const home = freshHome();
  const dir = mkdirs(home, 'plugins/memory-bridge');
  fs.writeFileSync(path.join(dir, 'plugin.yaml'), 'name: someone-else\nversion: 9.9.9\n');
  fs.writeFileSync(path.join(dir, '__init__.py'), 'def register(ctx):\n    pass\n');
  const before = snapshot(home);
  for (const flags of [[], ['--force'], ['--dry-run']]) {
    const r = run('install', '--home', home, ...flags);
    t.is(r.code, 1, flags.join(' '));
    t.regex(r.stderr, /foreign_plugin/);
  }
  t.deepEqual(snapshot(home), before);
});

test('install › a look-alike without our install record is foreign', (t) => {
  const home = freshHome();
  const dir = mkdirs(home, 'plugins/memory-bridge');
  fs.copyFileSync(path.join(repo, 'plugin', 'plugin.yaml'), path.join(dir, 'plugin.yaml'));
  const before = snapshot(home);
  t.is(run('install', '--home', home, '--force').code, 1);
  t.is(run('uninstall', '--home', home).code, 1);
  t.deepEqual(snapshot(home), before);
});

test('install › a catalog copy of exactly our plugin files (no install record) becomes a full install', (t) => {
  // What `hermes plugins install memory-bridge` leaves: the plugin directory of this repository, no install.json.
  const home = freshHome();
  const dir = mkdirs(home, 'plugins/memory-bridge');
  for (const name of ['plugin.yaml', '__init__.py', 'tools.json'])
    fs.copyFileSync(path.join(repo, 'plugin', name), path.join(dir, name));
  const r = run('install', '--home', home);
  t.is(r.code, 0, r.stderr);
  t.deepEqual(fs.readdirSync(dir).sort(), ['__init__.py', 'install.json', 'plugin.yaml', 'tools.json']);
  t.is(JSON.parse(fs.readFileSync(path.join(dir, 'install.json'), 'utf8')).marker, 'memory-bridge-plugin');
  t.is(run('install', '--home', home).code, 0, 'and again: unchanged');
});

test('install › a catalog copy with other entries needs --force; one with an edited file is foreign', (t) => {
  const home = freshHome();
  const dir = mkdirs(home, 'plugins/memory-bridge');
  for (const name of ['plugin.yaml', '__init__.py', 'tools.json'])
    fs.copyFileSync(path.join(repo, 'plugin', name), path.join(dir, name));
  fs.writeFileSync(path.join(dir, 'notes.txt'), 'kept until forced\n');
  const refused = run('install', '--home', home);
  t.is(refused.code, 1);
  t.regex(refused.stderr, /modified_plugin|notes\.txt/);
  t.true(fs.existsSync(path.join(dir, 'notes.txt')));
  t.is(run('install', '--home', home, '--force').code, 0);
  t.false(fs.existsSync(path.join(dir, 'notes.txt')));

  const other = freshHome();
  const edited = mkdirs(other, 'plugins/memory-bridge');
  fs.copyFileSync(path.join(repo, 'plugin', 'plugin.yaml'), path.join(edited, 'plugin.yaml'));
  fs.writeFileSync(
    path.join(edited, '__init__.py'),
    `${fs.readFileSync(path.join(repo, 'plugin', '__init__.py'), 'utf8')}# edit\n`,
  );
  const before = snapshot(other);
  for (const flags of [[], ['--force']]) {
    const r = run('install', '--home', other, ...flags);
    t.is(r.code, 1, flags.join(' '));
    t.regex(r.stderr, /foreign_plugin/);
  }
  t.deepEqual(snapshot(other), before);
});

test('install › a symbolic link in place of the plugin directory is foreign', (t) => {
  const home = freshHome();
  const elsewhere = mkdirs(home, 'elsewhere');
  mkdirs(home, 'plugins');
  fs.symlinkSync(elsewhere, path.join(home, 'plugins', 'memory-bridge'));
  t.is(run('install', '--home', home, '--force').code, 1);
  t.deepEqual(fs.readdirSync(elsewhere), []);
});

test('install › a symbolically linked plugins directory is refused and nothing is written through it', (t) => {
  const home = freshHome();
  const elsewhere = mkdirs(tmp, `elsewhere-${n++}`);
  fs.symlinkSync(elsewhere, path.join(home, 'plugins'));
  for (const flags of [[], ['--force'], ['--dry-run']]) {
    const r = run('install', '--home', home, ...flags);
    t.is(r.code, 1, flags.join(' '));
    t.regex(r.stderr, /unsafe_path/);
    t.regex(r.stderr, /symbolic link/);
  }
  t.deepEqual(fs.readdirSync(elsewhere), []);
});

test('uninstall › a symbolically linked plugins directory is refused', (t) => {
  const home = freshHome();
  const elsewhere = mkdirs(tmp, `elsewhere-${n++}`);
  t.is(run('install', '--home', elsewhere).code, 0);
  fs.renameSync(path.join(elsewhere, 'plugins'), path.join(elsewhere, 'real-plugins'));
  fs.symlinkSync(path.join(elsewhere, 'real-plugins'), path.join(home, 'plugins'));
  const r = run('uninstall', '--home', home);
  t.is(r.code, 1);
  t.regex(r.stderr, /unsafe_path/);
  t.true(fs.existsSync(path.join(elsewhere, 'real-plugins', 'memory-bridge', 'install.json')));
});

test('install › a group- or world-writable home is installed with a warning', (t) => {
  const home = freshHome();
  fs.chmodSync(home, 0o777);
  const r = run('install', '--home', home);
  t.is(r.code, 0, r.stderr);
  t.regex(r.stderr, /warning: .*writable by group or others/);
  fs.chmodSync(home, 0o700);
  const quiet = run('install', '--home', freshHome());
  t.notRegex(quiet.stderr, /warning/);
});

test('install › a foreign plugin is described in plain words', (t) => {
  const home = freshHome();
  const dir = mkdirs(home, 'plugins/memory-bridge');
  fs.writeFileSync(path.join(dir, 'plugin.yaml'), 'name: someone-else\n');
  const r = run('install', '--home', home);
  t.regex(r.stderr, /it has a plugin\.yaml naming "someone-else"/);
  t.notRegex(r.stderr, /it its/);
});

test('install › a missing home is refused rather than created', (t) => {
  const home = path.join(tmp, 'does-not-exist');
  const r = run('install', '--home', home);
  t.is(r.code, 1);
  t.regex(r.stderr, /no_home/);
  t.false(fs.existsSync(home));
});

test('install › --timeout records the per-call timeout for the shim, within bounds', (t) => {
  const home = freshHome();
  t.is(run('install', '--home', home, '--timeout', '45').code, 0);
  const recordPath = path.join(home, 'plugins', 'memory-bridge', 'install.json');
  t.is(JSON.parse(fs.readFileSync(recordPath, 'utf8')).timeout_seconds, 45);
  t.regex(run('install', '--home', home, '--timeout', '45').stdout, /already this install/);
  t.is(inspectPluginDir(path.join(home, 'plugins', 'memory-bridge')).kind, 'ours');
  for (const bad of ['0', '0.1', '601', 'soon', 'NaN']) {
    const r = run('install', '--home', freshHome(), '--timeout', bad);
    t.is(r.code, 2, bad);
    t.regex(r.stderr, /timeout/, bad);
  }
  t.false(
    'timeout_seconds' in
      JSON.parse(
        fs.readFileSync(
          path.join(
            (() => {
              const h = freshHome();
              run('install', '--home', h);
              return h;
            })(),
            'plugins',
            'memory-bridge',
            'install.json',
          ),
          'utf8',
        ),
      ),
  );
});

test('install › unknown flags are usage errors', (t) => {
  t.is(run('install', '--frobnicate').code, 2);
  t.is(run('uninstall', 'extra').code, 2);
});

test('uninstall › removes only our own install and keeps the policy', (t) => {
  const home = freshHome();
  t.is(run('install', '--home', home).code, 0);
  const policyDir = mkdirs(home, 'plugin-data/memory-bridge');
  fs.writeFileSync(path.join(policyDir, 'policy.json'), '{}');
  mkdirs(home, 'plugins/memory-bridge/__pycache__');
  const r = run('uninstall', '--home', home);
  t.is(r.code, 0, r.stderr);
  t.false(fs.existsSync(path.join(home, 'plugins', 'memory-bridge')));
  t.deepEqual(fs.readdirSync(path.join(home, 'plugins')), []);
  t.true(fs.existsSync(path.join(policyDir, 'policy.json')));
  const again = run('uninstall', '--home', home);
  t.is(again.code, 0);
  t.regex(again.stdout, /nothing to remove/);
});

test('uninstall › a different plugin named memory-bridge is left untouched', (t) => {
  const home = freshHome();
  const dir = mkdirs(home, 'plugins/memory-bridge');
  fs.writeFileSync(path.join(dir, 'plugin.yaml'), 'name: other\n');
  const r = run('uninstall', '--home', home);
  t.is(r.code, 1);
  t.regex(r.stderr, /foreign_plugin/);
  t.true(fs.existsSync(path.join(dir, 'plugin.yaml')));
});

test('home › --home wins, then HERMES_HOME, then ~/.hermes with the data-dir suffix', (t) => {
  t.is(resolveHermesHome('/x/y', { HERMES_HOME: '/a' }, '/u').home, '/x/y');
  t.deepEqual(resolveHermesHome(undefined, { HERMES_HOME: '/a/b' }, '/u'), {
    home: '/a/b',
    source: 'HERMES_HOME',
    notes: [],
  });
  t.is(resolveHermesHome(undefined, {}, '/u').home, '/u/.hermes');
  t.is(resolveHermesHome(undefined, { HERMES_HOME: '  ' }, '/u').home, '/u/.hermes');
  t.is(resolveHermesHome(undefined, { HERMES_DATA_DIR_SUFFIX: '-dev' }, '/u').home, '/u/.hermes-dev');
  t.is(resolveHermesHome(undefined, { HERMES_DATA_DIR_SUFFIX: '/../etc' }, '/u').home, '/u/.hermes');
  t.is(resolveHermesHome(undefined, { HERMES_HOME: 'rel' }, '/u').notes.length, 1);
});

test('home › a sticky active profile is pointed out when HERMES_HOME is unset', (t) => {
  const user = freshHome();
  const hermes = mkdirs(user, '.hermes');
  fs.writeFileSync(path.join(hermes, 'active_profile'), 'work\n');
  const r = resolveHermesHome(undefined, {}, user);
  t.is(r.home, hermes);
  t.regex(r.notes.join(' '), /profiles\/work/);
});

test('install › the manifest name reader handles quotes and comments', (t) => {
  t.is(manifestName('name: memory-bridge\n'), 'memory-bridge');
  t.is(manifestName('# c\nname: "memory-bridge"  # ours\n'), 'memory-bridge');
  t.is(manifestName("name: 'x'\n"), 'x');
  t.is(manifestName('version: 1\n'), undefined);
});

test('install › the next steps paste into a shell as printed when the home holds spaces, quotes and a $', (t) => {
  const home = mkdirs(tmp, `home with 'quote" $HOME-${n++}`);
  const r = run('install', '--home', home);
  t.is(r.code, 0, r.stderr);
  const step = (re: RegExp): string => {
    const line = r.stdout.split('\n').find((l) => re.test(l));
    if (line === undefined) throw new Error(`no step matching ${re} in:\n${r.stdout}`);
    return line.replace(re, '');
  };
  // Step 1 (no policy yet): the two commands create the policy where the plugin reads it.
  const mkdir = step(/^\s+(?=mkdir -p )/);
  const cp = step(/^\s+(?=cp )/);
  const sh = spawnSync('sh', ['-c', `${mkdir} && ${cp}`], { encoding: 'utf8' });
  t.is(sh.status, 0, sh.stderr);
  const policy = path.join(home, 'plugin-data', 'memory-bridge', 'policy.json');
  t.is(fs.statSync(policy).mode & 0o777, 0o600);
  t.is(fs.statSync(path.dirname(policy)).mode & 0o777, 0o700);
  // Steps 2 and 4 name the same home as one shell word each.
  const enable = step(/^\s+2\. Enable the plugin for this profile:\s+/);
  const echoed = spawnSync(
    'sh',
    ['-c', enable.replace(/ hermes plugins enable memory-bridge$/, ' printenv HERMES_HOME')],
    {
      encoding: 'utf8',
    },
  );
  t.is(echoed.stdout, `${home}\n`);
  const doctor = step(/^\s+4\. Check the setup:\s+memory-bridge /);
  const argv = spawnSync('sh', ['-c', `printf '%s\\n' ${doctor}`], { encoding: 'utf8' });
  t.deepEqual(argv.stdout.split('\n').slice(0, -1), ['doctor', '--home', home]);
});
