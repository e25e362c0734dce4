import test from 'ava';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ACL_TAG,
  FOREIGN_GID,
  addAclEntry,
  FOREIGN_UID,
  aclBytes,
  isRoot,
  setXattr,
  makeHome,
  makeTempDir,
  mkdirs,
  removeTree,
  writeNote,
  type ParsedJson,
} from '../helpers/fixtures.js';

import { getNative } from '../../native/index.js';
import { describeCut } from '../../src/hermes/doctor.js';
import { remedyOf } from '../../src/remedies.js';
import { parsePolicyBytes } from '../../src/policy/load.js';
import { scanLimitsOf } from '../../src/policy/scan-limits.js';
import { scanTree } from '../../src/trust/scan.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const cli = path.join(repo, 'dist', 'src', 'cli', 'main.js');
const tmp = makeTempDir('mb-doctor-');
test.after.always(() => removeTree(tmp));
const rootTest = isRoot ? test : test.skip;

let n = 0;
/** A fresh profile home and notes root with a garden note and a private note. */
function setup(policy: Record<string, unknown> = {}): { home: string; root: string; dir: string } {
  const dir = mkdirs(tmp, `case-${n++}`);
  const root = mkdirs(dir, 'notes');
  writeNote(root, 'projects/garden.md', '# Lantern Garden\n\nwatered on Fridays\n');
  writeNote(root, 'projects/private/salary.md', '# Salary\n');
  const { home } = makeHome(dir, { version: 1, root, allow: ['projects/**'], deny: ['**/private/**'], ...policy });
  return { home, root, dir };
}

function run(...args: string[]): { code: number; stdout: string; stderr: string; json: ParsedJson } {
  return runWith({}, ...args);
}

/** `run` with `extra` added to the environment. */
function runWith(
  extra: NodeJS.ProcessEnv,
  ...args: string[]
): { code: number; stdout: string; stderr: string; json: ParsedJson } {
  const env = { ...process.env, ...extra };
  delete env.HERMES_HOME;
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', env });
  let json: unknown;
  try {
    json = JSON.parse(r.stdout);
  } catch {
    json = undefined;
    if (args.includes('--json'))
      throw new Error(`no JSON from ${args.join(' ')}: status ${r.status} ${String(r.signal)} ${r.stderr} ${r.stdout}`);
  }
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr, json };
}

function check(report: ParsedJson, name: string): ParsedJson {
  return report.checks.find((c: ParsedJson) => c.name === name);
}

function snapshot(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const name of fs.readdirSync(d).sort()) {
      const p = path.join(d, name);
      const st = fs.lstatSync(p);
      out.push(`${path.relative(dir, p)} ${st.mode} ${st.size} ${st.mtimeMs} ${st.ctimeMs}`);
      if (st.isDirectory()) walk(p);
    }
  };
  walk(dir);
  return out;
}

test('status › shows the effective configuration with defaults marked', (t) => {
  const { home, root } = setup({ allow_cron: true, limits: { max_results: 7 } });
  const r = run('status', '--home', home, '--json');
  t.is(r.code, 0, r.stderr);
  t.is(r.json.home, home);
  t.is(r.json.policyPath, path.join(home, 'plugin-data', 'memory-bridge', 'policy.json'));
  t.true(r.json.policy.loads);
  t.is(r.json.policy.root, root);
  t.is(r.json.policy.names, 'unicode');
  t.deepEqual(r.json.runKinds, { interactive: true, cron: true, subagent: false, cronSubagentOrUnknown: false });
  const limits = Object.fromEntries(r.json.policy.limits.map((l: ParsedJson) => [l.key, l]));
  t.deepEqual([limits.max_results.value, limits.max_results.isDefault], [7, false]);
  t.deepEqual([limits.snippet_chars.value, limits.snippet_chars.isDefault], [300, true]);
  t.is(r.json.plugin.state, 'absent');
  const text = run('status', '--home', home);
  t.regex(text.stdout, /cron\s+allowed \(allow_cron: true\)/);
  t.regex(text.stdout, /subagent\s+refused \(allow_subagents: false\)/);
  t.regex(text.stdout, /max_results\s+7 results\s+\(set; default 10, ceiling 10\)/);
});

test('status and doctor › say when MCP-mode calls would be refused, and stay quiet when both opt-ins are set', (t) => {
  const { home } = setup({ allow_cron: true });
  for (const args of [
    ['status', '--home', home],
    ['doctor', '--home', home],
  ]) {
    const r = run(...args);
    t.regex(r.stdout, /MCP hosts need --run-kind interactive or both opt-ins/, args[0]);
  }
  const both = setup({ allow_cron: true, allow_subagents: true });
  for (const args of [
    ['status', '--home', both.home],
    ['doctor', '--home', both.home],
  ]) {
    t.notRegex(run(...args).stdout, /MCP hosts need/, args[0]);
  }
});

test('status › has no side effects and does not probe the root', (t) => {
  const { home, root, dir } = setup();
  fs.chmodSync(root, 0o777); // an untrusted root: doctor fails, status does not look
  const before = snapshot(dir);
  const r = run('status', '--home', home);
  t.is(r.code, 0, r.stderr);
  t.deepEqual(snapshot(dir), before);
  t.is(run('doctor', '--home', home).code, 1);
});

test('status › a broken policy exits 1 and says why', (t) => {
  const { home } = setup();
  fs.writeFileSync(
    path.join(home, 'plugin-data', 'memory-bridge', 'policy.json'),
    '{"version": 1, "root": "/x", "allow": ["a"], "bogus": 1}',
  );
  const r = run('status', '--home', home, '--json');
  t.is(r.code, 1);
  t.false(r.json.policy.loads);
  t.is(r.json.policy.reason, 'policy_invalid');
  t.regex(r.json.policy.detail, /bogus/);
  // The text says what to do, from the same table as doctor.
  const text = run('status', '--home', home);
  t.true(text.stdout.includes(`  → ${remedyOf('policy_invalid')}`), text.stdout);
});

test('doctor › a healthy profile passes and --json has exactly the documented shape', (t) => {
  const { home } = setup();
  const r = run('doctor', '--home', home, '--json');
  t.is(r.code, 0, r.stdout);
  t.deepEqual(Object.keys(r.json).sort(), ['checks', 'counts', 'ok', 'persistedIndex', 'skipped']);
  t.deepEqual(Object.keys(r.json.persistedIndex).sort(), [
    'age',
    'ageMs',
    'builtAt',
    'bytes',
    'detail',
    'dryLoad',
    'dryLoadSkipped',
    'enabled',
    'entries',
    'file',
    'reason',
    'refresh',
    'remedy',
    'state',
  ]);
  t.true(r.json.ok);
  for (const c of r.json.checks) {
    t.true(
      Object.keys(c).every((k) => ['name', 'ok', 'reason', 'remedy'].includes(k)),
      JSON.stringify(c),
    );
    t.is(typeof c.name, 'string');
    t.is(typeof c.ok, 'boolean');
  }
  t.deepEqual(
    r.json.checks.map((c: ParsedJson) => c.name),
    ['platform', 'home', 'plugin', 'policy', 'root', 'tree', 'index'],
  );
  t.deepEqual(r.json.counts, { denied: 1 });
});

test('doctor › says whether warm searches use change notification, and MEMORY_BRIDGE_WATCH=0 turns it off', (t) => {
  const { home } = setup();
  const on = run('doctor', '--home', home);
  t.is(on.code, 0, on.stdout);
  if (process.platform === 'linux')
    t.regex(on.stdout, /change notification: on \(inotify, one watch per note, at most \d+/);
  else t.regex(on.stdout, /change notification: off \(no inotify on this platform\)/);
  const off = runWith({ MEMORY_BRIDGE_WATCH: '0' }, 'doctor', '--home', home);
  t.regex(off.stdout, /change notification: off \(MEMORY_BRIDGE_WATCH=0\): every note is statted on every search/);
});

test('doctor › counts skipped files by reason with a remedy for each', (t) => {
  const { home, root } = setup({ names: 'portable' });
  writeNote(root, 'projects/open.md', '# open\n', 0o666);
  writeNote(root, 'projects/.hidden.md', '# hidden\n');
  writeNote(root, 'projects/Bad Name.md', '# bad\n');
  writeNote(root, 'projects/notes.txt', 'text\n');
  fs.symlinkSync('garden.md', path.join(root, 'projects', 'link.md'));
  fs.linkSync(path.join(root, 'projects', 'garden.md'), path.join(root, 'garden-again.md'));
  // A named user may write it although the mask and the mode bits (0640) say nobody but the owner can.
  const acl = writeNote(root, 'projects/acl.md', '# acl\n', 0o640);
  setXattr(
    acl,
    'system.posix_acl_access',
    aclBytes([
      { tag: ACL_TAG.USER_OBJ, perm: 6 },
      { tag: ACL_TAG.USER, perm: 6, id: 4242 },
      { tag: ACL_TAG.GROUP_OBJ, perm: 4 },
      { tag: ACL_TAG.MASK, perm: 4 },
      { tag: ACL_TAG.OTHER, perm: 0 },
    ]),
  );
  const r = run('doctor', '--home', home, '--json');
  t.is(r.code, 0, r.stdout);
  t.deepEqual(
    r.json.counts,
    {
      acl_write: 1,
      bad_name: 1,
      denied: 2,
      hard_link: 1,
      hidden: 1,
      not_markdown: 1,
      group_writable: 1,
      symlink: 1,
    },
    JSON.stringify(r.json.counts),
  );
  const text = run('doctor', '--home', home);
  for (const reason of Object.keys(r.json.counts)) t.regex(text.stdout, new RegExp(`skipped \\d+ × ${reason}: \\S`));
});

test('doctor › names the first skipped paths of each reason, shown safely, and the --list command for the rest', (t) => {
  const { home, root } = setup({ names: 'portable' });
  const bad = ['projects/a b.md', 'projects/c d.md', 'projects/e\u202Ef.md', 'projects/g h.md', 'projects/i j.md'];
  for (const id of bad) writeNote(root, id, '# bad\n');
  writeNote(root, 'projects/.hidden.md', '# hidden\n');
  const j = run('doctor', '--home', home, '--json');
  t.is(j.code, 0, j.stdout);
  t.is(j.json.counts.bad_name, 5);
  // Scan order is byte order: the first three of the five.
  t.deepEqual(j.json.skipped.bad_name, bad.slice(0, 3));
  t.deepEqual(j.json.skipped.hidden, ['projects/.hidden.md']);
  t.deepEqual(j.json.skipped.denied, ['projects/private']);
  const text = run('doctor', '--home', home).stdout;
  // The bidi override is shown escaped, never raw.
  t.true(text.includes('e.g. projects/a b.md, projects/c d.md, "projects/e\\u{202e}f.md"'), text);
  t.false(text.includes('\u202E'));
  const listLine = `all 5: memory-bridge doctor --home ${home} --list bad_name`;
  t.true(text.includes(listLine), text);
  // Only one hidden note: it is named, and there is no "all" line for it.
  t.true(text.includes('e.g. projects/.hidden.md'));
  t.false(text.includes('--list hidden'));
  // The command doctor printed lists all five.
  const listed = run('doctor', '--home', home, '--list', 'bad_name', '--json');
  t.is(listed.code, 0, listed.stderr);
  t.deepEqual(listed.json.paths, bad);
  const plain = run('doctor', '--home', home, '--list', 'bad_name');
  t.deepEqual(plain.stdout.trimEnd().split('\n'), [
    'projects/a b.md',
    'projects/c d.md',
    '"projects/e\\u{202e}f.md"',
    'projects/g h.md',
    'projects/i j.md',
  ]);
});

test('doctor › under the default names rule the bad_name remedy says what to remove, not to set the rule in force', (t) => {
  const { home, root } = setup();
  writeNote(root, 'projects/e\u202Ef.md', '# bidi\n');
  const text = run('doctor', '--home', home).stdout;
  const line = text.split('\n').find((l) => l.includes('× bad_name:'));
  t.truthy(line, text);
  t.regex(
    line ?? '',
    /under "unicode" \(the default\) rename it so it holds no control, line separator, bidi or invisible/,
  );
});

test('doctor › --list too_deep names the notes a depth cut left out, and other listings say the cut was the depth', (t) => {
  const { home, root } = setup({ limits: { max_depth: 3 } });
  writeNote(root, 'projects/a/b/deep.md', '# deep\n');
  writeNote(root, 'projects/a/b/c/deeper.md', '# deeper\n');
  writeNote(root, 'projects/a/b/private/salary.md', '# denied stays out\n');
  fs.symlinkSync('garden.md', path.join(root, 'projects', 'link.md'));
  const text = run('doctor', '--home', home).stdout;
  t.regex(text, /the scan was cut by max_depth: 2 of 3 visible notes were left out/);
  const listLine = `the notes left out: memory-bridge doctor --home ${home} --list too_deep`;
  t.true(text.includes(listLine), text);
  const listed = run('doctor', '--home', home, '--list', 'too_deep', '--json');
  t.is(listed.code, 0, listed.stderr);
  t.deepEqual(listed.json.paths, ['projects/a/b/deep.md', 'projects/a/b/c/deeper.md']);
  const other = run('doctor', '--home', home, '--list', 'symlink');
  t.is(other.stdout, 'projects/link.md\n');
  t.regex(
    other.stderr,
    /notes lie below limits\.max_depth: memory-bridge doctor --home \S+ --list too_deep names them/,
  );
  t.notRegex(other.stderr, /budget/);
});

test('doctor › a note below the 16-segment id limit is counted, named and listed as too_deep, whatever max_depth', (t) => {
  const deep = `projects/${Array.from({ length: 15 }, (_, i) => `d${i}`).join('/')}/kestrel.md`;
  for (const limits of [{ max_depth: 16 }, {}]) {
    const { home, root } = setup({ limits });
    writeNote(root, deep, '# Kestrel\n\nkestrel\n');
    const text = run('doctor', '--home', home).stdout;
    t.regex(text, /the scan was cut by max_depth: 1 of 2 visible notes were left out/, text);
    t.true(text.includes(`e.g. ${deep}`), text);
    t.regex(text, /move the notes below 16 segments up/);
    const listed = run('doctor', '--home', home, '--list', 'too_deep', '--json');
    t.is(listed.code, 0, listed.stderr);
    t.deepEqual(listed.json.paths, [deep]);
  }
});

test('doctor › --list accepts every reason code doctor can count, open_for_write among them', (t) => {
  const { home } = setup();
  for (const reason of ['open_for_write', 'too_deep', 'resource_exhausted', 'entry_ceiling']) {
    const r = run('doctor', '--home', home, '--list', reason, '--json');
    t.is(r.code, 0, `${reason}: ${r.stderr}`);
    t.deepEqual(r.json.paths, [], reason);
  }
  const unknown = run('doctor', '--home', home, '--list', 'no_such_reason');
  t.is(unknown.code, 2);
});

test('doctor › a cut scan is a warning that counts the visible notes left out and names the limit', (t) => {
  const { home, root } = setup({ limits: { max_entries: 2 } });
  for (let i = 0; i < 5; i++) writeNote(root, `projects/n${i}.md`, `# N${i}\n`);
  // Hidden, untrusted and denied notes are never counted as left out.
  writeNote(root, 'projects/open.md', '# open\n', 0o666);
  writeNote(root, 'projects/private/more.md', '# more\n');
  const r = run('doctor', '--home', home, '--json');
  t.is(r.code, 0, r.stdout);
  const tree = check(r.json, 'tree');
  t.is(tree.reason, 'incomplete');
  t.regex(tree.remedy, /raise limits\.max_entries to at least 6 \(now 2, ceiling 500000\)/);
  const text = run('doctor', '--home', home);
  t.regex(text.stdout, /cut by max_entries: 4 of 6 visible notes were left out/);
});

test('doctor › never advises raising a limit already at its ceiling', (t) => {
  const small = setup({ limits: { max_depth: 1 } });
  writeNote(small.root, 'projects/deep/x.md', '# X\n');
  const cut = run('doctor', '--home', small.home, '--json');
  t.is(check(cut.json, 'tree').reason, 'incomplete');
  t.regex(check(cut.json, 'tree').remedy, /raise limits\.max_depth to at least 3 \(now 1, ceiling 16\)/);
  // A note over max_file_bytes at its ceiling: split it, never "raise max_file_bytes".
  const big = setup({ limits: { max_file_bytes: 1_048_576 } });
  writeNote(big.root, 'projects/huge.md', `# Huge\n${'x'.repeat(1_048_577)}`);
  const huge = run('doctor', '--home', big.home);
  t.regex(huge.stdout, /skipped 1 × too_large: max_file_bytes is already at its ceiling \(1048576\): split the note/);
  const explained = run('doctor', '--home', big.home, '--explain', 'projects/huge.md', '--json');
  t.notRegex(JSON.stringify(explained.json), /raise/);
  // A vault past the entry and byte ceilings is too big to build here, so the policy at its ceilings judges the
  // counts of a scan cut lower (the same tree, the same second scan): the advice must not be to raise them.
  for (const [key, limit] of [
    ['max_entries', { maxEntries: 1 }],
    ['max_total_bytes', { maxTotalBytes: 1 }],
  ] as const) {
    const { root } = setup();
    writeNote(root, 'projects/b.md', '# B\n');
    const policy = parsePolicyBytes(
      Buffer.from(
        JSON.stringify({
          version: 1,
          root,
          allow: ['projects/**'],
          limits: { max_entries: 500_000, max_total_bytes: 4 * 1024 ** 3 },
        }),
      ),
    );
    const fd = fs.openSync(root, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
    try {
      const scan = scanTree(fd, policy, { ...scanLimitsOf(policy), ...limit }, { has: () => false });
      t.is(scan.cut, key);
      const { line, remedy } = describeCut(fd, policy, scan, getNative()!);
      t.regex(line, new RegExp(`cut by ${key}: \\d+ of \\d+ visible notes were left out`));
      t.notRegex(remedy, /raise/, remedy);
      t.regex(remedy, new RegExp(`${key} is already at its ceiling`));
    } finally {
      fs.closeSync(fd);
    }
  }
});

rootTest('doctor › counts a note owned by someone else (needs root)', (t) => {
  const { home, root } = setup();
  const foreign = writeNote(root, 'projects/foreign.md', '# foreign\n');
  fs.chownSync(foreign, FOREIGN_UID, FOREIGN_GID);
  const r = run('doctor', '--home', home, '--json');
  t.is(r.json.counts.untrusted_owner, 1);
});

test('doctor › a broken policy exits 1 with the parse problem spelled out', (t) => {
  const { home } = setup();
  fs.writeFileSync(path.join(home, 'plugin-data', 'memory-bridge', 'policy.json'), '{"version": 1,\n "allow": []');
  const r = run('doctor', '--home', home);
  t.is(r.code, 1);
  t.regex(r.stdout, /\[FAIL\] policy: policy_invalid/);
  t.regex(r.stdout, /problem: not strict JSON/);
  const j = run('doctor', '--home', home, '--json');
  t.false(j.json.ok);
  t.is(check(j.json, 'policy').reason, 'policy_invalid');
  t.truthy(check(j.json, 'policy').remedy);
});

test('doctor › a missing policy exits 1', (t) => {
  const { home } = setup();
  fs.rmSync(path.join(home, 'plugin-data', 'memory-bridge', 'policy.json'));
  const j = run('doctor', '--home', home, '--json');
  t.is(j.code, 1);
  t.is(check(j.json, 'policy').reason, 'policy_missing');
});

test('doctor › a policy below a writable directory is untrusted and the directory is named', (t) => {
  const { home } = setup();
  fs.chmodSync(path.join(home, 'plugin-data'), 0o770);
  const r = run('doctor', '--home', home);
  t.is(r.code, 1);
  t.regex(r.stdout, /policy_untrusted/);
  t.regex(
    r.stdout,
    new RegExp(
      `first failing directory: ${path.join(home, 'plugin-data').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(group_writable`,
    ),
  );
});

test('doctor › a policy file others can write is untrusted and the file is named as the problem', (t) => {
  const { home } = setup();
  fs.chmodSync(path.join(home, 'plugin-data', 'memory-bridge', 'policy.json'), 0o602);
  const r = run('doctor', '--home', home);
  t.is(r.code, 1);
  t.regex(r.stdout, /\[FAIL\] policy: policy_untrusted/);
  t.regex(r.stdout, /the file itself: world_writable/);
});

test('doctor › an untrusted root exits 1', (t) => {
  const { home, root } = setup();
  fs.chmodSync(root, 0o757);
  const j = run('doctor', '--home', home, '--json');
  t.is(j.code, 1);
  t.is(check(j.json, 'root').reason, 'world_writable');
  t.is(check(j.json, 'tree'), undefined);
});

test('doctor › an installed shim whose recorded node is gone fails the plugin check', (t) => {
  const { home } = setup();
  t.is(run('install', '--home', home).code, 0);
  t.true(run('doctor', '--home', home, '--json').json.ok);
  const record = path.join(home, 'plugins', 'memory-bridge', 'install.json');
  const data = JSON.parse(fs.readFileSync(record, 'utf8'));
  data.node = path.join(tmp, 'no-such-node');
  fs.writeFileSync(record, JSON.stringify(data));
  const j = run('doctor', '--home', home, '--json');
  t.is(j.code, 1);
  t.like(check(j.json, 'plugin'), { ok: false, reason: 'worker_paths_missing' });
});

/** An installed shim whose record points at a private copy of a package tree (so its modes can be changed). */
function fakePackage(): { home: string; pkg: string; cliFile: string } {
  const { home, dir } = setup();
  t_install(home);
  const pkg = mkdirs(dir, 'pkg');
  const cliDir = mkdirs(pkg, 'dist/src/cli');
  mkdirs(pkg, 'node_modules/zod');
  const cliFile = path.join(cliDir, 'main.js');
  fs.writeFileSync(cliFile, '// stand-in CLI\n', { mode: 0o644 });
  fs.writeFileSync(path.join(mkdirs(pkg, 'dist/src/tools'), 'read.js'), '// stand-in module\n', { mode: 0o644 });
  fs.writeFileSync(path.join(pkg, 'node_modules/zod/index.js'), '// stand-in dependency\n', { mode: 0o644 });
  fs.writeFileSync(path.join(pkg, 'package.json'), '{"type": "module"}\n', { mode: 0o644 });
  const record = path.join(home, 'plugins', 'memory-bridge', 'install.json');
  const data = JSON.parse(fs.readFileSync(record, 'utf8'));
  data.cli = cliFile;
  fs.writeFileSync(record, JSON.stringify(data), { mode: 0o600 });
  return { home, pkg, cliFile };
}

function t_install(home: string): void {
  const r = run('install', '--home', home);
  if (r.code !== 0) throw new Error(r.stderr);
}

test('doctor › the worker program trust check passes for a private package tree', (t) => {
  const { home } = fakePackage();
  const r = run('doctor', '--home', home, '--json');
  t.like(check(r.json, 'plugin'), { ok: true }, JSON.stringify(r.json));
  t.is(check(r.json, 'plugin').reason, undefined);
});

test('doctor › a CLI directory, package folder or CLI file others can write fails the plugin check', (t) => {
  const cases: Array<[string, (x: { pkg: string; cliFile: string }) => void, string]> = [
    ['chmod 777 dist/src/cli', (x) => fs.chmodSync(path.dirname(x.cliFile), 0o777), 'group_writable'],
    ['chmod 757 dist/src/cli', (x) => fs.chmodSync(path.dirname(x.cliFile), 0o757), 'world_writable'],
    ['chmod 775 dist', (x) => fs.chmodSync(path.join(x.pkg, 'dist'), 0o775), 'group_writable'],
    ['chmod 757 node_modules', (x) => fs.chmodSync(path.join(x.pkg, 'node_modules'), 0o757), 'world_writable'],
    ['chmod 646 main.js', (x) => fs.chmodSync(x.cliFile, 0o646), 'world_writable'],
    ['chmod 664 main.js', (x) => fs.chmodSync(x.cliFile, 0o664), 'group_writable'],
    ['chmod 777 package root', (x) => fs.chmodSync(x.pkg, 0o777), 'group_writable'],
  ];
  for (const [label, spoil, reason] of cases) {
    const x = fakePackage();
    spoil(x);
    const r = run('doctor', '--home', x.home, '--json');
    t.is(r.code, 1, label);
    t.false(r.json.ok, label);
    t.like(check(r.json, 'plugin'), { ok: false, reason: 'worker_program_untrusted' }, label);
    const text = run('doctor', '--home', x.home);
    t.regex(text.stdout, new RegExp(`\\(${reason}`), label);
  }
});

rootTest('doctor › a package folder owned by someone else fails the plugin check (needs root)', (t) => {
  const x = fakePackage();
  fs.chownSync(path.join(x.pkg, 'dist'), FOREIGN_UID, FOREIGN_GID);
  const r = run('doctor', '--home', x.home, '--json');
  t.like(check(r.json, 'plugin'), { ok: false, reason: 'worker_program_untrusted' });
  t.regex(run('doctor', '--home', x.home).stdout, /untrusted_owner/);
});

test('doctor › an ACL write grant on the CLI file fails the plugin check and the remedy names ACLs', (t) => {
  if (process.platform !== 'linux') return t.pass();
  const x = fakePackage();
  addAclEntry(x.cliFile, 'user', FOREIGN_UID, 6);
  const r = run('doctor', '--home', x.home, '--json');
  t.like(check(r.json, 'plugin'), { ok: false, reason: 'worker_program_untrusted' });
  t.regex(run('doctor', '--home', x.home).stdout, new RegExp(`${x.cliFile} \\(acl_write: .*setfacl`));
});

/** Make `file` (created when missing) have exactly `mode`, and return it. */
function withMode(file: string, mode: number): string {
  if (!fs.existsSync(file)) fs.writeFileSync(file, '// stand-in\n');
  fs.chmodSync(file, mode);
  return file;
}

test('doctor › any file or directory Node would load for the worker is judged, with its path named', (t) => {
  const cases: Array<[string, (x: { pkg: string; cliFile: string }) => string, string]> = [
    [
      'world-writable dist/src/tools/read.js',
      (x) => withMode(path.join(x.pkg, 'dist/src/tools/read.js'), 0o646),
      'world_writable',
    ],
    [
      'group-writable dependency file',
      (x) => withMode(path.join(x.pkg, 'node_modules/zod/index.js'), 0o664),
      'group_writable',
    ],
    [
      'world-writable dependency directory',
      (x) => withMode(path.join(x.pkg, 'node_modules/zod'), 0o757),
      'world_writable',
    ],
    ['world-writable package.json', (x) => withMode(path.join(x.pkg, 'package.json'), 0o666), 'group_writable'],
    [
      'a link from node_modules to a world-writable file elsewhere',
      (x) => {
        const outside = withMode(path.join(path.dirname(x.pkg), 'outside.js'), 0o646);
        fs.symlinkSync(outside, path.join(x.pkg, 'node_modules/zod/linked.js'));
        return outside;
      },
      'world_writable',
    ],
    [
      'a node_modules above the package',
      (x) => withMode(path.join(mkdirs(path.dirname(x.pkg), 'node_modules/hoisted'), 'index.js'), 0o646),
      'world_writable',
    ],
  ];
  for (const [label, spoil, reason] of cases) {
    const x = fakePackage();
    const culprit = spoil(x);
    const r = run('doctor', '--home', x.home, '--json');
    t.is(r.code, 1, label);
    t.like(check(r.json, 'plugin'), { ok: false, reason: 'worker_program_untrusted' }, label);
    t.true(run('doctor', '--home', x.home).stdout.includes(`not trusted: ${culprit} (${reason}:`), label);
  }
});

test('doctor › a home reached through a symbolic link fails with home_symlink and names the real path', (t) => {
  const { home, dir } = setup();
  const link = path.join(dir, 'linked-home');
  fs.symlinkSync(home, link);
  const r = run('doctor', '--home', link, '--json');
  t.is(r.code, 1);
  t.like(check(r.json, 'home'), { ok: false, reason: 'home_symlink' });
  const text = run('doctor', '--home', link).stdout;
  t.true(text.includes(`the real path is ${home}`), text);
  t.regex(text, /set HERMES_HOME .*to the real path/);
});

test('doctor › a relative HERMES_HOME fails with home_relative', (t) => {
  const { dir } = setup();
  const env = { ...process.env, HERMES_HOME: 'home' };
  const r = spawnSync(process.execPath, [cli, 'doctor', '--json'], { encoding: 'utf8', env, cwd: dir });
  t.is(r.status, 1, r.stderr);
  t.like(check(JSON.parse(r.stdout), 'home'), { ok: false, reason: 'home_relative' });
});

test('doctor › says when Hermes has not yet loaded the installed plugin', (t) => {
  const { home } = setup();
  t_install(home);
  const r = run('doctor', '--home', home, '--json');
  t.like(check(r.json, 'hermes_api'), { ok: true, reason: 'hermes_api_unknown' });
  t.regex(run('status', '--home', home).stdout, /Hermes API: +not yet seen/);
});

test("status and doctor › read the shim's Hermes API report; install keeps treating it as the shim's own file", (t) => {
  const { home } = setup();
  t_install(home);
  const report = path.join(home, 'plugins', 'memory-bridge', 'hermes-api.json');
  const found = {
    v: 1,
    checked_at: '2026-12-01T10:00:00Z',
    python: '3.14.0',
    hermes_version: '0.0.0',
    register_tool: true,
    helpers: { 'hermes_constants.get_hermes_home': true, 'gateway.session_context.get_session_env': true },
    optional: { 'ctx.current_cron_execution': false, parent_cron_view: true },
    missing: [],
    registered: true,
    home_problem: null,
  };
  fs.writeFileSync(report, JSON.stringify(found), { mode: 0o600 });
  const status = run('status', '--home', home);
  t.regex(status.stdout, /Hermes API: +found when Hermes 0\.0\.0 last loaded the shim/);
  t.regex(status.stdout, /current_cron_execution: absent \(cron is then told by the session flag/);
  t.is(run('status', '--home', home, '--json').json.plugin.hermesApi.report.hermesVersion, '0.0.0');
  t.like(check(run('doctor', '--home', home, '--json').json, 'hermes_api'), { ok: true });
  t.like(check(run('doctor', '--home', home, '--json').json, 'plugin'), { ok: true });
  t.regex(run('install', '--home', home).stdout, /unchanged|already/i);
  fs.writeFileSync(
    report,
    JSON.stringify({ ...found, registered: false, missing: ['module gateway.session_context'] }),
  );
  const missing = run('doctor', '--home', home);
  t.regex(missing.stdout, /tools NOT registered; missing: module gateway\.session_context/);
  t.like(check(run('doctor', '--home', home, '--json').json, 'hermes_api'), {
    ok: false,
    reason: 'hermes_api_missing',
  });
  fs.writeFileSync(report, JSON.stringify({ ...found, home_problem: 'home_symlink' }));
  t.like(check(run('doctor', '--home', home, '--json').json, 'hermes_api'), { ok: false, reason: 'home_symlink' });
  // The current shim records the home as Hermes gave it; doctor judges it by the worker's rule (src/hermes/caller.ts).
  fs.writeFileSync(report, JSON.stringify({ ...found, v: 2, home_problem: undefined, home: 'relative/home' }));
  t.like(check(run('doctor', '--home', home, '--json').json, 'hermes_api'), { ok: false, reason: 'home_relative' });
  fs.writeFileSync(report, JSON.stringify({ ...found, v: 2, home_problem: undefined, home }));
  t.like(check(run('doctor', '--home', home, '--json').json, 'hermes_api'), { ok: true });
  fs.writeFileSync(report, '{"v": 2}');
  t.regex(run('status', '--home', home).stdout, /Hermes API: +its report \(hermes-api\.json\) is unreadable/);
});

test('doctor › a foreign plugin directory fails the plugin check', (t) => {
  const { home } = setup();
  const dir = mkdirs(home, 'plugins/memory-bridge');
  fs.writeFileSync(path.join(dir, 'plugin.yaml'), 'name: other\n');
  const j = run('doctor', '--home', home, '--json');
  t.like(check(j.json, 'plugin'), { ok: false, reason: 'foreign_plugin' });
});

test('doctor › --explain says a visible note is visible', (t) => {
  const { home } = setup();
  const r = run('doctor', '--home', home, '--explain', 'projects/garden.md');
  t.is(r.code, 0, r.stdout);
  t.regex(r.stdout, /matched by "projects\/\*\*"/);
  t.regex(r.stdout, /the note is visible/);
});

test('doctor › --explain names the deny pattern that hides a note', (t) => {
  const { home } = setup();
  const j = run('doctor', '--home', home, '--json', '--explain', 'projects/private/salary.md');
  t.is(j.code, 1);
  t.like(check(j.json, 'deny'), { ok: false, reason: 'denied' });
  t.regex(check(j.json, 'deny').remedy, /\*\*\/private\/\*\*/);
});

test('doctor › --explain gives the reason for each kind of refusal', (t) => {
  const { home, root } = setup({ names: 'portable', limits: { max_depth: 3 } });
  writeNote(root, 'projects/a/b/deep.md', '# deep\n');
  fs.linkSync(path.join(root, 'projects', 'garden.md'), path.join(root, 'projects', 'twin.md'));
  const cases: Array<[string, string, string]> = [
    ['projects/a/b/deep.md', 'depth', 'too_deep'],
    ['projects/Bad Name.md', 'names', 'bad_name'],
    ['projects/.hidden.md', 'names', 'hidden'],
    ['projects/notes.txt', 'names', 'not_markdown'],
    ['decisions/x.md', 'allow', 'denied'],
    ['projects/twin.md', 'trust', 'hard_link'],
    ['projects/missing.md', 'trust', 'missing'],
    ['../etc/passwd', 'id', 'bad_id'],
  ];
  for (const [id, name, reason] of cases) {
    const j = run('doctor', '--home', home, '--json', '--explain', id);
    t.is(j.code, 1, id);
    const failed = j.json.checks.filter((c: ParsedJson) => !c.ok);
    t.deepEqual(
      failed.map((c: ParsedJson) => [c.name, c.reason]),
      [[name, reason]],
      id,
    );
  }
});
