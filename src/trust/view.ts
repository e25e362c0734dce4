/**
 * The one owner of freshness (docs/DESIGN.md §Change notification, "Why warm calls are cheap and still safe"): what a
 * caller view keeps between calls, and when a kept answer may stand in for what a call would ask the kernel. A kept
 * answer stands in for a statx only while nothing could have changed it: the racy margin (`RACY_MARGIN_MS`), the
 * watch and its epoch (overflow, mount table), a budget cut, and the recheck of the notes about to be returned.
 * `CallerView` holds it all: the listings and their per-entry record (src/trust/warm/listing.ts, written only here),
 * the view's inotify instance (src/trust/warm/watch.ts), the stat thread a scan was given
 * (src/trust/warm/stat-pool.ts), and the vouch → recheck → redo protocol of a search (`answer`).
 *
 * The steps a scan (src/trust/scan.ts) asks of it, in order: `beginScan` → `notify` (the event queue drained, or
 * notification off) → per directory `listing`, `openDirectory` (watches added, the stat thread's job published) →
 * per candidate note `stat` (kept answer or statx), `passedBefore`/`keepPassed` (the metadata rule's verdict),
 * `keptKey`, `keptNote`/`knownNote`, `racyTextCurrent` (racy notes) → `storedKey` (a note read) → `closeDirectory` → `endThread` → `endScan`. The scan
 * keeps the walk, the budgets and the trust rule; it never writes what the view keeps.
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
 * checking it: every directory is still opened and judged on its descriptor, and every note is still statted (or
 * vouched for by its watch) and judged, on every call. Raw entries of a reused listing count toward
 * RAW_ENTRY_CEILING exactly as a fresh one.
 *
 * Notes. The last raw stat of each note name is kept; when this call's raw stat has the same words (every field a
 * FileStat holds), the FileStat and identity key built from it earlier are the ones this answer would build, so
 * they are reused instead of allocated. The trust rule then runs on that FileStat, every call.
 *
 * Policy answers are kept per listing for one filter object (a `Policy` is immutable and reused for identical
 * bytes, see src/policy/load.ts); another filter object asks again.
 */
import { RAW, RAW_STAT_WORDS, fileStatFromRaw, type FileStat, type Native } from '../../native/types.js';
import type { RawEntryBudget } from './raw-entries.js';
import {
  racyKey,
  type IdentityKey,
  type NameRule,
  type NoteFilter,
  type ScannedNote,
  type ScanResult,
} from './types.js';
import {
  UNDECIDED,
  entryNamed,
  listFresh,
  sameRawStat,
  sameWords,
  type Entry,
  type ListedDir,
  type ListedEntry,
  type Listing,
} from './warm/listing.js';
import { NOT_TAKEN, type StatThread } from './warm/stat-thread.js';
import { NoteWatch, countVouched } from './warm/watch.js';
import { NameSets } from './warm/name-sets.js';

export { UNDECIDED, type ListedDir, type ListedEntry } from './warm/listing.js';
/** What the layers above ask of the view's stat thread and watches besides a scan (operator status, metrics). */
export { statPool } from './warm/stat-pool.js';
export { notificationStatus, watchesHeld } from './warm/watch.js';
export type { StatThread } from './warm/stat-thread.js';

/** Default for `CallerView.racyMarginMs`: above the coarsest directory timestamp granularity in use (2 s, FAT). */
export const RACY_MARGIN_MS = 3000;

/**
 * The raw names of the directories reads resolve ids through (src/trust/warm/name-sets.ts), one set for the process:
 * a read's "is this name in its parent's listing, byte for byte" is answered from it while the directory is unchanged
 * under the listing rule above (docs/DESIGN.md §Change notification, "Read names"). It holds names only, the same for
 * every caller, and answers nothing the read would not list: each read still checks its policy first and opens and
 * judges every directory and the note itself.
 */
export const readNames = new NameSets(RACY_MARGIN_MS);

/**
 * Heap bytes per note a view keeps between calls (listing entry, raw name, FileStat and its bigints, identity key,
 * the known-note record): about 700 in a heap snapshot at 10,000 generated notes.
 */
const ENTRY_BYTES = 700;

/** Where a listing is taken: the directory's id prefix, the depth of its entries, the name rule and the filter. */
export interface ListingAt {
  prefix: string;
  depth: number;
  names: NameRule;
  filter: NoteFilter;
}

/** What a scan is run under, as far as what the view keeps depends on it (`CallerView.beginScan`). */
export interface ScanRule {
  names: NameRule;
  /** `Writers.tag` of the call's named writers. */
  writers: string;
  /**
   * The inputs of the note metadata rule other than the stat (running uid, the root's device and mount,
   * max_file_bytes, the writers), spelled out: a kept verdict is only ever reused under a key equal to the one it
   * passed under.
   */
  ruleKey: string;
  /** When the call started (wall clock, ms) and the racy margin of notes (`ScanLimits.racyMarginMs`, ms; 0: off). */
  racy: { startedMs: number; marginMs: number };
}

/** What one scan and search (`CallerView.answer`'s pass) gives back: the answer, its scan, the notes it returns. */
export interface ViewPass<T> {
  answer: T;
  scan: Pick<ScanResult, 'unstatted' | 'cut'>;
  /** Root-relative ids of the notes the answer returns. */
  returned: readonly string[];
}

/**
 * What one caller view's scans keep between calls, so a warm scan costs about one statx per note or less (see the
 * module comment). A scan without a view of its caller's gets a fresh one, used for that call only.
 */
export class CallerView {
  /** Listings by directory id prefix ('' for the root, else `${dirId}/`). */
  private readonly kept = new Map<string, Listing>();
  /** Counts for tests and diagnostics: listings taken from the directory, and listings reused. */
  readonly stats = { listed: 0, reused: 0 };
  /** The scan in progress (or last): an entry's `vouched` and a listing's `seen` and `reusedAt` name it. */
  private generation = 0;
  /** Root identity and name rule the listings were prepared for; another root or rule starts over. */
  private root = '';
  private names: NameRule | '' = '';
  /** `Writers.tag` the kept keys were built with; other writers start over (docs/TRUST.md §Named writers). */
  private writers = '';
  /** The rule inputs of the last scan (`beginScan`). */
  private rules: { key: string; token: object } = { key: '', token: {} };
  /** Change notification for this view's notes, made on the first scan that asks for it. */
  private notes: NoteWatch | null = null;
  /**
   * The last search of this view was cut by `max_entries` or `max_total_bytes`: its scans vouch for no note (every
   * note is statted) until one is not cut (docs/DESIGN.md §Change notification, "Budget cuts"; set by `answer`).
   */
  private budgetCut = false;

  /** The stat thread offered to this scan, and the one taking part in it (null: single-threaded). */
  private offered: StatThread | undefined;
  private thread: StatThread | null = null;
  /** Change notification is on in this scan: watches are added and kept answers marked. */
  private watching = false;
  /** Kept answers may stand in for a statx in this scan (`watching`, and the last search was not budget-cut). */
  private vouching = false;
  /** Candidate notes statted in this scan (the stat thread starts after a large scan). */
  private rawStats = 0;
  /** Candidate notes whose kept answer stood in for a statx in this scan (`ScanResult.unstatted`). */
  private unstatted = 0;
  /** This scan's bindings, and when it started with the racy margin of its notes (`beginScan`). */
  private native: Native | null = null;
  private racy = { startedMs: 0, marginMs: 0 };
  /** The raw stat answer of the last `stat` (scratch). */
  private readonly words = new Uint32Array(RAW_STAT_WORDS);

  /**
   * @param racyMarginMs how long after a directory's last change its listing may be kept for reuse (ms)
   * @param now          wall clock in ms (Date.now); tests may move it
   */
  constructor(
    readonly racyMarginMs: number = RACY_MARGIN_MS,
    readonly now: () => number = Date.now,
  ) {}

  /** The listings kept, by directory id prefix (tests and diagnostics). */
  get listings(): ReadonlyMap<string, ListedDir> {
    return this.kept;
  }

  /** This view's change notification, or null (tests and diagnostics: its counts and size). */
  get watch(): NoteWatch | null {
    return this.notes;
  }

  /** What this view keeps, in bytes (estimated per listing entry), for the per-view cache's byte bound. */
  get memoryBytes(): number {
    let bytes = 0;
    for (const listing of this.kept.values()) bytes += listing.entries.length * ENTRY_BYTES + listing.snaps.byteLength;
    return bytes;
  }

  /**
   * Starts a scan of the root whose fstat is `rootStat` under `rule` (another root, name rule or set of writers
   * starts over). `thread` is the stat thread offered to this scan (it takes part when its `beginScan` says so);
   * `native` the scan's bindings.
   */
  beginScan(native: Native, rootStat: FileStat, rule: ScanRule, thread?: StatThread): void {
    const { names, writers, ruleKey } = rule;
    this.native = native;
    this.racy = rule.racy;
    const rootId = `${rootStat.dev}:${rootStat.ino}:${rootStat.mntId ?? ''}`;
    if (this.root !== rootId || this.names !== names || this.writers !== writers) {
      this.notes?.close();
      this.kept.clear();
      this.root = rootId;
      this.names = names;
      this.writers = writers;
    }
    this.generation++;
    if (this.rules.key !== ruleKey) this.rules = { key: ruleKey, token: {} };
    this.rawStats = 0;
    this.unstatted = 0;
    this.watching = false;
    this.vouching = false;
    this.offered = thread;
    this.thread = thread?.beginScan() === true ? thread : null;
  }

  /**
   * Starts change notification for this scan (see `NoteWatch.begin`: the event queue is drained) when `on`, or
   * stops it. Only a view that outlives the call (`held`) watches; a view made for one call never opens an instance.
   */
  notify(rootFd: number, held: boolean, on: boolean): void {
    if (held && (on || this.notes !== null)) {
      if (!on) this.close();
      else {
        this.notes ??= new NoteWatch();
        this.watching = this.notes.begin(this.native!, rootFd);
      }
    }
    this.vouching = this.watching && !this.budgetCut;
  }

  /** Ends the stat thread's part in this scan (call on every path, before `endScan`). */
  endThread(): void {
    this.thread?.endScan();
    this.thread = null;
  }

  /**
   * Ends the scan: tells the offered stat thread how many notes were statted, forgets directories the scan did not
   * visit (removed, denied, or past a budget stop) and their watches.
   *
   * @returns the notes whose kept answer stood in for a statx in this scan
   */
  endScan(): number {
    this.offered?.noteScan(this.rawStats, this.native!);
    this.offered = undefined;
    for (const [prefix, listing] of this.kept) {
      if (listing.seen === this.generation) continue;
      this.dropWatches(listing);
      this.kept.delete(prefix);
    }
    if (this.unstatted > 0) countVouched(this.unstatted);
    return this.unstatted;
  }

  /** Gives back every watch and the inotify instance (the view is being dropped, or notification is off). */
  close(): void {
    this.notes?.close();
    this.notes = null;
  }

  /**
   * The vouch → recheck → redo protocol of a search (docs/DESIGN.md §Change notification, "Returned notes" and
   * "Budget cuts"): runs `pass` (one scan and search of this view) and returns its answer when no kept answer stood
   * in for a statx in it. Otherwise: a pass cut by `max_entries` or `max_total_bytes` depends on every note counted
   * before the cut, so every kept answer is voided and the pass runs again; an uncut pass has its returned notes
   * statted again (`recheck`), and any difference voids every kept answer and the pass runs again. The second pass
   * stats every note, so nothing it returns was vouched for. While passes are cut, this view vouches for nothing.
   *
   * @param native bindings
   * @param rootFd the call's root descriptor (not closed here)
   * @throws whatever `pass` throws; ResourceExhaustedError from the recheck's opens
   */
  answer<T>(native: Native, rootFd: number, pass: () => ViewPass<T>): T {
    const first = pass();
    const cut = first.scan.cut === 'max_entries' || first.scan.cut === 'max_total_bytes';
    this.budgetCut = cut;
    if ((first.scan.unstatted ?? 0) === 0) return first.answer;
    // A vouched note whose stat moved without an event (a store through a shared writable mapping, which a statx would
    // show, so the note would be opened and refused while the mapping holds it open for writing) would take the
    // place of a note a scan that stats every note returns: a cut pass that vouched for notes is redone.
    if (cut) this.voidKept();
    else if (this.recheck(native, rootFd, first.returned)) return first.answer;
    return pass().answer;
  }

  /**
   * Re-verifies the notes `ids` whose kept answer stood in for a statx in this view's last scan: each is statted
   * again by name in its directory, reached from `rootFd` one segment at a time with the no-follow directory open,
   * and the raw words are compared with the kept ones. Notes the scan statted itself are not asked again. A
   * difference or a failure dirties the entry and voids every kept answer, and the answer is false.
   *
   * @throws ResourceExhaustedError from an open that failed for lack of descriptors or memory
   */
  private recheck(native: Native, rootFd: number, ids: readonly string[]): boolean {
    let ok = true;
    const words = new Uint32Array(RAW_STAT_WORDS);
    for (const id of ids) {
      const slash = id.lastIndexOf('/');
      const listing = this.kept.get(id.slice(0, slash + 1));
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
    // answer may be just as stale, and the pass that follows is not rechecked: its hits may be other notes vouched
    // for by kept answers. Voiding every kept answer makes that scan stat every note, so nothing it returns was
    // vouched for. Cost: one call statting everything, as without notification.
    if (!ok) this.voidKept();
    return ok;
  }

  /** Voids every kept answer of change notification (the epoch moves), so the next scan stats every note. */
  private voidKept(): void {
    if (this.notes !== null) this.notes.epoch++;
  }

  private dropWatches(listing: Listing): void {
    const watch = this.notes;
    if (watch === null || watch.size === 0) return;
    for (const e of listing.entries) if (e.wd > 0) watch.drop(e);
  }

  /**
   * The listing of the open directory `fd` (fstat `st`): this view's when its directory identity is unchanged (its
   * raw entries still count toward `budget`), else a fresh one, which replaces it. Policy answers of a listing kept
   * for another filter object are forgotten.
   *
   * @throws BridgeError('unavailable', 'entry_ceiling') past the raw entry ceiling; NativeError when listing fails
   */
  listing(native: Native, fd: number, st: FileStat, at: ListingAt, budget: RawEntryBudget): ListedDir {
    const old = this.kept.get(at.prefix);
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
      listing = listFresh(native, fd, st, at, budget, old, { startedMs: this.now(), racyMarginMs: this.racyMarginMs });
      this.kept.set(at.prefix, listing);
      this.stats.listed++;
    }
    listing.seen = this.generation;
    return listing;
  }

  /** Keeps the policy's answer for the entry (`allowsNote`, or what `nameSkipOf` asks), once per listing and filter. */
  keepAllows(e: ListedEntry, yes: boolean): boolean {
    (e as Entry).allows = yes ? 1 : 0;
    return yes;
  }

  /** Keeps the policy's `mayEnter` answer for the entry, once per listing and filter. */
  keepEnters(e: ListedEntry, yes: boolean): boolean {
    (e as Entry).enters = yes ? 1 : 0;
    return yes;
  }

  /** `${id}/` of a directory entry, built once per listing entry. */
  prefixOf(e: ListedEntry): string {
    const own = e as Entry;
    if (own.prefix === undefined) own.prefix = `${own.id}/`;
    return own.prefix;
  }

  /**
   * True when the kept raw stat of the note entry `e` stands for this call's statx (docs/DESIGN.md §Change
   * notification): notification is on in this scan, the listing was reused in this scan (the directory's identity
   * is unchanged since it was listed, so the name names the inode it named when the watch was added and the kept
   * statx was issued), the entry has a watch, and the kept answer was taken under it in the current epoch with no
   * event reported since.
   */
  private isClean(e: Entry, listing: Listing): boolean {
    return (
      this.vouching &&
      e.clean === this.notes!.epoch &&
      e.wd > 0 &&
      e.stat !== undefined &&
      listing.reusedAt === this.generation
    );
  }

  /**
   * Before the walk visits the entries of the open directory `dirFd` (listing `dir`): with notification on and the
   * listing reused (or, with `fresh`, taken in this scan and reusable: listed more than the racy margin after the
   * directory's last change, so a later call reuses it only if no entry was created, removed or renamed since, and
   * the watch and the kept statx, both made after the listing, then resolved the same inode), watches every candidate
   * entry (`isCandidate`) that has none yet, before any statx of this call
   * (the worker's included) is issued for it, so the answer it keeps is taken under the watch (entries statted with
   * more than one link stay unwatched: they are refused anyway, and two names of one inode would share one watch);
   * then publishes the stat thread's job of the candidates this scan will stat (clean entries are not statted at
   * all, and a directory with none left to stat is not published).
   *
   * @returns the job for `stat` and `closeDirectory` (-1: none)
   */
  openDirectory(dirFd: number, dir: ListedDir, isCandidate: (e: ListedEntry) => boolean, fresh = false): number {
    const listing = dir as Listing;
    const watched = this.watching && (listing.reusedAt === this.generation || (fresh && listing.reusable));
    let dirty = -1;
    if (watched) {
      listing.watchedAt = this.generation;
      const watch = this.notes!;
      dirty = 0;
      for (const e of listing.entries) {
        if (!isCandidate(e) || this.isClean(e, listing)) continue;
        dirty++;
        if (e.wd > 0 || (e.stat !== undefined && e.stat.nlink !== 1)) continue;
        watch.add(dirFd, e);
      }
    }
    if (this.thread === null || dirty === 0) return -1;
    const wanted = watched ? (e: Entry): boolean => isCandidate(e) && !this.isClean(e, listing) : isCandidate;
    // Before the walk leaves the directory (and closes dirFd), `closeDirectory` takes back what the worker has not
    // answered.
    return this.thread.publish(dirFd, listing, wanted);
  }

  /** After the walk visited the directory `openDirectory` published `job` for (on every path). */
  closeDirectory(job: number): void {
    if (job >= 0) this.thread!.retire(job);
  }

  /**
   * This call's no-follow stat of the note entry `e` of `dir` in `dirFd`, or its kept answer when that stands in
   * for it (`isClean`). The raw answer is compared word for word with the entry's snapshot; when equal, the FileStat
   * built from the snapshot (equal in every field to what this answer would build) is returned, else a new one is
   * built and the snapshot replaced, forgetting what was built from the old one. With the stat thread, the answer
   * may come from the worker (`job` >= 0): the same statx of the same name bytes in the same descriptor.
   *
   * @throws NativeError from the stat (whichever thread issued it)
   */
  stat(dirFd: number, entry: ListedEntry, dir: ListedDir, job: number): FileStat {
    const e = entry as Entry;
    const listing = dir as Listing;
    const words = this.words;
    if (this.isClean(e, listing)) {
      const snaps = listing.snaps;
      for (let i = 0, at = e.slot; i < RAW_STAT_WORDS; i++, at++) words[i] = snaps[at]!;
      e.vouched = this.generation;
      this.unstatted++;
      return e.stat!;
    }
    this.rawStats++;
    e.clean = 0;
    const taken = job < 0 ? NOT_TAKEN : this.thread!.take(job, e.slot / RAW_STAT_WORDS, words);
    if (taken === NOT_TAKEN) this.native!.statRawAt(dirFd, e.cname, words);
    // The watch (when the entry has one) was added before this statx was issued, and the drain at the start of the
    // next scan reads every event since: from here on the answer is clean until an event says otherwise.
    e.clean = this.watching && e.wd > 0 && listing.watchedAt === this.generation ? this.notes!.epoch : 0;
    if (e.stat !== undefined && sameWords(listing.snaps, e.slot, words)) return e.stat;
    listing.snaps.set(words, e.slot);
    e.stat = fileStatFromRaw(words);
    e.key = undefined;
    e.known = undefined;
    e.passed = undefined;
    return e.stat;
  }

  /** The size in the raw answer of the last `stat` (the words the returned FileStat was built from). */
  rawSize(): number {
    return this.words[RAW.SIZE_HI]! * 0x1_0000_0000 + this.words[RAW.SIZE_LO]!;
  }

  /** True when `st` (from `stat`) is the entry's kept FileStat: this call's answer has the kept words. */
  isKept(e: ListedEntry, st: FileStat): boolean {
    return (e as Entry).stat === st;
  }

  /** True when the entry's kept FileStat passed the note metadata rule under this scan's rule inputs. */
  passedBefore(e: ListedEntry): boolean {
    return (e as Entry).passed === this.rules.token;
  }

  /** Keeps that the entry's kept FileStat passed the note metadata rule under this scan's rule inputs. */
  keepPassed(e: ListedEntry): void {
    (e as Entry).passed = this.rules.token;
  }

  /** The identity key of the entry's kept FileStat, built by `keyOf` once per kept answer. */
  keptKey(e: ListedEntry, keyOf: (st: FileStat) => IdentityKey): IdentityKey {
    const own = e as Entry;
    own.key ??= keyOf(own.stat!);
    return own.key;
  }

  /** The known-note record kept with the entry's kept FileStat (the index's hint), or undefined. */
  keptNote(e: ListedEntry): ScannedNote | undefined {
    return (e as Entry).known;
  }

  /**
   * The result record of a known note `id` with identity `key` and stat `st`: the one kept with the entry when its
   * key is `key` and `memoized` (`isKept`), else a new one (kept when `memoized`).
   */
  knownNote(e: ListedEntry, memoized: boolean, id: string, key: IdentityKey, st: FileStat): ScannedNote {
    const own = e as Entry;
    let note = memoized ? own.known : undefined;
    if (note === undefined || note.key !== key) {
      note = { id, key, stat: st, text: undefined };
      if (memoized) own.known = note;
    }
    return note;
  }

  /** True while a note whose stat is `st` is within the racy margin of its last change (see `storedKey`). */
  private isRacy(st: FileStat): boolean {
    const margin = this.racy.marginMs;
    return margin > 0 && this.racy.startedMs - Number(st.ctimeNs / 1_000_000n) <= margin;
  }

  /**
   * The identity key under which a note verified in this call (identity key `key`, descriptor's fstat `st`) is
   * stored. Kernel timestamps are coarse (a clock tick of a few ms; 2 s on FAT), so a chmod, an ACL change or a write
   * in the same tick as the note's last change, and after this verification, would leave device, inode, size, mtime
   * and ctime as they were. When this call started within the racy margin of the note's ctime, the key gets a
   * suffix that no stat ever produces, so the warm path does not vouch for it and the next call verifies the note
   * again (git's "racy" rule for its index). A margin of 0 turns the rule off (tests that count opens of notes
   * written a moment before).
   */
  storedKey(key: IdentityKey, st: FileStat): IdentityKey {
    return this.isRacy(st) ? racyKey(key) : key;
  }

  /**
   * True when the text the index holds under the racy form of the entry's key is current (docs/DESIGN.md §Change
   * notification, "Racy notes"): the entry's kept answer stood in for a statx in this scan, so the note was last
   * read after a statx issued under its watch, and no event has come since: nothing changed after that read, even
   * within the timestamp tick the racy key guards against; and the note is still racy (after the margin it is read
   * once more, as without notification, and stored under its plain key). A scan without notification reads such a
   * note again, and that read refuses it when it is open for writing (or its descriptor fails the rule): the caller
   * still makes those checks on the note's own descriptor before it takes the text as known.
   */
  racyTextCurrent(e: ListedEntry, st: FileStat): boolean {
    return (e as Entry).vouched === this.generation && this.isRacy(st);
  }

  /** Tests and diagnostics: the watch descriptor and clean epoch of the kept entry `id`, or undefined. */
  watchStateOf(id: string): { wd: number; clean: number } | undefined {
    const slash = id.lastIndexOf('/');
    const e = this.kept.get(id.slice(0, slash + 1))?.entries.find((x) => x.id === id);
    return e === undefined ? undefined : { wd: e.wd, clean: e.clean };
  }

  /**
   * Tests only: stands in for a change whose event never came. Marks the kept entry `id` clean in the current epoch
   * again; false (nothing changed) unless it has a watch and an event dirtied it.
   */
  restoreCleanForTests(id: string): boolean {
    const slash = id.lastIndexOf('/');
    const e = this.kept.get(id.slice(0, slash + 1))?.entries.find((x) => x.id === id);
    if (e === undefined || this.notes === null || e.wd <= 0 || e.clean !== 0) return false;
    e.clean = this.notes.epoch;
    return true;
  }
}
