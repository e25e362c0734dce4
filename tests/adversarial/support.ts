/**
 * Shared fixtures of the adversarial suite: a real arena (temporary tree with an owner-only memory root, a sibling
 * "outside" directory, a profile home with a real policy) driven through the real `createBridge`, unique marker
 * words planted in content that must never come back, and checks that a response carries no marker and no path.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ExecutionContext } from 'ava';
import { createBridge } from '../../src/tools/bridge.js';
import type { Bridge, BridgeOptions, Caller, LogEvent, ToolResult } from '../../src/tools/types.js';
import { makeHome, makeTempDir, mkdirs, removeTree, writeNote } from '../helpers/fixtures.js';

/** The project's top directory (this file runs from dist/tests/adversarial/). */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
/** The built CLI entry point. */
export const CLI = path.join(REPO_ROOT, 'dist', 'src', 'cli', 'main.js');

/**
 * Marker words planted in content that must never reach a response. Each is one searchable token, so a search
 * for it would rank the planted note first if the note were ever indexed.
 */
export const MARK = Object.freeze({
  outside: 'qzoutsidemarkqz',
  denied: 'qzdeniedmarkqz',
  untrusted: 'qzuntrustedmarkqz',
});
export const ALL_MARKS: readonly string[] = Object.values(MARK);

/** Text of a planted note: a heading and a body that both carry the marker and a shared word ("lantern"). */
export function planted(mark: string): string {
  return `# Lantern ${mark}\n\nThe lantern ${mark} rests here with ${mark} beside it.\n`;
}

export interface Arena {
  tmp: string;
  /** The memory root named by the policy. */
  root: string;
  /** A trusted directory next to the root, never named by any policy: everything in it is "outside". */
  outside: string;
  home: string;
  policyPath: string;
  caller: Caller;
  bridge: Bridge;
  /** Operator log events so far. */
  logs: LogEvent[];
  /** Rewrite the policy: fields merged over `{version: 1, root, allow: ['**']}`. */
  setPolicy(fields: Record<string, unknown>): void;
  search(query: string, limit?: number): ToolResult;
  read(id: string): ToolResult;
  cleanup(): void;
}

/**
 * Build an arena under a fresh owner-only temp dir: `root/` (0700) and `outside/` (0700, one planted note
 * `outside/secret.md` carrying MARK.outside), a home whose policy is `{version: 1, root, allow: ['**'], ...fields}`,
 * and a bridge whose log lines are collected instead of printed.
 */
export function makeArena(
  fields: Record<string, unknown> = {},
  base?: string,
  options: Omit<BridgeOptions, 'log'> = {},
): Arena {
  const tmp = base ?? makeTempDir('mb-adv-');
  const root = mkdirs(tmp, 'memory');
  const outside = mkdirs(tmp, 'outside');
  writeNote(outside, 'secret.md', planted(MARK.outside));
  const policyOf = (f: Record<string, unknown>) => ({ version: 1, root, allow: ['**'], ...f });
  const { home, policyPath } = makeHome(tmp, policyOf(fields));
  const logs: LogEvent[] = [];
  const bridge = createBridge({ ...options, log: (e) => logs.push(e) });
  const caller: Caller = { home, cron: false, subagent: false, profile: 'adversary' };
  return {
    tmp,
    root,
    outside,
    home,
    policyPath,
    caller,
    bridge,
    logs,
    setPolicy(f) {
      fs.writeFileSync(policyPath, JSON.stringify(policyOf(f)));
    },
    search: (query, limit) => bridge.search(limit === undefined ? { query } : { query, limit }, caller),
    read: (id) => bridge.read({ id }, caller),
    cleanup: () => removeTree(tmp),
  };
}

/** The exact bytes a missing note gives (docs/TOOLS.md): every refusal of read must equal them. */
export const NOT_FOUND = JSON.stringify({
  ok: false,
  error: { code: 'not_found_or_denied', message: 'No readable document has that id.' },
});
export const UNAVAILABLE = JSON.stringify({
  ok: false,
  error: { code: 'unavailable', message: 'Memory is unavailable.' },
});

/** True when `text` holds a marker word or one of the given paths (or a path's last component when it is distinctive). */
export function leaks(text: string, paths: readonly string[] = []): string | null {
  const lower = text.toLowerCase();
  for (const m of ALL_MARKS) if (lower.includes(m)) return `marker ${m}`;
  for (const p of paths) if (text.includes(p)) return `path ${p}`;
  return null;
}

/** Fail the test when a response leaks a marker or a path of the arena. */
export function assertClean(
  t: ExecutionContext,
  result: unknown,
  arena?: Pick<Arena, 'root' | 'home' | 'tmp'>,
  what = '',
): void {
  const text = typeof result === 'string' ? result : JSON.stringify(result);
  const found = leaks(text, arena === undefined ? [] : [arena.tmp, arena.root, arena.home]);
  if (found !== null) t.fail(`${what} leaked ${found}: ${text.slice(0, 300)}`);
  else t.pass();
}

/** Ids of a search response, or null for an error. */
export function idsOf(result: ToolResult): string[] | null {
  return result.ok && 'results' in result ? result.results.map((r) => r.id) : null;
}

/** A root-only test (mount, chown, mknod): skipped with a visible reason otherwise. */
export { isRoot } from '../helpers/fixtures.js';
