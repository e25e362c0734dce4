/**
 * Which notes the open-for-writing check can reach (docs/DESIGN.md "Descriptors opened for writing before a chmod",
 * "Whose notes the check reaches"). The check takes a read lease, and Linux grants a lease only to the file's owner
 * or to a process with CAP_LEASE (fcntl(2), F_SETLEASE: EACCES otherwise). So a bridge that runs as an ordinary
 * user checks its own notes only; a note a named writer (or root) owns is judged by the rest of the rule, and a
 * descriptor an outsider opened while that note was writable goes unseen. This module says so, with a count, for
 * `doctor`; it decides nothing.
 */
import fs from 'node:fs';

/** CAP_LEASE's bit in the capability sets of /proc/PID/status (linux/capability.h). */
const CAP_LEASE = 28n;

/**
 * True when this process may take a lease on a file it does not own: uid 0 with the capability, or CAP_LEASE in
 * the effective set (an ambient capability, e.g. systemd's `AmbientCapabilities=CAP_LEASE`).
 *
 * @param status the text of /proc/self/status (read here when not given)
 * @returns false when the `CapEff:` line is missing or unreadable (no procfs: not Linux)
 */
export function hasLeaseCapability(status?: string): boolean {
  let text = status;
  if (text === undefined) {
    try {
      text = fs.readFileSync('/proc/self/status', 'latin1');
    } catch {
      return false;
    }
  }
  const m = /^CapEff:\s*([0-9a-f]{1,16})$/m.exec(text);
  return m !== null && ((BigInt(`0x${m[1]}`) >> CAP_LEASE) & 1n) === 1n;
}

/**
 * The operator line for `doctor`: how many of the visible notes the open-for-writing check cannot reach, and what
 * to do about it.
 *
 * @param owners the owner uid of each visible note
 * @param uid the running user's uid
 * @param capable `hasLeaseCapability()`
 */
export function writeCheckLine(owners: Iterable<number>, uid: number, capable: boolean): string {
  const lead = 'open-for-writing check:';
  if (capable) return `${lead} every note (this process has CAP_LEASE)`;
  let n = 0;
  for (const owner of owners) if (owner !== uid) n++;
  if (n === 0) return `${lead} every note (all are yours)`;
  return (
    `${lead} ${n} note${n === 1 ? '' : 's'} owned by another user (a named writer or root) cannot be checked by ` +
    'this process: only a file’s owner or a process with CAP_LEASE may take the lease, so a descriptor someone ' +
    'opened while such a note was writable by them goes unseen. Run memory-bridge with CAP_LEASE (systemd ' +
    'AmbientCapabilities=CAP_LEASE), or have the owner replace a note that was ever writable by others (write a new ' +
    'file, rename it over) instead of chmodding it'
  );
}
