#!/usr/bin/env node
// `npm run bundle`: build and validate the host bundles (docs/MCP.md §Bundles). Plain Node ESM; needs a built dist/.
//
// 1. The Claude Desktop bundle, dist/bundle/memory-bridge-<version>.mcpb: a staging folder with what the npm
//    package ships (package.json "files"), its production dependencies installed from the lockfile
//    (`npm ci --omit=dev --ignore-scripts`: koffi's prebuilt binaries ship in its package) and a manifest.json
//    written here, checked with `mcpb validate` and packed with `mcpb pack` (@anthropic-ai/mcpb, a pinned dev
//    dependency). The manifest runs the stdio server, `mcp --home <the folder the user picks> --run-kind interactive`.
// 2. The MCP registry entry, server.json at the repository's top: checked against package.json and the registry's
//    shape (name, description, version, the npm package with its stdio arguments). Nothing is published.
// Options: --out DIR (default dist/bundle)   --check-only (validate manifest and server.json, pack nothing)
// Exit status 0 when everything built and validated; the last line says where the bundle is.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(fs.readFileSync(path.join(repo, 'package.json'), 'utf8'));
const MCPB = path.join(repo, 'node_modules', '@anthropic-ai', 'mcpb', 'dist', 'cli', 'cli.js');
/** The bundle's server entry point, relative to the bundle's top. */
export const ENTRY_POINT = 'dist/src/cli/main.js';
/** The manifest's placeholders, which the host replaces (the bundle's folder; the folder the user picked). */
const DIRNAME = `$${'{__dirname}'}`;
const USER_HOME = `$${'{user_config.home}'}`;

/** Run a command; throws with its output when it fails. */
function run(cmd, args, cwd) {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', maxBuffer: 64 << 20, timeout: 600_000 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

/** The two tools as the server lists them (names and descriptions from the built dist/). */
async function tools() {
  const { TOOL_DESCRIPTIONS } = await import(pathToFileURL(path.join(repo, 'dist/src/tools/schemas.js')).href);
  return Object.entries(TOOL_DESCRIPTIONS).map(([name, description]) => ({ name, description }));
}

/** The bundle manifest (MCPB manifest_version 0.3). */
export async function manifest() {
  return {
    manifest_version: '0.3',
    name: pkg.name,
    display_name: 'memory-bridge',
    version: pkg.version,
    description: pkg.description,
    long_description:
      'Two read-only tools, memory_bridge_search and memory_bridge_read, over the Markdown notes that the policy ' +
      'in <home>/plugin-data/memory-bridge/policy.json allows. Notes that fail the trust checks are never read; ' +
      'every call re-reads the policy. Create the home and its policy first with `memory-bridge init`.',
    author: { name: 'memory-bridge developers' },
    license: pkg.license,
    keywords: ['memory', 'markdown', 'search', 'read-only'],
    server: {
      type: 'node',
      entry_point: ENTRY_POINT,
      mcp_config: {
        command: 'node',
        args: [`${DIRNAME}/${ENTRY_POINT}`, 'mcp', '--home', USER_HOME, '--run-kind', 'interactive'],
        env: {},
      },
    },
    user_config: {
      home: {
        type: 'directory',
        title: 'Profile home',
        description:
          'The folder holding plugin-data/memory-bridge/policy.json (a Hermes profile home, or any folder set up with memory-bridge init). Only what its policy allows is searched.',
        required: true,
      },
    },
    tools: await tools(),
    tools_generated: false,
    compatibility: { platforms: ['linux', 'darwin'], runtimes: { node: pkg.engines.node } },
  };
}

/**
 * Check server.json (the MCP registry's entry) against package.json and the registry's shape; returns the problems
 * (empty when it is valid).
 */
export function serverJsonProblems(doc) {
  const problems = [];
  const need = (cond, what) => {
    if (!cond) problems.push(what);
  };
  need(typeof doc === 'object' && doc !== null, 'server.json is a JSON object');
  if (problems.length > 0) return problems;
  need(
    typeof doc.$schema === 'string' && /\/server\.schema\.json$/.test(doc.$schema),
    '$schema names server.schema.json',
  );
  need(typeof doc.name === 'string' && /^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/.test(doc.name), 'name is namespace/name');
  need(
    typeof doc.description === 'string' && doc.description.length >= 1 && doc.description.length <= 100,
    'description has 1 to 100 characters',
  );
  need(doc.version === pkg.version, `version is package.json's (${pkg.version})`);
  need(Array.isArray(doc.packages) && doc.packages.length === 1, 'one package');
  const p = Array.isArray(doc.packages) ? doc.packages[0] : undefined;
  if (p === undefined) return problems;
  need(
    p.registryType === 'npm' && p.identifier === pkg.name && p.version === pkg.version,
    'the npm package name and version',
  );
  need(p.transport?.type === 'stdio', 'stdio transport');
  const args = Array.isArray(p.packageArguments) ? p.packageArguments : [];
  need(args[0]?.type === 'positional' && args[0]?.value === 'mcp', 'first argument: mcp');
  const home = args.find((a) => a.type === 'named' && a.name === '--home');
  need(home?.isRequired === true && typeof home?.description === 'string', '--home is a required named argument');
  const kind = args.find((a) => a.type === 'named' && a.name === '--run-kind');
  need(kind?.value === 'interactive', '--run-kind interactive');
  for (const a of args) need(a.type === 'positional' || a.type === 'named', `argument type of ${JSON.stringify(a)}`);
  return problems;
}

/** Copy what the npm package ships (package.json "files", minus source maps) into `dir`. */
function stage(dir) {
  for (const entry of pkg.files) {
    if (entry.startsWith('!') || entry === 'npm-shrinkwrap.json') continue;
    const from = path.join(repo, entry);
    if (!fs.existsSync(from)) throw new Error(`${entry} is missing (run npm run build first)`);
    fs.cpSync(from, path.join(dir, entry), { recursive: true, filter: (f) => !f.endsWith('.map') });
  }
  fs.copyFileSync(path.join(repo, 'package.json'), path.join(dir, 'package.json'));
  fs.copyFileSync(path.join(repo, 'package-lock.json'), path.join(dir, 'package-lock.json'));
  run('npm', ['ci', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund', '--prefer-offline'], dir);
}

async function main() {
  const { values } = parseArgs({ options: { out: { type: 'string' }, 'check-only': { type: 'boolean' } } });
  const out = path.resolve(values.out ?? path.join(repo, 'dist', 'bundle'));
  const problems = serverJsonProblems(JSON.parse(fs.readFileSync(path.join(repo, 'server.json'), 'utf8')));
  if (problems.length > 0) throw new Error(`server.json: ${problems.join('; ')}`);
  process.stdout.write('server.json: valid\n');
  const staging = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-bundle-'));
  try {
    fs.writeFileSync(path.join(staging, 'manifest.json'), `${JSON.stringify(await manifest(), null, 2)}\n`);
    process.stdout.write(run(process.execPath, [MCPB, 'validate', path.join(staging, 'manifest.json')], repo));
    if (values['check-only'] === true) return;
    stage(staging);
    fs.mkdirSync(out, { recursive: true });
    const file = path.join(out, `${pkg.name}-${pkg.version}.mcpb`);
    fs.rmSync(file, { force: true });
    run(process.execPath, [MCPB, 'pack', staging, file], repo);
    process.stdout.write(`bundle: ${file}\n`);
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err) => {
    process.stderr.write(`bundle: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
}
