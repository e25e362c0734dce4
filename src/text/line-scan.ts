/**
 * Scanners over a range of someone else's text (a note's line, a card's text), linear by construction
 * (docs/DESIGN.md "Linear scanners over note text"). Each one reads the code units of `text[from .. to)` forward,
 * each at most once, and stops at the first one it does not want: no backtracking, so a call costs at most
 * `to - from` + 1 code units read, whatever the text holds. A regular expression such as `[ \t]+(.*)$` gives the
 * same answers but reads a padded line once per way to split it, in the square of its length.
 *
 * Every scanner charges what it reads to a {@link ScanMeter}, so tests can prove the bound on crafted input by
 * counting instead of timing. Positions are UTF-16 indices; ranges are half-open.
 */

/**
 * Work counter: `steps` grows by the number of code units a scanner reads (or a native string operation such as
 * `slice` or `indexOf` passes over, charged by the caller). Cheap: one addition per call, not per code unit.
 */
export interface ScanMeter {
  steps: number;
}

/** A fresh meter at zero. */
export function newMeter(): ScanMeter {
  return { steps: 0 };
}

const SPACE = 0x20;
const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;

/**
 * End of the run of code unit `code` that starts at `from`, stopping at `to` or after `max` of them (default: no
 * limit). Returns the index after the run (`from` when `text[from]` is not `code`).
 */
export function runOf(text: string, from: number, to: number, code: number, m: ScanMeter, max = to - from): number {
  const stop = Math.min(to, from + max);
  let i = from;
  while (i < stop && text.charCodeAt(i) === code) i++;
  m.steps += i - from + 1;
  return i;
}

/** Whether `c` is a space or a tab (Markdown's and YAML's blank within a line). */
export function isBlank(c: number): boolean {
  return c === SPACE || c === TAB;
}

/** End of the run of spaces and tabs that starts at `from` (at most up to `to`). */
export function blankRun(text: string, from: number, to: number, m: ScanMeter): number {
  let i = from;
  while (i < to && isBlank(text.charCodeAt(i))) i++;
  m.steps += i - from + 1;
  return i;
}

/** Whether `text[from .. to)` is only spaces and tabs (true when empty). */
export function isBlankRange(text: string, from: number, to: number, m: ScanMeter): boolean {
  return blankRun(text, from, to, m) === to;
}

/** Whether `c` is an ASCII digit 0–9. */
export function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

/** End of the run of ASCII digits that starts at `from`, stopping at `to` or after `max` of them. */
export function digitRun(text: string, from: number, to: number, m: ScanMeter, max = to - from): number {
  const stop = Math.min(to, from + max);
  let i = from;
  while (i < stop && isDigit(text.charCodeAt(i))) i++;
  m.steps += i - from + 1;
  return i;
}

/**
 * Whether `c` ends a line for a JavaScript regular expression (LF, CR, U+2028, U+2029): the code units its `.`
 * does not match. (U+0085 is no line terminator in JavaScript; `.` matches it.)
 */
export function isJsLineTerminator(c: number): boolean {
  return c === LF || c === CR || c === 0x2028 || c === 0x2029;
}

/**
 * Whether `text[from .. to)` holds no JavaScript line terminator (see isJsLineTerminator): what the pattern
 * `.*$` asks of the rest of a line, answered in one pass.
 */
export function noJsLineTerminator(text: string, from: number, to: number, m: ScanMeter): boolean {
  let i = from;
  while (i < to && !isJsLineTerminator(text.charCodeAt(i))) i++;
  m.steps += i - from + 1;
  return i === to;
}

/**
 * Whether `c` is white space for JavaScript's `\s`, `trim` and `split(/\s+/)`: the WhiteSpace and LineTerminator
 * code points of ECMA-262 (tab, LF, VT, FF, CR, space, U+00A0, U+1680, U+2000–U+200A, U+2028, U+2029, U+202F,
 * U+205F, U+3000, U+FEFF).
 */
export function isJsWhiteSpace(c: number): boolean {
  if (c <= 0x20) return c === SPACE || (c >= TAB && c <= CR);
  if (c < 0xa0) return false;
  return (
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

/** Whether `text[from .. to)` is only JavaScript white space (what `s.trim() === ''` asks; true when empty). */
export function isWhiteSpaceRange(text: string, from: number, to: number, m: ScanMeter): boolean {
  let i = from;
  while (i < to && isJsWhiteSpace(text.charCodeAt(i))) i++;
  m.steps += i - from + 1;
  return i === to;
}

/** End of the run of JavaScript white space (isJsWhiteSpace) that starts at `from` (at most up to `to`). */
export function whiteSpaceRun(text: string, from: number, to: number, m: ScanMeter): number {
  let i = from;
  while (i < to && isJsWhiteSpace(text.charCodeAt(i))) i++;
  m.steps += i - from + 1;
  return i;
}

/**
 * `text[from .. to)` with every run of JavaScript white space turned into one space and none at either end: the
 * same string as `text.slice(from, to).replace(/\s+/g, ' ').trim()`, in one pass. Stretches already in that form
 * (words between single spaces) are copied as one slice, so ordinary text costs one copy however many words it
 * holds.
 *
 * @param limit when given, only the first `limit` UTF-16 units of that string are built (a prefix of it; the
 *   whole string when shorter), and the scan stops there: a caller that keeps only a prefix (a title cut to its
 *   bound) reads only about that much of a long line
 */
export function collapseWhiteSpace(
  text: string,
  m: ScanMeter,
  from = 0,
  to = text.length,
  limit = Number.POSITIVE_INFINITY,
): string {
  let out = '';
  let i = from;
  // Skip leading white space; then each stretch [start, i) of words joined by single spaces is copied whole.
  while (i < to && isJsWhiteSpace(text.charCodeAt(i))) i++;
  let start = i;
  while (i < to) {
    // Read the word at i, but no further than the units still wanted.
    const room = limit - out.length - (i - start);
    if (room <= 0) break;
    const stop = room < to - i ? i + room : to;
    while (i < stop && !isJsWhiteSpace(text.charCodeAt(i))) i++;
    if (i >= stop) break;
    const c = text.charCodeAt(i);
    // A white space run: one plain space followed by a word keeps the stretch going; anything else ends it.
    let j = i + 1;
    while (j < to && isJsWhiteSpace(text.charCodeAt(j))) j++;
    if (c === SPACE && j === i + 1 && j < to) {
      i = j;
      continue;
    }
    out += text.slice(start, i);
    if (j < to) out += ' ';
    start = j;
    i = j;
  }
  out += text.slice(start, i);
  m.steps += 2 * (i - from) + 1;
  return out.length > limit ? out.slice(0, limit) : out;
}

/** Index of the next LF at or after `from`, or `text.length` (charged for the distance searched). */
export function lineEnd(text: string, from: number, m: ScanMeter): number {
  const i = text.indexOf('\n', from);
  const end = i === -1 ? text.length : i;
  m.steps += end - from + 1;
  return end;
}

/** `end`, less one when `text[end - 1]` is a CR after `from` (the end of a line without its CRLF's CR). */
export function withoutCr(text: string, from: number, end: number): number {
  return end > from && text.charCodeAt(end - 1) === CR ? end - 1 : end;
}
