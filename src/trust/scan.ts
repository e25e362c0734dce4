/**
 * The tree scan below a trusted root (docs/TRUST.md §Scan): depth first, entries of each directory in ascending
 * byte order of their raw names, every directory and note judged on its own open descriptor, with the per-call
 * budgets (candidates, bytes, depth, raw entries) and the `truncated` rules of docs/TRUST.md §Budgets.
 *
 * The steps, each a method of `TreeScan`: `walk` a judged directory (its listing from the caller view,
 * src/trust/view.ts, which also places its watches and the stat thread's job) → per entry `verdictOf` → `enter` a
 * subdirectory (`openChild`, the shared descriptor walk of src/trust/walk.ts) or `lookBelow` it past the depth limit
 * → `candidate` for a note (the view's `stat`, the trust rule, `charge`, `known` or `read`). What may stand in for a
 * statx, and everything kept between calls, is the view's: the scan asks it and never writes what it keeps.
 */
import { DT, NativeError, type FileStat, type Native } from '../../native/types.js';
import { BridgeError, type Reason } from '../errors.js';
import { RawEntryBudget } from './raw-entries.js';
import { CallerView, RACY_MARGIN_MS, UNDECIDED, type ListedDir, type ListedEntry } from './view.js';
import {
  fileDescriptorReason,
  identityKey,
  isDirectory,
  isSymlink,
  noteBytesReason,
  noteStatReason,
  placeOf,
  readSettled,
  requireNative,
  runningUid,
  type RootPlace,
} from './rule.js';
import { idCharsWithinLimit, isNoteName } from './names.js';
import { ReadNote, TextArena } from './note-text.js';
import { NO_WRITERS, type Writers } from './writers.js';
import {
  LOOK_AHEAD_SEGMENTS,
  racyKey,
  rawCeilingOf,
  type IdentityKey,
  type KnownNotes,
  type NoteFilter,
  type ScanLimits,
  type ScannedNote,
  type ScanOptions,
  type ScanResult,
} from './types.js';
import { closeQuietly, openFailureReason, walkDirs } from './walk.js';

export type { ScanOptions } from './types.js';

/** d_type for a stat result, for entries the filesystem listed as DT_UNKNOWN. */
function typeOf(st: FileStat): number {
  if (isDirectory(st)) return DT.DIR;
  if (isSymlink(st)) return DT.LNK;
  return DT.REG;
}

/**
 * Scans the tree below `rootFd` and returns the notes that pass the policy filter and every trust check.
 *
 * Per directory entry, in byte order: undecodable name → skip `bad_name`; name rule (hidden, portable/unicode)
 * → skip; symlink → skip `symlink`. A directory the filter may not enter is skipped without being opened; one
 * whose notes would be deeper than `maxDepth` gets the depth look-ahead instead (names first; a file whose name
 * would be a candidate must also pass the trust rule); any other is opened and must be a trusted directory on the
 * root's device and mount (else skipped with its reason). A file must be a note name the filter allows (else
 * skipped, never opened or statted) and becomes a candidate: one stat by name and the metadata checks; unless the
 * index knows it by identity (then it is never opened), it is opened and re-checked on its descriptor (fstat, ACL).
 * Only a candidate that passed those trust checks is charged: the `maxEntries`th+1 such note, or one whose size
 * would overflow `maxTotalBytes`, stops the scan (truncated, not included). So an untrusted note never moves a
 * budget or a flag (docs/TRUST.md §Budgets). A charged note is read exactly and validated (binary or invalid
 * UTF-8 → skipped, still charged, the same cold and warm).
 *
 * Warm calls: with `options.view` (see `CallerView`), listings are reused by directory identity, policy answers per
 * listing and filter object, and the last raw stat of each note, so an unchanged note costs one statx, a word
 * comparison, the trust rule on its (reused) FileStat and `known.has`. Returned `ScannedNote` objects of unchanged
 * known notes are the same objects call after call; treat them as read-only.
 *
 * @param rootFd  open descriptor of the trusted root (not closed here)
 * @param filter  the policy's allow/enter decisions; for one filter object they must be a pure function of the id
 *   (a `Policy` is frozen), since the view keeps them
 * @param limits  per-call budgets from the policy
 * @param known   identities whose verified text the index already holds
 * @param native  bindings (defaults to this platform's; tests pass a counting wrapper of the real ones)
 * @param options the caller view and the stat thread (see `ScanOptions`)
 * @returns notes in scan order, `truncated`, the raw entry count and skip counts by reason
 * @throws BridgeError('unavailable', 'entry_ceiling') when more raw entries than the call's ceiling would be listed
 *   (`rawCeilingOf(limits)`); BridgeError('unavailable', 'io_error') when the root itself cannot be stat'ed or
 *   listed; ResourceExhaustedError from any call that failed for lack of descriptors or memory (never a skip).
 *   Every descriptor opened here is closed on every path.
 */
export function scanTree(
  rootFd: number,
  filter: NoteFilter,
  limits: ScanLimits,
  known: KnownNotes,
  native: Native = requireNative(),
  options: ScanOptions = {},
): ScanResult {
  let rootStat: FileStat;
  try {
    rootStat = native.fstat(rootFd);
  } catch (err) {
    if (err instanceof NativeError) throw new BridgeError('unavailable', 'io_error');
    throw err;
  }
  return new TreeScan(rootStat, filter, limits, known, native, options).run(rootFd);
}

/** One call's scan: its budgets, counts and results, and the steps of the walk (see the module comment). */
class TreeScan {
  private readonly uid = runningUid();
  private readonly rootPlace: RootPlace;
  /** What this caller view keeps, and what may stand in for a statx (src/trust/view.ts). */
  private readonly view: CallerView;
  private readonly callStarted = Date.now();

  private readonly notes: ScannedNote[] = [];
  private readonly skipped: Partial<Record<string, number>> = {};
  private readonly budget: RawEntryBudget;
  /** Keep the text of notes read in this call (false: operator counts only, see `ScanLimits.keepText`). */
  private readonly keepText: boolean;
  /** Where the texts read in this call are kept, off the JavaScript heap (src/trust/note-text.ts). */
  private readonly texts: TextArena;
  private candidates = 0;
  private bytes = 0;
  private truncated = false;
  /** The budget that stopped the scan, when one did (`ScanResult.cut`). */
  private cut: ScanResult['cut'];
  private stopped = false;
  /** This call's named writers (docs/TRUST.md §Named writers); every check below the root uses them. */
  private readonly writers: Writers;

  constructor(
    private readonly rootStat: FileStat,
    private readonly filter: NoteFilter,
    private readonly limits: ScanLimits,
    private readonly known: KnownNotes,
    private readonly native: Native,
    private readonly options: ScanOptions,
  ) {
    this.rootPlace = placeOf(rootStat);
    this.budget = new RawEntryBudget(rawCeilingOf(limits));
    this.keepText = limits.keepText ?? true;
    this.texts = new TextArena(options.noteSink !== undefined);
    this.view = options.view ?? new CallerView();
    this.writers = limits.writers ?? NO_WRITERS;
    // The inputs of the note metadata rule besides the stat, spelled out: a kept verdict stands only under equal ones.
    const ruleKey = `${this.uid}:${rootStat.dev}:${rootStat.mntId ?? '-'}:${limits.maxFileBytes}:${this.writers.tag}`;
    const racy = { startedMs: this.callStarted, marginMs: limits.racyMarginMs ?? RACY_MARGIN_MS };
    const rule = { names: limits.names, writers: this.writers.tag, ruleKey, racy };
    this.view.beginScan(native, rootStat, rule, options.statThread);
  }

  /** Walks from the root; the result. */
  run(rootFd: number): ScanResult {
    try {
      this.view.notify(rootFd, this.options.view !== undefined, this.options.watch === true);
      this.walk(rootFd, this.rootStat, '', 0);
    } catch (err) {
      if (err instanceof NativeError) throw new BridgeError('unavailable', 'io_error');
      throw err;
    } finally {
      this.view.endThread();
    }
    const unstatted = this.view.endScan();
    const result: ScanResult = {
      notes: this.notes,
      truncated: this.truncated,
      rawEntries: this.budget.used,
      skipped: this.skipped,
    };
    if (unstatted > 0) result.unstatted = unstatted;
    if (this.truncated) result.cut = this.cut ?? 'max_depth';
    return result;
  }

  /** Adds a note to the result (and tells the sink; see `ScanOptions.noteSink`). */
  private push(note: ScannedNote): void {
    this.notes.push(note);
    this.options.noteSink?.accept(note);
  }

  /** Path of the entry being walked, kept only for `limits.onSkip` (operator listings). */
  private current = '';

  private skip(reason: Reason): void {
    this.skipped[reason] = (this.skipped[reason] ?? 0) + 1;
    this.limits.onSkip?.(reason, this.current);
  }

  /**
   * The reason an entry the name rule refused is counted under. `bad_name`, the reason the operator is told about
   * (docs/TRUST.md §Hidden notes), counts only what the policy would have served or entered under a name that
   * passed: a note name the filter allows, a directory it may enter, an entry of unknown type that could be either.
   * Anything else is counted as it would be under a passing name: `denied`, or `not_markdown` for a file whose
   * name is no note name (`Pasted image 1.png` under "portable"). Never opened or statted; for such an entry
   * `allows` keeps the answer (1: `bad_name`), decided once per listing and filter like any policy answer.
   */
  private nameSkipOf(e: ListedEntry, prefix: string): Reason {
    const reason = e.nameReason!;
    if (reason !== 'bad_name') return reason;
    const note = isNoteName(e.name!);
    let allowed = e.allows === 1;
    if (e.allows === UNDECIDED) {
      const id = prefix + e.name!;
      const dir = e.type === DT.DIR || e.type === DT.UNKNOWN;
      const file = e.type !== DT.DIR;
      allowed = this.view.keepAllows(
        e,
        (dir && this.filter.mayEnter(id)) || (file && note && this.filter.allowsNote(id)),
      );
    }
    if (allowed) return 'bad_name';
    return e.type === DT.DIR || e.type === DT.UNKNOWN || note ? 'denied' : 'not_markdown';
  }

  /** The policy's `allowsNote` for the entry, asked once per listing and filter (the view keeps it). */
  private allows(e: ListedEntry): boolean {
    if (e.allows === UNDECIDED) return this.view.keepAllows(e, this.filter.allowsNote(e.id));
    return e.allows === 1;
  }

  /** The policy's `mayEnter` for the entry, asked once per listing and filter (the view keeps it). */
  private enters(e: ListedEntry): boolean {
    if (e.enters === UNDECIDED) return this.view.keepEnters(e, this.filter.mayEnter(e.id));
    return e.enters === 1;
  }

  /** The listing of the judged directory `fd` (fstat `st`) whose entries are at `depth` segments. */
  private listingOf(fd: number, st: FileStat, prefix: string, depth: number): ListedDir {
    const at = { prefix, depth, names: this.limits.names, filter: this.filter };
    return this.view.listing(this.native, fd, st, at, this.budget);
  }

  /**
   * What the walk does with an entry whose name passed, given its type: 'dir' (enter it), a skip reason, or null (a
   * candidate note). One decision for `walkEntries` and `isCandidate`.
   */
  private verdictOf(e: ListedEntry, type: number): Reason | 'dir' | null {
    if (type === DT.DIR) return 'dir';
    if (type === DT.LNK) return 'symlink';
    if (!e.note) return 'not_markdown';
    if (!this.allows(e)) return 'denied';
    if (!e.withinLimits) return 'bad_name';
    return null;
  }

  /**
   * True for an entry the walk hands to `candidate` without a stat of its own (listed type, name rule, note name,
   * allowed, within the id limits): the entries a stat thread job may carry.
   */
  private readonly isCandidate = (e: ListedEntry): boolean =>
    e.name !== null && e.nameReason === null && e.type !== DT.UNKNOWN && this.verdictOf(e, e.type) === null;

  /** Scans one open trusted directory (fstat `dirStat`) whose id has `dirDepth` segments (the root has 0). */
  private walk(dirFd: number, dirStat: FileStat, prefix: string, dirDepth: number): void {
    const depth = dirDepth + 1; // depth of the entries listed here
    const listing = this.listingOf(dirFd, dirStat, prefix, depth);
    // Watches for the candidates, and the stat thread's job; before this returns (and the caller closes dirFd), the
    // view takes back every entry the worker has not answered.
    const job = this.view.openDirectory(
      dirFd,
      listing,
      this.isCandidate,
      this.options.noteSink?.besideScan?.() === true,
    );
    try {
      this.walkEntries(dirFd, listing, prefix, depth, job);
    } finally {
      this.view.closeDirectory(job);
    }
  }

  /** The entries of `walk`'s listing, in order. */
  private walkEntries(dirFd: number, listing: ListedDir, prefix: string, depth: number, job: number): void {
    const tracked = this.limits.onSkip !== undefined;
    for (const e of listing.entries) {
      if (this.stopped) return;
      if (tracked) this.current = prefix + (e.name ?? Buffer.from(e.sortKey, 'latin1').toString('utf8'));
      if (e.name === null) {
        this.skip('bad_name');
        continue;
      }
      if (e.nameReason !== null) {
        this.skip(this.nameSkipOf(e, prefix));
        continue;
      }
      let type = e.type;
      if (type === DT.UNKNOWN) {
        // Stat only what could matter: a directory the filter may enter, or an allowed note name.
        if (!this.enters(e) && !(e.note && this.allows(e))) {
          this.skip('denied');
          continue;
        }
        const resolved = this.entryType(dirFd, e);
        if (resolved === null) {
          this.skip('missing');
          continue;
        }
        type = resolved;
      }
      const verdict = this.verdictOf(e, type);
      if (verdict === 'dir') this.enter(dirFd, e, depth);
      else if (verdict !== null) this.skip(verdict);
      else this.candidate(dirFd, e, listing, job);
    }
  }

  /** Entry type, resolving DT_UNKNOWN with a no-follow stat; null when that stat fails. */
  private entryType(dirFd: number, e: ListedEntry): number | null {
    if (e.type !== DT.UNKNOWN) return e.type;
    try {
      return typeOf(this.native.statAt(dirFd, e.name!));
    } catch (err) {
      if (err instanceof NativeError) return null;
      throw err;
    }
  }

  /**
   * Opens the subdirectory `name` of `parentFd` and judges it (directory trust on the root's device and mount) through
   * the shared descriptor walk; null (and, when `count`, a skip) when refused. What is not a verdict on this
   * directory (ResourceExhaustedError) is rethrown by the walk.
   */
  private openChild(parentFd: number, name: string, count: boolean): { fd: number; stat: FileStat } | null {
    let end: ReturnType<typeof walkDirs>;
    try {
      end = walkDirs(this.native, parentFd, [name], { uid: this.uid, place: this.rootPlace, writers: this.writers });
    } catch (err) {
      if (!(err instanceof NativeError)) throw err;
      if (count) this.skip('io_error');
      return null;
    }
    if (end.ok) return { fd: end.fd, stat: end.stat! };
    if (count) this.skip(end.reason);
    return null;
  }

  /** A directory entry at `depth` segments: skip, look ahead, or open, check and recurse. */
  private enter(parentFd: number, e: ListedEntry, depth: number): void {
    if (!this.enters(e)) {
      this.skip('denied');
      return;
    }
    const prefix = this.view.prefixOf(e);
    if (depth >= this.limits.maxDepth) {
      // Its notes would be deeper than max_depth. Once truncated is set, looking further cannot change anything
      // (unless an operator count wants every such note: `limits.onDeep`).
      if (this.truncated && this.limits.onDeep === undefined) return;
      const child = this.openChild(parentFd, e.name!, true);
      if (child === null) return;
      try {
        if (this.lookBelow(child.fd, child.stat, prefix, depth)) this.truncated = true;
      } finally {
        closeQuietly(this.native, child.fd);
      }
      return;
    }
    const child = this.openChild(parentFd, e.name!, true);
    if (child === null) return;
    try {
      this.walk(child.fd, child.stat, prefix, depth);
    } catch (err) {
      if (!(err instanceof NativeError)) throw err;
      this.current = e.id;
      this.skip('io_error');
    } finally {
      closeQuietly(this.native, child.fd);
    }
  }

  /**
   * Depth look-ahead below an open trusted directory at depth `dirDepth` (fstat `dirStat`): true as soon as a name
   * that would be a candidate (note name, allowed, at most 512 code points) exists below it through trusted
   * same-device directories the filter may enter, down to LOOK_AHEAD_SEGMENTS: a note below the 16-segment id limit
   * counts too, since the depth is all that hides it. Names decide first; only a file whose name would be a
   * candidate is statted and opened, to check that it passes the trust rule. With `limits.onDeep` every such note
   * is reported and the walk goes on.
   */
  private lookBelow(fd: number, dirStat: FileStat, prefix: string, dirDepth: number): boolean {
    const depth = dirDepth + 1;
    let listing: ListedDir;
    try {
      listing = this.listingOf(fd, dirStat, prefix, depth);
    } catch (err) {
      if (err instanceof NativeError) return false;
      throw err;
    }
    const onDeep = this.limits.onDeep;
    let found = false;
    // The notes of this directory first, then its subdirectories: a note one level down ends the look-ahead
    // without descending a long chain first.
    const dirs: ListedEntry[] = [];
    for (const e of listing.entries) {
      if (e.name === null || e.nameReason !== null || !idCharsWithinLimit(e.id)) continue;
      const type = this.entryType(fd, e);
      if (type === DT.DIR) {
        if (depth < LOOK_AHEAD_SEGMENTS && this.enters(e)) dirs.push(e);
      } else if (type !== null && type !== DT.LNK && e.note && this.allows(e) && this.trustedFileAt(fd, e.name)) {
        found = true;
        if (onDeep === undefined) return true;
        onDeep(e.id);
      }
    }
    for (const e of dirs) {
      const child = this.openChild(fd, e.name!, false);
      if (child === null) continue;
      try {
        if (this.lookBelow(child.fd, child.stat, this.view.prefixOf(e), depth)) found = true;
      } finally {
        closeQuietly(this.native, child.fd);
      }
      if (found && onDeep === undefined) return true;
    }
    return found;
  }

  /**
   * The trust rule on a note's own open descriptor `fd` whose fstat is `fst`: the note metadata rule, then the
   * descriptor checks (ACL, open for writing); null when it passes.
   */
  private descriptorReason(fd: number, fst: FileStat): Reason | null {
    const { native, uid, rootPlace, writers } = this;
    return (
      noteStatReason(fst, uid, rootPlace, this.limits.maxFileBytes, writers) ??
      fileDescriptorReason(native, fd, uid, writers, fst.gid)
    );
  }

  /**
   * True when the file `name` in `dirFd` passes the trust rule (owner, mode, link count, device and mount, ACL) on
   * its own descriptor. Size and content are not judged: the look-ahead asks whether a trusted note exists below
   * the depth limit, and an untrusted one must not set `truncated` (docs/TRUST.md §Budgets).
   */
  private trustedFileAt(dirFd: number, name: string): boolean {
    const { native, uid, rootPlace, writers } = this;
    const maxFileBytes = this.limits.maxFileBytes;
    try {
      if (noteStatReason(native.statAt(dirFd, name), uid, rootPlace, maxFileBytes, writers) !== null) return false;
      const fd = native.openFileAt(dirFd, name);
      try {
        return this.descriptorReason(fd, native.fstat(fd)) === null;
      } finally {
        closeQuietly(native, fd);
      }
    } catch (err) {
      if (err instanceof NativeError) return false;
      throw err;
    }
  }

  /**
   * Charge one trusted note; false (and the scan stops, truncated) when a budget is exhausted. `count: false`
   * charges the bytes only: a note about to be read counts toward `maxEntries` once its content has passed, so a
   * binary or invalid UTF-8 note never takes a trusted note's place, while the bytes read to find that out stay
   * charged (they bound the work of one call).
   */
  private charge(size: number, count = true): boolean {
    if (this.candidates >= this.limits.maxEntries || this.bytes + size > this.limits.maxTotalBytes) {
      this.cut = this.candidates >= this.limits.maxEntries ? 'max_entries' : 'max_total_bytes';
      this.truncated = true;
      this.stopped = true;
      return false;
    }
    if (count) this.candidates++;
    this.bytes += size;
    return true;
  }

  /**
   * The identity key a note is stored and looked up under: its identity plus the writers it was judged with, so a
   * note verified under other writers (an ACL entry naming a writer since removed, which no stat field shows) is
   * never vouched for by its unchanged identity: it is opened and judged again.
   */
  private readonly keyOf = (st: FileStat): IdentityKey => {
    const tag = this.writers.tag;
    return tag === '' ? identityKey(st) : [identityKey(st), tag].join(':');
  };

  /**
   * The checks a read of the racy note `name` in `dirFd` would make before reading (docs/DESIGN.md §Change
   * notification, "Racy notes"): its own descriptor's fstat and the note rule, the ACL, open for writing. 'same'
   * when they pass and the descriptor shows the identity `key`; 'changed' when it shows another (the caller reads the
   * note as usual); else the reason the read would skip it with.
   */
  private racyDescriptor(dirFd: number, name: string, key: IdentityKey): Reason | 'same' | 'changed' {
    const native = this.native;
    let fd: number;
    try {
      fd = native.openFileAt(dirFd, name);
    } catch (err) {
      return openFailureReason(native, dirFd, name, err, false);
    }
    try {
      const fst = native.fstat(fd);
      if (this.keyOf(fst) !== key) return 'changed';
      return this.descriptorReason(fd, fst) ?? 'same';
    } catch (err) {
      if (!(err instanceof NativeError)) throw err;
      return 'io_error';
    } finally {
      closeQuietly(native, fd);
    }
  }

  /**
   * A candidate note: one stat by name (or the view's kept answer) and the metadata checks; a note the index does
   * not know by identity is also opened and re-checked on its descriptor (`read`). Only then is it charged against
   * `maxEntries` and `maxTotalBytes` (an untrusted note never moves a budget or a flag), and the text read and
   * validated. A known note (`knownKey`) is returned without text and never opened.
   */
  private candidate(dirFd: number, e: ListedEntry, listing: ListedDir, job: number): void {
    const view = this.view;
    let st: FileStat;
    try {
      st = view.stat(dirFd, e, listing, job);
    } catch (err) {
      if (!(err instanceof NativeError)) throw err;
      this.skip(err.code === 'ENOENT' ? 'missing' : 'io_error');
      return;
    }
    const memoized = view.isKept(e, st);
    // The metadata rule is a function of the stat's fields and this call's rule inputs only. When this call's statx
    // answered the very words that passed it before (the view returned the FileStat built from them) under the same
    // inputs, it passes again: its verdict is reused instead of computed again. Any other answer is judged afresh.
    if (!memoized || !view.passedBefore(e)) {
      const metaReason = noteStatReason(st, this.uid, this.rootPlace, this.limits.maxFileBytes, this.writers);
      if (metaReason !== null) {
        this.skip(metaReason);
        return;
      }
      if (memoized) view.keepPassed(e);
    }
    const key = this.knownKey(dirFd, e, st, memoized);
    if (key === null) this.read(dirFd, e.name!, e.id);
    else if (key !== undefined) {
      // st.size, read from this call's raw answer (the words st was built from) rather than from the FileStat object.
      if (!this.charge(view.rawSize())) return;
      this.push(view.knownNote(e, memoized, e.id, key, st));
    }
  }

  /**
   * The key under which the index already holds the verified text of the candidate `e` (stat `st`, the view's kept
   * FileStat when `memoized`), or of its racy form when the view says that text is current and the checks a read
   * would make pass (`racyDescriptor`: the bytes are spared, not the checks); null when it holds none (the note is
   * read); undefined when the note was skipped (its racy check failed).
   */
  private knownKey(dirFd: number, e: ListedEntry, st: FileStat, memoized: boolean): IdentityKey | null | undefined {
    const view = this.view;
    const id = e.id;
    const key = memoized ? view.keptKey(e, this.keyOf) : this.keyOf(st);
    if (this.known.has(id, key, memoized ? view.keptNote(e) : undefined, this.notes.length)) return key;
    if (!view.racyTextCurrent(e, st) || !this.known.has(id, racyKey(key))) return null;
    const verdict = this.racyDescriptor(dirFd, e.name!, key);
    if (verdict === 'same') return racyKey(key);
    if (verdict === 'changed') return null;
    this.skip(verdict);
    return undefined;
  }

  /**
   * A candidate note the index does not hold: opened, judged on its own descriptor, charged, read exactly and
   * validated (binary or invalid UTF-8: skipped, still charged), then pushed under the key the view stores it by
   * (`CallerView.storedKey`: the racy form within the racy margin of its last change).
   */
  private read(dirFd: number, name: string, id: string): void {
    const native = this.native;
    let fd: number;
    try {
      fd = native.openFileAt(dirFd, name);
    } catch (err) {
      this.skip(openFailureReason(native, dirFd, name, err, false));
      return;
    }
    try {
      // The descriptor is authoritative: judge what was opened, not what was statted a moment ago.
      const fst = native.fstat(fd);
      const reason = this.descriptorReason(fd, fst);
      if (reason !== null) {
        this.skip(reason);
        return;
      }
      if (!this.charge(fst.size, false)) return;
      const raw = readSettled(native, dirFd, name, fd, fst);
      if (raw === null) {
        this.skip('io_error');
        return;
      }
      const invalid = noteBytesReason(raw);
      if (invalid !== null) {
        this.skip(invalid);
        return;
      }
      this.candidates++;
      const key = this.view.storedKey(this.keyOf(fst), fst);
      this.push(this.keepText ? new ReadNote(id, key, fst, raw, this.texts) : { id, key, stat: fst, text: undefined });
    } catch (err) {
      if (!(err instanceof NativeError)) throw err;
      this.skip('io_error');
    } finally {
      closeQuietly(native, fd);
    }
  }
}
