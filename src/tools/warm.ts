/**
 * The warm-up (docs/HERMES.md, "Warm first call"): build a profile's view before its first tool call, so that call
 * answers like a warm one. The Hermes shim asks for it when Hermes loads the plugin; the worker runs it like any
 * request, one at a time, so a tool call that arrives during the build waits for it and then uses the built view
 * instead of building its own.
 *
 * A warm-up is the search path itself (`runSearch`): the policy read fresh through the trusted walk, the run-kind
 * rule for the caller the shim saw at load time, the root opened through the trusted walk, every note verified by
 * the scan, and the view's index built in the call (the arguments ask for the `modified` order, which ranks over
 * the index, so nothing is deferred). Its answer is dropped: nothing of the notes leaves the worker, and no audit
 * record is written (no tool call was answered). Every later call still does all of this again.
 */
import type { Policy } from '../policy/types.js';
import { bridgeErrorOf } from '../trust/refusal.js';
import { releaseMemory } from './collect.js';
import type { HiddenNotices } from './hidden-notices.js';
import { IndexCache } from './index-cache.js';
import { runSearch } from './search.js';
import { createHash } from 'node:crypto';

/** The arguments of the search a warm-up runs: one result in mtime order, so the index is built in the call. */
export const WARM_UP_ARGS = Object.freeze({ query: 'warm', limit: 1, sort: 'modified' });

/** Notes from which a warm-up gives memory back after its build (`releaseMemory`), as a deferred build does. */
const RELEASE_MIN_NOTES = 10_000;

/** What a warm-up did. `view`: a digest of the view's key (home, root, names rule), for `status` to compare. */
export type WarmOutcome =
  | { ok: true; notes: number; ms: number; view: string }
  | { ok: false; reason: string; ms: number };

/**
 * The digest `status` compares with the view a warm-up built: the first 16 hex digits of the SHA-256 of
 * `IndexCache.keyOf(home, policy)`.
 */
export function viewDigest(home: string, policy: Pick<Policy, 'root' | 'names'>): string {
  return createHash('sha256').update(IndexCache.keyOf(home, policy)).digest('hex').slice(0, 16);
}

/**
 * Build the view of `caller` in `indexes`. Never throws.
 *
 * @param notice where the scan's operator lines go (hidden notes, the names rule), as for a search
 * @returns the number of notes in the view and the time taken (ms), or the refusal's reason code (`internal` for
 *   anything that is not a refusal)
 */
export function runWarmUp(
  caller: unknown,
  indexes: IndexCache,
  notice: (reason: string, detail: string) => void,
  hidden?: HiddenNotices,
): WarmOutcome {
  const started = process.hrtime.bigint();
  const ms = (): number => Number(process.hrtime.bigint() - started) / 1e6;
  let policy: Policy | undefined;
  try {
    runSearch(WARM_UP_ARGS, caller, indexes, notice, hidden, (p) => {
      policy = p;
    });
    const home = (caller as { home: string }).home;
    const key = IndexCache.keyOf(home, policy!);
    const notes = indexes.holds(key) ? indexes.get(key).size : 0;
    if (notes >= RELEASE_MIN_NOTES) releaseMemory();
    return { ok: true, notes, ms: ms(), view: viewDigest(home, policy!) };
  } catch (err) {
    return { ok: false, reason: bridgeErrorOf(err)?.reason ?? 'internal', ms: ms() };
  }
}
