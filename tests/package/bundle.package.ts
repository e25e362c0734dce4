/**
 * The host bundles (docs/MCP.md §Bundles): `scripts/bundle.js` builds the Claude Desktop bundle (.mcpb, checked by
 * `mcpb validate`) and validates server.json; this test then unpacks the bundle with `mcpb unpack`, starts the
 * server exactly as its manifest says (the bundle's folder for `${__dirname}`, a real profile home for
 * `${user_config.home}`) and calls both tools through a real MCP client. It runs in the package step of
 * scripts/test.js (`*.package.js`, after the other suites): the bundle installs the production dependencies from
 * the lockfile, which takes a while and needs the npm cache or registry.
 */
import test from 'ava';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { makeHome, makeTempDir, mkdirs, removeTree, writeNote } from '../helpers/fixtures.js';
import { REPO_ROOT } from '../cli/tree.js';

const MCPB = path.join(REPO_ROOT, 'node_modules', '@anthropic-ai', 'mcpb', 'dist', 'cli', 'cli.js');
const PKG = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
};

interface Manifest {
  server: { entry_point: string; mcp_config: { command: string; args: string[]; env: Record<string, string> } };
  user_config: Record<string, { type: string; required?: boolean }>;
  tools: Array<{ name: string }>;
  version: string;
}

let base = '';
test.before(() => {
  base = makeTempDir('mb-bundle-test-');
});
test.after.always(() => {
  if (base !== '') removeTree(base);
});

test('bundle › the .mcpb validates, unpacks, and runs the stdio server on the home the user picks', async (t) => {
  t.timeout(900_000);
  const out = mkdirs(base, 'out');
  const built = spawnSync(process.execPath, [path.join(REPO_ROOT, 'scripts', 'bundle.js'), '--out', out], {
    encoding: 'utf8',
    timeout: 840_000,
  });
  t.is(built.status, 0, built.stderr);
  t.regex(built.stdout, /server\.json: valid/);
  t.regex(built.stdout, /Manifest schema validation passes/);
  const file = path.join(out, `${PKG.name}-${PKG.version}.mcpb`);
  t.true(fs.existsSync(file));

  const unpacked = path.join(base, 'unpacked');
  const un = spawnSync(process.execPath, [MCPB, 'unpack', file, unpacked], { encoding: 'utf8', timeout: 120_000 });
  t.is(un.status, 0, un.stderr);
  const manifest = JSON.parse(fs.readFileSync(path.join(unpacked, 'manifest.json'), 'utf8')) as Manifest;
  t.is(manifest.version, PKG.version);
  t.deepEqual(manifest.tools.map((x) => x.name).sort(), ['memory_bridge_read', 'memory_bridge_search']);
  t.like(manifest.user_config.home, { type: 'directory', required: true });
  t.true(fs.existsSync(path.join(unpacked, manifest.server.entry_point)));
  // Production dependencies only.
  t.true(fs.existsSync(path.join(unpacked, 'node_modules', '@modelcontextprotocol', 'server', 'package.json')));
  t.false(fs.existsSync(path.join(unpacked, 'node_modules', 'ava')), 'no dev dependency is bundled');
  t.false(fs.existsSync(path.join(unpacked, 'node_modules', '@modelcontextprotocol', 'sdk')), 'no v1 SDK');

  // A real home and notes, then the server exactly as the manifest starts it.
  const root = mkdirs(base, 'notes');
  writeNote(root, 'projects/garden.md', '# Lantern Garden\n\nBlue asters grow by the east gate.\n');
  writeNote(root, 'private/code.md', '# Gate code\n\nasters 1234\n');
  const { home } = makeHome(base, { version: 1, root, allow: ['projects/**'], deny: [] }, 'picked-home');
  // The host's placeholders: the bundle's folder and the folder the user picked.
  const [dirname, userHome] = [`$${'{__dirname}'}`, `$${'{user_config.home}'}`];
  const fill = (s: string) => s.replaceAll(dirname, unpacked).replaceAll(userHome, home);
  const { command, args } = manifest.server.mcp_config;
  t.is(command, 'node');
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: args.map(fill),
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    stderr: 'ignore',
    cwd: base,
  });
  const client = new Client({ name: 'bundle-test', version: '0.0.0' });
  await client.connect(transport);
  try {
    const found = await client.callTool({ name: 'memory_bridge_search', arguments: { query: 'asters' } });
    const hits = (found.structuredContent as { results: Array<{ id: string }> }).results.map((r) => r.id);
    t.deepEqual(hits, ['projects/garden.md'], 'only what the picked home’s policy allows');
    const read = await client.callTool({ name: 'memory_bridge_read', arguments: { id: 'projects/garden.md' } });
    t.like(read.structuredContent, { ok: true, title: 'Lantern Garden' });
  } finally {
    await client.close();
  }
});

test('bundle › server.json is checked: a wrong version, name or argument is refused', async (t) => {
  const mod = (await import(pathToFileURL(path.join(REPO_ROOT, 'scripts', 'bundle.js')).href)) as {
    serverJsonProblems: (doc: unknown) => string[];
  };
  const doc = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'server.json'), 'utf8'));
  t.deepEqual(mod.serverJsonProblems(doc), []);
  t.true(mod.serverJsonProblems({ ...doc, version: '9.9.9' }).length > 0);
  t.true(mod.serverJsonProblems({ ...doc, name: 'no slash' }).length > 0);
  const noHome = structuredClone(doc);
  noHome.packages[0].packageArguments = noHome.packages[0].packageArguments.filter(
    (a: { name?: string }) => a.name !== '--home',
  );
  t.true(mod.serverJsonProblems(noHome).length > 0);
  t.true(mod.serverJsonProblems(null).length > 0);
});
