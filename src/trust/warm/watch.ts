/**
 * Change notification for the warm scan (docs/DESIGN.md §Change notification): one inotify instance per caller
 * view, one watch per candidate note inode, the mount table polled once per call. A note whose watch has reported
 * nothing since its last statx, in a directory whose listing this call reused, keeps that statx's answer instead
 * of asking again; everything else is statted as without notification. This module only keeps the state (which
 * watch belongs to which entry, which entries an event made dirty, when every kept answer stops counting); the one
 * owner of freshness (`CallerView`, src/trust/view.ts) decides, and adds and drops the watches.
 */
import fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import type { Native } from '../../../native/types.js';
import { userWatchUsage, watchAllowance } from './watch-budget.js';

/** inotify event bits (include/uapi/linux/inotify.h). */
export const IN = Object.freeze({
  MODIFY: 0x2,
  ATTRIB: 0x4,
  CLOSE_WRITE: 0x8,
  DELETE_SELF: 0x400,
  MOVE_SELF: 0x800,
  UNMOUNT: 0x2000,
  Q_OVERFLOW: 0x4000,
  IGNORED: 0x8000,
});

/**
 * What a note watch asks for: every event on the inode itself that comes with a change a statx could show (mode,
 * owner, ACL and other xattrs, link count, timestamps: IN_ATTRIB; size and content: IN_MODIFY; the end of a writer:
 * IN_CLOSE_WRITE; the inode renamed or gone: IN_MOVE_SELF, IN_DELETE_SELF). IN_IGNORED, IN_UNMOUNT and
 * IN_Q_OVERFLOW come without asking. Opens and reads are not asked for: they change nothing a statx shows.
 */
export const NOTE_EVENTS = IN.MODIFY | IN.ATTRIB | IN.CLOSE_WRITE | IN.MOVE_SELF | IN.DELETE_SELF;

/** The fields of a listing entry (src/trust/warm/listing.ts `Entry`) this module reads and writes. */
export interface WatchedEntry {
  /** Raw name bytes and one terminating NUL. */
  readonly cname: Uint8Array;
  /** Watch descriptor of this entry's inode in its view's instance, or -1 (none). */
  wd: number;
  /**
   * The `NoteWatch.epoch` in which this entry's kept statx answer was taken with its watch already in place and
   * nothing reported since; 0 when any event came for it, or when it was never taken so.
   */
  clean: number;
}

/** Bytes of one read of the event queue: room for about 4,000 events without names. */
const READ_BYTES = 64 * 1024;
/** Reads per call before the rest of the queue is treated as an overflow (bounds one call's drain; see `begin`). */
const MAX_READS = 64;
/**
 * Watches one call adds at most (about 10 µs each here, through /proc/self/fd): a view's first warm call over a
 * large tree adds them over a few calls instead of all in one, and the rest are statted meanwhile.
 */
export const MAX_ADDS_PER_CALL = 20_000;
/** Instances this process opens at most (the per-user default limit is 128, shared with every other program). */
const MAX_INSTANCES = 16;
/** Used when /proc/sys/fs/inotify/max_user_watches cannot be read. */
const FALLBACK_USER_WATCHES = 8192;
/** How long a count of the user's other watches (`userWatchUsage`) stands before it is taken again, in ms. */
const USAGE_TTL_MS = 10_000;

/**
 * Process-wide: watches held by every instance, instances open, mount-table changes seen, notes vouched for; the
 * user limit and the reserve (-1 until read), and the allowance from the last count of the user's other watches.
 */
const shared = {
  held: 0,
  instances: 0,
  mountChanges: 0,
  ceiling: -1,
  vouched: 0,
  enospc: 0,
  limit: -1,
  reserve: -1,
  allowance: 0,
  others: 0,
  countedAt: Number.NEGATIVE_INFINITY,
  /** Calls begun (any view), the call of the last count, and the watches held at that count. */
  calls: 0,
  countCall: -1,
  heldAtCount: 0,
  ttlMs: USAGE_TTL_MS,
};

/**
 * Watches the kernel refused with ENOSPC, over every instance of this process: the per-user limit
 * (max_user_watches) is shared with every other process of the same user (tests and diagnostics).
 */
export function watchesRefusedForSpace(): number {
  return shared.enospc;
}

/** Notes whose kept answer stood in for a statx, over every scan of this process (tests and diagnostics). */
export function notesVouched(): number {
  return shared.vouched;
}

/** Adds one scan's count of notes whose kept answer stood in for a statx (`notesVouched`). */
export function countVouched(n: number): void {
  shared.vouched += n;
}

/**
 * The user's limit and its reserve: `limit` is /proc/sys/fs/inotify/max_user_watches (read once), `reserve` an
 * eighth of it and at least 8,192, left to the user's other programs (editors, sync tools) whatever number of
 * bridge processes the user runs.
 */
export function userWatchLimits(): { limit: number; reserve: number } {
  if (shared.limit < 0) {
    let limit = FALLBACK_USER_WATCHES;
    try {
      const n = Number.parseInt(fs.readFileSync('/proc/sys/fs/inotify/max_user_watches', 'latin1').trim(), 10);
      if (Number.isSafeInteger(n) && n > 0) limit = n;
    } catch {
      // keep the fallback
    }
    shared.limit = limit;
    shared.reserve = Math.max(8192, Math.floor(limit / 8));
  }
  return { limit: shared.limit, reserve: shared.reserve };
}

/**
 * The most watches all of the user's processes may hold before this one stops adding: the user limit less the
 * reserve. 168,469 of the 192,536 of a machine with 2 GiB of memory (the kernel's default scales with memory).
 */
export function watchCeiling(): number {
  if (shared.ceiling < 0) {
    const { limit, reserve } = userWatchLimits();
    shared.ceiling = Math.max(0, limit - reserve);
  }
  return shared.ceiling;
}

/**
 * The watches this process may hold now (`watchAllowance` over a count of the user's other watches, never above
 * `watchCeiling`). The count is taken only here, so only a call that wants to add a watch pays for it: once per
 * call while the last count allowed new watches (the process is growing, and each call sees what the others took
 * meanwhile), else at most once per `USAGE_TTL_MS`. An incomplete count allows no new watch.
 */
function allowanceNow(): number {
  const now = performance.now();
  const growing = shared.allowance > shared.heldAtCount && shared.countCall !== shared.calls;
  if (growing || now - shared.countedAt >= shared.ttlMs) {
    shared.countedAt = now;
    shared.countCall = shared.calls;
    shared.heldAtCount = shared.held;
    const { limit, reserve } = userWatchLimits();
    const usage = userWatchUsage(process.getuid?.() ?? -1);
    shared.others = usage.watches;
    shared.allowance = usage.complete
      ? watchAllowance(limit, reserve, usage.watches, shared.held, usage.holders)
      : shared.held;
  }
  return Math.min(shared.allowance, watchCeiling());
}

/** Watches held by this process in all instances (tests and diagnostics). */
export function watchesHeld(): number {
  return shared.held;
}

/** Tests only: lowers (or restores, with -1) the process-wide watch ceiling. */
export function setWatchCeilingForTests(ceiling: number): void {
  shared.ceiling = ceiling;
  shared.countedAt = Number.NEGATIVE_INFINITY;
}

/**
 * Tests only: the user limit and reserve this process assumes (instead of max_user_watches), and how long a count
 * of the user's other watches stands; `null` restores the real values.
 */
export function setUserWatchLimitsForTests(over: { limit: number; reserve: number; ttlMs: number } | null): void {
  shared.limit = over?.limit ?? -1;
  shared.reserve = over?.reserve ?? -1;
  shared.ttlMs = over?.ttlMs ?? USAGE_TTL_MS;
  shared.ceiling = -1;
  shared.countedAt = Number.NEGATIVE_INFINITY;
}

/**
 * One caller view's inotify instance and the entries its watches belong to.
 *
 * An entry counts as clean (its kept statx answer is what a statx now would return) only while `clean === epoch`:
 * any event on its watch sets `clean` to 0, and anything that could have hidden an event (a queue overflow, a
 * change of the mount table, a failed read, an unreadable mount table) moves `epoch` on, which voids every entry at
 * once. The scan adds the listing condition (the directory's listing reused in this call, so the name still names
 * the watched inode); see docs/DESIGN.md §Change notification for the rule and its proof.
 */
export class NoteWatch {
  /** Current epoch (≥ 1). An entry's `clean` equal to it vouches for its kept answer. */
  epoch = 1;
  private fd = -1;
  private native: Native | null = null;
  /** Entries by watch descriptor (the kernel hands out small increasing numbers, cyclically). */
  private readonly byWd: (WatchedEntry | undefined)[] = [];
  private held = 0;
  /** ENOSPC seen: no new watch until one is given back. */
  private full = false;
  /** Watches added in this call (MAX_ADDS_PER_CALL). */
  private addedNow = 0;
  private mounts = shared.mountChanges;
  private readonly buf = Buffer.alloc(READ_BYTES);
  /** Counts for tests, the bench and diagnostics. */
  readonly counts = { added: 0, removed: 0, events: 0, dirtied: 0, overflows: 0, mountChanges: 0, refused: 0 };

  /** Watches this instance holds. */
  get size(): number {
    return this.held;
  }

  /**
   * Starts a call: true when notification may vouch for notes in this call; false when it may not (no inotify on
   * this platform, the tree is not on a local filesystem, the mount table cannot be polled, no instance could be
   * opened), and then every note is statted.
   *
   * In order: the root's filesystem type (fstatfs), the mount table (poll; a change moves the epoch), then the
   * whole event queue is read, each event dirtying the entry of its watch (IN_IGNORED also forgets the watch) and
   * IN_Q_OVERFLOW moving the epoch. The drain stops after MAX_READS reads (a queue refilled as fast as it is read):
   * the epoch moves, and what is left is read by the next call. Cost: one fstatfs, one poll, and reads of what is
   * queued (at most max_queued_events, 16,384 by default, before the kernel reports an overflow instead).
   *
   * @param native bindings (this call's; kept for `add`, `drop` and `close` until the next `begin`)
   * @param rootFd the scan's root descriptor (the whole tree is on its filesystem: docs/TRUST.md §Scan)
   */
  begin(native: Native, rootFd: number): boolean {
    this.native = native;
    this.addedNow = 0;
    shared.calls++;
    if (
      native.watchOpen === undefined ||
      native.watchRead === undefined ||
      native.mountsChanged === undefined ||
      native.localFilesystem === undefined
    )
      return false;
    if (!native.localFilesystem(rootFd)) {
      this.close();
      return false;
    }
    const changed = native.mountsChanged();
    if (changed === null) {
      this.close();
      return false;
    }
    if (changed) shared.mountChanges++;
    if (this.mounts !== shared.mountChanges) {
      this.mounts = shared.mountChanges;
      this.counts.mountChanges++;
      this.epoch++;
    }
    if (this.fd < 0) {
      if (shared.instances >= MAX_INSTANCES) return false;
      const fd = native.watchOpen();
      if (fd < 0) return false;
      this.fd = fd;
      shared.instances++;
      this.epoch++;
    }
    for (let reads = 0; ; reads++) {
      if (reads === MAX_READS) {
        this.epoch++;
        this.counts.overflows++;
        break;
      }
      const n = native.watchRead(this.fd, this.buf);
      if (n === 0) break;
      if (n < 0) {
        // Nothing read can be trusted to be complete: start over with a new instance on the next call.
        this.close();
        return false;
      }
      this.apply(n);
    }
    return true;
  }

  /** Applies the `n` bytes of events in `buf` (struct inotify_event: wd i32, mask u32, cookie u32, len u32, name). */
  private apply(n: number): void {
    const buf = this.buf;
    for (let at = 0; at + 16 <= n; at += 16 + buf.readUInt32LE(at + 12)) {
      const wd = buf.readInt32LE(at);
      const mask = buf.readUInt32LE(at + 4);
      this.counts.events++;
      if ((mask & IN.Q_OVERFLOW) !== 0) {
        this.epoch++;
        this.counts.overflows++;
        continue;
      }
      const e = wd > 0 ? this.byWd[wd] : undefined;
      if (e === undefined) continue; // a watch given back (its last events, then IN_IGNORED)
      if (e.clean !== 0) this.counts.dirtied++;
      e.clean = 0;
      if ((mask & IN.IGNORED) !== 0) {
        // The kernel removed the watch (inode deleted, filesystem unmounted).
        this.byWd[wd] = undefined;
        e.wd = -1;
        this.held--;
        shared.held--;
        this.full = false;
      }
    }
  }

  /**
   * Watches the entry `e` of the open directory `dirFd` (its name resolved in that directory, not followed). Call
   * it before the statx whose answer the entry will keep. Does nothing when the entry has a watch, when this
   * process holds its share of the user's watches (`allowanceNow`: what the user's other processes hold and the
   * reserve are left), when this call added MAX_ADDS_PER_CALL, or after ENOSPC until a watch is given back. When
   * the kernel answers
   * with a watch descriptor another entry holds (the same inode under two names), neither entry keeps it as its own:
   * the other is dirtied and this one stays unwatched, so both are statted.
   */
  add(dirFd: number, e: WatchedEntry): void {
    const native = this.native;
    if (this.fd < 0 || e.wd > 0 || this.full || native?.watchAdd === undefined) return;
    if (this.addedNow >= MAX_ADDS_PER_CALL || shared.held >= allowanceNow()) return;
    this.addedNow++;
    const wd = native.watchAdd(this.fd, dirFd, e.cname, NOTE_EVENTS);
    if (wd <= 0) {
      this.counts.refused++;
      if (wd === -28) {
        // ENOSPC
        this.full = true;
        shared.enospc++;
      }
      return;
    }
    const other = this.byWd[wd];
    if (other !== undefined) {
      other.clean = 0;
      this.counts.refused++;
      return;
    }
    this.byWd[wd] = e;
    e.wd = wd;
    e.clean = 0;
    this.held++;
    shared.held++;
    this.counts.added++;
  }

  /** Gives back the watch of `e`, if it has one; `e` is no longer clean. */
  drop(e: WatchedEntry): void {
    e.clean = 0;
    if (e.wd <= 0) return;
    const wd = e.wd;
    e.wd = -1;
    if (this.byWd[wd] !== e) return;
    this.byWd[wd] = undefined;
    if (this.fd >= 0) this.native?.watchRemove?.(this.fd, wd);
    this.held--;
    shared.held--;
    this.full = false;
    this.counts.removed++;
  }

  /** Closes the instance (every watch goes with it) and forgets every entry's watch; `begin` opens a new one. */
  close(): void {
    if (this.fd < 0) return;
    for (let wd = 0; wd < this.byWd.length; wd++) {
      const e = this.byWd[wd];
      if (e === undefined) continue;
      e.wd = -1;
      e.clean = 0;
    }
    this.byWd.length = 0;
    shared.held -= this.held;
    this.held = 0;
    this.full = false;
    shared.instances--;
    try {
      this.native?.close(this.fd);
    } catch {
      // the descriptor is gone either way
    }
    this.fd = -1;
    this.epoch++;
  }
}

/**
 * For `doctor`: whether warm searches of the tree under `rootFd` (`notes` visible notes) use change notification in
 * a server or worker started with the environment `env`, and why not when not (docs/DESIGN.md §Change
 * notification). One fstatfs of the root; never throws.
 *
 * @returns one line, e.g. "change notification: on (inotify; ...)"
 */
export function notificationStatus(
  native: Native,
  rootFd: number,
  notes: number,
  env: NodeJS.ProcessEnv = process.env,
): string {
  const lead = 'change notification:';
  if (env.MEMORY_BRIDGE_WATCH === '0')
    return `${lead} off (MEMORY_BRIDGE_WATCH=0): every note is statted on every search`;
  if (native.localFilesystem === undefined)
    return `${lead} off (no inotify on this platform): every note is statted on every search`;
  if (!native.localFilesystem(rootFd))
    return `${lead} off (the root is not on a local filesystem: network, FUSE or overlay): every note is statted on every search`;
  const ceiling = watchCeiling();
  const { limit, reserve } = userWatchLimits();
  const usage = userWatchUsage(process.getuid?.() ?? -1);
  const over =
    notes > ceiling
      ? `; ${notes - ceiling} notes past that are statted on every search (raise fs.inotify.max_user_watches)`
      : '';
  const counted = usage.complete ? '' : ' at least';
  const unread = usage.unreadable > 0 ? `, ${usage.unreadable} processes not readable` : '';
  return (
    `${lead} on (inotify, one watch per note, at most ${ceiling} for all of this user's processes${over}); ` +
    `this user's processes hold${counted} ${usage.watches} of the ${limit} watches of max_user_watches in ` +
    `${usage.instances} inotify instances${unread}, and ${reserve} are left to the user's other programs`
  );
}
