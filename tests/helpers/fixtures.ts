/**
 * Real-filesystem fixtures for tests: owner-only temporary trees, notes, profile homes with policies, and
 * real ACLs written as `system.posix_acl_access` bytes through fsetxattr (no `setfacl` needed).
 * Everything here creates real files and descriptors; nothing is mocked.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import assert from 'node:assert/strict';
import koffi from 'koffi';
import { getNative } from '../../native/index.js';
import { scanTree, type ScanOptions } from '../../src/trust/scan.js';
import type { KnownNotes, NoteFilter, ScanLimits, ScanResult } from '../../src/trust/types.js';
import type { Native } from '../../native/types.js';
import { statPool } from '../../src/trust/warm/stat-pool.js';
import { NOT_TAKEN, type StatThread } from '../../src/trust/warm/stat-thread.js';

/** True when the tests run as root (chown, mount and foreign owners need it). */
export const isRoot = process.getuid?.() === 0;

/** A uid/gid that is neither root nor the running user (for foreign-owner tests; needs root to chown). */
export const FOREIGN_UID = 65534;
export const FOREIGN_GID = 65534;

/**
 * Create a fresh owner-only (0700) directory under the system temp dir and return its canonical path.
 * The temp dir itself is a root-owned sticky directory, which the trust rule accepts as an intermediate ancestor.
 */
export function makeTempDir(prefix = 'mb-test-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  fs.chmodSync(dir, 0o700);
  return fs.realpathSync(dir);
}

/** Remove a tree made by these helpers (best effort; unmounts nothing). */
export function removeTree(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
}

/**
 * Write a note at `root/id`, creating owner-only (0700) parent directories. File mode defaults to 0600.
 * Returns the absolute path.
 */
export function writeNote(root: string, id: string, text: string | Buffer, mode = 0o600): string {
  const file = path.join(root, id);
  mkdirs(root, path.dirname(id));
  fs.writeFileSync(file, text);
  fs.chmodSync(file, mode);
  return file;
}

/** Create `rel` below `root` one level at a time with mode 0700 (explicit chmod: umask must not matter). */
export function mkdirs(root: string, rel: string): string {
  let cur = root;
  for (const seg of rel.split('/').filter((s) => s !== '' && s !== '.')) {
    cur = path.join(cur, seg);
    if (!fs.existsSync(cur)) {
      fs.mkdirSync(cur);
      fs.chmodSync(cur, 0o700);
    }
  }
  return cur;
}

/** Path of the policy inside a profile home (docs/POLICY.md). */
export function policyPathOf(home: string): string {
  return path.join(home, 'plugin-data', 'memory-bridge', 'policy.json');
}

/**
 * Create a profile home under `parent` with `plugin-data/memory-bridge/policy.json` (0600, dirs 0700).
 * `policy` is serialised with JSON.stringify unless it is already a string or Buffer (for malformed-policy tests).
 */
export function makeHome(parent: string, policy: unknown, name = 'home'): { home: string; policyPath: string } {
  const home = path.join(parent, name);
  mkdirs(parent, name);
  mkdirs(home, 'plugin-data/memory-bridge');
  const policyPath = policyPathOf(home);
  const body = typeof policy === 'string' || Buffer.isBuffer(policy) ? policy : JSON.stringify(policy, null, 2);
  fs.writeFileSync(policyPath, body);
  fs.chmodSync(policyPath, 0o600);
  return { home, policyPath };
}

/** Linux ACL tags and the "undefined id" marker (docs/PLATFORM.md). */
export const ACL_TAG = Object.freeze({
  USER_OBJ: 0x01,
  USER: 0x02,
  GROUP_OBJ: 0x04,
  GROUP: 0x08,
  MASK: 0x10,
  OTHER: 0x20,
});
export const ACL_UNDEFINED_ID = 0xffffffff;

export interface AclEntrySpec {
  tag: number;
  perm: number;
  id?: number;
}

/** Encode ACL entries as `system.posix_acl_access` bytes: u32 LE version 2, then (u16 tag, u16 perm, u32 id) LE. */
export function aclBytes(entries: AclEntrySpec[]): Buffer {
  const buf = Buffer.alloc(4 + 8 * entries.length);
  buf.writeUInt32LE(2, 0);
  entries.forEach((e, i) => {
    const o = 4 + 8 * i;
    buf.writeUInt16LE(e.tag, o);
    buf.writeUInt16LE(e.perm, o + 2);
    buf.writeUInt32LE(e.id ?? ACL_UNDEFINED_ID, o + 4);
  });
  return buf;
}

/**
 * Grant uid 4242 write to `file` through a named-user ACL entry whose mask allows read only (the group class bits
 * of the mode then show no write; the ACL entry still grants it), written as `system.posix_acl_access`.
 */
export function grantMaskedUserWrite(file: string): void {
  setXattr(
    file,
    'system.posix_acl_access',
    aclBytes([
      { tag: ACL_TAG.USER_OBJ, perm: 6 },
      { tag: ACL_TAG.USER, perm: 6, id: 4242 },
      { tag: ACL_TAG.GROUP_OBJ, perm: 0 },
      { tag: ACL_TAG.MASK, perm: 4 },
      { tag: ACL_TAG.OTHER, perm: 0 },
    ]),
  );
}

let fsetxattrFn: ((fd: number, name: string, value: Buffer, size: number, flags: number) => number) | undefined;

/**
 * Write raw bytes to an extended attribute of `file` through fsetxattr on an open descriptor (Linux only).
 * The kernel validates ACL structure itself, so invalid ACL bytes are rejected here with an Error.
 */
export function setXattr(file: string, name: string, value: Buffer): void {
  if (process.platform !== 'linux') throw new Error('setXattr: Linux only');
  fsetxattrFn ??= koffi
    .load('libc.so.6')
    .func('int fsetxattr(int, const char *, const uint8_t *, size_t, int)') as never;
  const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  try {
    const rc = fsetxattrFn!(fd, name, value, value.length, 0);
    if (rc !== 0) throw new Error(`fsetxattr ${name}: errno ${koffi.errno()}`);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Give `file` a real POSIX access ACL that adds one named-user or named-group entry with `perm` (r4 w2 x1),
 * keeping the owner's and other's bits from its current mode, with a mask of rwx.
 */
export function addAclEntry(file: string, kind: 'user' | 'group', id: number, perm: number): void {
  const mode = fs.statSync(file).mode;
  const entries: AclEntrySpec[] = [{ tag: ACL_TAG.USER_OBJ, perm: (mode >> 6) & 7 }];
  if (kind === 'user') entries.push({ tag: ACL_TAG.USER, perm, id });
  entries.push({ tag: ACL_TAG.GROUP_OBJ, perm: (mode >> 3) & 7 });
  if (kind === 'group') entries.push({ tag: ACL_TAG.GROUP, perm, id });
  entries.push({ tag: ACL_TAG.MASK, perm: 7 }, { tag: ACL_TAG.OTHER, perm: mode & 7 });
  setXattr(file, 'system.posix_acl_access', aclBytes(entries));
}

/**
 * Number of descriptors this process holds (entries of /proc/self/fd, minus the one used to list it), counted once
 * the stat pool has closed any directory duplicate it deferred: right after a scan its worker may still sit in the
 * middle of a call on one (src/trust/warm/stat-pool.ts, "Bounds"); a duplicate it never closes still counts. Linux only.
 */
export function openDescriptorCount(): number {
  statPool().settleDeferred(10_000);
  return fs.readdirSync('/proc/self/fd').length - 1;
}

/**
 * A pass-through wrapper around a real Native binding that counts calls per method and records the names given
 * to openDirAt, openFileAt and the stats by name. Not a mock: every method of the binding (whatever it has, now or
 * later) is wrapped and goes to the real binding, so code under test runs exactly its production path. Use it to
 * prove what the code under test did (or never did) touch.
 *
 * Counts are by system call: `statAt` counts every no-follow stat by name, whether it came through `statAt`,
 * through `statRawAt` (which also has its own count) or from the stat thread (see `statThread`), and records
 * `statAt:${name}` for each.
 */
export interface CountingNative {
  native: Native;
  calls: Record<string, number>;
  /** `${method}:${name}` for openDirAt/openFileAt/statAt (statRawAt and the stat thread record as statAt), in order. */
  touched: string[];
  /** Wraps a stat thread so that the stats its worker answers are counted and recorded like the binding's own. */
  statThread(thread: StatThread): StatThread;
  reset(): void;
}

export function countingNative(real: Native): CountingNative {
  const calls: Record<string, number> = {};
  const touched: string[] = [];
  const bump = (m: string): void => {
    calls[m] = (calls[m] ?? 0) + 1;
  };
  const statByName = (name: string): void => {
    bump('statAt');
    touched.push(`statAt:${name}`);
  };
  const rawName = (cname: Uint8Array): string => Buffer.from(cname.subarray(0, cname.length - 1)).toString('utf8');
  /** What each method records besides its own count. */
  const record: Record<string, (args: unknown[]) => void> = {
    openDirAt: (args) => touched.push(`openDirAt:${args[1] as string}`),
    openFileAt: (args) => touched.push(`openFileAt:${args[1] as string}`),
    statAt: (args) => touched.push(`statAt:${args[1] as string}`),
    statRawAt: (args) => statByName(rawName(args[1] as Uint8Array)),
  };
  const wrapped: Record<string, unknown> = {};
  for (const key of Object.keys(real) as (keyof Native)[]) {
    const value = real[key];
    if (typeof value !== 'function') {
      wrapped[key] = value;
      continue;
    }
    wrapped[key] = (...args: unknown[]): unknown => {
      bump(key);
      record[key]?.(args);
      return (value as (...a: unknown[]) => unknown).apply(real, args);
    };
  }
  const counting: CountingNative = {
    native: wrapped as unknown as Native,
    calls,
    touched,
    statThread(thread: StatThread): StatThread {
      const jobs: (readonly { cname: Uint8Array }[])[] = [];
      return {
        beginScan: () => thread.beginScan(),
        publish(fd, listing, isCandidate) {
          const job = thread.publish(fd, listing, isCandidate);
          if (job >= 0) jobs[job] = listing.entries;
          return job;
        },
        take(job, index, out) {
          const entry = jobs[job]![index]!;
          let taken: ReturnType<StatThread['take']>;
          try {
            taken = thread.take(job, index, out);
          } catch (err) {
            bump('statRawAt');
            statByName(rawName(entry.cname));
            throw err;
          }
          if (taken !== NOT_TAKEN) {
            bump('statRawAt');
            statByName(rawName(entry.cname));
          }
          return taken;
        },
        retire: (job) => thread.retire(job),
        endScan: () => thread.endScan(),
        noteScan: (candidates, native) => thread.noteScan(candidates, native),
      };
    },
    reset() {
      for (const k of Object.keys(calls)) delete calls[k];
      touched.length = 0;
    },
  };
  wrappers.set(counting.native, counting);
  return counting;
}

/** The CountingNative whose `native` is `native`, if it is one. */
const wrappers = new WeakMap<Native, CountingNative>();

/**
 * Makes the process's stat pool take part in every scan it is given from now on (no minimum scan size, environment
 * ignored, no adaptive pause) and waits until its worker runs. Call it in `test.before` of files that use
 * `scanTwoWays`. Resolves false where the pool cannot run (not Linux).
 */
export async function readyStatThread(native: Native): Promise<boolean> {
  const pool = statPool();
  pool.configure({ minCandidates: 0, useEnvironment: false, adaptive: false, paused: false });
  pool.noteScan(0, native);
  return pool.whenReady();
}

/**
 * `scanTree` on both of its production paths over the same tree: first with the process's stat thread and a
 * counting wrapper of the real binding, then exactly as asked (`native`, `options`, usually without the thread).
 * Throws when the two differ in what they return (ids, keys, texts, flags, counts) or, when `native` is a counting
 * wrapper, in the names the scan touched and the calls it made. Returns the second result, so assertions about
 * calls and names hold for both paths.
 */
export function scanTwoWays(
  rootFd: number,
  filter: NoteFilter,
  limits: ScanLimits,
  known: KnownNotes,
  native: Native,
  options: ScanOptions = {},
): ScanResult {
  const real = getNative();
  if (real === null) throw new Error('no native bindings on this platform');
  const threaded = countingNative(real);
  const outcome = (fn: () => ScanResult): unknown => {
    try {
      const r = fn();
      return {
        notes: r.notes.map((n) => [n.id, n.key, n.text]),
        truncated: r.truncated,
        cut: r.cut,
        rawEntries: r.rawEntries,
        skipped: r.skipped,
      };
    } catch (err) {
      return { threw: String(err) };
    }
  };
  const first = outcome(() =>
    scanTree(rootFd, filter, limits, known, threaded.native, { statThread: threaded.statThread(statPool()) }),
  );
  const counting = wrappers.get(native);
  const touchedBefore = counting?.touched.length ?? 0;
  const callsBefore = { ...counting?.calls };
  let result: ScanResult | undefined;
  let thrown: unknown;
  const second = outcome(() => {
    try {
      result = scanTree(rootFd, filter, limits, known, native, options);
      return result;
    } catch (err) {
      thrown = err;
      throw err;
    }
  });
  assert.deepStrictEqual(second, first, 'the scan returned something else with the stat thread');
  if (counting !== undefined) {
    assert.deepStrictEqual(
      counting.touched.slice(touchedBefore),
      threaded.touched,
      'the scan touched other names with the stat thread',
    );
    const delta: Record<string, number> = {};
    for (const [k, n] of Object.entries(counting.calls)) if (n !== callsBefore[k]) delta[k] = n - (callsBefore[k] ?? 0);
    assert.deepStrictEqual(delta, threaded.calls, 'the scan made other calls with the stat thread');
  }
  if (result === undefined) throw thrown;
  return result;
}

/** Create a FIFO at `file` with mkfifo(3) (Linux). */
export function makeFifo(file: string, mode = 0o600): void {
  mkfifoFn ??= koffi.load('libc.so.6').func('int mkfifo(const char *, unsigned int)') as never;
  if (mkfifoFn!(file, mode) !== 0) throw new Error(`mkfifo: errno ${koffi.errno()}`);
  fs.chmodSync(file, mode);
}
let mkfifoFn: ((file: string, mode: number) => number) | undefined;

/**
 * A parsed JSON answer (a CLI's --json output, a tool result, a worker reply) whose shape each test asserts field by
 * field; typing it would only restate those assertions.
 */
// biome-ignore lint/suspicious/noExplicitAny: see above; the one place tests may read untyped JSON
export type ParsedJson = any;
