/**
 * memory_bridge_read (docs/TOOLS.md, docs/TRUST.md; docs/DESIGN.md "Reading long notes"): caller → policy → run kind
 * → resolve the id component by component → the window of the note's text that starts at `offset`.
 */
import type { Policy } from '../policy/types.js';
import { createHmac, randomBytes } from 'node:crypto';
import { BridgeError, errorResult, type ErrorResult } from '../errors.js';
import { bridgeErrorOf } from '../trust/refusal.js';
import { getNative } from '../../native/index.js';
import { noteTitle, ownTitle } from '../search/markdown.js';
import { findSection, headingsOf } from '../search/sections.js';
import { cutVisible, escapeHidden } from '../text/visible.js';
import { readVerifiedNote } from '../trust/note.js';
import { validateId } from '../trust/names.js';
import type { IdentityKey } from '../trust/types.js';
import { HINTS, parseReadArgs, type ReadArgs } from './args.js';
import { MAX_OUTLINE_HEADINGS } from './schemas.js';
import { parseCaller } from './caller.js';
import { policyAndRoot } from './start.js';
import { scanLimitsOf } from '../policy/scan-limits.js';
import type { ManyReadResult, OutlineResult, ReadResult } from './types.js';

/** The window of a note one read returns (see `readWindow`). */
export interface ReadWindow {
  /** The text from `offset` on, at most `readChars` code points, plus the truncation line when more follows. */
  content: string;
  /** True when text follows the window (then `nextOffset` says where). */
  truncated: boolean;
  /** Code point offset of the first character not returned; only when `truncated`. */
  nextOffset?: number;
}

/** UTF-16 index of the code point `n` code points after index `from` of `text` (text.length when it ends first). */
function advance(text: string, from: number, n: number): { at: number; taken: number } {
  let at = from;
  let taken = 0;
  while (at < text.length && taken < n) {
    const c = text.charCodeAt(at);
    at += c >= 0xd800 && c <= 0xdbff && at + 1 < text.length && (text.charCodeAt(at + 1) & 0xfc00) === 0xdc00 ? 2 : 1;
    taken++;
  }
  return { at, taken };
}

/**
 * The part of `text` a read at code point `offset` returns (docs/DESIGN.md "Reading long notes", "Returned text"):
 * the note from source code point `offset` on, hidden controls shown as `<U+XXXX>` escapes, at most `readChars`
 * code points of that returned form; a cut never splits a surrogate pair or an escape. When text follows, the window
 * is followed by a newline and the fixed line `[truncated: characters O to E-1 of N shown; continue with offset E]`
 * (not counted in `readChars`), where O, E and N count code points of the note as stored (an escape stands for the
 * one code point it replaces), and `nextOffset` is E. An offset at or past the end gives empty content, not
 * truncated. Reading from 0 and then from each `nextOffset` returns every code point of the note exactly once, in
 * order (escaped where hidden). A window always moves on by at least one code point, even when `readChars` is
 * smaller than the escape at its start.
 *
 * Cost: linear in the UTF-16 length of `text`.
 *
 * @param offset   code points of the note to skip (an integer ≥ 0)
 * @param readChars the policy's read_chars (≥ 1)
 */
export function readWindow(text: string, offset: number, readChars: number): ReadWindow {
  const start = offset === 0 ? { at: 0, taken: 0 } : advance(text, 0, offset);
  if (start.taken < offset || start.at >= text.length) return { content: '', truncated: false };
  let shown = cutVisible(text, readChars, start.at);
  if (shown.sourceCodePoints === 0) {
    // Only an escape wider than readChars stands at the start: return it whole rather than never moving on.
    const one = advance(text, start.at, 1).at;
    shown = { text: escapeHidden(text.slice(start.at, one)), cut: one < text.length, end: one, sourceCodePoints: 1 };
  }
  if (!shown.cut) return { content: shown.text, truncated: false };
  const next = offset + shown.sourceCodePoints;
  const total = next + countFrom(text, shown.end);
  return {
    content: `${shown.text}\n[truncated: characters ${offset} to ${next - 1} of ${total} shown; continue with offset ${next}]`,
    truncated: true,
    nextOffset: next,
  };
}

/** Code points of `text` from UTF-16 index `from` to its end. */
function countFrom(text: string, from: number): number {
  return advance(text, from, Number.POSITIVE_INFINITY).taken;
}

/** The key of `noteVersion`: random, made once per process, never stored or shown. */
let versionKey: Buffer | undefined;

/**
 * The opaque `version` of a read answer: HMAC-SHA256 under a per-process random key of the note's identity key
 * (device, inode, size, mtime and ctime of the descriptor that was read), base64url, 22 characters (128 bits). It
 * changes whenever the identity changes (any write, chmod, chown, ACL change or replacement changes ctime or the
 * inode), and without the key it reveals nothing about the identity. A restart of the process changes every version,
 * which a caller only takes as "re-read from the start". Recent values are remembered (a pure function of the
 * identity, so a remembered value is the value; emptied when VERSIONS_KEPT are held): reads and warm searches meet
 * the same notes again and again, and one HMAC with its key schedule costs tens of µs.
 */
export function noteVersion(key: IdentityKey): string {
  let version = versions.get(key);
  if (version === undefined) {
    versionKey ??= randomBytes(32);
    version = createHmac('sha256', versionKey).update(key).digest('base64url').slice(0, 22);
    if (versions.size >= VERSIONS_KEPT) versions.clear();
    versions.set(key, version);
  }
  return version;
}

/** `noteVersion`'s remembered values, by identity key, and how many it holds at most. */
const versions = new Map<string, string>();
const VERSIONS_KEPT = 4096;

/** Code points of `text` from UTF-16 index `from` up to index `to`. */
function codePointsBetween(text: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (!(c >= 0xdc00 && c <= 0xdfff && i > from && (text.charCodeAt(i - 1) & 0xfc00) === 0xd800)) n++;
  }
  return n;
}

/**
 * The outline of a verified note (docs/TOOLS.md §memory_bridge_read `outline`): its first headings in order with
 * level, text (escaped like a title) and the code point offset of the heading's line in the note (pass it as
 * `offset` to read from there); at most MAX_OUTLINE_HEADINGS, and only while their texts together stay within
 * `readChars` code points (so an outline is never longer than a read); `truncated` when more headings follow.
 */
function outlineOf(text: string, readChars: number): Pick<OutlineResult, 'outline' | 'truncated'> {
  const { headings, more } = headingsOf(text, MAX_OUTLINE_HEADINGS);
  let at = 0;
  let offset = 0;
  let left = readChars;
  const outline: OutlineResult['outline'] = [];
  for (const h of headings) {
    const shown = escapeHidden(h.text);
    left -= codePointsBetween(shown, 0, shown.length);
    if (left < 0) return { outline, truncated: true };
    offset += codePointsBetween(text, at, h.start);
    at = h.start;
    outline.push({ level: h.level, text: shown, offset });
  }
  return { outline, truncated: more };
}

/**
 * Run one memory_bridge_read call: one note (`runOneRead`), or with `ids` each id read exactly as `{ id }` alone
 * would be, in the order asked, every answer or error as that single read gives it, under one total_chars budget
 * (`runManyReads`).
 *
 * @throws as `runOneRead` for a single read; a multi-read only throws for its arguments (`invalid_request`)
 */
export function runRead(
  args: unknown,
  caller: unknown,
  rawEntryCeiling?: number,
  seen?: (policy: Policy) => void,
): ReadResult | OutlineResult | ManyReadResult {
  const request = parseReadArgs(args);
  if ('one' in request) return runOneRead(request.one, caller, rawEntryCeiling, undefined, seen).answer;
  return runManyReads(request.many, caller, rawEntryCeiling, seen);
}

/**
 * The reads of `ids` in order, each a whole single read (its own policy load, trust walk and checks) whose error,
 * if any, is the error JSON a single read of it answers. The content of all answers together is at most the
 * policy's total_chars, and each one's at most read_chars as alone (each read's window gets what the earlier ones
 * left of total_chars, as the policy of the first answered read sets it); once it is spent, later notes are still
 * checked and answered with empty content, `truncated: true` and `next_offset` equal to their offset (read on with
 * a single read). `truncated` of the whole answer: some item is truncated.
 */
function runManyReads(
  ids: string[],
  caller: unknown,
  rawEntryCeiling?: number,
  seen?: (policy: Policy) => void,
): ManyReadResult {
  const results: (ReadResult | ErrorResult)[] = [];
  const budget: { left?: number } = {};
  for (const id of ids) {
    try {
      const r = runOneRead({ id }, caller, rawEntryCeiling, budget, seen);
      budget.left = (budget.left ?? r.totalChars) - r.used;
      results.push(r.answer as ReadResult);
    } catch (err) {
      const refusal = bridgeErrorOf(err);
      if (refusal === undefined) throw err;
      results.push(errorResult(refusal.code, refusal.hint));
    }
  }
  return { ok: true, notes: results, truncated: results.some((r) => r.ok && r.truncated) };
}

/** A read's answer, with what a multi-read needs besides: content code points used and the policy's total_chars. */
interface BudgetedRead {
  answer: ReadResult | OutlineResult;
  used: number;
  totalChars: number;
}

/**
 * Run one read. The id's syntax is validated before the policy is loaded or any filesystem call is made; an id
 * the policy does not allow is refused before the root is opened. Every refusal of the note itself (denied,
 * missing, symlink, hard link, untrusted, too deep, too big, binary, invalid UTF-8) is the same
 * `not_found_or_denied`. Every call is a whole fresh read (policy, trust walk, identity): a note changed between two
 * reads of a series is read as it is now, and its `version` differs.
 *
 * @param rawEntryCeiling ScanLimits.rawEntryCeiling (undefined: RAW_ENTRY_CEILING; tests lower it)
 * @param budget a multi-read's shared budget: code points of content left to its reads (undefined `left`: the
 *   first read, which gets the policy's total_chars); undefined for a single read (read_chars alone bounds it)
 * @param seen told the call's policy as soon as it is loaded (`policyAndRoot`)
 * @returns `{ok, id, title, content, truncated, offset, version}` and `next_offset` when text follows the window
 * @throws BridgeError: `invalid_request` (arguments, id syntax), `unavailable` (caller, platform, policy, run kind,
 *   root trust, the raw entry ceiling), `not_found_or_denied` (the note)
 */
export function runOneRead(
  parsed: ReadArgs,
  caller: unknown,
  rawEntryCeiling?: number,
  budget?: { left?: number },
  seen?: (policy: Policy) => void,
): BudgetedRead {
  const id = validateId(parsed.id);
  const offset = parsed.offset ?? 0;
  const who = parseCaller(caller);
  const native = getNative();
  if (native === null) throw new BridgeError('unavailable', 'unsupported_platform');
  const { policy, writers, rootFd } = policyAndRoot(
    who,
    native,
    (p) => {
      if (!p.allowsNote(id)) throw new BridgeError('not_found_or_denied', 'denied');
    },
    seen,
  );
  let note: { text: string; key: IdentityKey };
  try {
    note = readVerifiedNote(rootFd, id, policy, { ...scanLimitsOf(policy), rawEntryCeiling, writers }, native);
  } finally {
    native.close(rootFd);
  }
  // The same title search shows (docs/DESIGN.md "Titles and file names"), from the whole note, escaped alike.
  const title = escapeHidden(noteTitle({ title: ownTitle(note.text) }, id));
  const version = noteVersion(note.key);
  const readChars = policy.limits.read_chars;
  const totalChars = policy.limits.total_chars;
  if (parsed.outline === true)
    return { answer: { ok: true, id, title, ...outlineOf(note.text, readChars), version }, used: 0, totalChars };
  let text = note.text;
  let section: string | undefined;
  if (parsed.section !== undefined) {
    // Only now, once the note is known readable: a missing heading says nothing about other notes.
    const heading = findSection(text, parsed.section);
    if (heading === undefined) throw new BridgeError('invalid_request', 'bad_arguments', HINTS.unknownSection);
    text = text.slice(heading.start, heading.end);
    section = escapeHidden(heading.text);
  }
  const room = budget === undefined ? readChars : Math.min(readChars, budget.left ?? totalChars);
  const window =
    room > 0
      ? readWindow(text, offset, room)
      : { content: '', truncated: offset < codePointsBetween(text, 0, text.length), nextOffset: offset };
  const result: ReadResult = {
    ok: true,
    id,
    title,
    content: window.content,
    truncated: window.truncated,
    offset,
    version,
  };
  if (section !== undefined) result.section = section;
  if (window.truncated && window.nextOffset !== undefined) result.next_offset = window.nextOffset;
  const used = window.truncated ? room : Math.min(room, codePointsBetween(window.content, 0, window.content.length));
  return { answer: result, used, totalChars };
}
