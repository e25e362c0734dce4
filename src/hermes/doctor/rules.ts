/**
 * The writer rule in words, for doctor's details: what admitted or refused the root, each directory on the way to
 * a note and the note (`describeTrust`, src/trust/explain.ts), and how many visible notes each named writer rule
 * admitted. Objects are opened without judgement (no-follow) and only described: the trusted walk has already
 * given the verdict.
 */
import type { Native } from '../../../native/types.js';
import type { ResolvedWriters } from '../../policy/accounts.js';
import { describeTrust, type IdNames } from '../../trust/explain.js';
import { isRegularFile, runningUid } from '../../trust/rule.js';
import { closeQuietly } from '../../trust/walk.js';
import { NO_WRITERS, type Writers } from '../../trust/writers.js';

/** Names for the writers' ids (from the resolved list), for the writer-rule lines. */
function namesOf(resolved: ResolvedWriters | undefined): IdNames {
  const users = new Map<number, string>();
  const groups = new Map<number, string>();
  for (const w of resolved?.list ?? [])
    if (w.name !== undefined) (w.kind === 'user' ? users : groups).set(w.id, w.name);
  return { user: (id) => users.get(id), group: (id) => groups.get(id) };
}

/**
 * Opens `absPath` one component at a time from `/` with no-follow opens and no judgement (doctor only, to describe
 * an object the trusted walk refused), runs `fn` on it and closes it; undefined when it cannot be opened.
 */
function withUnjudgedDir<T>(absPath: string, native: Native, fn: (fd: number) => T): T | undefined {
  let fd = -1;
  try {
    fd = native.openRoot();
    for (const name of absPath.slice(1).split('/')) {
      const next = native.openDirAt(fd, name);
      closeQuietly(native, fd);
      fd = next;
    }
    return fn(fd);
  } catch {
    return undefined;
  } finally {
    if (fd >= 0) closeQuietly(native, fd);
  }
}

/** The root directory's writer rule in words (owner, group, others, ACL) for the root check's details. */
export function rootRuleLines(root: string, native: Native, writers: Writers, resolved?: ResolvedWriters): string[] {
  const line = withUnjudgedDir(root, native, (fd) => {
    const { parts } = describeTrust(native.fstat(fd), native.readAcl(fd), runningUid(), writers, namesOf(resolved));
    return `the root: ${parts.join('; ')}`;
  });
  return line === undefined ? [] : [line];
}

/**
 * The writer rule of every object from the root down to the note `id` (root, each directory, the note), one line
 * each: what admitted it and, for the first refused part, what refused it. Objects are opened without judgement
 * (no-follow; a note only when a no-follow stat shows a regular file) and only described.
 */
export function pathRuleLines(
  root: string,
  id: string,
  native: Native,
  writers: Writers,
  resolved?: ResolvedWriters,
): string[] {
  const names = namesOf(resolved);
  const uid = runningUid();
  const segments = id.split('/');
  const lines: string[] = [];
  const say = (label: string, fd: number): void => {
    const { parts, refused } = describeTrust(native.fstat(fd), native.readAcl(fd), uid, writers, names);
    lines.push(`${label}: ${refused === null ? 'admitted' : `REFUSED (${refused})`}: ${parts.join('; ')}`);
  };
  withUnjudgedDir(root, native, (rootFd) => {
    say('the root', rootFd);
    let dirFd = rootFd;
    try {
      for (let i = 0; i < segments.length - 1; i++) {
        const next = native.openDirAt(dirFd, segments[i]!);
        if (dirFd !== rootFd) closeQuietly(native, dirFd);
        dirFd = next;
        say(segments.slice(0, i + 1).join('/'), dirFd);
      }
      const last = segments[segments.length - 1]!;
      if (!isRegularFile(native.statAt(dirFd, last))) return;
      const fd = native.openFileAt(dirFd, last);
      try {
        say(id, fd);
      } finally {
        closeQuietly(native, fd);
      }
    } catch {
      // Missing or unopenable: the trusted read above already gave the reason.
    } finally {
      if (dirFd !== rootFd) closeQuietly(native, dirFd);
    }
  });
  return lines;
}

/** With named writers: how many visible notes each writer rule admitted (owner a writer user, group write). */
export function writerRuleCounts(
  notes: readonly { stat: { uid: number; gid: number; mode: number } }[],
  writers: Writers,
  resolved?: ResolvedWriters,
): string[] {
  if (writers === NO_WRITERS) return [];
  const names = namesOf(resolved);
  const byOwner = new Map<number, number>();
  const byGroup = new Map<number, number>();
  const me = runningUid();
  for (const { stat } of notes) {
    if (stat.uid !== 0 && stat.uid !== me && writers.uids.has(stat.uid))
      byOwner.set(stat.uid, (byOwner.get(stat.uid) ?? 0) + 1);
    if ((stat.mode & 0o020) !== 0 && writers.gids.has(stat.gid))
      byGroup.set(stat.gid, (byGroup.get(stat.gid) ?? 0) + 1);
  }
  const lines: string[] = [];
  for (const [uid, n] of byOwner)
    lines.push(`admitted ${n} × owner uid ${uid}${label(names.user(uid))}: a named writer user`);
  for (const [gid, n] of byGroup)
    lines.push(`admitted ${n} × writable by group gid ${gid}${label(names.group(gid))}: a named writer group`);
  if (lines.length === 0)
    lines.push("no visible note needed a writer rule (all are yours or root's and not group-writable)");
  return lines;
}

const label = (name: string | undefined): string => (name === undefined ? '' : ` (${name})`);
