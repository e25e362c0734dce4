/**
 * The host snippets of README.md and docs/ work as pasted: each stdio snippet (Hermes `mcp_servers` YAML, the
 * `claude mcp add` line, the Claude Desktop JSON) is parsed the way its host reads it, its placeholders are replaced
 * by this checkout and a profile home whose policy `memory-bridge init` wrote for that host, and the command it
 * names is started with a real MCP client, which must get an answer with `"ok": true`.
 */
import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { callConfigured, parseYamlSubset, shellWords, type YamlValue } from '../helpers/host-config.js';
import { makeTempDir, mkdirs, removeTree, writeNote } from '../helpers/fixtures.js';
import { cli, REPO_ROOT } from './tree.js';

const tmp = makeTempDir('mb-snippets-');
test.after.always(() => removeTree(tmp));

const DOCS = ['README.md', 'docs/HOSTS.md', 'docs/HERMES.md'];
/** Where the snippets put this checkout, and the example homes they name. */
const CHECKOUT = '/path/to/memory-bridge';
const EXAMPLE_HOMES = ['/home/you/.hermes', '/Users/you/.hermes'];

/** Every fenced block of `lang` in `file`, dedented by its fence's indentation. */
function blocks(file: string, lang: string): string[] {
  const lines = fs.readFileSync(path.join(REPO_ROOT, file), 'utf8').split('\n');
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^( *)```(\S*)$/.exec(lines[i]!);
    if (open === null) continue;
    const indent = open[1]!.length;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && lines[j]!.trim() !== '```'; j++) body.push(lines[j]!.slice(indent));
    if (open[2] === lang) out.push(body.join('\n'));
    i = j;
  }
  return out;
}

/** A notes folder and a home whose policy `init --host HOST` wrote. */
function homeFor(host: string): string {
  const dir = mkdirs(tmp, host);
  const root = mkdirs(dir, 'notes');
  writeNote(root, 'garden.md', '# Garden\n\nasters by the gate\n');
  const home = path.join(dir, 'home');
  const r = cli(['init', '--home', home, '--root', root, '--host', host]);
  if (r.code !== 0) throw new Error(`init failed: ${r.stdout}${r.stderr}`);
  return home;
}

/** The snippet's value with this checkout and `home` in place of the placeholders. */
function filled(value: string, home: string): string {
  let v = value.replaceAll(CHECKOUT, REPO_ROOT);
  for (const example of EXAMPLE_HOMES) v = v.replaceAll(example, home);
  return v;
}

test('snippets › every Hermes mcp_servers stdio snippet is the same and is served as pasted with an init policy', async (t) => {
  const found: Array<{ file: string; text: string }> = [];
  for (const file of DOCS)
    for (const text of blocks(file, 'yaml'))
      if (text.includes('mcp_servers:') && text.includes('command:')) found.push({ file, text });
  t.true(found.length >= 3, found.map((f) => f.file).join(', '));
  for (const f of found) t.is(f.text, found[0]!.text, `${f.file} differs from ${found[0]!.file}`);
  const home = homeFor('hermes-mcp');
  for (const f of found) {
    const servers = parseYamlSubset(f.text).mcp_servers as Record<string, YamlValue>;
    for (const [name, server] of Object.entries(servers) as Array<[string, Record<string, YamlValue>]>) {
      t.is(server.env, undefined, 'the home is named with --home, not an env entry Hermes would drop');
      const args = (server.args as string[]).map((a) => filled(a, home));
      const got = await callConfigured(server.command as string, args, 'memory_bridge_search', { query: 'asters' });
      t.true(got.json.ok, `${f.file} ${name}: ${JSON.stringify(got.json)} ${got.stderr}`);
      t.is(got.stderr, '', f.file);
    }
  }
});

test('snippets › the Claude Code line and the Claude Desktop JSON are served as pasted with an init policy', async (t) => {
  const home = homeFor('claude-code');
  const line = fs
    .readFileSync(path.join(REPO_ROOT, 'docs/HOSTS.md'), 'utf8')
    .split('\n')
    .find((l) => l.startsWith('claude mcp add --transport stdio'))!;
  const words = shellWords(line);
  const command = words.slice(words.indexOf('--') + 1).map((w) => filled(w, home));
  const code = await callConfigured(command[0]!, command.slice(1), 'memory_bridge_read', { id: 'garden.md' });
  t.true(code.json.ok, code.stderr);
  const desktop = blocks('docs/HOSTS.md', 'json').find((b) => b.includes('"mcpServers"'))!;
  const server = JSON.parse(desktop).mcpServers.memory;
  const args = (server.args as string[]).map((a) => filled(a, home));
  const got = await callConfigured(server.command, args, 'memory_bridge_read', { id: 'garden.md' });
  t.true(got.json.ok, got.stderr);
});
