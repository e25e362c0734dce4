/**
 * Directory listings of a caller view (src/trust/view.ts): one directory's entries, sorted by raw name and prepared
 * once (decoded name, name rule, id, note name, id limits), with the record of what the view keeps per entry (policy
 * answers, the last raw stat and what was built from it, its watch). The record (`Entry`) is the view's: only the
 * modules of this folder and src/trust/view.ts write it; the scan reads entries through `ListedEntry` and asks the
 * view for everything it keeps. Nothing here judges trust.
 */
import { NativeError, RAW_STAT_WORDS, type FileStat, type Native } from '../../../native/types.js';
import { BridgeError, type Reason } from '../../errors.js';
import { idWithinLimits, isNoteName, segmentReason } from '../names.js';
import type { RawEntryBudget } from '../raw-entries.js';
import type { NameRule, NoteFilter, ScannedNote } from '../types.js';
import { closeQuietly } from '../walk.js';
import type { NameArena } from './stat-thread.js';

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
 * What the walk reads of an entry (every field fixed when the listing was taken, or a policy answer the view keeps:
 * `CallerView.keepAllows`, `keepEnters`): the scan never writes an entry.
 */
export type ListedEntry = Readonly<
  Pick<Entry, 'sortKey' | 'name' | 'nameReason' | 'type' | 'id' | 'note' | 'withinLimits' | 'allows' | 'enters'>
>;

/** What the walk reads of a listing: its entries in byte order of their raw names. */
export interface ListedDir {
  readonly entries: readonly ListedEntry[];
}

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
   * The rule inputs (`CallerView.beginScan`) under which `stat` passed the note metadata rule (`noteStatReason`), or
   * undefined: set when it passed, cleared whenever `stat` is replaced.
   */
  passed: object | undefined;
  /** Watch descriptor of the note's inode in the view's `NoteWatch`, or -1 (src/trust/warm/watch.ts). */
  wd: number;
  /** `NoteWatch.epoch` in which the snapshot was taken under a watch with nothing reported since, else 0. */
  clean: number;
  /** The scan (CallerView generation) in which the snapshot last stood in for a statx (`CallerView.answer`), else 0. */
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
  /** May be reused by a later call whose fstat of the directory shows the same identity (see `CallerView.listing`). */
  reusable: boolean;
  /** The scan (CallerView generation) that last used it. */
  seen: number;
  /** The scan that last reused it as it was (its directory's identity unchanged since it was listed), else 0. */
  reusedAt: number;
  /** The scan whose `openDirectory` watched its candidates (before any statx of that scan), else 0. */
  watchedAt: number;
  /** The note names shared with the stat pool's worker (built on the listing's first job; see stat-pool.ts). */
  arena: NameArena | null;
}

const NS_PER_MS = 1_000_000n;

/**
 * The listing rule's time condition (module comment of src/trust/view.ts, "Listings"): a listing of the directory whose
 * fstat is `st`, taken at `startedMs` (wall clock), may be kept for reuse only when it was taken more than `marginMs`
 * after the directory's last change (the later of its mtime and ctime).
 */
export function listedPastMargin(st: FileStat, startedMs: number, marginMs: number): boolean {
  let changedNs = st.mtimeNs;
  if (st.ctimeNs > changedNs) changedNs = st.ctimeNs;
  return startedMs - Number(changedNs / NS_PER_MS) > marginMs;
}
const EMPTY = Buffer.alloc(0);

/**
 * Lists `fd` (whose fstat is `st`) against the remaining raw entry budget, sorted by raw name, prepared. Entries
 * of `old` (the directory's previous listing) keep their prepared fields and raw stat snapshot, matched by raw name;
 * their watches and clean state are not kept (the caller gives back the old entries' watches). The listing may be
 * reused by a later call only when it was taken (`keep.startedMs`, wall clock) more than `keep.racyMarginMs` after
 * the directory's last change (see `CallerView.listing`).
 *
 * @throws BridgeError('unavailable', 'entry_ceiling') past the raw entry ceiling; NativeError when listing fails
 */
export function listFresh(
  native: Native,
  fd: number,
  st: FileStat,
  at: { prefix: string; depth: number; names: NameRule; filter: NoteFilter },
  budget: RawEntryBudget,
  old: Listing | undefined,
  keep: { startedMs: number; racyMarginMs: number },
): Listing {
  const started = keep.startedMs;
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
  return {
    dev: st.dev,
    ino: st.ino,
    mtimeNs: st.mtimeNs,
    ctimeNs: st.ctimeNs,
    rawCount: listed.length,
    entries,
    snaps,
    filter: at.filter,
    reusable: listedPastMargin(st, started, keep.racyMarginMs),
    seen: 0,
    reusedAt: 0,
    watchedAt: 0,
    arena: null,
  };
}

/** True when `words` equals the RAW_STAT_WORDS words of `snaps` at `at`. */
export function sameWords(snaps: Uint32Array, at: number, words: Uint32Array): boolean {
  for (let i = 0; i < RAW_STAT_WORDS; i++) if (snaps[at + i] !== words[i]) return false;
  return true;
}

/** The entry of `listing` whose sort key (Latin-1 form of the raw name) is `sortKey`, by binary search. */
export function entryNamed(listing: Listing, sortKey: string): Entry | undefined {
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
export function sameRawStat(
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
