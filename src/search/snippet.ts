/**
 * Snippets (docs/TOOLS.md, docs/SEARCH.md): a passage of a note body around its best match, whitespace collapsed to single
 * spaces, trimmed, at most `maxChars` Unicode code points, never splitting a code point. The body given here is
 * already without front matter, and is text this call verified (the index only holds verified text).
 */
import { scanTerms } from './tokenize.js';

/** Most matched-term occurrences examined when choosing the best window (bounds work on huge notes). */
const MAX_OCCURRENCES = 10_000;
/** Only this many leading UTF-16 code units of a body are searched for an anchor (bounds work on huge notes). */
export const MAX_ANCHOR_SCAN = 65_536;

/**
 * Build the snippet of `body` for a result whose matching document terms are `matched` (normalized terms as the
 * index holds them, e.g. "garden" when the query said "gard").
 *
 * Choice of passage: the window of `maxChars` code points that holds the most distinct matched terms, anchored at
 * a term occurrence (earliest wins ties). It starts at a word boundary shortly before that occurrence (at most
 * about a fifth of the window, capped at 40 code points, of lead-in). When no matched term occurs in the body
 * (e.g. the match was in front matter) within the first MAX_ANCHOR_SCAN code units, the passage is the start of
 * the body. A body that fits whole is returned whole. Only the first MAX_ANCHOR_SCAN + 4 × maxChars code units of
 * a body are read (a longer body's passage near that cut ends there), so the cost per snippet is bounded whatever
 * the note's size; `matched` holds at most HIT_MAX_TERMS terms (select.ts).
 *
 * @param maxChars snippet_chars of the policy (≥ 1), in code points
 */
export function makeSnippet(body: string, matched: ReadonlySet<string>, maxChars: number): string {
  // Only the part of the body a passage can come from is looked at (whitespace collapsing only shortens it).
  const source = body.length > MAX_ANCHOR_SCAN + 4 * maxChars ? body.slice(0, MAX_ANCHOR_SCAN + 4 * maxChars) : body;
  const text = source.replace(/\s+/gu, ' ').trim();
  if (text === '') return '';
  // Short texts: no choice to make (cheap upper bound first: code points ≤ UTF-16 units).
  if (text.length <= maxChars || countCodePointsUpTo(text, 0, maxChars + 1) <= maxChars) return text;

  const anchor = matched.size === 0 ? undefined : bestAnchor(text, matched, maxChars);
  let start = anchor === undefined ? 0 : leadInStart(text, anchor, Math.min(40, Math.floor(maxChars / 5)));

  // Near the end of the text, pull the start back so the window is filled, then forward to a word start.
  if (countCodePointsUpTo(text, start, maxChars + 1) <= maxChars) {
    start = back(text, text.length, maxChars);
    if (start > 0 && text[start - 1] !== ' ') {
      const space = text.indexOf(' ', start);
      if (space !== -1 && space < (anchor ?? text.length)) start = space + 1;
    }
  }

  let end = forward(text, start, maxChars);
  if (end < text.length && text[end] !== ' ' && text[end - 1] !== ' ') {
    // The cut falls inside a word: end at the previous space when it is not too far back.
    const space = text.lastIndexOf(' ', end - 1);
    if (space > start && countCodePointsUpTo(text.slice(space, end), 0, 21) <= 20) end = space;
  }
  return text.slice(start, end).trim();
}

/**
 * UTF-16 offset of the occurrence that starts the window with the most distinct matched terms (the earliest such
 * window). Occurrences are read from the text only as far as the two pointers need them, so a body whose first
 * window already holds every matched term costs a few words, not a scan of the whole body.
 */
function bestAnchor(text: string, matched: ReadonlySet<string>, maxChars: number): number | undefined {
  const occ: { start: number; term: string }[] = [];
  const spans = scanTerms(text);
  let done = false;
  /** Read the next matched occurrence into `occ`; false when there is none (or a bound is reached). */
  const more = (): boolean => {
    while (!done) {
      const next = spans.next();
      if (next.done === true || next.value.start > MAX_ANCHOR_SCAN || occ.length >= MAX_OCCURRENCES) {
        done = true;
        break;
      }
      if (!matched.has(next.value.term)) continue;
      occ.push({ start: next.value.start, term: next.value.term });
      return true;
    }
    return false;
  };
  // Two pointers over occurrences; the window length is measured in UTF-16 units as an approximation of code
  // points (exact for the BMP), which only affects which anchor wins, never the snippet bound.
  const inWindow = new Map<string, number>();
  let best = -1;
  let bestCount = 0;
  let j = 0;
  for (let i = 0; i < occ.length || more(); i++) {
    const limit = occ[i]!.start + maxChars;
    while ((j < occ.length || more()) && occ[j]!.start < limit) {
      inWindow.set(occ[j]!.term, (inWindow.get(occ[j]!.term) ?? 0) + 1);
      j++;
    }
    if (inWindow.size > bestCount) {
      bestCount = inWindow.size;
      best = i;
      if (bestCount === matched.size) break;
    }
    const t = occ[i]!.term;
    const n = inWindow.get(t)! - 1;
    if (n === 0) inWindow.delete(t);
    else inWindow.set(t, n);
  }
  return best < 0 ? undefined : occ[best]!.start;
}

/** Where to start a passage whose first matched term is at `anchor`: after the earliest space in the lead-in. */
function leadInStart(text: string, anchor: number, lead: number): number {
  const from = back(text, anchor, lead);
  if (from === 0) return 0;
  const space = text.indexOf(' ', from);
  return space !== -1 && space < anchor ? space + 1 : anchor;
}

/** UTF-16 index `n` code points before `at` (or 0). */
function back(text: string, at: number, n: number): number {
  let i = at;
  for (let k = 0; k < n && i > 0; k++) {
    i--;
    if (i > 0 && isLowSurrogate(text.charCodeAt(i)) && isHighSurrogate(text.charCodeAt(i - 1))) i--;
  }
  return i;
}

/** UTF-16 index `n` code points after `at` (or text.length). */
function forward(text: string, at: number, n: number): number {
  let i = at;
  for (let k = 0; k < n && i < text.length; k++) {
    i += isHighSurrogate(text.charCodeAt(i)) && isLowSurrogate(text.charCodeAt(i + 1)) ? 2 : 1;
  }
  return i;
}

/** Code points in text[from…], counting no further than `cap`. */
function countCodePointsUpTo(text: string, from: number, cap: number): number {
  const end = forward(text, from, cap);
  return countCodePoints(text.slice(from, end));
}

/** Number of Unicode code points in `s` (a lone surrogate counts as one). */
export function countCodePoints(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    n++;
    if (isHighSurrogate(s.charCodeAt(i)) && isLowSurrogate(s.charCodeAt(i + 1))) i++;
  }
  return n;
}

function isHighSurrogate(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}

function isLowSurrogate(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}
