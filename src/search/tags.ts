/**
 * A note's tags, for memory_bridge_search `tags` (docs/TOOLS.md §Filters), following Obsidian's conventions:
 * - front matter `tags`, as a list (`tags: [a, b]` or `- a` lines) or a string (`tags: a, b` or `tags: a b`); a
 *   leading `#` on a value is dropped;
 * - inline `#tag` in the body: a `#` at the start of a line or after white space, followed by letters, digits, `_`,
 *   `-` or `/`, with at least one character that is not a digit (`#1984` is no tag, `#y1984` is); never inside a
 *   fenced code block (```` ``` ```` or `~~~`) or an inline code span (`` `#x` ``), never in the front matter
 *   text itself (only its `tags` values count);
 * - case-insensitive (kept lowercased); a nested tag `a/b/c` is kept as `a/b/c`, `a/b` and `a`, so a filter for a
 *   parent matches its children; empty segments are dropped (`a//b` is `a/b`).
 *
 * Cost: one pass over the text's lines with the line scanners of markdown-lines.ts and a per-character table (no
 * regular expression reads note text, except a one-character class test for non-ASCII code points); lines up to
 * the next `#` are read only for their fence, and none after the last `#`. At most MAX_NOTE_TAGS distinct tags are
 * kept per note, each at most MAX_TAG_CHARS UTF-16 units (longer ones are ignored).
 */
import { closesFence, fenceLine, opensFence } from './markdown-lines.js';
import { readMeta, splitFrontMatter } from './markdown.js';
import { lineEnd, newMeter, type ScanMeter, withoutCr } from '../text/line-scan.js';
import { ownCopy } from '../text/own-copy.js';

/** Most distinct tags (parents included) kept per note. */
export const MAX_NOTE_TAGS = 64;
/** Longest tag kept, in UTF-16 units. */
export const MAX_TAG_CHARS = 128;

const HASH = 0x23;
const BACKTICK = 0x60;
const SLASH = 0x2f;

/** ASCII characters a tag may hold: letters, digits, `_`, `-`, `/`. */
const TAG_ASCII = new Uint8Array(128);
for (const c of 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-/') TAG_ASCII[c.charCodeAt(0)] = 1;
/** A non-ASCII code point a tag may hold: a letter, a mark or a number of any script. */
const TAG_OTHER = /^[\p{L}\p{M}\p{N}]$/u;

/** Whether the code point at `i` of `s` (UTF-16 units `units` long) may be part of a tag. */
function isTagChar(s: string, i: number): { ok: boolean; units: number } {
  const c = s.charCodeAt(i);
  if (c < 128) return { ok: TAG_ASCII[c] === 1, units: 1 };
  const cp = s.codePointAt(i)!;
  const units = cp > 0xffff ? 2 : 1;
  return { ok: TAG_OTHER.test(String.fromCodePoint(cp)), units };
}

/** True for white space a tag may follow (space, tab, and the other Unicode spaces). */
function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0d || c === 0xa0 || c === 0x3000 || (c >= 0x2000 && c <= 0x200a);
}

/**
 * The normalized form of one tag name (a filter argument or a value found in a note): one leading `#` dropped,
 * lowercased, empty `/` segments dropped; undefined when it is empty, too long, holds a character a tag may not
 * hold, or is only digits.
 */
export function normalizeTag(raw: string): string | undefined {
  const s = raw.charCodeAt(0) === HASH ? raw.slice(1) : raw;
  if (s.length === 0 || s.length > MAX_TAG_CHARS) return undefined;
  let digitsOnly = true;
  for (let i = 0; i < s.length; ) {
    const { ok, units } = isTagChar(s, i);
    if (!ok) return undefined;
    const c = s.charCodeAt(i);
    if (!(c >= 0x30 && c <= 0x39) && c !== SLASH) digitsOnly = false;
    i += units;
  }
  if (digitsOnly) return undefined;
  const parts = s
    .toLowerCase()
    .split('/')
    .filter((p) => p !== '');
  return parts.length === 0 ? undefined : parts.join('/');
}

/** Add `tag` and its parents (`a/b/c` → `a`, `a/b`, `a/b/c`) to `into`, while it holds fewer than MAX_NOTE_TAGS. */
function addWithParents(tag: string, into: Set<string>): void {
  let slash = tag.indexOf('/');
  while (slash >= 0 && into.size < MAX_NOTE_TAGS) {
    into.add(tag.slice(0, slash));
    slash = tag.indexOf('/', slash + 1);
  }
  if (into.size < MAX_NOTE_TAGS) into.add(tag);
}

/**
 * The tags of note `text` (see the module comment), lowercased, parents included, sorted; undefined when it has
 * none (most notes: nothing is kept for them). `everyLine`: see `inlineTags` (tests only).
 */
export function noteTags(text: string, m: ScanMeter = newMeter(), everyLine = false): string[] | undefined {
  const found = new Set<string>();
  const { frontMatter, body } = splitFrontMatter(text, m);
  if (frontMatter !== undefined) {
    for (const value of readMeta(frontMatter, m).tags) {
      m.steps += value.length;
      // A string value may hold several tags, separated by commas or white space.
      let start = 0;
      for (let i = 0; i <= value.length; i++) {
        if (i < value.length && value.charCodeAt(i) !== 0x2c && !isSpace(value.charCodeAt(i))) continue;
        const tag = i > start ? normalizeTag(value.slice(start, i)) : undefined;
        if (tag !== undefined) addWithParents(tag, found);
        start = i + 1;
      }
    }
  }
  inlineTags(body, found, m, everyLine);
  // Kept per note for the life of a view: own copies, so no tag keeps the note's whole text alive.
  return found.size === 0 ? undefined : [...found].sort().map(ownCopy);
}

/**
 * Add the inline `#tags` of `body` outside code to `found` (one pass over its lines). `everyLine` (tests only): read
 * every line for tags, as if each held a `#`, which must give the same tags.
 */
function inlineTags(body: string, found: Set<string>, m: ScanMeter, everyLine: boolean): void {
  let fence: { char: number; length: number } | undefined;
  let pos = 0;
  // The next `#` at or after `pos` (one forward search each time the lines pass it, so the body is searched once
  // in all): a line before it holds no tag and is read only for its fence, and past the last `#` nothing is read.
  let hash = -1;
  while (pos < body.length && found.size < MAX_NOTE_TAGS) {
    if (hash < pos && !everyLine) {
      hash = body.indexOf('#', pos);
      m.steps += (hash < 0 ? body.length : hash) - pos;
      if (hash < 0) return;
    }
    const end = lineEnd(body, pos, m);
    const from = pos;
    const stop = withoutCr(body, pos, end);
    pos = end + 1;
    const f = fenceLine(body, from, stop, m);
    if (fence !== undefined) {
      if (f !== undefined && closesFence(body, f, stop, fence, m)) fence = undefined;
      continue;
    }
    if (f !== undefined && opensFence(body, f, stop, m)) {
      fence = { char: f.char, length: f.length };
      continue;
    }
    if (hash < stop || everyLine) lineTags(body, from, stop, found, m);
  }
}

/**
 * The `#tags` of one line `body[from .. stop)` outside its code spans. A code span opens at a run of n backticks
 * and closes at the next run of exactly n on the line (a run without a match is literal text); the matching run is
 * found through `nextSame`, built in one backward pass, so the line is read a fixed number of times.
 */
function lineTags(body: string, from: number, stop: number, found: Set<string>, m: ScanMeter): void {
  m.steps += 4 * (stop - from);
  // Most lines hold no `#` at all, and so no tag: one read of the line, without the code-span bookkeeping below.
  let hash = from;
  while (hash < stop && body.charCodeAt(hash) !== HASH) hash++;
  if (hash === stop) return;
  // Backtick runs of the line: start, length; and for each, the index of the next run of the same length (or -1).
  const runs: number[] = [];
  for (let i = from; i < stop; ) {
    if (body.charCodeAt(i) !== BACKTICK) {
      i++;
      continue;
    }
    let j = i;
    while (j < stop && body.charCodeAt(j) === BACKTICK) j++;
    runs.push(i, j - i);
    i = j;
  }
  const nextSame = new Int32Array(runs.length / 2).fill(-1);
  const lastOfLength = new Map<number, number>();
  for (let r = runs.length / 2 - 1; r >= 0; r--) {
    const len = runs[2 * r + 1]!;
    nextSame[r] = lastOfLength.get(len) ?? -1;
    lastOfLength.set(len, r);
  }
  let run = 0;
  let i = from;
  while (i < stop) {
    if (run < nextSame.length && i === runs[2 * run]) {
      const close = nextSame[run]!;
      if (close >= 0) {
        // A code span: skip to after its closing run.
        i = runs[2 * close]! + runs[2 * close + 1]!;
        run = close + 1;
      } else {
        i += runs[2 * run + 1]!;
        run++;
      }
      continue;
    }
    const c = body.charCodeAt(i);
    if (c === HASH && (i === from || isSpace(body.charCodeAt(i - 1)))) {
      let j = i + 1;
      while (j < stop) {
        const t = isTagChar(body, j);
        if (!t.ok) break;
        j += t.units;
      }
      if (j > i + 1 && j - i <= MAX_TAG_CHARS + 1) {
        const tag = normalizeTag(body.slice(i + 1, j));
        if (tag !== undefined) addWithParents(tag, found);
      }
      i = j;
      continue;
    }
    i++;
  }
}
