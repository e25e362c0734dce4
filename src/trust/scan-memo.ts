/**
 * Directory listings for the tree scan (src/trust/scan.ts): one directory's entries, sorted by raw name and
 * prepared once (decoded name, name rule, id, note name, id limits), and the `ScanMemo` that keeps them between the
 * calls of one caller view. Nothing here judges trust: every directory and note is still judged by the scan on its
 * own descriptor or stat, every call.
 */
import { NativeError, RAW_STAT_WORDS, type FileStat, type Native } from '../../native/types.js';
import { BridgeError, type Reason } from '../errors.js';
import { idWithinLimits, isNoteName, segmentReason } from './names.js';
import type { NameArena } from './stat-pool.js';
import type { NameRule, NoteFilter, ScannedNote } from './types.js';
import { closeQuietly } from './walk.js';
import { NoteWatch } from './watch.js';

/** Names are decoded strictly, and a leading U+FEFF is kept so the decoded name re-encodes to the same bytes. */
const nameDecoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function isAscii(raw: Uint8Array): boolean {
  for (let i = 0; i < raw.length; i++) if (raw[i]! >= 0x80) return false;
  return true;
}

/**
 * Decodes a raw directory entry name, or null when it is not valid UTF-8. ASCII names (the common case) skip
 * the decoder and return `latin1`, the same bytes already decoded as Latin-1 (the listing's sort key).
 */
function decodeName(raw: Uint8Array, latin1: string): string | null {
  if (isAscii(raw)) return latin1;
  try {
    return nameDecoder.decode(raw);
  } catch {
    return null;
  }
}

/** Ascending order of Latin-1 strings, which is the byte order of the names they were decoded from. */
function byLatin1<T extends { sortKey: string }>(a: T, b: T): number {
  return a.sortKey < b.sortKey ? -1 : a.sortKey > b.sortKey ? 1 : 0;
}

/** Policy decision not yet asked for this entry (see `Entry.allows`). */
export const UNDECIDED = -1;

/**
 * One directory entry prepared for the walk: everything that is a pure function of the raw name, the directory's id
 * and the name rule, decided once per listing; policy answers, decided once per listing and filter object; and the
 * last raw stat of the name with the objects built from it (notes only).
 */
export interface Entry {
  /** Latin-1 form of the raw name (the sort key; equal to `name` for ASCII names). */
  sortKey: string;
  /** Raw name bytes and a NUL terminator, for `statRawAt`; empty when the name is never statted by name. */
  cname: Buffer;
  /** Decoded name, or null when the raw name is not UTF-8 (`bad_name`). */
  name: string | null;
  /** Why the name fails the name rule (`segmentReason`), or null. */
  nameReason: Reason | null;
  /** d_type from the listing. */
  type: number;
  /** Root-relative id (only meaningful when the name is decoded and passes the rule). */
  id: string;
  /** `isNoteName(name)`. */
  note: boolean;
  /** `idWithinLimits(id, depth)`. */
  withinLimits: boolean;
  /** `filter.allowsNote(id)` and `filter.mayEnter(id)` for the listing's `filter`: 1, 0, or UNDECIDED. */
  allows: number;
  enters: number;
  /** `${id}/`, built the first time the entry is entered as a directory. */
  prefix: string | undefined;
  /** Word offset of this entry's raw stat snapshot in `Listing.snaps`. */
  slot: number;
  /** The FileStat decoded from the snapshot (undefined: no snapshot yet), its identity key and known-note record. */
  stat: FileStat | undefined;
  key: string | undefined;
  known: ScannedNote | undefined;
  /**
   * The rule inputs (`ScanMemo.rulesFor`) under which `stat` passed the note metadata rule (`noteStatReason`), or
   * undefined: set when it passed, cleared whenever `stat` is replaced.
   */
  passed: object | undefined;
  /** Watch descriptor of the note's inode in the memo's `NoteWatch`, or -1 (src/trust/watch.ts). */
  wd: number;
  /** `NoteWatch.epoch` in which the snapshot was taken under a watch with nothing reported since, else 0. */
  clean: number;
  /** The scan (ScanMemo.generation) in which the snapshot last stood in for a statx (`ScanMemo.recheck`), else 0. */
  vouched: number;
}

/** A directory's sorted, prepared listing, and the identity of the directory it was taken from. */
export interface Listing {
  dev: bigint;
  ino: bigint;
  mtimeNs: bigint;
  ctimeNs: bigint;
  /** Raw entries the listing counted toward RAW_ENTRY_CEILING (every entry but `.` and `..`). */
  rawCount: number;
  entries: Entry[];
  /** RAW_STAT_WORDS words per entry: the last raw stat of each note name. */
  snaps: Uint32Array;
  /** The filter whose answers `Entry.allows`/`enters` hold. */
  filter: NoteFilter | null;
  /** May be reused by a later call whose fstat of the directory shows the same identity (see `ScanMemo`). */
  reusable: boolean;
  /** The scan (ScanMemo.generation) that last used it. */
  seen: number;
  /** The scan that last reused it as it was (its directory's identity unchanged since it was listed), else 0. */
  reusedAt: number;
  /** The note names shared with the stat pool's worker (built on the listing's first job; see stat-pool.ts). */
  arena: NameArena | null;
}

/** Default for `ScanMemo.racyMarginMs`: above the coarsest directory timestamp granularity in use (2 s, FAT). */
export const RACY_MARGIN_MS = 3000;

const NS_PER_MS = 1_000_000n;
const EMPTY = Buffer.alloc(0);

/** The raw directory entries one call has listed, against its raw entry ceiling (docs/TRUST.md §Budgets). */
export class RawEntryBudget {
  used = 0;

  /** @param ceiling raw entries this call may list (`rawCeilingOf(limits)`: at most RAW_ENTRY_CEILING) */
  constructor(readonly ceiling: number) {}

  /** Entries the next listing may still return. */
  get left(): number {
    return this.ceiling - this.used;
  }

  /**
   * Counts `n` more raw entries.
   *
   * @throws BridgeError('unavailable', 'entry_ceiling') past the ceiling
   */
  charge(n: number): void {
    if (n > this.ceiling - this.used) throw new BridgeError('unavailable', 'entry_ceiling');
    this.used += n;
  }
}

/**
 * What one caller view's scans keep between calls, so a warm scan costs about one statx per note. A scan without a
 * memo of its caller's gets a fresh one, used for that call only.
 *
 * Listings. A directory's listing is reused when this call's fstat of its open descriptor shows the same device,
 * inode, mtime and ctime as when it was listed: creating, removing or renaming an entry updates the directory's
 * mtime and ctime (POSIX), and ctime cannot be set back by anyone. Timestamps are coarse, though (the kernel's
 * clock tick, or the filesystem's granularity): an entry added within the same tick as the listing leaves them
 * unchanged. So a listing is kept for reuse only when it was taken more than `racyMarginMs` after the directory's
 * last change (the "racy" rule git uses for its index): any later change then gets a later timestamp. Directories
 * changed recently are listed afresh on every call. The residual risk is a filesystem whose timestamps come from
 * another clock (a network server running late by more than the margin): there a new entry could stay hidden until
 * the directory changes again. A reused listing can only hide a new name; it never serves an object without
 * checking it: every directory is still opened and judged on its descriptor, and every note is still statted and
 * judged, on every call. Raw entries of a reused listing count toward RAW_ENTRY_CEILING exactly as a fresh one.
 *
 * Notes. The last raw stat of each note name is kept; when this call's raw stat has the same words (every field a
 * FileStat holds), the FileStat and identity key built from it earlier are the ones this answer would build, so
 * they are reused instead of allocated. The trust rule then runs on that FileStat, every call.
 *
 * Policy answers are kept per listing for one filter object (a `Policy` is immutable and reused for identical
 * bytes, see src/policy/load.ts); another filter object asks again.
 */
export class ScanMemo {
  /** Listings by directory id prefix ('' for the root, else `${dirId}/`). */
  readonly listings = new Map<string, Listing>();
  /** Counts for tests and diagnostics: listings taken from the directory, and listings reused. */
  readonly stats = { listed: 0, reused: 0 };
  generation = 0;
  /** Root identity and name rule the listings were prepared for; another root or rule starts over. */
  root = '';
  names: NameRule | '' = '';
  /** `Writers.tag` the kept keys were built with; other writers start over (docs/TRUST.md §Named writers). */
  writers = '';
  /** The rule inputs of the last scan (`rulesFor`). */
  private rules: { key: string; token: object } = { key: '', token: {} };
  /** Change notification for this view's notes (src/trust/watch.ts), made on the first scan that asks for it. */
  watch: NoteWatch | null = null;
  /**
   * The last search of this view was cut by `max_entries` or `max_total_bytes`: its scans vouch for no note (every
   * note is statted) until one is not cut (docs/DESIGN.md §Change notification, "Budget cuts"). Set by the caller.
   */
  budgetCut = false;

  /**
   * @param racyMarginMs how long after a directory's last change its listing may be kept for reuse (ms)
   * @param now          wall clock in ms (Date.now); tests may move it
   */
  constructor(
    readonly racyMarginMs: number = RACY_MARGIN_MS,
    readonly now: () => number = Date.now,
  ) {}

  /**
   * Starts a scan of the root whose fstat is `rootStat` under the name rule `names` and the writers whose tag is
   * `writers` (another root, rule or set of writers starts over).
   */
  begin(rootStat: FileStat, names: NameRule, writers = ''): void {
    const rootId = `${rootStat.dev}:${rootStat.ino}:${rootStat.mntId ?? ''}`;
    if (this.root !== rootId || this.names !== names || this.writers !== writers) {
      this.watch?.close();
      this.listings.clear();
      this.root = rootId;
      this.names = names;
      this.writers = writers;
    }
    this.generation++;
  }

  /**
   * A token for the inputs of the note metadata rule other than the stat (running uid, the root's device and mount,
   * max_file_bytes, the writers), spelled out in `key`: the same object while `key` stays the same from scan to
   * scan, a new one when it changes. `Entry.passed` holds it, so a verdict is only ever reused under equal inputs.
   */
  rulesFor(key: string): object {
    if (this.rules.key !== key) this.rules = { key, token: {} };
    return this.rules.token;
  }

  /** Ends the scan: forgets directories it did not visit (removed, denied, or past a budget stop), and their watches. */
  end(): void {
    for (const [prefix, listing] of this.listings) {
      if (listing.seen === this.generation) continue;
      this.dropWatches(listing);
      this.listings.delete(prefix);
    }
  }

  /**
   * Starts change notification for this scan when `on` (see `NoteWatch.begin`), or stops it: true when kept
   * answers of watched notes may stand in for a statx in this scan.
   */
  watchFor(native: Native, rootFd: number, on: boolean): boolean {
    if (!on) {
      this.close();
      return false;
    }
    this.watch ??= new NoteWatch();
    return this.watch.begin(native, rootFd);
  }

  /** Gives back every watch and the inotify instance (the view is being dropped, or notification is off). */
  close(): void {
    this.watch?.close();
    this.watch = null;
  }

  /**
   * Re-verifies the notes `ids` (the hits a search is about to return) whose kept answer stood in for a statx in
   * this memo's last scan (docs/DESIGN.md §Change notification, "Returned notes"): each is statted again by name
   * in its directory, reached from `rootFd` one segment at a time with the no-follow directory open, and the raw
   * words are compared with the kept ones. Notes the scan statted itself are not asked again. A difference or a
   * failure dirties the entry (`clean` = 0) and voids every kept answer (the epoch moves), and the answer is false:
   * the caller scans again, and that scan stats every note.
   *
   * @param native bindings
   * @param rootFd the scan's root descriptor (not closed here)
   * @param ids    root-relative ids of the notes to be returned
   * @returns true when every vouched note still has its kept answer
   * @throws ResourceExhaustedError from an open that failed for lack of descriptors or memory
   */
  recheck(native: Native, rootFd: number, ids: readonly string[]): boolean {
    let ok = true;
    const words = new Uint32Array(RAW_STAT_WORDS);
    for (const id of ids) {
      const slash = id.lastIndexOf('/');
      const listing = this.listings.get(id.slice(0, slash + 1));
      if (listing === undefined) continue;
      const e = entryNamed(listing, Buffer.from(id.slice(slash + 1), 'utf8').toString('latin1'));
      if (e === undefined || e.vouched !== this.generation) continue;
      // A note directly in the root has no directory segment (slash is -1: slice(0, -1) would cut its name).
      const dirId = slash < 0 ? '' : id.slice(0, slash);
      if (!sameRawStat(native, rootFd, dirId, e.cname, listing.snaps, e.slot, words)) {
        e.clean = 0;
        ok = false;
      }
    }
    // A difference means a change raised no event (a write through a shared writable mapping, say), so any other kept
    // answer may be just as stale, and the scan that follows is not rechecked: its hits may be other notes vouched
    // for by kept answers. Voiding every kept answer makes that scan stat every note, so nothing it returns was
    // vouched for. Cost: one call statting everything, as without notification.
    if (!ok) this.voidKept();
    return ok;
  }

  /**
   * Voids every kept answer of change notification (the epoch moves), so the next scan stats every note: after a
   * recheck found a difference, or before a budget-cut scan is redone (docs/DESIGN.md §Change notification).
   */
  voidKept(): void {
    if (this.watch !== null) this.watch.epoch++;
  }

  private dropWatches(listing: Listing): void {
    const watch = this.watch;
    if (watch === null || watch.size === 0) return;
    for (const e of listing.entries) if (e.wd > 0) watch.drop(e);
  }

  /**
   * The listing of the open directory `fd` (fstat `st`, id prefix `prefix`, entries at `depth` segments): this
   * memo's when its directory identity is unchanged (its raw entries still count toward `budget`), else a fresh one
   * (`listFresh`), which replaces it. Policy answers of a listing kept for another filter object are forgotten.
   *
   * @throws BridgeError('unavailable', 'entry_ceiling') past the raw entry ceiling; NativeError when listing fails
   */
  listing(
    native: Native,
    fd: number,
    st: FileStat,
    at: { prefix: string; depth: number; names: NameRule; filter: NoteFilter },
    budget: RawEntryBudget,
  ): Listing {
    const old = this.listings.get(at.prefix);
    let listing: Listing;
    if (
      old?.reusable &&
      old.dev === st.dev &&
      old.ino === st.ino &&
      old.mtimeNs === st.mtimeNs &&
      old.ctimeNs === st.ctimeNs
    ) {
      budget.charge(old.rawCount);
      if (old.filter !== at.filter) {
        for (const e of old.entries) {
          e.allows = UNDECIDED;
          e.enters = UNDECIDED;
        }
        old.filter = at.filter;
      }
      this.stats.reused++;
      old.reusedAt = this.generation;
      listing = old;
    } else {
      // The names may now name other inodes: the old entries' watches say nothing about the new listing.
      if (old !== undefined) this.dropWatches(old);
      listing = this.listFresh(native, fd, st, at, budget, old);
      this.listings.set(at.prefix, listing);
      this.stats.listed++;
    }
    listing.seen = this.generation;
    return listing;
  }

  /**
   * Lists `fd` (whose fstat is `st`) against the remaining raw entry budget, sorted by raw name, prepared. Entries
   * of `old` (the directory's previous listing) keep their prepared fields and raw stat snapshot, matched by raw name.
   */
  private listFresh(
    native: Native,
    fd: number,
    st: FileStat,
    at: { prefix: string; depth: number; names: NameRule; filter: NoteFilter },
    budget: RawEntryBudget,
    old: Listing | undefined,
  ): Listing {
    const started = this.now();
    const listed = native.listDir(fd, budget.left);
    if (listed === 'too_many') throw new BridgeError('unavailable', 'entry_ceiling');
    budget.charge(listed.length);
    const before = new Map<string, Entry>();
    if (old !== undefined) for (const e of old.entries) before.set(e.sortKey, e);
    const sameFilter = old !== undefined && old.filter === at.filter;
    const snaps = new Uint32Array(listed.length * RAW_STAT_WORDS);
    const entries: Entry[] = [];
    for (const { name: raw, type } of listed) {
      const sortKey = raw.toString('latin1');
      const prev = before.get(sortKey);
      const slot = entries.length * RAW_STAT_WORDS;
      if (prev !== undefined) {
        if (prev.stat !== undefined) snaps.set(old!.snaps.subarray(prev.slot, prev.slot + RAW_STAT_WORDS), slot);
        entries.push({
          ...prev,
          type,
          slot,
          allows: sameFilter ? prev.allows : UNDECIDED,
          enters: sameFilter ? prev.enters : UNDECIDED,
          wd: -1,
          clean: 0,
          vouched: 0,
        });
        continue;
      }
      entries.push(prepared(raw, sortKey, type, slot, at));
    }
    entries.sort(byLatin1);
    // Sorting moved entries away from their slots; renumber, moving the snapshots along.
    const sorted = new Uint32Array(snaps.length);
    for (let i = 0; i < entries.length; i++) {
      const e = entries[i]!;
      const slot = i * RAW_STAT_WORDS;
      if (e.stat !== undefined) sorted.set(snaps.subarray(e.slot, e.slot + RAW_STAT_WORDS), slot);
      e.slot = slot;
    }
    snaps.set(sorted);
    let changedNs = st.mtimeNs;
    if (st.ctimeNs > changedNs) changedNs = st.ctimeNs;
    const changedMs = Number(changedNs / NS_PER_MS);
    return {
      dev: st.dev,
      ino: st.ino,
      mtimeNs: st.mtimeNs,
      ctimeNs: st.ctimeNs,
      rawCount: listed.length,
      entries,
      snaps,
      filter: at.filter,
      reusable: started - changedMs > this.racyMarginMs,
      seen: 0,
      reusedAt: 0,
      arena: null,
    };
  }
}

/** True when `words` equals the RAW_STAT_WORDS words of `snaps` at `at`. */
export function sameWords(snaps: Uint32Array, at: number, words: Uint32Array): boolean {
  for (let i = 0; i < RAW_STAT_WORDS; i++) if (snaps[at + i] !== words[i]) return false;
  return true;
}

/** The entry of `listing` whose sort key (Latin-1 form of the raw name) is `sortKey`, by binary search. */
function entryNamed(listing: Listing, sortKey: string): Entry | undefined {
  const entries = listing.entries;
  let lo = 0;
  let hi = entries.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const key = entries[mid]!.sortKey;
    if (key === sortKey) return entries[mid];
    if (key < sortKey) lo = mid + 1;
    else hi = mid - 1;
  }
  return undefined;
}

/**
 * True when the no-follow statx of `cname` in the directory `dirId` below `rootFd` (reached one segment at a time,
 * no symlink followed) answers exactly the RAW_STAT_WORDS words of `snaps` at `slot`; false on any difference or
 * failure of the opens or the stat.
 *
 * @throws ResourceExhaustedError (never a verdict on the note)
 */
function sameRawStat(
  native: Native,
  rootFd: number,
  dirId: string,
  cname: Uint8Array,
  snaps: Uint32Array,
  slot: number,
  words: Uint32Array,
): boolean {
  let fd = rootFd;
  try {
    if (dirId !== '') {
      for (const segment of dirId.split('/')) {
        const next = native.openDirAt(fd, segment);
        if (fd !== rootFd) native.close(fd);
        fd = next;
      }
    }
    native.statRawAt(fd, cname, words);
  } catch (err) {
    if (err instanceof NativeError) return false;
    throw err;
  } finally {
    if (fd !== rootFd) closeQuietly(native, fd);
  }
  return sameWords(snaps, slot, words);
}

/** A new entry for the raw name `raw` (its Latin-1 form `sortKey`) listed with d_type `type`. */
function prepared(
  raw: Buffer,
  sortKey: string,
  type: number,
  slot: number,
  at: { prefix: string; depth: number; names: NameRule },
): Entry {
  const name = decodeName(raw, sortKey);
  const nameReason = name === null ? null : segmentReason(name, at.names);
  const usable = name !== null && nameReason === null;
  const id = usable ? at.prefix + name : '';
  let cname = EMPTY;
  if (usable) {
    cname = Buffer.allocUnsafe(raw.length + 1);
    raw.copy(cname);
    cname[raw.length] = 0;
  }
  return {
    sortKey,
    cname,
    name,
    nameReason,
    type,
    id,
    note: usable && isNoteName(name),
    withinLimits: usable && idWithinLimits(id, at.depth),
    allows: UNDECIDED,
    enters: UNDECIDED,
    prefix: undefined,
    slot,
    stat: undefined,
    key: undefined,
    known: undefined,
    passed: undefined,
    wd: -1,
    clean: 0,
    vouched: 0,
  };
}
