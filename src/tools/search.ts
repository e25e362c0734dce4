/**
 * memory_bridge_search (PRODUCT.md §2, §6): caller → policy → run kind → walk → index → response.
 *
 * Every call re-reads the policy and re-walks the tree from the root descriptor; the per-view `NoteIndex` only
 * spares re-reading notes whose identity key is unchanged, and after `sync` it holds exactly the notes this call
 * may see, so ranking statistics never include a note outside this caller's view.
 */
import { BridgeError } from '../errors.js';
import { getNative } from '../../native/index.js';
import { loadPolicy } from '../policy/load.js';
import type { Policy } from '../policy/types.js';
import { NoteIndex } from '../search/index.js';
import { openTrustedDir } from '../trust/path.js';
import { scanTree } from '../trust/scan.js';
import type { ScanLimits } from '../trust/types.js';
import { HINTS, parseSearchArgs } from './args.js';
import { callerHome, checkRunKind } from './caller.js';
import type { SearchResult } from './types.js';

/** Default number of per-view indexes kept in memory (BridgeOptions.maxIndexes). */
export const DEFAULT_MAX_INDEXES = 8;
/**
 * Default bound on the summed note bytes of all held indexes (BridgeOptions.maxIndexBytes): 256 MiB of note
 * files, four views at the policy ceiling of max_total_bytes (64 MiB). The index of one view costs a few times its
 * note bytes in memory (text plus postings), so this keeps a worker serving many large homes bounded.
 */
export const DEFAULT_MAX_INDEX_BYTES = 256 * 1024 * 1024;

/**
 * Indexes by view — (profile home, root, names rule) — least recently used dropped first. One view per home keeps
 * two profiles with different allow lists from sharing statistics (and from churning one index between them).
 * Two bounds: at most `max` indexes, and, after each search, at most `maxBytes` summed note bytes over the held
 * indexes — least recently used ones are dropped until the sum fits, never the index just used (a single view
 * larger than the bound is kept alone).
 */
export class IndexCache {
  private readonly views = new Map<string, NoteIndex>();

  /**
   * @param max most indexes held at once (an integer ≥ 1)
   * @param maxBytes most summed note bytes held across indexes (a number ≥ 1; default DEFAULT_MAX_INDEX_BYTES)
   * @throws RangeError on a bad bound
   */
  constructor(
    private readonly max: number,
    private readonly maxBytes: number = DEFAULT_MAX_INDEX_BYTES,
    /** ScanLimits.racyMarginMs for scans into these indexes (undefined: the trust layer's default). */
    readonly racyMarginMs?: number,
  ) {
    if (!Number.isInteger(max) || max < 1) throw new RangeError('maxIndexes: an integer ≥ 1');
    if (typeof maxBytes !== 'number' || Number.isNaN(maxBytes) || maxBytes < 1) throw new RangeError('maxIndexBytes: a number ≥ 1');
  }

  /** Summed note bytes of the held indexes. */
  get bytes(): number {
    let sum = 0;
    for (const index of this.views.values()) sum += index.bytes;
    return sum;
  }

  /** Drop least recently used indexes other than `key` until the byte bound holds (call after a sync). */
  fit(key: string): void {
    let total = this.bytes;
    for (const [other, index] of this.views) {
      if (total <= this.maxBytes) return;
      if (other === key) continue;
      this.views.delete(other);
      total -= index.bytes;
    }
  }

  /** True when the view's index is held. */
  holds(key: string): boolean {
    return this.views.has(key);
  }

  static keyOf(home: string, policy: Pick<Policy, 'root' | 'names'>): string {
    return JSON.stringify([home, policy.root, policy.names]);
  }

  /** The index of a view, created empty on first use, marked most recently used. */
  get(key: string): NoteIndex {
    let index = this.views.get(key);
    if (index === undefined) {
      index = new NoteIndex();
    } else {
      this.views.delete(key);
    }
    this.views.set(key, index);
    while (this.views.size > this.max) this.views.delete(this.views.keys().next().value!);
    return index;
  }

  /** Forget a view (after a failure that may have left its index half-updated). */
  drop(key: string): void {
    this.views.delete(key);
  }

  get size(): number {
    return this.views.size;
  }
}

/** The scan budgets of a policy (PRODUCT.md §4 limits, §5). */
export function scanLimitsOf(policy: Policy): ScanLimits {
  return {
    names: policy.names,
    maxEntries: policy.limits.max_entries,
    maxDepth: policy.limits.max_depth,
    maxTotalBytes: policy.limits.max_total_bytes,
    maxFileBytes: policy.limits.max_file_bytes,
  };
}

/**
 * Run one search. Steps, in order: arguments; caller home; platform bindings; policy (fresh); run kind; limit
 * against the policy's max_results (default default_results); open the root through the trust walk; scan with the
 * view's index as KnownNotes; sync; rank and bound the response. The root descriptor is closed on every path.
 *
 * @returns the §2 search JSON
 * @throws BridgeError (the bridge turns it into the §2 error JSON): `invalid_request` for arguments,
 *   `unavailable` for caller, platform, policy, run kind, root trust or the raw entry ceiling
 */
export function runSearch(args: unknown, caller: unknown, indexes: IndexCache): SearchResult {
  const { query, limit: asked } = parseSearchArgs(args);
  const home = callerHome(caller);
  const native = getNative();
  if (native === null) throw new BridgeError('unavailable', 'unsupported_platform');
  const policy = loadPolicy(home);
  checkRunKind(caller as { cron: boolean; subagent: boolean }, policy);
  const { limits } = policy;
  if (asked !== undefined && asked > limits.max_results) {
    throw new BridgeError('invalid_request', 'bad_arguments', HINTS.limit(limits.max_results));
  }
  const limit = asked ?? limits.default_results;

  const key = IndexCache.keyOf(home, policy);
  const rootFd = openTrustedDir(policy.root, 'root', native);
  try {
    const index = indexes.get(key);
    const scan = scanTree(rootFd, policy, { ...scanLimitsOf(policy), racyMarginMs: indexes.racyMarginMs }, index, native);
    try {
      index.sync(scan.notes);
    } catch (err) {
      indexes.drop(key);
      throw err;
    }
    indexes.fit(key);
    const { hits, truncated } = index.search(query, limit, limits);
    return { ok: true, results: hits, truncated: truncated || scan.truncated };
  } finally {
    native.close(rootFd);
  }
}
