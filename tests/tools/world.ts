/**
 * A real profile world for tool tests: a temporary tree with an owner-only memory root, a profile home whose
 * policy points at it, and helpers to rewrite the policy. Everything is real files.
 */
import fs from 'node:fs';
import { makeHome, makeTempDir, mkdirs } from '../helpers/fixtures.js';
import type { Caller } from '../../src/tools/types.js';
import { getNative } from '../../native/index.js';

export interface World {
  tmp: string;
  root: string;
  home: string;
  policyPath: string;
  caller: Caller;
  /** Replace the policy (fields merged over `{version: 1, root, allow}`), keeping the file's mode. */
  setPolicy(fields: Record<string, unknown>): void;
}

export function makeWorld(fields: Record<string, unknown> = {}, name = 'home'): World {
  const tmp = makeTempDir();
  const root = mkdirs(tmp, 'memory');
  const base = { version: 1, root, allow: ['**'] };
  const { home, policyPath } = makeHome(tmp, { ...base, ...fields }, name);
  return {
    tmp,
    root,
    home,
    policyPath,
    caller: { home, cron: false, subagent: false, profile: 'test' },
    setPolicy(next) {
      fs.writeFileSync(policyPath, JSON.stringify({ ...base, ...next }));
    },
  };
}

/** Add a second profile home under the same temporary tree, with its own policy. */
export function addHome(world: World, name: string, fields: Record<string, unknown>): Caller {
  const { home } = makeHome(world.tmp, { version: 1, root: world.root, allow: ['**'], ...fields }, name);
  return { home, cron: false, subagent: false };
}

/**
 * Worlds made by one test file, removed together: call `removeAll` from that file's `test.after.always`.
 */
export function worldTracker(): { world(fields?: Record<string, unknown>): World; removeAll(): void } {
  const worlds: World[] = [];
  return {
    world(fields = {}) {
      const w = makeWorld(fields);
      worlds.push(w);
      return w;
    },
    removeAll() {
      for (const w of worlds) fs.rmSync(w.tmp, { recursive: true, force: true });
    },
  };
}

/**
 * Starts counting note opens (`.md` names; the policy file is opened on every call) on the real bindings: `opens()`
 * is the count so far, `stop()` puts the binding back. For work that is not one synchronous call (a worker run).
 */
export function openCounter(): { opens: () => number; stop: () => void } {
  const native = getNative()!;
  const original = native.openFileAt;
  let opens = 0;
  native.openFileAt = (dirfd: number, name: string) => {
    if (name.endsWith('.md')) opens++;
    return original.call(native, dirfd, name);
  };
  return { opens: () => opens, stop: () => (native.openFileAt = original) };
}

/** Count note opens (`.md` names; the policy file is opened on every call) on the real bindings while `fn` runs. */
export function countingOpens<T>(fn: () => T): { value: T; opens: number } {
  const counter = openCounter();
  try {
    const value = fn();
    return { value, opens: counter.opens() };
  } finally {
    counter.stop();
  }
}
