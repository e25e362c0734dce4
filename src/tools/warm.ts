/**
 * The warm-up (docs/HERMES.md, "Warm first call"): build a profile's view before its first tool call, so that call
 * answers like a warm one. The Hermes shim asks for it when Hermes loads the plugin; the worker runs it like any
 * request, one at a time, so a tool call that arrives during the build waits for it and then uses the built view
 * instead of building its own.
 *
 * A warm-up is the search path itself (`runSearch`): the policy read fresh through the trusted walk, the run-kind
 * rule for the caller the shim saw at load time, the root opened through the trusted walk, every note verified by
 * the scan, and the view's index built in the call (the arguments ask for the `modified` order, which ranks over
 * the index, so nothing is deferred), then the same again as the view's next calls would run it, until change
 * notification is in place (`warmUpView`). Its answers are dropped: nothing of the notes leaves the worker, and no
 * audit record is written (no tool call was answered). Every later call still does all of this again.
 */
import type { Policy } from '../policy/types.js';
import { bridgeErrorOf } from '../trust/refusal.js';
import type { HiddenNotices } from './hidden-notices.js';
import { IndexCache } from './index-cache.js';
import { runSearch } from './search.js';
import { createHash } from 'node:crypto';
import { watchesHeld } from '../trust/view.js';

/** The arguments of the search a warm-up's first pass runs: one result in mtime order, so the index is built in the call. */
export const WARM_UP_ARGS = Object.freeze({ query: 'warm', limit: 1, sort: 'modified' });
/** The arguments of the passes after it: a relevance search like a tool call's, so its code runs before the first call. */
export const SETTLE_ARGS = Object.freeze({ query: 'warm', limit: 5 });

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
 * Most passes after the build (`warmUpView`): change notification adds at most MAX_ADDS_PER_CALL watches per call
 * (src/trust/warm/watch.ts), so 100,000 notes take five, and one more to see that nothing was added.
 */
export const MAX_SETTLE_PASSES = 8;

/**
 * The whole warm-up of a view, as the worker runs it: `pass()` once to build the index, then again, after a turn of
 * the event loop each time, as the view's next calls would run: the first of them reuses the listings and starts
 * change notification, which adds a bounded number of watches per call, so passes go on while one added watches (at
 * most MAX_SETTLE_PASSES), and stop as soon as a request waits (it then waits for the build only, and pays what the
 * passes would have done itself). The first tool call then finds what a warm call finds. Each pass is the whole
 * search path again (`runWarmUp`); the outcome is the last pass's, with the time of all of them.
 *
 * @param pass one `runWarmUp` of the caller's view (the bridge's `warm`); `settle` for the passes after the build
 * @param waiting true when a request waits behind the warm-up (the worker's input)
 * @param held watches this process holds now (`watchesHeld`; tests pass their own)
 */
export async function warmUpView(
  pass: (settle: boolean) => WarmOutcome,
  waiting: () => boolean = () => false,
  held: () => number = watchesHeld,
): Promise<WarmOutcome> {
  let outcome = pass(false);
  let ms = outcome.ms;
  for (let i = 0; i < MAX_SETTLE_PASSES && outcome.ok; i++) {
    await new Promise((resolve) => setImmediate(resolve));
    if (waiting()) break;
    const before = held();
    outcome = pass(true);
    ms += outcome.ms;
    if (held() === before) break;
  }
  return { ...outcome, ms };
}

/**
 * One pass: build (or bring up to date) the view of `caller` in `indexes`. Never throws.
 *
 * @param notice where the scan's operator lines go (hidden notes, the names rule), as for a search
 * @param settle a pass after the build: SETTLE_ARGS instead of WARM_UP_ARGS
 * @returns the number of notes in the view and the time taken (ms), or the refusal's reason code (`internal` for
 *   anything that is not a refusal)
 */
export function runWarmUp(
  caller: unknown,
  indexes: IndexCache,
  notice: (reason: string, detail: string) => void,
  hidden?: HiddenNotices,
  settle = false,
): WarmOutcome {
  const started = process.hrtime.bigint();
  const ms = (): number => Number(process.hrtime.bigint() - started) / 1e6;
  let policy: Policy | undefined;
  try {
    runSearch(settle ? SETTLE_ARGS : WARM_UP_ARGS, caller, indexes, notice, hidden, (p) => {
      policy = p;
    });
    const home = (caller as { home: string }).home;
    const key = IndexCache.keyOf(home, policy!);
    const notes = indexes.holds(key) ? indexes.get(key).size : 0;
    return { ok: true, notes, ms: ms(), view: viewDigest(home, policy!) };
  } catch (err) {
    return { ok: false, reason: bridgeErrorOf(err)?.reason ?? 'internal', ms: ms() };
  }
}
