/**
 * The per-home HMAC key of `"queries": "hmac"` (docs/AUDIT.md §Queries): 32 random bytes in
 * `<home>/plugin-data/memory-bridge/audit.key`, beside the policy and outside the audit directory (so a copy of the
 * trail never carries it). Made once, 0600, by the first writer that needs it, while it holds the audit directory's
 * lock (so no other writer reads it half written); read through the trusted file read on every use.
 */
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Native } from '../../native/types.js';
import type { WriteNative } from '../../native/write-linux.js';
import { readTrustedFile, openTrustedDir } from '../trust/path.js';
import { closeQuietly } from '../trust/walk.js';
import { KEY_FILE_NAME, policyDirOf } from './files.js';
import { AuditUnwritable } from './writer-error.js';

/** Bytes of key. */
export const KEY_BYTES = 32;

/**
 * The home's key, made when missing. Call only while holding the audit directory's lock.
 *
 * @returns KEY_BYTES bytes
 * @throws AuditUnwritable('key_untrusted' | 'key_create') when the key file fails the trust rule, has the wrong
 *   size, or cannot be made
 */
export function homeKey(home: string, native: Native, write: WriteNative): Buffer {
  const file = path.posix.join(policyDirOf(home), KEY_FILE_NAME);
  try {
    const key = readTrustedFile(file, KEY_BYTES, native);
    if (key.length !== KEY_BYTES) throw new AuditUnwritable('key_untrusted');
    return key;
  } catch (err) {
    if (err instanceof AuditUnwritable) throw err;
    if ((err as { reason?: unknown }).reason !== 'missing') throw new AuditUnwritable('key_untrusted');
  }
  const key = randomBytes(KEY_BYTES);
  let dirFd = -1;
  let fd = -1;
  try {
    dirFd = openTrustedDir(policyDirOf(home), 'policy_dir', native);
    fd = write.createExclusive(dirFd, KEY_FILE_NAME, 0o600);
    fs.fchmodSync(fd, 0o600);
    if (fs.writeSync(fd, key) !== KEY_BYTES) throw new AuditUnwritable('key_create');
    fs.fsyncSync(fd);
    return key;
  } catch (err) {
    throw err instanceof AuditUnwritable ? err : new AuditUnwritable('key_create');
  } finally {
    if (fd >= 0) closeQuietly(native, fd);
    if (dirFd >= 0) closeQuietly(native, dirFd);
  }
}
