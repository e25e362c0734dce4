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
import type { Native } from '../../native/types.js';
import type { NoteIndex, NoteScope } from '../search/index.js';
import { scanLimitsOf } from '../policy/scan-limits.js';
import type { Policy } from '../policy/types.js';
import { searchCold } from '../search/cold.js';
import { coldThread, type ColdFeed } from '../search/cold-thread.js';
import { scanTree } from '../trust/scan.js';
import type { ScanResult } from '../trust/types.js';
import { statPool, type ViewPass } from '../trust/view.js';
import type { Writers } from '../trust/writers.js';
import { parseSearchArgs } from './args.js';
import { filterScope, hasFilters, narrowScope } from './filters.js';
import { noteHitVersions } from './hit-versions.js';
import { parseCaller } from './caller.js';
import type { HiddenNotices } from './hidden-notices.js';
import { IndexCache } from './index-cache.js';
import { policyAndRoot } from './start.js';
import { adoptPersisted, persistedForFirstCall } from './persisted-index.js';
import type { PersistedIndex } from '../search/persisted.js';
import type { SearchHit, SearchResult } from './types.js';

export { DEFAULT_MAX_INDEX_BYTES, DEFAULT_MAX_INDEXES, IndexCache } from './index-cache.js';
/** The score of a hit of a search with `SearchSurface.indexed` (src/search/select.ts), for the Hermes surfaces. */
export { scoreOfHit } from '../search/select.js';

/** The operator remedy logged when a search had no candidate because every name failed the portable rule. */
export const NAMES_REMEDY =
  'no note was searched: every name failed the "portable" names rule; set "names": "unicode" in the policy to accept names with spaces and non-ASCII letters';

/**
 * The search answer (docs/TOOLS.md §Results) from the ranked hits and the scan: `truncated` when the selection or the scan left something out;
 * `incomplete: true` (and only then present) when the scan was cut by a budget or the depth limit.
 */
function answerOf(ranked: { hits: SearchHit[]; truncated: boolean }, scan: ScanResult, policy: Policy): SearchResult {
  const answer: SearchResult = { ok: true, results: ranked.hits, truncated: ranked.truncated || scan.truncated };
  if (scan.truncated) answer.incomplete = true;
  // The audit record names each hit's version (docs/AUDIT.md §Records); with the trail off nothing is looked up.
  if (policy.audit.enabled) noteHitVersions(answer, ranked.hits, scan.notes);
  return answer;
}

/**
 * True when a scan that found no candidate skipped names for the name rule (`bad_name`) under `portable` and for
 * nothing but reasons of the policy's own choosing (hidden, not Markdown, denied): the names rule is then why
 * nothing was searched.
 */
function onlyNamesRule(policy: Policy, skipped: Partial<Record<string, number>>): boolean {
  if (policy.names !== 'portable' || (skipped.bad_name ?? 0) === 0) return false;
  for (const [reason, n] of Object.entries(skipped))
    if (n !== undefined && n > 0 && !['bad_name', 'hidden', 'not_markdown', 'denied'].includes(reason)) return false;
  return true;
}

/**
 * Run one search. Steps, in order: arguments (`within` compiled and validated here, before the policy is read);
 * caller home; platform bindings; policy (fresh); run kind; limit lowered to the policy's max_results (default
 * default_results); open the root through the trust walk; the view's index (pending notes of its last call synced
 * first, see IndexCache); then the view's caller view (src/trust/view.ts) is asked for the answer of one pass —
 * scan with that index as KnownNotes; sync; rank and bound the response — and decides whether it stands or the
 * pass runs again (`CallerView.answer`: vouch → recheck → redo). When the view's index is empty (its first call),
 * the answer comes from the scanned texts (`searchCold`, the same answer) and the sync is deferred until after it
 * (`IndexCache.defer`). The root descriptor is closed on every path.
 *
 * `within` never changes the scan or the view (docs/DESIGN.md "Narrowing a search"): the profile's view is scanned,
 * synced and kept exactly as without it, and only the ranking is narrowed to the notes a `within` pattern matches,
 * with statistics counted over those notes alone. So a `within` call costs about what the same call without it
 * costs, makes no view of its own (it can evict no other view), and `truncated` and `incomplete` of the scan are
 * the profile's, whatever the patterns (a `within` cannot probe for names it cannot read). A `within` that matches
 * nothing the policy allows gives exactly the answer of a pattern matching nothing at all. The filters (`tags`,
 * `modified_after`, `modified_before`) narrow the same way, in one scope with `within` (src/tools/filters.ts) over
 * the facts the index keeps per note; without `query` the selected notes come newest first (`NoteIndex.recent`), and
 * `sort: "modified"` orders the matches by mtime (docs/TOOLS.md §Filters).
 *
 * @param seen told the call's policy as soon as it is loaded (`policyAndRoot`)
 * @returns the search JSON (docs/TOOLS.md §Results)
 * @throws BridgeError (the bridge turns it into the error JSON of docs/TOOLS.md §Errors): `invalid_request` for arguments,
 *   `unavailable` for caller, platform, policy, run kind, root trust or the raw entry ceiling
 */
export function runSearch(
  args: unknown,
  caller: unknown,
  indexes: IndexCache,
  notice: (reason: string, detail: string) => void = () => undefined,
  hidden?: HiddenNotices,
  seen?: (policy: Policy) => void,
  surface?: SearchSurface,
): SearchResult {
  const { query, limit: asked, within, filters, sort } = parseSearchArgs(args);
  const who = parseCaller(caller);
  const home = who.home;
  const native = getNative();
  if (native === null) throw new BridgeError('unavailable', 'unsupported_platform');
  const { policy, writers, rootFd } = policyAndRoot(who, native, () => undefined, seen);
  const { limits } = policy;
  // A limit the schema allows (1–10) but above this policy's max_results is lowered to it, not refused: a model that
  // follows the advertised schema must get an answer (docs/TOOLS.md §Tools).
  const limit = asked === undefined ? limits.default_results : Math.min(asked, limits.max_results);
  const key = IndexCache.keyOf(home, policy);
  const scope = narrowScope(filterScope(within?.scope, filters), surface?.scope);
  // Filters, a filter-only search and sort "modified" rank over the index's per-note facts, so a first call of the
  // view with any of them builds the index in the call instead of answering from the scanned texts; so does a
  // Hermes surface that reads the hits' scores (`scoreOfHit`), which only the index's ranking in this thread records.
  const filtered = hasFilters(filters) || query === undefined || sort === 'modified' || surface?.indexed === true;
  const call: SearchCall = {
    query,
    limit,
    scope,
    filtered,
    sort,
    policy,
    writers,
    rootFd,
    key,
    indexes,
    native,
    notice,
    home,
    hidden,
  };
  try {
    // The view decides whether the answer stands: a pass that vouched for notes has its returned notes statted again,
    // or is redone statting every note (docs/DESIGN.md §Change notification, "Returned notes", "Budget cuts").
    return indexes.heldCallerOf(key).answer(native, rootFd, () => searchOnce(call));
  } finally {
    native.close(rootFd);
  }
}

/**
 * What a Hermes surface (src/hermes/surfaces.ts) adds to a search it runs through this same path: a narrowing of its
 * own, combined with `within` and the filters, and `indexed` to rank in the index (never on the cold thread), so that
 * each hit's score is recorded (`scoreOfHit`). Never set by a tool call.
 */
export interface SearchSurface {
  scope?: NoteScope;
  indexed?: boolean;
}

/** What one search call has settled before it scans: its arguments, policy, root descriptor and view. */
interface SearchCall {
  /** Undefined for a filter-only search (the selected notes newest first, `NoteIndex.recent`). */
  query: string | undefined;
  /** Results asked for, already lowered to the policy's max_results. */
  limit: number;
  /** The notes `within` and the filters select in the view (`filterScope`), or undefined (every note is ranked). */
  scope: NoteScope | undefined;
  /** True when a filter, a missing query or sort "modified" needs the index's per-note facts (no cold answer). */
  filtered: boolean;
  sort: 'relevance' | 'modified';
  policy: Policy;
  writers: Writers;
  /** The trusted root's descriptor (closed by `runSearch`). */
  rootFd: number;
  /** The view (`IndexCache.keyOf`). */
  key: string;
  indexes: IndexCache;
  native: Native;
  notice: (reason: string, detail: string) => void;
  /** The caller's home, for the operator lines about hidden notes (`hidden`). */
  home: string;
  /** Which operator lines about hidden notes this call's scan gives (src/tools/hidden-notices.ts); none without. */
  hidden: HiddenNotices | undefined;
}

/** One scan and search of `runSearch` (see there); a large first call of a view builds on the cold thread. */
function searchOnce(call: SearchCall): ViewPass<SearchResult> {
  const index = call.indexes.get(call.key);
  // A first call of this view: a trusted persisted index of the view stands in for the build, entry by revalidated
  // entry (src/tools/persisted-index.ts); else a large one builds the view's index on the cold thread while the scan
  // reads (src/search/cold-thread.ts), so no build is left for after the answer.
  const persisted = persistedForFirstCall(index, call.home, call.policy, call.key, call.native, call.notice);
  // With a persisted index the thread makes only what the file cannot hold: each note's title, tags and body start.
  const feed = index.size === 0 ? coldThread().feed(persisted === undefined ? 'build' : 'facts') : null;
  try {
    return scanAndSearch(call, index, feed, persisted);
  } finally {
    feed?.close();
  }
}

/** The body of `searchOnce` once the view's index and the cold feed (or null) are known. */
function scanAndSearch(
  call: SearchCall,
  index: NoteIndex,
  feed: ColdFeed | null,
  persisted: PersistedIndex | undefined,
): ViewPass<SearchResult> {
  const { query, limit, scope, filtered, sort, policy, writers, rootFd, key, indexes, native, notice } = call;
  const { limits } = policy;
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
    {
      view: indexes.callerOf(key),
      statThread: statPool(),
      watch: indexes.watch && indexes.holds(key),
      noteSink: feed ?? undefined,
    },
  );
  if (scan.notes.length === 0 && onlyNamesRule(policy, scan.skipped)) notice('no_candidate_names', NAMES_REMEDY);
  for (const line of call.hidden?.report(call.home, key, scan) ?? []) notice(line.reason, line.detail);
  // A first call of this view whose index the cold thread built from exactly this scan's notes: adopted, it is the
  // index a sync of those notes gives, and the call answers from it as any warm call does.
  let adopted = false;
  try {
    adopted =
      index.size === 0 &&
      scan.notes.length > 0 &&
      (persisted === undefined
        ? adoptColdBuild(index, scan, feed)
        : adoptPersisted(index, scan.notes, persisted, key, notice, feed?.facts(scan.notes.length)));
  } catch (err) {
    indexes.drop(key);
    throw err;
  }
  if (!adopted && index.size === 0 && scan.notes.length > 0 && !filtered && query !== undefined) {
    // First call of this view (or its index is empty), not built on the cold thread (a small tree, or the thread
    // is off or failed): every note came back with text. Answer from those texts and build the index after the
    // answer is written (searchCold answers exactly what sync + search would).
    const inScope = scope?.matcher();
    let answer: ReturnType<typeof searchCold>;
    const ranked = inScope === undefined ? scan.notes : scan.notes.filter((note) => inScope(note.id));
    try {
      // A narrowed first call that reaches too many terms builds an index of the selected notes for its answer only.
      answer = searchCold(ranked, query, limit, limits, inScope === undefined ? index : undefined);
    } catch (err) {
      indexes.drop(key);
      throw err;
    }
    // A query that reaches very many terms was answered from the index, built in the call (see searchCold).
    if (index.size > 0) indexes.fit(key);
    else indexes.defer(key, scan.notes);
    return passOf(answerOf(answer, scan, policy), scan);
  }
  if (!adopted) {
    try {
      index.sync(scan.notes);
    } catch (err) {
      indexes.drop(key);
      throw err;
    }
  }
  indexes.fit(key);
  const ranked =
    query === undefined ? index.recent(limit, limits, scope) : index.search(query, limit, limits, scope, sort);
  return passOf(answerOf(ranked, scan, policy), scan);
}

/** One pass of `CallerView.answer`: the answer, its scan, and the notes it returns. */
function passOf(answer: SearchResult, scan: ScanResult): ViewPass<SearchResult> {
  return { answer, scan, returned: answer.results.map((h) => h.id) };
}

/**
 * Adopt the index the cold thread built from `scan`'s notes into the view's empty `index` (`NoteIndex.adoptBuilt`);
 * false when there is none (no feed, not engaged, failed) or it does not describe these notes (the index then
 * unchanged).
 *
 * @throws Error from the adoption itself (the caller drops the view, as after a failed sync)
 */
function adoptColdBuild(index: NoteIndex, scan: ScanResult, feed: ColdFeed | null): boolean {
  const built = feed?.built(scan.notes.length);
  return built !== undefined && index.adoptBuilt(scan.notes, built);
}
