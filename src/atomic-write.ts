/**
 * The one way memory-bridge writes a file it owns so that a crash or a second writer never leaves a half-written
 * one behind: create a new file exclusively (never through an existing name or a planted link), write it, fsync
 * it, rename it into place in the same directory, fsync the directory so the rename itself is durable
 * (rename(2), fsync(2)). Used by the clients file (src/server/clients.ts), the plugin install
 * (src/hermes/install.ts, which renames a whole staged directory) and the policy `init` creates
 * (src/cli/init-policy.ts, `writeNewFile` only: it never replaces a file) and the demo's policy edits
 * (src/cli/demo.ts). A leaf: Node's `fs` only. The fleet export
 * writes through descriptors instead (src/fleet/writer.ts), with one syncfs per run.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * Create `file` (which must not exist: O_CREAT|O_EXCL|O_NOFOLLOW) with exactly `mode` (set again with fchmod, so
 * the umask does not matter), write `bytes`, fsync and close it.
 *
 * @param mode permission bits, e.g. 0o600
 * @throws the system error of open, write or fsync (EEXIST when anything is at `file`, a link included); a file
 *   created before a failed write stays, for the caller to remove
 */
export function writeNewFile(file: string, bytes: Buffer | string, mode: number): void {
  fillAndClose(createExclusive(file, mode), bytes, mode);
}

/** open(2) with O_WRONLY|O_CREAT|O_EXCL|O_NOFOLLOW and `mode`; the descriptor. */
function createExclusive(file: string, mode: number): number {
  return fs.openSync(
    file,
    fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW,
    mode,
  );
}

/** fchmod to `mode` (the umask must not matter), write, fsync; the descriptor is closed whatever happens. */
function fillAndClose(fd: number, bytes: Buffer | string, mode: number): void {
  try {
    fs.fchmodSync(fd, mode);
    fs.writeFileSync(fd, bytes);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * fsync a directory, which makes the creates, renames and removals of names in it durable.
 *
 * @param onFailure 'throw' passes the system error on; 'ignore' makes it best effort (some filesystems refuse an
 *   fsync on a directory), for a write whose durability is a courtesy rather than the contract
 */
export function syncDirectory(dir: string, onFailure: 'throw' | 'ignore'): void {
  try {
    const fd = fs.openSync(dir, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  } catch (err) {
    if (onFailure === 'throw') throw err;
  }
}

/**
 * Replace (or create) `file` atomically: `writeNewFile` under a random hidden name in the same directory
 * (`.<name>.<16 hex>.tmp`), then `beforeRename` (a last check that may throw to abandon the write), rename over
 * `file`, `syncDirectory`. The temp file, once created, is removed on any failure before the rename. Readers see the old bytes or
 * the new ones, never a mix. The caller vouches for the directory: no one else may create or swap names in it.
 *
 * @param file absolute path of the file to replace
 * @param mode permission bits of the new file, e.g. 0o600
 * @param beforeRename runs after the new file is durable and before it takes the name
 * @throws whatever `beforeRename` throws, or the system error of a step (nothing replaced)
 */
export function replaceFile(file: string, bytes: Buffer | string, mode: number, beforeRename?: () => void): void {
  const dir = path.dirname(file);
  const temp = path.join(dir, `.${path.basename(file)}.${randomBytes(8).toString('hex')}.tmp`);
  const fd = createExclusive(temp, mode);
  let renamed = false;
  try {
    fillAndClose(fd, bytes, mode);
    beforeRename?.();
    fs.renameSync(temp, file);
    renamed = true;
    syncDirectory(dir, 'throw');
  } finally {
    if (!renamed) fs.rmSync(temp, { force: true });
  }
}
