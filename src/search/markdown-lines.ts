/**
 * The shapes of one Markdown or front matter line that `markdown.ts` looks for, each a hand-written scanner over
 * `text[from .. to)` (the line without its LF and without a CR before it), linear by construction
 * (docs/DESIGN.md "Linear scanners over note text"): each reads the line forward at most once or twice and never
 * backtracks, and charges what it reads to the meter. Each one answers exactly what the regular expression in its
 * docstring answers on the same line (tests/search/markdown-lines.test.ts checks them against those expressions);
 * the expressions themselves are not used, because on a padded line that ends in CR, U+2028 or U+2029 they read
 * the line once per way to split it.
 *
 * A shape reads JavaScript's rule for `.` where its expression had `(.*)$`: the rest of the line must hold no CR,
 * U+2028 or U+2029 (`noJsLineTerminator`), otherwise the line is not of that shape (it is then read as paragraph
 * text, as before).
 */
import {
  blankRun,
  digitRun,
  isBlank,
  isBlankRange,
  isDigit,
  isJsWhiteSpace,
  isWhiteSpaceRange,
  noJsLineTerminator,
  runOf,
  type ScanMeter,
} from '../text/line-scan.js';

const SPACE = 0x20;
const TAB = 0x09;
const HASH = 0x23;
const BACKTICK = 0x60;
const TILDE = 0x7e;
const EQUALS = 0x3d;
const DASH = 0x2d;
const PLUS = 0x2b;
const STAR = 0x2a;
const UNDERSCORE = 0x5f;
const DOT = 0x2e;
const COLON = 0x3a;
const CR = 0x0d;

/** Index after the at most three spaces a block line may be indented by (CommonMark's ` {0,3}`). */
function indent(text: string, from: number, to: number, m: ScanMeter): number {
  return runOf(text, from, to, SPACE, m, 3);
}

/** A code fence line: its character (`` ` `` or `~`), the length of its run, and where the rest starts. */
export interface FenceLine {
  char: number;
  length: number;
  /** Index after the run: the info string (an opening fence) or what must be blank (a closing one). */
  rest: number;
}

/**
 * The line as a fence, or undefined: ``/^ {0,3}(`{3,}|~{3,})(.*)$/`` — at most three spaces, a run of three or
 * more backticks or tildes, and a rest without a JavaScript line terminator.
 */
export function fenceLine(text: string, from: number, to: number, m: ScanMeter): FenceLine | undefined {
  const p = indent(text, from, to, m);
  const c = p < to ? text.charCodeAt(p) : -1;
  if (c !== BACKTICK && c !== TILDE) return undefined;
  const rest = runOf(text, p, to, c, m);
  if (rest - p < 3 || !noJsLineTerminator(text, rest, to, m)) return undefined;
  return { char: c, length: rest - p, rest };
}

/** Whether fence line `f` (of the line ending at `to`) closes an open fence of `char` × `length`. */
export function closesFence(
  text: string,
  f: FenceLine,
  to: number,
  open: { char: number; length: number },
  m: ScanMeter,
): boolean {
  return f.char === open.char && f.length >= open.length && isWhiteSpaceRange(text, f.rest, to, m);
}

/**
 * Whether fence line `f` opens a fence: a backtick fence's info string may not hold a backtick (CommonMark; such a
 * line is inline code), a tilde fence's may.
 */
export function opensFence(text: string, f: FenceLine, to: number, m: ScanMeter): boolean {
  if (f.char !== BACKTICK) return true;
  const i = text.indexOf('`', f.rest);
  m.steps += (i === -1 || i >= to ? to : i) - f.rest + 1;
  return i === -1 || i >= to;
}

/** An ATX heading line: its level and where its text starts (the text runs to the end of the line). */
export interface AtxHeading {
  level: number;
  text: number;
}

/**
 * The line as an ATX heading, or undefined: `/^ {0,3}(#{1,6})(?:[ \t]+(.*))?$/` — at most three spaces, one to six
 * `#`, then the end of the line, or spaces or tabs and a rest without a JavaScript line terminator (the text,
 * which starts after the spaces and tabs).
 */
export function atxHeading(text: string, from: number, to: number, m: ScanMeter): AtxHeading | undefined {
  const p = indent(text, from, to, m);
  const q = runOf(text, p, to, HASH, m, 7);
  const level = q - p;
  if (level < 1 || level > 6) return undefined;
  if (q === to) return { level, text: to };
  if (!isBlank(text.charCodeAt(q))) return undefined;
  const start = blankRun(text, q, to, m);
  return noJsLineTerminator(text, start, to, m) ? { level, text: start } : undefined;
}

/**
 * The end of an ATX heading's text `text[from .. to)` without its closing sequence and trailing white space: a run
 * of `#` at the end preceded by a space or tab (or making up the whole text) is removed, as CommonMark says.
 */
export function withoutClosingHashes(text: string, from: number, to: number, m: ScanMeter): number {
  let end = to;
  while (end > from && isJsWhiteSpace(text.charCodeAt(end - 1))) end--;
  let i = end;
  while (i > from && text.charCodeAt(i - 1) === HASH) i--;
  m.steps += to - i + 1;
  if (i === end) return end;
  if (i === from) return from;
  return isBlank(text.charCodeAt(i - 1)) ? i : end;
}

/**
 * The level of a setext underline (1 for `=`, 2 for `-`), or 0: `/^ {0,3}(?:=+|-+)[ \t]*$/` — at most three
 * spaces, a run of one of the two characters, then only spaces and tabs.
 */
export function setextUnderline(text: string, from: number, to: number, m: ScanMeter): number {
  const p = indent(text, from, to, m);
  const c = p < to ? text.charCodeAt(p) : -1;
  if (c !== EQUALS && c !== DASH) return 0;
  const q = runOf(text, p, to, c, m);
  if (!isBlankRange(text, q, to, m)) return 0;
  return c === EQUALS ? 1 : 2;
}

/** Whether the line is blank: `/^[ \t]*$/`. */
export function isBlankLine(text: string, from: number, to: number, m: ScanMeter): boolean {
  return isBlankRange(text, from, to, m);
}

/** Whether the line is indented code or more indented than a block may be: `/^(?: {4}|\t)/`. */
export function isIndented(text: string, from: number, to: number, m: ScanMeter): boolean {
  if (from < to && text.charCodeAt(from) === TAB) return true;
  return runOf(text, from, to, SPACE, m, 4) - from === 4;
}

/**
 * Whether the line opens a block other than a paragraph, heading or fence (so it ends a paragraph and starts none):
 * ``/^ {0,3}(?:[>|<]|[-+*](?:[ \t]|$)|\d{1,9}[.)](?:[ \t]|$)|[-*_](?:[ \t]*[-*_]){2,}[ \t]*$)/`` — a block quote,
 * table row or HTML block; a bullet item; an ordered item of at most nine digits; a thematic break (three or more
 * of `-`, `*`, `_`, with only spaces and tabs between and after).
 */
export function opensOtherBlock(text: string, from: number, to: number, m: ScanMeter): boolean {
  const p = indent(text, from, to, m);
  if (p >= to) return false;
  const c = text.charCodeAt(p);
  if (c === 0x3e || c === 0x7c || c === 0x3c) return true;
  const blankOrEnd = (i: number): boolean => i === to || isBlank(text.charCodeAt(i));
  if ((c === DASH || c === PLUS || c === STAR) && blankOrEnd(p + 1)) return true;
  if (isDigit(c)) {
    const d = digitRun(text, p, to, m, 10);
    const after = d < to ? text.charCodeAt(d) : -1;
    return d - p <= 9 && (after === DOT || after === 0x29) && blankOrEnd(d + 1);
  }
  return (c === DASH || c === STAR || c === UNDERSCORE) && isThematicBreak(text, p, to, m);
}

/** Whether `text[from .. to)` is only `-`, `*`, `_`, spaces and tabs, with at least three of the first three. */
function isThematicBreak(text: string, from: number, to: number, m: ScanMeter): boolean {
  let marks = 0;
  let i = from;
  for (; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c === DASH || c === STAR || c === UNDERSCORE) marks++;
    else if (c !== SPACE && c !== TAB) break;
  }
  m.steps += i - from + 1;
  return i === to && marks >= 3;
}

/**
 * Whether the line `text[from .. end)` (`end` at its LF, so a CR may precede it) is a front matter fence:
 * `/^---[ \t]*\r?$/`, or with `dots` also `/^\.\.\.[ \t]*\r?$/` (a closing fence may be either).
 */
export function isFrontMatterFence(text: string, from: number, end: number, dots: boolean, m: ScanMeter): boolean {
  const c = from < end ? text.charCodeAt(from) : -1;
  if (c !== DASH && !(dots && c === DOT)) return false;
  if (runOf(text, from, end, c, m, 3) - from !== 3) return false;
  const q = blankRun(text, from + 3, end, m);
  return q === end || (q === end - 1 && text.charCodeAt(q) === CR);
}

/** A front matter `key: value` line: where the key ends and the value starts (the value runs to the line's end). */
export interface KeyLine {
  keyEnd: number;
  value: number;
}

/**
 * The line as a top-level front matter key, or undefined: `/^([A-Za-z_][\w-]*)[ \t]*:(?:[ \t]+(.*))?$/` — a key
 * (a letter or `_`, then letters, digits, `_` and `-`), spaces or tabs, `:`, then the end of the line, or spaces or
 * tabs and a value without a JavaScript line terminator (it starts after them; empty at the end of the line).
 */
export function keyLine(text: string, from: number, to: number, m: ScanMeter): KeyLine | undefined {
  if (from >= to || !isKeyStart(text.charCodeAt(from))) return undefined;
  let k = from + 1;
  while (k < to && isKeyChar(text.charCodeAt(k))) k++;
  m.steps += k - from;
  const colon = blankRun(text, k, to, m);
  if (colon >= to || text.charCodeAt(colon) !== COLON) return undefined;
  const value = afterBlanks(text, colon + 1, to, m);
  return value === undefined ? undefined : { keyEnd: k, value };
}

/**
 * The value of a front matter block list item, or undefined: `/^[ \t]*-(?:[ \t]+(.*))?$/` — spaces or tabs, `-`,
 * then the end of the line, or spaces or tabs and a value without a JavaScript line terminator. Returns where the
 * value starts (it runs to the end of the line).
 */
export function listItem(text: string, from: number, to: number, m: ScanMeter): number | undefined {
  const dash = blankRun(text, from, to, m);
  if (dash >= to || text.charCodeAt(dash) !== DASH) return undefined;
  return afterBlanks(text, dash + 1, to, m);
}

/**
 * `(?:[ \t]+(.*))?$` at `p`: `to` at the end of the line; else, after at least one space or tab, where the rest
 * starts when it holds no JavaScript line terminator; else undefined.
 */
function afterBlanks(text: string, p: number, to: number, m: ScanMeter): number | undefined {
  if (p === to) return to;
  if (!isBlank(text.charCodeAt(p))) return undefined;
  const start = blankRun(text, p, to, m);
  return noJsLineTerminator(text, start, to, m) ? start : undefined;
}

function isKeyStart(c: number): boolean {
  return (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === UNDERSCORE;
}

function isKeyChar(c: number): boolean {
  return isKeyStart(c) || isDigit(c) || c === DASH;
}

/** Plain scalars YAML reads as null or a boolean (YAML 1.2 core schema). */
const NULLS_AND_BOOLEANS = new Set(['~', 'null', 'Null', 'NULL', 'true', 'True', 'TRUE', 'false', 'False', 'FALSE']);
/** The spellings of infinity and not-a-number after their `.`. */
const INF = new Set(['inf', 'Inf', 'INF']);
const NAN = new Set(['nan', 'NaN', 'NAN']);

/**
 * Whether the plain scalar `s` is one YAML would not read as a string: null, a boolean or a number (YAML 1.2 core
 * schema, loosely). The same answer as
 * `/^(?:~|null|Null|NULL|true|True|TRUE|false|False|FALSE|[-+]?(?:\d[\d_]*)?\.?\d+(?:[eE][-+]?\d+)?|0x[0-9a-fA-F]+|0o[0-7]+|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$/`,
 * whose number part reads `7777…7x` once per way to split the digits; this reads `s` once.
 */
export function isPlainNonString(s: string, m: ScanMeter): boolean {
  m.steps += s.length + 1;
  if (s.length <= 5 && NULLS_AND_BOOLEANS.has(s)) return true;
  if (s.length === 4 && s[0] === '.' && NAN.has(s.slice(1))) return true;
  if (s.startsWith('0x')) return isRunOf(s, 2, isHexDigit);
  if (s.startsWith('0o')) return isRunOf(s, 2, (c) => c >= 0x30 && c <= 0x37);
  let i = s[0] === '-' || s[0] === '+' ? 1 : 0;
  if (s.length - i === 4 && s[i] === '.' && INF.has(s.slice(i + 1))) return true;
  // The number: digits and underscores starting with a digit, then either `.` and digits, or nothing (the run must
  // then end with a digit); then an optional exponent.
  const n = s.length;
  const runStart = i;
  if (i < n && isDigit(s.charCodeAt(i))) {
    for (let c = s.charCodeAt(i); i < n && (isDigit(c) || c === UNDERSCORE); c = s.charCodeAt(++i));
  }
  if (i < n && s.charCodeAt(i) === DOT) {
    const digits = ++i;
    while (i < n && isDigit(s.charCodeAt(i))) i++;
    if (i === digits) return false;
  } else if (i === runStart || !isDigit(s.charCodeAt(i - 1))) return false;
  if (i === n) return true;
  if (s[i] !== 'e' && s[i] !== 'E') return false;
  i++;
  if (s[i] === '-' || s[i] === '+') i++;
  return i < n && isRunOf(s, i, isDigit);
}

function isHexDigit(c: number): boolean {
  return isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}

/** Whether `s[from ..]` is non-empty and every code unit passes `ok`. */
function isRunOf(s: string, from: number, ok: (c: number) => boolean): boolean {
  if (from >= s.length) return false;
  for (let i = from; i < s.length; i++) if (!ok(s.charCodeAt(i))) return false;
  return true;
}
