/**
 * `memory-bridge init` on real folders through the built CLI (docs/CLI.md §init). scripts/test.js runs this file
 * again as an unprivileged user, so it holds for root and for a user who is not root.
 */
import test, { type ExecutionContext } from 'ava';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PolicySchema, DEFAULT_LIMITS } from '../../src/policy/schema.js';
import { callConfigured, parseYamlSubset, shellWords, type YamlValue } from '../helpers/host-config.js';
import { makeTempDir, mkdirs, removeTree, writeNote, type ParsedJson } from '../helpers/fixtures.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const CLI = path.join(repo, 'dist', 'src', 'cli', 'main.js');
const tmp = makeTempDir('mb-init-');
test.after.always(() => removeTree(tmp));

function run(...args: string[]): { code: number; stdout: string; stderr: string } {
  const env = { ...process.env };
  delete env.HERMES_HOME;
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

function json(r: { stdout: string }): ParsedJson {
  return JSON.parse(r.stdout) as ParsedJson;
}

let n = 0;
/** A fresh case directory with a notes folder holding portable-named notes. */
function notes(): { dir: string; root: string } {
  const dir = mkdirs(tmp, `case-${n++}`);
  const root = mkdirs(dir, 'notes');
  writeNote(root, 'projects/garden.md', '# Lantern Garden\n\nwatered on Fridays with rainwater\n');
  writeNote(root, 'decisions/pump.md', '# Pump\n\nthe pump runs at dawn\n');
  return { dir, root };
}

const mode = (p: string): number => fs.statSync(p).mode & 0o777;

test('init › writes an owner-only policy with the schema defaults for the real folder; search and read serve it', (t) => {
  const { dir, root } = notes();
  // The root is named through a symbolic link: the policy gets the real path, which the trust walk accepts.
  fs.symlinkSync(root, path.join(dir, 'via-link'));
  const home = path.join(dir, 'home');
  const r = run('init', '--home', home, '--root', path.join(dir, 'via-link'), '--host', 'claude-code');
  t.is(r.code, 0, r.stdout + r.stderr);
  const file = path.join(home, 'plugin-data', 'memory-bridge', 'policy.json');
  for (const d of [home, path.dirname(path.dirname(file)), path.dirname(file)]) t.is(mode(d), 0o700, d);
  t.is(mode(file), 0o600);
  t.is(fs.statSync(file).uid, process.getuid!());
  const written = JSON.parse(fs.readFileSync(file, 'utf8'));
  const defaults = PolicySchema.parse({ version: 1, root, allow: ['**'] });
  t.deepEqual(written, {
    version: 1,
    root,
    allow: ['**'],
    deny: defaults.deny,
    allow_cron: false,
    allow_subagents: false,
    names: defaults.names,
    limits: { ...DEFAULT_LIMITS },
  });
  t.regex(r.stdout, /Result: tool calls for this profile can be served\./);
  const search = run('search', 'rainwater', '--home', home, '--run-kind', 'interactive');
  t.is(search.code, 0, search.stderr);
  t.deepEqual(
    json(search).results.map((h: ParsedJson) => h.id),
    ['projects/garden.md'],
  );
  const read = run('read', 'decisions/pump.md', '--home', home, '--run-kind', 'interactive');
  t.is(read.code, 0, read.stderr);
  t.regex(json(read).content, /the pump runs at dawn/);
});

test('init › picks the names rule that lets the notes be seen, among the rules the schema accepts', (t) => {
  const { dir, root } = notes();
  writeNote(root, 'projects/Garden Plan.md', '# Plan\n\nseedlings under glass\n');
  const home = path.join(dir, 'home');
  const r = run('init', '--home', home, '--root', root);
  t.is(r.code, 0, r.stdout + r.stderr);
  const written = JSON.parse(fs.readFileSync(path.join(home, 'plugin-data', 'memory-bridge', 'policy.json'), 'utf8'));
  t.true((PolicySchema.shape.names.unwrap().options as readonly string[]).includes(written.names));
  // Whatever the default is, the chosen rule serves the note with a space in its name.
  const search = run('search', 'seedlings', '--home', home, '--run-kind', 'interactive');
  t.deepEqual(
    json(search).results.map((h: ParsedJson) => h.id),
    ['projects/Garden Plan.md'],
  );
});

test('init › refuses to overwrite an existing policy and says how to go on', (t) => {
  const { dir, root } = notes();
  const home = path.join(dir, 'home');
  t.is(run('init', '--home', home, '--root', root).code, 0);
  const file = path.join(home, 'plugin-data', 'memory-bridge', 'policy.json');
  fs.writeFileSync(file, '{"version": 1, "root": "/elsewhere", "allow": ["a/**"]}\n');
  const before = fs.readFileSync(file);
  const again = run('init', '--home', home, '--root', root, '--host', 'hermes');
  t.is(again.code, 1);
  t.is(again.stdout, '');
  t.regex(again.stderr, /refused: a policy already exists at .*; init never overwrites one\n {2}→ .*mv /);
  t.deepEqual(fs.readFileSync(file), before);
  // A dangling link in the policy's place is refused too, and nothing is written through it.
  const other = mkdirs(dir, 'home2');
  mkdirs(other, 'plugin-data/memory-bridge');
  const target = path.join(dir, 'planted.json');
  fs.symlinkSync(target, path.join(other, 'plugin-data', 'memory-bridge', 'policy.json'));
  t.is(run('init', '--home', other, '--root', root).code, 1);
  t.false(fs.existsSync(target));
});

test('init › a missing or non-directory root is refused before anything is written', (t) => {
  const { dir, root } = notes();
  const home = path.join(dir, 'home');
  const missing = run('init', '--home', home, '--root', path.join(dir, 'nope'));
  t.is(missing.code, 1);
  t.regex(missing.stderr, /--root .* cannot be resolved/);
  const file = run('init', '--home', home, '--root', path.join(root, 'projects', 'garden.md'));
  t.is(file.code, 1);
  t.regex(file.stderr, /is not a directory/);
  t.false(fs.existsSync(home));
  t.is(run('init', '--home', home).code, 2);
  t.is(run('init', '--home', home, '--root', root, '--host', 'vscode').code, 2);
});

/**
 * Run `init --host HOST` on a fresh notes folder (home `homeName` beside it), which must succeed, and return the
 * home and the lines after the doctor report (the host configuration).
 */
function initFor(t: ExecutionContext, host: string, homeName = 'home'): { home: string; lines: string[] } {
  const { dir, root } = notes();
  const home = path.join(dir, homeName);
  const r = run('init', '--home', home, '--root', root, '--host', host);
  t.is(r.code, 0, r.stdout + r.stderr);
  const lines = r.stdout.split('\n');
  return { home, lines: lines.slice(lines.findIndex((l) => l.startsWith('Result: ')) + 2) };
}

test('init › --host hermes-mcp prints mcp_servers YAML that parses, starts this CLI and is served as pasted', async (t) => {
  const { home, lines } = initFor(t, 'hermes-mcp');
  t.is(lines[0], `Add to ${home}/config.yaml:`);
  const yaml = lines.slice(
    1,
    lines.findIndex((l, i) => i > 1 && !l.startsWith(' ')),
  );
  const server = (parseYamlSubset(yaml.join('\n')).mcp_servers as Record<string, YamlValue>).memory as Record<
    string,
    YamlValue
  >;
  t.is(server.command, process.execPath);
  const args = server.args as string[];
  t.deepEqual(args.slice(1), [CLI, 'mcp', '--home', home]);
  // No --run-kind: Hermes's one connection serves cron jobs and subagents too, and the policy says so.
  const policy = JSON.parse(fs.readFileSync(path.join(home, 'plugin-data', 'memory-bridge', 'policy.json'), 'utf8'));
  t.like(policy, { allow_cron: true, allow_subagents: true });
  const got = await callConfigured(server.command as string, args, 'memory_bridge_search', { query: 'rainwater' });
  t.true(got.json.ok, got.stderr);
  t.is(got.stderr, '');
});

test('init › --host claude-code prints a claude mcp add line whose command starts this CLI, run kind interactive', async (t) => {
  const { home, lines } = initFor(t, 'claude-code', 'home with space');
  const line = lines.find((l) => l.trimStart().startsWith('claude mcp add'))!;
  const words = shellWords(line.trim());
  t.deepEqual(words.slice(0, 7), ['claude', 'mcp', 'add', '--transport', 'stdio', '--scope', 'user']);
  const command = words.slice(words.indexOf('--') + 1);
  t.is(command[0], process.execPath);
  t.deepEqual(command.slice(2), [CLI, 'mcp', '--home', home, '--run-kind', 'interactive']);
  const got = await callConfigured(command[0]!, command.slice(1), 'memory_bridge_read', { id: 'projects/garden.md' });
  t.true(got.json.ok, got.stderr);
});

test('init › --host claude-desktop prints JSON that parses and starts this CLI, run kind interactive', async (t) => {
  const { home, lines } = initFor(t, 'claude-desktop');
  t.regex(lines[0]!, /claude_desktop_config\.json/);
  const config = JSON.parse(lines.slice(1).join('\n'));
  const server = config.mcpServers.memory;
  t.is(server.command, process.execPath);
  t.deepEqual(server.args.slice(1), [CLI, 'mcp', '--home', home, '--run-kind', 'interactive']);
  const got = await callConfigured(server.command, server.args, 'memory_bridge_search', { query: 'pump' });
  t.true(got.json.ok, got.stderr);
});

test('init › --host hermes prints the plugin install steps for this home and keeps cron and subagents off', (t) => {
  const { home, lines } = initFor(t, 'hermes');
  t.true(lines.includes(`  memory-bridge install --home ${home}`), lines.join('\n'));
  t.true(lines.includes(`  HERMES_HOME=${home} hermes plugins enable memory-bridge`));
  t.true(lines.includes(`  memory-bridge doctor --home ${home}`));
  const policy = JSON.parse(fs.readFileSync(path.join(home, 'plugin-data', 'memory-bridge', 'policy.json'), 'utf8'));
  t.like(policy, { allow_cron: false, allow_subagents: false });
});
