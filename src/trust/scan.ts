/**
 * The tree scan below a trusted root (PRODUCT.md §5): depth first, entries of each directory in ascending byte
 * order of their raw names, every directory and note judged on its own open descriptor, with the per-call
 * budgets (candidates, bytes, depth, raw entries) and the `truncated` rules of the reference design.
 */
import {
  DT,
  NativeError,
  nativeFailure,
  RAW_STAT_WORDS,
  fileStatFromRaw,
  type FileStat,
  type Native,
} from '../../native/types.js';
import { BridgeError, type Reason } from '../errors.js';
import { idWithinLimits, isNoteName, segmentReason } from './names.js';
import { closeQuietly, openFailureReason } from './path.js';
import { NOT_TAKEN, statPool, type NameArena, type StatPool } from './stat-pool.js';
import {
  checkDirDescriptor,
  decodeNoteText,
  descriptorAclReason,
  identityKey,
  isDirectory,
  isSymlink,
  noteStatReason,
  placeOf,
  readSettled,
  requireNative,
  runningUid,
  type RootPlace,
} from './rule.js';
import {
  MAX_ID_SEGMENTS,
  RAW_ENTRY_CEILING,
  rawCeilingOf,
  type IdentityKey,
  type KnownNotes,
  type NameRule,
  type NoteFilter,
  type ScanLimits,
  type ScannedNote,
  type ScanResult,
} from './types.js';

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

/** d_type for a stat result, for entries the filesystem listed as DT_UNKNOWN. */
function typeOf(st: FileStat): number {
  if (isDirectory(st)) return DT.DIR;
  if (isSymlink(st)) return DT.LNK;
  return DT.REG;
}

/** Policy decision not yet asked for this entry (see `Entry.allows`). */
const UNDECIDED = -1;

/**
 * One directory entry prepared for the walk: everything that is a pure function of the raw name, the directory's id
 * and the name rule, decided once per listing; policy answers, decided once per listing and filter object; and the
 * last raw stat of the name with the objects built from it (notes only).
 */
interface Entry {
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
}

/** A directory's sorted, prepared listing, and the identity of the directory it was taken from. */
interface Listing {
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
  /** The note names shared with the stat pool's worker (built on the listing's first job; see stat-pool.ts). */
  arena: NameArena | null;
}

/** Default for `ScanMemo.racyMarginMs`: above the coarsest directory timestamp granularity in use (2 s, FAT). */
export const RACY_MARGIN_MS = 3000;

/**
 * What one caller view's scans keep between calls, so a warm scan costs about one statx per note.
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

  /**
   * @param racyMarginMs how long after a directory's last change its listing may be kept for reuse (ms)
   * @param now          wall clock in ms (Date.now); tests may move it
   */
  constructor(
    readonly racyMarginMs: number = RACY_MARGIN_MS,
    readonly now: () => number = Date.now,
  ) {}
}

const memos = new WeakMap<KnownNotes, ScanMemo>();

/**
 * The memo scans for `known` use (created on first use). The search index is one `KnownNotes` per caller view and
 * lives as long as the view, so its memo does too; a throwaway `{ has: () => false }` gets a throwaway memo.
 */
export function scanMemoOf(known: KnownNotes): ScanMemo {
  let memo = memos.get(known);
  if (memo === undefined) {
    memo = new ScanMemo();
    memos.set(known, memo);
  }
  return memo;
}

/** Makes scans for `known` use `memo` (tests use it to pick the margin and clock, and to read the counts). */
export function useScanMemo(known: KnownNotes, memo: ScanMemo): void {
  memos.set(known, memo);
}

/** True when `words` equals the RAW_STAT_WORDS words of `snaps` at `at`. */
function sameWords(snaps: Uint32Array, at: number, words: Uint32Array): boolean {
  for (let i = 0; i < RAW_STAT_WORDS; i++) if (snaps[at + i] !== words[i]) return false;
  return true;
}

const NS_PER_MS = 1_000_000n;
const EMPTY = Buffer.alloc(0);

/**
 * Scans the tree below `rootFd` and returns the notes that pass the policy filter and every trust check.
 *
 * Per directory entry, in byte order: undecodable name → skip `bad_name`; name rule (hidden, portable/unicode)
 * → skip; symlink → skip `symlink`. A directory the filter may not enter is skipped without being opened; one
 * whose notes would be deeper than `maxDepth` gets the depth look-ahead instead (names first; a file whose name
 * would be a candidate must also pass the trust rule); any other is opened and must be a trusted directory on the
 * root's device and mount (else skipped with its reason). A file must be a note name the filter allows (else
 * skipped, never opened or statted) and becomes a candidate: one statAt and the metadata checks; unless the index
 * knows it by identity (then it is never opened), it is opened and re-checked on its descriptor (fstat, ACL).
 * Only a candidate that passed those trust checks is charged: the `maxEntries`th+1 such note, or one whose size
 * would overflow `maxTotalBytes`, stops the scan (truncated, not included). So an untrusted note never moves a
 * budget or a flag (PRODUCT.md §6). A charged note is read exactly and validated (binary or invalid UTF-8 →
 * skipped, still charged, the same cold and warm).
 *
 * @param rootFd  open descriptor of the trusted root (not closed here)
 * Warm calls: with a binding that has `statRawAt`, the scan keeps a `ScanMemo` per `known` object (see there):
 * listings reused by directory identity, policy answers per listing and filter object, and the last raw stat of
 * each note, so an unchanged note costs one statx, a word comparison, the trust rule on its (reused) FileStat and
 * `known.has`. Returned `ScannedNote` objects of unchanged known notes are the same objects call after call; treat
 * them as read-only. On Linux a second thread may issue part of those statx calls (src/trust/stat-pool.ts): the
 * same call on the same descriptor and name bytes; which thread issued it never changes the result.
 *
 * @param filter  the policy's allow/enter decisions; for one filter object they must be a pure function of the id
 *   (a `Policy` is frozen), since the memo keeps them
 * @param limits  per-call budgets from the policy
 * @param known   identities whose verified text the index already holds
 * @param native  bindings (defaults to this platform's; tests pass a counting wrapper)
 * @returns notes in scan order, `truncated`, the raw entry count and skip counts by reason
 * @throws BridgeError('unavailable', 'entry_ceiling') when more than RAW_ENTRY_CEILING raw entries would be
 *   listed; BridgeError('unavailable', 'io_error') when the root itself cannot be stat'ed or listed;
 *   ResourceExhaustedError from any call that failed for lack of descriptors or memory (never a skip).
 *   Every descriptor opened here is closed on every path.
 */
export function scanTree(
  rootFd: number,
  filter: NoteFilter,
  limits: ScanLimits,
  known: KnownNotes,
  native: Native = requireNative(),
): ScanResult {
  const uid = runningUid();
  let rootStat: FileStat;
  try {
    rootStat = native.fstat(rootFd);
  } catch (err) {
    if (err instanceof NativeError) throw new BridgeError('unavailable', 'io_error');
    throw err;
  }
  const rootPlace: RootPlace = placeOf(rootStat);

  // Listings and raw stats are kept between calls only with a binding that has the allocation-free raw stat. A
  // wrapper that counts or interposes calls (tests) has none, so it sees every listing and every statAt.
  const rawStat = native.statRawAt !== undefined;
  const memo = rawStat ? scanMemoOf(known) : null;
  const callStarted = Date.now();
  const racyMargin = limits.racyMarginMs ?? RACY_MARGIN_MS;
  const keepText = limits.keepText ?? true;
  const rawCeiling = rawCeilingOf(limits);
  if (memo !== null) {
    const rootId = `${rootStat.dev}:${rootStat.ino}:${rootStat.mntId ?? ''}`;
    if (memo.root !== rootId || memo.names !== limits.names) {
      memo.listings.clear();
      memo.root = rootId;
      memo.names = limits.names;
    }
    memo.generation++;
  }
  const words = new Uint32Array(RAW_STAT_WORDS);
  // A second thread may take part of the notes' statx calls (stat-pool.ts); only with the raw binding.
  const pool: StatPool | null = memo !== null && statPool().beginScan() ? statPool() : null;
  /** Candidate notes statted through the raw path in this scan (starts the pool after a large scan). */
  let rawStats = 0;

  const notes: ScannedNote[] = [];
  const skipped: Partial<Record<string, number>> = {};
  let rawEntries = 0;
  let candidates = 0;
  let bytes = 0;
  let truncated = false;
  let cut: ScanResult['cut'];
  let stopped = false;
  /** fstat of the directory `openChildDir` opened last (valid right after it returns a descriptor). */
  let childStat: FileStat = rootStat;

  const skip = (reason: Reason): void => {
    skipped[reason] = (skipped[reason] ?? 0) + 1;
  };

  const allows = (e: Entry): boolean => {
    if (e.allows === UNDECIDED) e.allows = filter.allowsNote(e.id) ? 1 : 0;
    return e.allows === 1;
  };
  const enters = (e: Entry): boolean => {
    if (e.enters === UNDECIDED) e.enters = filter.mayEnter(e.id) ? 1 : 0;
    return e.enters === 1;
  };

  /** Lists `fd` (whose fstat is `st`) against the remaining raw entry budget, sorted by raw name, prepared. */
  const freshListing = (fd: number, st: FileStat, prefix: string, depth: number, old: Listing | undefined): Listing => {
    const started = memo === null ? 0 : memo.now();
    const listed = native.listDir(fd, rawCeiling - rawEntries);
    if (listed === 'too_many') throw new BridgeError('unavailable', 'entry_ceiling');
    rawEntries += listed.length;
    // Name, snapshot and policy state of entries that were already there carry over (matched by raw name).
    const before = new Map<string, Entry>();
    if (old !== undefined) for (const e of old.entries) before.set(e.sortKey, e);
    const sameFilter = old !== undefined && old.filter === filter;
    const snaps = memo === null ? new Uint32Array(0) : new Uint32Array(listed.length * RAW_STAT_WORDS);
    const entries: Entry[] = [];
    for (const { name: raw, type } of listed) {
      const sortKey = raw.toString('latin1');
      const prev = before.get(sortKey);
      const slot = entries.length * RAW_STAT_WORDS;
      if (prev !== undefined) {
        if (memo !== null && prev.stat !== undefined)
          snaps.set(old!.snaps.subarray(prev.slot, prev.slot + RAW_STAT_WORDS), slot);
        entries.push({
          ...prev,
          type,
          slot,
          allows: sameFilter ? prev.allows : UNDECIDED,
          enters: sameFilter ? prev.enters : UNDECIDED,
        });
        continue;
      }
      const name = decodeName(raw, sortKey);
      const nameReason = name === null ? null : segmentReason(name, limits.names);
      const usable = name !== null && nameReason === null;
      const id = usable ? prefix + name : '';
      const note = name !== null && nameReason === null && isNoteName(name);
      let cname = EMPTY;
      if (usable && memo !== null) {
        cname = Buffer.allocUnsafe(raw.length + 1);
        raw.copy(cname);
        cname[raw.length] = 0;
      }
      entries.push({
        sortKey,
        cname,
        name,
        nameReason,
        type,
        id,
        note,
        withinLimits: usable && idWithinLimits(id, depth),
        allows: UNDECIDED,
        enters: UNDECIDED,
        prefix: undefined,
        slot,
        stat: undefined,
        key: undefined,
        known: undefined,
      });
    }
    entries.sort(byLatin1);
    // Sorting moved entries away from their slots; renumber, moving the snapshots along.
    if (memo !== null) {
      const sorted = new Uint32Array(snaps.length);
      for (let i = 0; i < entries.length; i++) {
        const e = entries[i]!;
        const slot = i * RAW_STAT_WORDS;
        if (e.stat !== undefined) sorted.set(snaps.subarray(e.slot, e.slot + RAW_STAT_WORDS), slot);
        e.slot = slot;
      }
      snaps.set(sorted);
    }
    const changedMs = Number((st.ctimeNs > st.mtimeNs ? st.ctimeNs : st.mtimeNs) / NS_PER_MS);
    return {
      dev: st.dev,
      ino: st.ino,
      mtimeNs: st.mtimeNs,
      ctimeNs: st.ctimeNs,
      rawCount: listed.length,
      entries,
      snaps,
      filter,
      reusable: memo !== null && started - changedMs > memo.racyMarginMs,
      seen: 0,
      arena: null,
    };
  };

  /**
   * The listing of the open directory `fd` (fstat `st`, id prefix `prefix`, entries at `depth` segments): the memo's
   * when its directory identity is unchanged (its raw entries still count toward the ceiling), else a fresh one.
   */
  const listingOf = (fd: number, st: FileStat, prefix: string, depth: number): Listing => {
    if (memo === null) return freshListing(fd, st, prefix, depth, undefined);
    const old = memo.listings.get(prefix);
    let listing: Listing;
    if (
      old !== undefined &&
      old.reusable &&
      old.dev === st.dev &&
      old.ino === st.ino &&
      old.mtimeNs === st.mtimeNs &&
      old.ctimeNs === st.ctimeNs
    ) {
      if (old.rawCount > rawCeiling - rawEntries) throw new BridgeError('unavailable', 'entry_ceiling');
      rawEntries += old.rawCount;
      if (old.filter !== filter) {
        for (const e of old.entries) {
          e.allows = UNDECIDED;
          e.enters = UNDECIDED;
        }
        old.filter = filter;
      }
      memo.stats.reused++;
      listing = old;
    } else {
      listing = freshListing(fd, st, prefix, depth, old);
      memo.listings.set(prefix, listing);
      memo.stats.listed++;
    }
    listing.seen = memo.generation;
    return listing;
  };

  /**
   * Opens a child directory and applies directory trust plus same-device; -1 (and a skip count) when refused.
   * On success `childStat` holds the descriptor's fstat.
   */
  const openChildDir = (parentFd: number, name: string, count: boolean): number => {
    let fd: number;
    try {
      fd = native.openDirAt(parentFd, name);
    } catch (err) {
      // openFailureReason rethrows what is not a verdict on this directory (ResourceExhaustedError included).
      const reason = openFailureReason(native, parentFd, name, err, true);
      if (count) skip(reason);
      return -1;
    }
    let reason: Reason | null;
    try {
      const checked = checkDirDescriptor(native, fd, uid, rootPlace);
      reason = checked.reason;
      childStat = checked.stat;
    } catch (err) {
      if (!(err instanceof NativeError)) {
        closeQuietly(native, fd);
        throw err;
      }
      reason = 'io_error';
    }
    if (reason === null) return fd;
    closeQuietly(native, fd);
    if (count) skip(reason);
    return -1;
  };

  /** Entry type, resolving DT_UNKNOWN with a no-follow stat; null when that stat fails. */
  const entryType = (dirFd: number, e: Entry): number | null => {
    if (e.type !== DT.UNKNOWN) return e.type;
    try {
      return typeOf(native.statAt(dirFd, e.name!));
    } catch (err) {
      if (err instanceof NativeError) return null;
      throw err;
    }
  };

  /**
   * True when the file `name` in `dirFd` passes the trust rule (owner, mode, link count, device and mount, ACL) on
   * its own descriptor. Size and content are not judged: the look-ahead asks whether a trusted note exists below
   * the depth limit, and an untrusted one must not set `truncated` (PRODUCT.md §6).
   */
  const trustedFileAt = (dirFd: number, name: string): boolean => {
    try {
      if (noteStatReason(native.statAt(dirFd, name), uid, rootPlace, limits.maxFileBytes) !== null) return false;
      const fd = native.openFileAt(dirFd, name);
      try {
        const fst = native.fstat(fd);
        return (
          (noteStatReason(fst, uid, rootPlace, limits.maxFileBytes) ?? descriptorAclReason(native, fd, uid)) === null
        );
      } finally {
        closeQuietly(native, fd);
      }
    } catch (err) {
      if (err instanceof NativeError) return false;
      throw err;
    }
  };

  /**
   * Depth look-ahead below an open trusted directory at depth `dirDepth` (fstat `dirStat`): true as soon as a name
   * that would be a candidate (note name, allowed, within the read id limits) exists below it through trusted
   * same-device directories the filter may enter. Names decide first; only a file whose name would be a candidate
   * is statted and opened, to check that it passes the trust rule.
   */
  const lookBelow = (fd: number, dirStat: FileStat, prefix: string, dirDepth: number): boolean => {
    const depth = dirDepth + 1;
    let listing: Listing;
    try {
      listing = listingOf(fd, dirStat, prefix, depth);
    } catch (err) {
      if (err instanceof NativeError) return false;
      throw err;
    }
    for (const e of listing.entries) {
      if (e.name === null || e.nameReason !== null) continue;
      const type = entryType(fd, e);
      if (type === DT.DIR) {
        // Notes below would have more than 16 segments or 512 code points: the read tool could never accept them.
        if (depth >= MAX_ID_SEGMENTS || !e.withinLimits || !enters(e)) continue;
        const child = openChildDir(fd, e.name, false);
        if (child < 0) continue;
        let found: boolean;
        try {
          found = lookBelow(child, childStat, (e.prefix ??= `${e.id}/`), depth);
        } finally {
          closeQuietly(native, child);
        }
        if (found) return true;
      } else if (
        type !== null &&
        type !== DT.LNK &&
        e.note &&
        allows(e) &&
        e.withinLimits &&
        trustedFileAt(fd, e.name)
      ) {
        return true;
      }
    }
    return false;
  };

  /**
   * Charge one trusted note; false (and the scan stops, truncated) when a budget is exhausted. `count: false`
   * charges the bytes only: a note about to be read counts toward `maxEntries` once its content has passed
   * (`countEntry`), so a binary or invalid UTF-8 note never takes a trusted note's place, while the bytes read to
   * find that out stay charged (they bound the work of one call).
   */
  const charge = (size: number, count = true): boolean => {
    if (candidates >= limits.maxEntries || bytes + size > limits.maxTotalBytes) {
      cut = candidates >= limits.maxEntries ? 'max_entries' : 'max_total_bytes';
      truncated = true;
      stopped = true;
      return false;
    }
    if (count) candidates++;
    bytes += size;
    return true;
  };
  const countEntry = (): void => {
    candidates++;
  };

  /**
   * This call's no-follow stat of the note entry `e` in `dirFd`. With the raw binding, the answer is compared word
   * for word with the entry's snapshot; when equal, the FileStat built from the snapshot (equal in every field to
   * what this answer would build) is returned, else a new one is built and the snapshot replaced.
   *
   * With the stat pool, the answer may come from the worker thread (`job` >= 0): the same statx of the same name
   * bytes in the same descriptor, or its errno, thrown as the NativeError statRawAt would have thrown.
   *
   * @throws NativeError from the stat
   */
  const statNote = (dirFd: number, e: Entry, listing: Listing, job: number): FileStat => {
    if (memo === null) return native.statAt(dirFd, e.name!);
    rawStats++;
    const taken = job < 0 ? NOT_TAKEN : pool!.take(job, e.slot / RAW_STAT_WORDS, words);
    if (taken === NOT_TAKEN) native.statRawAt!(dirFd, e.cname, words);
    else if (taken !== 0) throw nativeFailure('statx', taken);
    if (e.stat !== undefined && sameWords(listing.snaps, e.slot, words)) return e.stat;
    listing.snaps.set(words, e.slot);
    e.stat = fileStatFromRaw(words);
    e.key = undefined;
    e.known = undefined;
    return e.stat;
  };

  /**
   * A candidate note: one stat by name and the metadata checks; a note the index does not know by identity is also
   * opened and re-checked on its descriptor (fstat, ACL). Only then is it charged against `maxEntries` and
   * `maxTotalBytes` (PRODUCT.md §6: an untrusted note never moves a budget or a flag), and the text read and
   * validated. A known note is returned without text and never opened.
   */
  /**
   * The identity key under which a note verified in this call is stored. Kernel timestamps are coarse (a clock
   * tick of a few ms; 2 s on FAT), so a chmod, an ACL change or a write in the same tick as the note's last change,
   * and after this verification, would leave device, inode, size, mtime and ctime as they were. When this call
   * started within the racy margin of the note's ctime, the key gets a suffix that no stat ever produces, so the
   * warm path does not vouch for it and the next call verifies the note again (git's "racy" rule for its index).
   */
  const verifiedKey = (st: FileStat): IdentityKey => {
    const key = identityKey(st);
    // A margin of 0 turns the rule off (tests that count opens of notes written a moment before).
    return racyMargin <= 0 || callStarted - Number(st.ctimeNs / 1_000_000n) > racyMargin ? key : `${key}:racy`;
  };

  const candidate = (dirFd: number, e: Entry, listing: Listing, job: number): void => {
    const name = e.name!;
    const id = e.id;
    let st: FileStat;
    try {
      st = statNote(dirFd, e, listing, job);
    } catch (err) {
      if (!(err instanceof NativeError)) throw err;
      skip(err.errno === 2 ? 'missing' : 'io_error');
      return;
    }
    const metaReason = noteStatReason(st, uid, rootPlace, limits.maxFileBytes);
    if (metaReason !== null) {
      skip(metaReason);
      return;
    }
    const memoized = e.stat === st;
    const key = memoized ? (e.key ??= identityKey(st)) : identityKey(st);
    if (known.has(id, key)) {
      if (!charge(st.size)) return;
      let note = memoized ? e.known : undefined;
      if (note === undefined) {
        note = { id, key, stat: st, text: undefined };
        if (memoized) e.known = note;
      }
      notes.push(note);
      return;
    }
    let fd: number;
    try {
      fd = native.openFileAt(dirFd, name);
    } catch (err) {
      skip(openFailureReason(native, dirFd, name, err, false));
      return;
    }
    try {
      // The descriptor is authoritative: judge what was opened, not what was statted a moment ago.
      const fst = native.fstat(fd);
      const reason = noteStatReason(fst, uid, rootPlace, limits.maxFileBytes) ?? descriptorAclReason(native, fd, uid);
      if (reason !== null) {
        skip(reason);
        return;
      }
      if (!charge(fst.size, false)) return;
      const raw = readSettled(native, dirFd, name, fd, fst);
      if (raw === null) {
        skip('io_error');
        return;
      }
      const decoded = decodeNoteText(raw);
      if ('reason' in decoded) {
        skip(decoded.reason);
        return;
      }
      countEntry();
      notes.push({ id, key: verifiedKey(fst), stat: fst, text: keepText ? decoded.text : undefined });
    } catch (err) {
      if (!(err instanceof NativeError)) throw err;
      skip('io_error');
    } finally {
      closeQuietly(native, fd);
    }
  };

  /**
   * What the walk does with an entry whose name passed, given its type: 'dir' (enter it), a skip reason, or null (a
   * candidate note). One decision for `walkEntries` and `isCandidate`.
   */
  const verdictOf = (e: Entry, type: number): Reason | 'dir' | null => {
    if (type === DT.DIR) return 'dir';
    if (type === DT.LNK) return 'symlink';
    if (!e.note) return 'not_markdown';
    if (!allows(e)) return 'denied';
    if (!e.withinLimits) return 'bad_name';
    return null;
  };

  /**
   * True for an entry the walk below hands to `candidate` without a stat of its own (listed type, name rule, note
   * name, allowed, within the id limits): the entries a stat pool job may carry.
   */
  const isCandidate = (e: Entry): boolean =>
    e.name !== null && e.nameReason === null && e.type !== DT.UNKNOWN && verdictOf(e, e.type) === null;

  /** Scans one open trusted directory (fstat `dirStat`) whose id has `dirDepth` segments (the root has 0). */
  const walk = (dirFd: number, dirStat: FileStat, prefix: string, dirDepth: number): void => {
    const depth = dirDepth + 1; // depth of the entries listed here
    const listing = listingOf(dirFd, dirStat, prefix, depth);
    // Before this returns (and the caller closes dirFd), retire takes back every entry the worker has not answered.
    const job = pool === null ? -1 : pool.publish(dirFd, listing, isCandidate);
    try {
      walkEntries(dirFd, listing, depth, job);
    } finally {
      if (job >= 0) pool!.retire(job);
    }
  };

  /** The entries of `walk`'s listing, in order. */
  const walkEntries = (dirFd: number, listing: Listing, depth: number, job: number): void => {
    for (const e of listing.entries) {
      if (stopped) return;
      if (e.name === null) {
        skip('bad_name');
        continue;
      }
      if (e.nameReason !== null) {
        skip(e.nameReason);
        continue;
      }
      let type = e.type;
      if (type === DT.UNKNOWN) {
        // Stat only what could matter: a directory the filter may enter, or an allowed note name.
        if (!enters(e) && !(e.note && allows(e))) {
          skip('denied');
          continue;
        }
        const resolved = entryType(dirFd, e);
        if (resolved === null) {
          skip('missing');
          continue;
        }
        type = resolved;
      }
      const verdict = verdictOf(e, type);
      if (verdict === 'dir') enter(dirFd, e, depth);
      else if (verdict !== null) skip(verdict);
      else candidate(dirFd, e, listing, job);
    }
  };

  /** A directory entry at `depth` segments: skip, look ahead, or open, check and recurse. */
  const enter = (parentFd: number, e: Entry, depth: number): void => {
    if (!enters(e)) {
      skip('denied');
      return;
    }
    const name = e.name!;
    const prefix = (e.prefix ??= `${e.id}/`);
    if (depth >= limits.maxDepth) {
      // Its notes would be deeper than max_depth. Once truncated is set, looking further cannot change anything.
      if (truncated) return;
      const fd = openChildDir(parentFd, name, true);
      if (fd < 0) return;
      try {
        if (lookBelow(fd, childStat, prefix, depth)) truncated = true;
      } finally {
        closeQuietly(native, fd);
      }
      return;
    }
    const fd = openChildDir(parentFd, name, true);
    if (fd < 0) return;
    try {
      walk(fd, childStat, prefix, depth);
    } catch (err) {
      if (!(err instanceof NativeError)) throw err;
      skip('io_error');
    } finally {
      closeQuietly(native, fd);
    }
  };

  try {
    walk(rootFd, rootStat, '', 0);
  } catch (err) {
    if (err instanceof NativeError) throw new BridgeError('unavailable', 'io_error');
    throw err;
  } finally {
    pool?.endScan();
  }
  if (memo !== null) statPool().noteScan(rawStats, native);
  if (memo !== null && memo.listings.size > 0) {
    // Forget directories this scan did not visit (removed, denied, or past a budget stop).
    for (const [prefix, listing] of memo.listings) if (listing.seen !== memo.generation) memo.listings.delete(prefix);
  }
  const result: ScanResult = { notes, truncated, rawEntries, skipped };
  if (truncated) result.cut = cut ?? 'max_depth';
  return result;
}
