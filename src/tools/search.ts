/**
 * memory_bridge_search (docs/TOOLS.md, docs/SEARCH.md): caller → policy → run kind → walk → index → response.
 *
 * Every call re-reads the policy and re-walks the tree from the root descriptor; the per-view `NoteIndex` only
 * spares re-reading notes whose identity key is unchanged, and after `sync` it holds exactly the notes this call
 * may see, so ranking statistics never include a note outside this caller's view.
 *
 * The first call of a view (empty index) answers from the texts its scan just verified (`searchCold`, the same
 * answer a built index gives) and builds the index after the answer is written (docs/DESIGN.md, "The first search of a view");
 * the pending notes are exactly that call's notes for that view, and any later call of the view syncs them before
 * its own scan, so the index the scan consults is always the one a plain sync would have left.
 */
import { BridgeError } from '../errors.js';
import { getNative } from '../../native/index.js';
import { scanLimitsOf } from '../policy/scan-limits.js';
import { searchCold } from '../search/cold.js';
import { scanTree } from '../trust/scan.js';
import { statPool } from '../trust/stat-pool.js';
import type { ScanResult } from '../trust/types.js';
import { HINTS, parseSearchArgs } from './args.js';
import { parseCaller } from './caller.js';
import { IndexCache } from './index-cache.js';
import { policyAndRoot } from './start.js';
import type { SearchHit, SearchResult } from './types.js';

export { DEFAULT_MAX_INDEX_BYTES, DEFAULT_MAX_INDEXES, IndexCache } from './index-cache.js';

/**
 * The search answer (docs/TOOLS.md §Results) from the ranked hits and the scan: `truncated` when the selection or the scan left something out;
 * `incomplete: true` (and only then present) when the scan was cut by a budget or the depth limit.
 */
function answerOf(ranked: { hits: SearchHit[]; truncated: boolean }, scan: ScanResult): SearchResult {
  const answer: SearchResult = { ok: true, results: ranked.hits, truncated: ranked.truncated || scan.truncated };
  if (scan.truncated) answer.incomplete = true;
  return answer;
}

/**
 * Run one search. Steps, in order: arguments; caller home; platform bindings; policy (fresh); run kind; limit
 * against the policy's max_results (default default_results); open the root through the trust walk; the view's
 * index (pending notes of its last call synced first, see IndexCache); scan with that index as KnownNotes; sync;
 * rank and bound the response. When the view's index is empty (its first call), the answer comes from the scanned
 * texts (`searchCold`, the same answer) and the sync is deferred until after it (`IndexCache.defer`). The root
 * descriptor is closed on every path.
 *
 * @returns the search JSON (docs/TOOLS.md §Results)
 * @throws BridgeError (the bridge turns it into the error JSON of docs/TOOLS.md §Errors): `invalid_request` for arguments,
 *   `unavailable` for caller, platform, policy, run kind, root trust or the raw entry ceiling
 */
export function runSearch(args: unknown, caller: unknown, indexes: IndexCache): SearchResult {
  const { query, limit: asked } = parseSearchArgs(args);
  const who = parseCaller(caller);
  const home = who.home;
  const native = getNative();
  if (native === null) throw new BridgeError('unavailable', 'unsupported_platform');
  const { policy, writers, rootFd } = policyAndRoot(who, native, ({ limits }) => {
    if (asked !== undefined && asked > limits.max_results) {
      throw new BridgeError('invalid_request', 'bad_arguments', HINTS.limit(limits.max_results));
    }
  });
  const { limits } = policy;
  const limit = asked ?? limits.default_results;
  const key = IndexCache.keyOf(home, policy);
  try {
    const index = indexes.get(key);
    const scan = scanTree(
      rootFd,
      policy,
      {
        ...scanLimitsOf(policy),
        racyMarginMs: indexes.racyMarginMs,
        rawEntryCeiling: indexes.rawEntryCeiling,
        writers,
      },
      index,
      native,
      { memo: indexes.memoOf(key), statThread: statPool() },
    );
    if (index.size === 0 && scan.notes.length > 0) {
      // First call of this view (or its index is empty): every note came back with text. Answer from those texts and
      // build the index after the answer is written (searchCold answers exactly what sync + search would).
      let answer: ReturnType<typeof searchCold>;
      try {
        answer = searchCold(scan.notes, query, limit, limits, index);
      } catch (err) {
        indexes.drop(key);
        throw err;
      }
      // A query that reaches very many terms was answered from the index, built in the call (see searchCold).
      if (index.size > 0) indexes.fit(key);
      else indexes.defer(key, scan.notes);
      return answerOf(answer, scan);
    }
    try {
      index.sync(scan.notes);
    } catch (err) {
      indexes.drop(key);
      throw err;
    }
    indexes.fit(key);
    return answerOf(index.search(query, limit, limits), scan);
  } finally {
    native.close(rootFd);
  }
}
