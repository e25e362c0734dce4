/**
 * Recall before each Hermes turn (docs/HERMES.md §Recall): the worker's answer to the shim's `pre_llm_call` hook.
 *
 * Off unless the policy's `recall` object turns it on. When on, the user's message becomes the query of an
 * ordinary memory_bridge_search by the same caller through the same bridge (policy reread, trust checks, the
 * run-kind rule, allow/deny, limits, the audit trail), ranked in the view's index so each hit's score is known
 * (`scoreOfHit`). Hits scoring at most `min_score` are dropped; the rest, at most `max_notes` of them and
 * `max_chars` code points of ids, titles and snippets, are framed as untrusted note text (src/hermes/framing.ts).
 * Nothing is written anywhere: the text goes back to the shim, which hands it to Hermes for this one call.
 */
import type { Policy } from '../policy/types.js';
import { loadPolicy } from '../policy/load.js';
import { cutVisible } from '../text/visible.js';
import { parseCaller } from '../tools/caller.js';
import { scoreOfHit } from '../tools/search.js';
import type { Bridge, Caller, SearchHit } from '../tools/types.js';
import { frameNotes, type FramedNote, type RandomSource } from './framing.js';

/** Longest query taken from a message, in UTF-16 code units (memory_bridge_search's `query` maxLength). */
export const MAX_RECALL_QUERY = 500;

/** The first line of a recall frame (fixed text). */
export const RECALL_HEADING = '[memory-bridge] Notes recalled from team memory for this message.';

/** What the worker answers a recall request with: the framed text, or null for "recall nothing". */
export interface RecallAnswer {
  ok: true;
  context: string | null;
}

/** Why a recall gives nothing, for the operator log (`off` and `no_match` are not logged: they are normal). */
export type RecallSilence = 'off' | 'run_kind' | 'no_query' | 'no_match' | 'refused' | 'boundary';

/**
 * Whether `policy` lets `caller` have recall: `recall.enabled`, and for a cron run `recall.cron`, for a subagent
 * `recall.subagents` (both for a cron-started subagent). The search itself then applies allow_cron and
 * allow_subagents as for any call.
 */
export function recallAllowed(policy: Policy, caller: { cron: boolean; subagent: boolean }): boolean {
  const { recall } = policy;
  if (!recall.enabled) return false;
  if (caller.cron && !recall.cron) return false;
  if (caller.subagent && !recall.subagents) return false;
  return true;
}

/**
 * The search query of a message: its white space collapsed to single spaces, at most MAX_RECALL_QUERY code units
 * (never splitting a surrogate pair), trimmed. "" when nothing is left. Linear in the message's length.
 */
export function queryOfMessage(message: string): string {
  let out = '';
  let space = false;
  for (let i = 0; i < message.length && out.length < MAX_RECALL_QUERY; i++) {
    const c = message.charCodeAt(i);
    const white = c === 0x20 || (c >= 0x09 && c <= 0x0d) || c === 0xa0 || c === 0x2028 || c === 0x2029;
    if (white) {
      space = out.length > 0;
      continue;
    }
    if (space) {
      if (out.length + 1 >= MAX_RECALL_QUERY) break;
      out += ' ';
      space = false;
    }
    // A high surrogate is taken only with its pair.
    if (c >= 0xd800 && c <= 0xdbff) {
      if (out.length + 2 > MAX_RECALL_QUERY) break;
      out += message.slice(i, i + 2);
      i++;
      continue;
    }
    out += message[i];
  }
  return out.trim();
}

/** Code points of `text`. */
function countCodePoints(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/**
 * The hits recall shows: those scoring above `minScore`, in rank order, while their ids, titles and snippets fit
 * `maxChars` code points; a first hit that does not fit alone has its snippet cut to what is left (never inside an
 * escape). A hit whose score is unknown counts as 0.
 */
export function recallNotes(hits: readonly SearchHit[], minScore: number, maxChars: number): FramedNote[] {
  const notes: FramedNote[] = [];
  let used = 0;
  for (const hit of hits) {
    if ((scoreOfHit(hit) ?? 0) <= minScore) continue;
    const head = countCodePoints(hit.id) + (hit.title === undefined ? 0 : countCodePoints(hit.title));
    const room = maxChars - used - head;
    const size = countCodePoints(hit.snippet);
    if (room >= size) {
      notes.push({ id: hit.id, title: hit.title, text: hit.snippet });
      used += head + size;
      continue;
    }
    if (notes.length === 0 && room > 0)
      notes.push({ id: hit.id, title: hit.title, text: cutVisible(hit.snippet, room).text });
    break;
  }
  return notes;
}

/**
 * One recall for `message` by `caller` (docs/HERMES.md §Recall).
 *
 * @param silent told why nothing is recalled (for the operator log); never told note text or paths
 * @param random the boundary's random source (tests only)
 * @returns the framed notes, or `context: null`; never throws for any input
 */
export function runRecall(
  bridge: Bridge,
  args: { message: string },
  caller: Caller,
  silent: (why: RecallSilence) => void = () => undefined,
  random?: RandomSource,
): RecallAnswer {
  const nothing = (why: RecallSilence): RecallAnswer => {
    silent(why);
    return { ok: true, context: null };
  };
  let policy: Policy;
  try {
    const checked = parseCaller(caller);
    policy = loadPolicy(checked.home);
  } catch {
    // The search below would refuse for the same reason, and log it; recall stays quiet and off.
    return nothing('off');
  }
  if (!recallAllowed(policy, caller)) return nothing(policy.recall.enabled ? 'run_kind' : 'off');
  const query = queryOfMessage(args.message);
  if (query === '') return nothing('no_query');
  const result = bridge.search({ query, limit: policy.recall.max_notes }, caller, undefined, { indexed: true });
  if (!result.ok) return nothing('refused');
  const notes = recallNotes(result.results, policy.recall.min_score, policy.recall.max_chars);
  if (notes.length === 0) return nothing('no_match');
  const framed = frameNotes(RECALL_HEADING, notes, random);
  return framed === undefined ? nothing('boundary') : { ok: true, context: framed };
}
