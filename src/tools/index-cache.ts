/**
 * The per-view search indexes a bridge keeps between calls (docs/DESIGN.md, "Why warm calls are cheap and still
 * safe" and "The first search of a view"): one `NoteIndex` per (profile home, root, names rule), bounded in number
 * and in the memory they take (index, caller view, pending notes), with the first call's deferred build.
 */
import type { Policy } from '../policy/types.js';
import { NoteIndex } from '../search/index.js';
import { CallerView } from '../trust/view.js';
import { releaseMemory } from './collect.js';
import type { ScannedNote } from '../trust/types.js';

/** Default number of per-view indexes kept in memory (BridgeOptions.maxIndexes). */
export const DEFAULT_MAX_INDEXES = 8;
/**
 * Default bound on the memory all held views take (BridgeOptions.maxIndexBytes): 512 MiB, as `IndexCache.bytes`
 * counts it (index, caller view, pending notes). One view of 100,000 generated notes (197 MB of note files) takes
 * about 400 MB, one of 10,000 about 45 MB (docs/DESIGN.md "Memory"), so this keeps a worker serving many large homes
 * bounded. It only ever drops other views: the view just searched is kept whole even when it alone is larger (a
 * vault within max_entries and max_total_bytes is never cut by it).
 */
export const DEFAULT_MAX_INDEX_BYTES = 512 * 1024 * 1024;
/**
 * Pending bytes from which a deferred build is followed by `releaseMemory`: a full collection costs about as much as
 * the heap is large, whatever the view, and a small view's build leaves little to give back (10,000 notes of about
 * 2 KB are 21 MB here).
 */
const RELEASE_MIN_BYTES = 16 * 1024 * 1024;
/** Heap bytes per pending note besides its text bytes (the note record and its view of the scan's chunk). */
const PENDING_NOTE_BYTES = 120;

/**
 * One view's index, and the notes of a first call that answered without it and whose build was deferred until
 * after that answer (`IndexCache.defer`).
 */
interface View {
  readonly index: NoteIndex;
  /** What this view's scans keep between calls and when it may stand in for a statx (src/trust/view.ts). */
  readonly caller: CallerView;
  /** Notes verified by this view's cold call, still to be synced into `index` (which is empty meanwhile). */
  pending: readonly ScannedNote[] | undefined;
  /** Memory of `pending` (0 when nothing is pending): text bytes and records, counted against the byte bound. */
  pendingBytes: number;
}

/** Memory a view holds or is about to hold, in bytes (what the byte bound counts): index, caller view, pending notes. */
function viewBytes(view: View): number {
  return view.index.memoryBytes + view.caller.memoryBytes + view.pendingBytes;
}

/**
 * Indexes by view — (profile home, root, names rule) — least recently used dropped first. One view per home keeps
 * two profiles with different allow lists from sharing statistics (and from churning one index between them).
 * Two bounds: at most `max` indexes, and, after each search, at most `maxBytes` bytes of memory over the held
 * indexes — least recently used ones are dropped until the sum fits, never the index just used (a single view
 * larger than the bound is kept alone).
 *
 * Deferred builds (docs/DESIGN.md, "The first search of a view"): the first call of a view answers from the
 * texts its scan read (`searchCold`) and hands those notes to `defer`; they are synced into the view's index on the
 * next turn of the event loop after the answer was written, or by `get` when the view is asked for before that, so
 * every scan runs against an index that holds exactly the notes of the view's last call. A view dropped while its
 * notes are pending loses them (its next call is cold again); a build that throws drops the view.
 */
export class IndexCache {
  private readonly views = new Map<string, View>();

  /**
   * @param max most indexes held at once (an integer ≥ 1)
   * @param maxBytes most bytes of memory held across views (`bytes`; a number ≥ 1; default DEFAULT_MAX_INDEX_BYTES)
   * @throws RangeError on a bad bound
   */
  constructor(
    private readonly max: number,
    private readonly maxBytes: number = DEFAULT_MAX_INDEX_BYTES,
    /** ScanLimits.racyMarginMs for scans into these indexes (undefined: the trust layer's default). */
    readonly racyMarginMs?: number,
    /** ScanLimits.rawEntryCeiling for these scans (undefined: RAW_ENTRY_CEILING; tests lower it). */
    readonly rawEntryCeiling?: number,
    /** Give memory back after each deferred build (`releaseMemory`: a full collection, malloc_trim; default on). */
    private readonly releaseAfterBuild = true,
    /** ScanOptions.watch for these scans: change notification (docs/DESIGN.md §Change notification; default off). */
    readonly watch = false,
  ) {
    if (!Number.isInteger(max) || max < 1) throw new RangeError('maxIndexes: an integer ≥ 1');
    if (typeof maxBytes !== 'number' || Number.isNaN(maxBytes) || maxBytes < 1)
      throw new RangeError('maxIndexBytes: a number ≥ 1');
  }

  /**
   * Memory of the held views, in bytes: each index's `memoryBytes` (text store, postings, terms, per-note records),
   * its caller view (per listing entry) and its pending notes (text bytes and records).
   */
  get bytes(): number {
    let sum = 0;
    for (const view of this.views.values()) sum += viewBytes(view);
    return sum;
  }

  /** Drop least recently used indexes other than `key` until the byte bound holds (call after a sync). */
  fit(key: string): void {
    let total = this.bytes;
    for (const [other, view] of this.views) {
      if (total <= this.maxBytes) return;
      if (other === key) continue;
      this.drop(other);
      total -= viewBytes(view);
    }
  }

  /** True when the view's index is held. */
  holds(key: string): boolean {
    return this.views.has(key);
  }

  /** True when the view holds notes of a cold call not yet synced into its index. */
  isPending(key: string): boolean {
    return this.views.get(key)?.pending !== undefined;
  }

  /**
   * The view of a call: profile home, root and names rule, all three from the operator's policy. Nothing a call's
   * arguments say is part of it: a search narrowed by `within` uses its profile's view (docs/DESIGN.md "Narrowing a
   * search"), so a model cannot make views, and so cannot evict another home's.
   */
  static keyOf(home: string, policy: Pick<Policy, 'root' | 'names'>): string {
    return JSON.stringify([home, policy.root, policy.names]);
  }

  /**
   * The index of a view, created empty on first use, marked most recently used. Pending notes of the view are
   * synced first; when that sync throws, the view is dropped and a new empty index takes its place.
   */
  get(key: string): NoteIndex {
    let view = this.views.get(key);
    if (view !== undefined) {
      this.views.delete(key);
      if (view.pending !== undefined && !this.build(view)) {
        view.caller.close();
        view = undefined;
      }
    }
    view ??= { index: new NoteIndex(), caller: new CallerView(), pending: undefined, pendingBytes: 0 };
    this.views.set(key, view);
    while (this.views.size > this.max) this.drop(this.views.keys().next().value!);
    return view.index;
  }

  /**
   * The caller view of a held view (what its scans keep, src/trust/view.ts; call right after `get`, which creates
   * the view); a view not held gets a fresh one that lives for one scan.
   */
  callerOf(key: string): CallerView {
    return this.views.get(key)?.caller ?? new CallerView();
  }

  /**
   * The caller view of `key`, its view made held first exactly as `get` makes it (pending notes synced, most
   * recently used): the one the call's scans use and its search protocol asks (`CallerView.answer`).
   */
  heldCallerOf(key: string): CallerView {
    this.get(key);
    return this.views.get(key)!.caller;
  }

  /**
   * Keep `notes` (what a cold call of this view just verified and answered from) to be synced into the view's
   * index after the current turn of the event loop (an unreferenced `setImmediate`, so a one-shot process exits
   * without building). The byte bound is applied now, counting the pending notes' texts and records as held (so other
   * views are dropped exactly as an immediate sync would have dropped them), and again after the sync. If the view
   * is dropped before the sync, the notes are lost; if the sync throws, the view is dropped. After the sync, unless
   * turned off or the notes take less than RELEASE_MIN_BYTES, `releaseMemory` gives back what the first call and the
   * build dropped (src/tools/collect.ts).
   *
   * @throws Error when the view is not held, its index is not empty, or notes are already pending (caller bugs)
   */
  defer(key: string, notes: readonly ScannedNote[]): void {
    const view = this.views.get(key);
    if (view === undefined || view.index.size !== 0 || view.pending !== undefined)
      throw new Error('IndexCache.defer: not a fresh view');
    view.pending = notes;
    let bytes = 0;
    for (const note of notes) bytes += note.stat.size + PENDING_NOTE_BYTES;
    view.pendingBytes = bytes;
    this.fit(key);
    setImmediate(() => {
      if (view.pending === undefined) return;
      if (this.views.get(key) !== view) {
        view.pending = undefined;
        view.pendingBytes = 0;
        return;
      }
      const built = view.pendingBytes;
      if (this.build(view)) this.fit(key);
      else this.drop(key);
      if (this.releaseAfterBuild && built >= RELEASE_MIN_BYTES) releaseMemory();
    }).unref();
  }

  /** Sync a view's pending notes into its index; false when the sync threw (the view must then be dropped). */
  private build(view: View): boolean {
    const notes = view.pending!;
    view.pending = undefined;
    view.pendingBytes = 0;
    try {
      view.index.sync(notes);
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Forget a view (evicted, or after a failure that may have left its index half-updated), giving back what its caller view
   * holds outside the heap (inotify watches and instance).
   */
  drop(key: string): void {
    this.views.get(key)?.caller.close();
    this.views.delete(key);
  }

  get size(): number {
    return this.views.size;
  }

  /** Notes the held views hold (indexed, or verified and waiting to be indexed), summed over the views. */
  get notes(): number {
    let n = 0;
    for (const view of this.views.values()) n += view.index.size + (view.pending?.length ?? 0);
    return n;
  }
}
