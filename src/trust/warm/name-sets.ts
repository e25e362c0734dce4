/**
 * The raw names of directories the read tool resolved an id through, kept so that the next read through the same
 * unchanged directory answers "is this name in its listing, byte for byte?" without listing it again (src/trust/note.ts
 * asks through `CallerView`'s module, src/trust/view.ts). A directory's set is reused under the listing rule of the
 * view (docs/DESIGN.md §Change notification, rule 2): this read's fstat of the open directory shows the device, inode,
 * mtime and ctime it had when it was listed, and it was listed more than the racy margin after its last change.
 * Creating, removing or renaming an entry moves the directory's mtime and ctime, so a kept set is the listing a fresh
 * getdents would return. A set answers only that question; every directory is still opened and judged, and the note
 * opened, judged and read, on every call. Raw entries of a kept set count toward the raw entry ceiling exactly as a
 * fresh listing's.
 *
 * Bounded: at most `maxDirs` sets and `maxNames` names in all (least recently used first out), and a directory whose
 * size says it holds more than a few thousand names is never kept (it is searched in place, as before).
 */
import type { FileStat, Native } from '../../../native/types.js';
import { listedPastMargin } from './listing.js';

/** One directory's names (Latin-1 of the raw bytes: equal strings exactly when the bytes are equal). */
interface NameSet {
  dev: bigint;
  mtimeNs: bigint;
  ctimeNs: bigint;
  names: Set<string>;
  /** Raw entries of the listing (`.` and `..` not counted), charged to the ceiling like a fresh listing. */
  count: number;
}

/** What `find` answers: as `Native.findEntry`. */
export type NameFound = { count: number; found: boolean } | 'too_many';

/** The Latin-1 string of raw name bytes (the set's key: equal exactly when the bytes are). */
function latin1(name: Uint8Array): string {
  return (Buffer.isBuffer(name) ? name : Buffer.from(name.buffer, name.byteOffset, name.length)).toString('latin1');
}

/** Bounds of a `NameSets` (docs/DESIGN.md §Change notification, "Read names"). */
export interface NameSetBounds {
  /** Directories kept at most. */
  maxDirs: number;
  /** Names kept in all directories together at most. */
  maxNames: number;
  /** A directory whose st_size (bytes) is above this is searched in place and never kept. */
  maxDirBytes: number;
}

/** Default bounds: 256 directories, 65,536 names (a few MB at most), directories up to 256 KiB of entries. */
export const NAME_SET_BOUNDS: Readonly<NameSetBounds> = Object.freeze({
  maxDirs: 256,
  maxNames: 65_536,
  maxDirBytes: 256 * 1024,
});

/** The kept name sets of one process (see the module comment). */
export class NameSets {
  /** By inode (a bigint key compares by value; the device is compared on use), in order of last use. */
  private readonly sets = new Map<bigint, NameSet>();
  private names = 0;
  /** Counts for tests and diagnostics: directories listed, and answers from a kept set. */
  readonly stats = { listed: 0, reused: 0 };

  /**
   * @param racyMarginMs how long after a directory's last change its names may be kept (ms; the view's margin)
   * @param now          wall clock in ms (Date.now); tests may move it
   */
  constructor(
    readonly racyMarginMs: number,
    readonly now: () => number = Date.now,
    readonly bounds: Readonly<NameSetBounds> = NAME_SET_BOUNDS,
  ) {}

  /**
   * Whether the open directory `fd` (its fstat in this call: `st`) holds an entry whose raw name is exactly `name`,
   * and how many raw entries its listing has: from the kept set when the directory is unchanged (see the module
   * comment), else from a fresh listing, which is kept when the rule allows.
   *
   * @param maxEntries raw entries the caller may still list (the rest of the raw entry ceiling)
   * @returns as `Native.findEntry`: `too_many` when the listing has more than `maxEntries` entries
   * @throws NativeError when listing fails (as `Native.findEntry`)
   */
  find(native: Native, fd: number, st: FileStat, name: Uint8Array, maxEntries: number): NameFound {
    const key = st.ino;
    const kept = this.sets.get(key);
    if (kept !== undefined) {
      this.forget(key, kept);
      if (kept.dev === st.dev && kept.mtimeNs === st.mtimeNs && kept.ctimeNs === st.ctimeNs) {
        this.sets.set(key, kept);
        this.names += kept.names.size;
        this.stats.reused++;
        if (kept.count > maxEntries) return 'too_many';
        return { count: kept.count, found: kept.names.has(latin1(name)) };
      }
    }
    this.stats.listed++;
    if (!this.keepable(st)) return native.findEntry(fd, name, maxEntries);
    const listed = native.listDir(fd, maxEntries);
    if (listed === 'too_many') return listed;
    const names = new Set<string>();
    for (const e of listed) names.add(e.name.toString('latin1'));
    const found = names.has(latin1(name));
    if (names.size <= this.bounds.maxNames)
      this.keep(key, { dev: st.dev, mtimeNs: st.mtimeNs, ctimeNs: st.ctimeNs, names, count: listed.length });
    return { count: listed.length, found };
  }

  /** Directories kept now (tests and diagnostics). */
  get size(): number {
    return this.sets.size;
  }

  /** Listed more than the racy margin after its last change, and small enough to keep. */
  private keepable(st: FileStat): boolean {
    return st.size <= this.bounds.maxDirBytes && listedPastMargin(st, this.now(), this.racyMarginMs);
  }

  private keep(key: bigint, set: NameSet): void {
    this.sets.set(key, set);
    this.names += set.names.size;
    for (const [oldest, old] of this.sets) {
      if (this.sets.size <= this.bounds.maxDirs && this.names <= this.bounds.maxNames) break;
      this.forget(oldest, old);
    }
  }

  private forget(key: bigint, set: NameSet): void {
    this.sets.delete(key);
    this.names -= set.names.size;
  }
}
