/**
 * Fixed inputs shared by the benchmark (bench/main.ts) and the profiler (bench/profile.ts), so both look at the
 * same trees and the same queries.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Repository root: dist/bench/config.js → ../.. */
export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The memory-bridge CLI as built by `npm run build`. */
export const serverMain = path.join(repoRoot, 'dist', 'src', 'cli', 'main.js');
/** The reference filesystem MCP server (devDependency). */
export const fsServerBin = path.join(
  repoRoot,
  'node_modules',
  '@modelcontextprotocol',
  'server-filesystem',
  'dist',
  'index.js',
);
/** The Obsidian help vault whose words the corpora use. */
export const vocabularySource = path.resolve(repoRoot, '../shared/corpora/obsidian-help');

/**
 * Fixed query list: single real words from the Obsidian help vault, from very common (most notes match) to rare
 * (a few percent of notes), so the same term can be handed to `rg -F` and `grep -F`.
 */
export const QUERIES = Object.freeze([
  'vault',
  'sync',
  'publish',
  'plugin',
  'properties',
  'template',
  'canvas',
  'graph',
  'backlinks',
  'hotkeys',
  'workspace',
  'bookmarks',
]);

const SEED = 0x6d62; // "mb"

/** Corpus seed for `notes` notes (the same tree in every run and in bench/profile.ts). */
export function seedFor(notes: number): number {
  return SEED + notes;
}

/**
 * Node options from the CLI's `#!/usr/bin/env -S node <options>` line: what a host that runs the `memory-bridge`
 * bin directly gets, and what docs/HOSTS.md's host examples (and the Hermes shim, through NODE_OPTIONS) pass.
 */
export function shebangNodeOptions(): string[] {
  const first = fs.readFileSync(serverMain, 'utf8').split('\n', 1)[0] ?? '';
  const m = /^#!\S*env\s+-S\s+node\s+(.*)$/.exec(first);
  return m
    ? m[1]!
        .trim()
        .split(/\s+/)
        .filter((o) => o.startsWith('--'))
    : [];
}
