/**
 * A small trusted memory tree and profile homes shared by the CLI and MCP server tests: real owner-only files
 * (dirs 0700, files 0600) under a fresh temp dir, with real policies in each home.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeHome, makeTempDir, mkdirs, writeNote } from '../helpers/fixtures.js';

/** The project's top directory (this file runs from dist/tests/cli/). */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
/** The built CLI entry point. */
export const CLI = path.join(REPO_ROOT, 'dist', 'src', 'cli', 'main.js');

/** Run the built CLI with a minimal environment (no HERMES_HOME unless given); exit code and both streams. */
export function cli(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [CLI, ...args], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
    timeout: 60_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

export const NOTES = {
  'projects/garden.md': '# Lantern Garden\n\nBlue asters grow by the east gate. Opening day is in September.\n',
  'decisions/watering.md': '# Watering decision\n\nWe water the garden at dawn with collected rainwater.\n',
  'workflows/visit.md': '# Garden visit\n\nBring a notebook and count the asters.\n',
  'projects/private/gate-code.md': '# Gate code\n\nThe garden gate code is a made-up placeholder.\n',
} as const;

export interface Tree {
  /** Temp dir holding everything (remove in test.after.always). */
  base: string;
  /** The notes root named by every policy. */
  root: string;
  /** No run-kind opt-ins. */
  plainHome: string;
  /** allow_cron only. */
  cronHome: string;
  /** allow_cron and allow_subagents. */
  bothHome: string;
}

/** Build the tree: the four notes, and three homes whose policies differ only in the run-kind opt-ins. */
export function makeTree(): Tree {
  const base = makeTempDir('mb-cli-');
  const root = mkdirs(base, 'memory');
  for (const [id, text] of Object.entries(NOTES)) writeNote(root, id, text);
  const policy = (cron: boolean, subagents: boolean) => ({
    version: 1,
    root,
    allow: ['projects/**', 'decisions/**', 'workflows/**'],
    deny: ['**/private/**'],
    allow_cron: cron,
    allow_subagents: subagents,
  });
  return {
    base,
    root,
    plainHome: makeHome(base, policy(false, false), 'plain').home,
    cronHome: makeHome(base, policy(true, false), 'cron').home,
    bothHome: makeHome(base, policy(true, true), 'both').home,
  };
}
