/**
 * Real-filesystem fixtures for tests: owner-only temporary trees, notes, profile homes with policies, and
 * real ACLs written as `system.posix_acl_access` bytes through fsetxattr (no `setfacl` needed).
 * Everything here creates real files and descriptors; nothing is mocked.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import koffi from 'koffi';

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

/** Path of the policy inside a profile home (PRODUCT.md §4). */
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

/** Linux ACL tags and the "undefined id" marker (platform.md). */
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

/** Number of descriptors this process holds (entries of /proc/self/fd, minus the one used to list it). Linux only. */
export function openDescriptorCount(): number {
  return fs.readdirSync('/proc/self/fd').length - 1;
}

/**
 * A pass-through wrapper around a real Native binding that counts calls per method and records the names given
 * to openDirAt, openFileAt and statAt. Not a mock: every call goes to the real binding. Use it to prove what the
 * code under test did (or never did) touch.
 */
export interface CountingNative {
  native: import('../../native/types.js').Native;
  calls: Record<string, number>;
  /** `${method}:${name}` for openDirAt/openFileAt/statAt, in call order. */
  touched: string[];
  reset(): void;
}

export function countingNative(real: import('../../native/types.js').Native): CountingNative {
  const calls: Record<string, number> = {};
  const touched: string[] = [];
  const bump = (m: string): void => {
    calls[m] = (calls[m] ?? 0) + 1;
  };
  const native: import('../../native/types.js').Native = {
    platform: real.platform,
    arch: real.arch,
    verified: real.verified,
    openRoot: () => (bump('openRoot'), real.openRoot()),
    openDirAt: (fd, name) => (bump('openDirAt'), touched.push(`openDirAt:${name}`), real.openDirAt(fd, name)),
    openFileAt: (fd, name) => (bump('openFileAt'), touched.push(`openFileAt:${name}`), real.openFileAt(fd, name)),
    close: (fd) => (bump('close'), real.close(fd)),
    fstat: (fd) => (bump('fstat'), real.fstat(fd)),
    statAt: (fd, name) => (bump('statAt'), touched.push(`statAt:${name}`), real.statAt(fd, name)),
    readAcl: (fd) => (bump('readAcl'), real.readAcl(fd)),
    listDir: (fd, max) => (bump('listDir'), real.listDir(fd, max)),
    pread: (fd, buf, off, len, pos) => (bump('pread'), real.pread(fd, buf, off, len, pos)),
    flock: (fd, op) => (bump('flock'), real.flock(fd, op)),
  };
  return {
    native,
    calls,
    touched,
    reset() {
      for (const k of Object.keys(calls)) delete calls[k];
      touched.length = 0;
    },
  };
}

/** Create a FIFO at `file` with mkfifo(3) (Linux). */
export function makeFifo(file: string, mode = 0o600): void {
  mkfifoFn ??= koffi.load('libc.so.6').func('int mkfifo(const char *, unsigned int)') as never;
  if (mkfifoFn!(file, mode) !== 0) throw new Error(`mkfifo: errno ${koffi.errno()}`);
  fs.chmodSync(file, mode);
}
let mkfifoFn: ((file: string, mode: number) => number) | undefined;
