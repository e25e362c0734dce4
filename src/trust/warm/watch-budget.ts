/**
 * The user's inotify watches (docs/DESIGN.md §Change notification, "Limits and costs"). `max_user_watches` is a
 * per-user limit: every process of the user draws on it, so several bridge processes (one per profile, a server
 * and its workers) together with the user's editors and sync tools share one budget. This module counts what the
 * user's other processes hold, from /proc, so that `NoteWatch` can leave the reserve to the user's other programs
 * however many bridges run: the kernel keeps no per-user count a process can read.
 *
 * How: every /proc/PID directory owned by the running user, except this process; each of its descriptors whose
 * link reads `anon_inode:inotify`; the lines of /proc/PID/fdinfo/FD that start with `inotify wd:` (one per watch).
 * A process whose descriptors cannot be listed (not dumpable) is left out and counted in `unreadable`.
 */
import fs from 'node:fs';

/** What the user's other processes hold. */
export interface UserWatchUsage {
  /** Watches in all their inotify instances. */
  watches: number;
  /** Their inotify instances. */
  instances: number;
  /** Processes among them that hold at least one watch (other bridges, editors, sync tools). */
  holders: number;
  /** Processes of the user whose descriptors could not be listed (their watches are not in `watches`). */
  unreadable: number;
  /** False when a bound below stopped the count: `watches` is then a lower bound. */
  complete: boolean;
}

/** Bounds of one count: processes of the user looked at, descriptors whose link is read. */
export const USAGE_LIMITS = Object.freeze({ processes: 4096, descriptors: 262_144 });

const INOTIFY_LINK = 'anon_inode:inotify';
const WATCH_LINE = Buffer.from('\ninotify wd:', 'latin1');

/**
 * Counts the inotify watches and instances of the processes of user `uid` other than `selfPid`. Cost: one readdir
 * of /proc, one stat per process, one readdir and one readlink per descriptor of the user's processes (bounded by
 * `USAGE_LIMITS`), and one read of the fdinfo of each inotify descriptor (about 100 bytes per watch, so at most
 * about 100 bytes × max_user_watches in all). Never throws.
 *
 * @param uid the user whose processes count (the running user)
 * @param selfPid left out: the caller knows its own watches exactly
 * @param proc the procfs mount (tests may not change it; it is a parameter for clarity)
 */
export function userWatchUsage(uid: number, selfPid: number = process.pid, proc = '/proc'): UserWatchUsage {
  const usage: UserWatchUsage = { watches: 0, instances: 0, holders: 0, unreadable: 0, complete: true };
  let pids: string[];
  try {
    pids = fs.readdirSync(proc);
  } catch {
    return { ...usage, complete: false };
  }
  let processes = 0;
  let descriptors = 0;
  for (const pid of pids) {
    if (!/^[1-9][0-9]*$/.test(pid) || Number(pid) === selfPid) continue;
    const dir = `${proc}/${pid}`;
    try {
      if (fs.statSync(dir).uid !== uid) continue;
    } catch {
      continue; // gone meanwhile
    }
    if (++processes > USAGE_LIMITS.processes) return { ...usage, complete: false };
    let fds: string[];
    try {
      fds = fs.readdirSync(`${dir}/fd`);
    } catch {
      usage.unreadable++;
      continue;
    }
    const had = usage.watches;
    for (const fd of fds) {
      if (++descriptors > USAGE_LIMITS.descriptors) return { ...usage, complete: false };
      let link: string;
      try {
        link = fs.readlinkSync(`${dir}/fd/${fd}`);
      } catch {
        continue;
      }
      if (link !== INOTIFY_LINK) continue;
      usage.instances++;
      usage.watches += watchLines(`${dir}/fdinfo/${fd}`);
    }
    if (usage.watches > had) usage.holders++;
  }
  return usage;
}

/** Lines starting with `inotify wd:` in an fdinfo file (0 when it cannot be read). */
function watchLines(file: string): number {
  let text: Buffer;
  try {
    text = fs.readFileSync(file);
  } catch {
    return 0;
  }
  let n = 0;
  for (let at = text.indexOf(WATCH_LINE); at !== -1; at = text.indexOf(WATCH_LINE, at + WATCH_LINE.length)) n++;
  return n;
}

/**
 * How many watches this process may hold in all, given what it holds and what the user's other processes hold:
 * what it holds, plus a share of what is left of `limit` after `reserve` and `others`: half of it divided among
 * this process and the `holders` (so that processes counting at about the same moment take together at most
 * about half of what was free, and the next counts see what they took). Never less than `held` (watches are not
 * given back to make room; new ones stop).
 *
 * @param limit max_user_watches
 * @param reserve watches left to the user's other programs
 * @param others watches of the user's other processes (`userWatchUsage`)
 * @param held watches of this process
 * @param holders the user's other processes that hold watches
 */
export function watchAllowance(limit: number, reserve: number, others: number, held: number, holders = 0): number {
  const free = limit - reserve - others - held;
  return free <= 0 ? held : held + Math.ceil(free / (2 * (1 + holders)));
}
