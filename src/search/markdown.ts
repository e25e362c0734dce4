/**
 * Splitting a Markdown note into what search indexes and shows (docs/TOOLS.md, docs/SEARCH.md; docs/DESIGN.md
 * "Titles and file names"):
 * - a leading YAML front matter block is cut off the body, so it never reaches a snippet;
 * - from that block only the `title`, `tags` and `aliases` values are kept;
 * - a note's title is its front matter `title` (a string), else its first level-1 heading (ATX `# ` or setext
 *   `===`, outside fenced code), else its file name without `.md` (`noteTitle`); never another heading level;
 * - the file name without `.md` is indexed as a field of its own (`noteName`).
 *
 * The front matter reader is deliberately tiny and tolerant: it understands `key: scalar`, `key: [a, b]` and a
 * block list (`key:` followed by `- a` lines). Any other shape is ignored, never an error. No YAML library: the
 * block is untrusted text and we want none of YAML's features (anchors, tags, multi-documents).
 *
 * Cost: linear in the text by construction (docs/DESIGN.md "Linear scanners over note text"). Lines are found with
 * one `indexOf` each and judged by the scanners of `markdown-lines.ts`; no regular expression reads note text.
 * Every function takes an optional ScanMeter that counts the code units read (tests/search/linear.test.ts).
 */
import {
  atxHeading,
  closesFence,
  fenceLine,
  isBlankLine,
  isFrontMatterFence,
  isIndented,
  isPlainNonString,
  keyLine,
  listItem,
  opensFence,
  opensOtherBlock,
  setextUnderline,
  withoutClosingHashes,
} from './markdown-lines.js';
import { collapseWhiteSpace, lineEnd, newMeter, type ScanMeter, withoutCr } from '../text/line-scan.js';

/** Longest title kept, in code points (a pathological one-line heading must not eat the response budget). */
export const MAX_TITLE_CHARS = 300;

/**
 * Upper bound on the ScanMeter steps `parseNote` takes per UTF-16 code unit of a note (plus one): every line is
 * found once and judged by a fixed number of scanners that each read it at most twice, twice over the body (title
 * and headings), so `steps ≤ MAX_STEPS_PER_CODE_UNIT × (text.length + 1)` whatever the text holds (checked on
 * crafted and random notes by tests/search/linear.test.ts; short lines come closest, about 19 on `_\n-`).
 */
export const MAX_STEPS_PER_CODE_UNIT = 32;

export interface ParsedNote {
  /** The note text without its front matter block (the whole text when there is none). */
  body: string;
  /**
   * The note's own title: front matter `title` when it is a string, else the first level-1 heading of `body`;
   * undefined when it has neither (the shown title is then the file name, see `noteTitle`).
   */
  title: string | undefined;
  /** Front matter `tags` and `aliases` values, in that order (indexed only). */
  meta: string[];
  /** Every heading of the body, one per line (`sectionHeadings`; indexed only). */
  headings: string;
}

const META_KEYS = new Set(['title', 'tags', 'aliases']);

/**
 * Split a note into body, own title and front matter values.
 *
 * Front matter: the text starts (after an optional U+FEFF) with a line that is exactly `---` (trailing spaces or
 * tabs allowed), and a later line is exactly `---` or `...`. Without a closing line there is no front matter and
 * the whole text is the body.
 */
export function parseNote(text: string, m: ScanMeter = newMeter()): ParsedNote {
  const { frontMatter, body } = splitFrontMatter(text, m);
  const meta = frontMatter === undefined ? undefined : readMeta(frontMatter, m);
  const title = meta?.title ?? firstHeading(body, m);
  return {
    body,
    title,
    meta: meta === undefined ? [] : [...meta.tags, ...meta.aliases],
    headings: sectionHeadings(body, m),
  };
}

/**
 * The note's own title, as `parseNote(text).title` gives it, without the rest of what `parseNote` builds (a read
 * shows only the title).
 */
export function ownTitle(text: string, m: ScanMeter = newMeter()): string | undefined {
  return titleAndBody(text, m).title;
}

/**
 * The note's own title (as `ownTitle`) and the UTF-16 index where its body starts (after the front matter, as
 * `parseNote(text).body` begins), without the headings and metadata lists `parseNote` also builds.
 */
export function titleAndBody(text: string, m: ScanMeter = newMeter()): { title: string | undefined; bodyAt: number } {
  const { frontMatter, body } = splitFrontMatter(text, m);
  const title = (frontMatter === undefined ? undefined : readMeta(frontMatter, m).title) ?? firstHeading(body, m);
  return { title, bodyAt: text.length - body.length };
}

/**
 * The file name of note `id` without its `.md` extension (any case): `notes/Custom domains.md` → `Custom domains`.
 * Indexed as the `name` field (tokenized like text, so `ssh-keygen` is found by "ssh keygen").
 */
export function noteName(id: string): string {
  const name = id.slice(id.lastIndexOf('/') + 1);
  return name.slice(-3).toLowerCase() === '.md' ? name.slice(0, -3) : name;
}

/** The title shown for note `id` (docs/DESIGN.md "Titles and file names"): its own title, else its file name. */
export function noteTitle(parsed: Pick<ParsedNote, 'title'>, id: string): string {
  return parsed.title ?? clipTitle(collapseWhiteSpace(noteName(id), newMeter(), 0, undefined, TITLE_UNITS));
}

/**
 * Most UTF-16 units of a title's text worth building: MAX_TITLE_CHARS code points of two units each, and one more
 * so that a longer text is still seen to be longer (`clipTitle` then cuts it the same way as the whole text).
 */
const TITLE_UNITS = 2 * MAX_TITLE_CHARS + 1;

/**
 * Cut a title to MAX_TITLE_CHARS code points (and trim what the cut leaves at its end). Reads at most TITLE_UNITS
 * code units, however long the text.
 */
function clipTitle(text: string, m: ScanMeter = newMeter()): string {
  if (text.length <= MAX_TITLE_CHARS) return text;
  let end = 0;
  for (let cps = 0; cps < MAX_TITLE_CHARS && end < text.length; cps++) {
    const c = text.charCodeAt(end);
    const pair = c >= 0xd800 && c <= 0xdbff && end + 1 < text.length && (text.charCodeAt(end + 1) & 0xfc00) === 0xdc00;
    end += pair ? 2 : 1;
  }
  m.steps += end + 1;
  return end < text.length ? text.slice(0, end).trimEnd() : text;
}

/** Separate a leading front matter block (without its fence lines) from the body. */
export function splitFrontMatter(
  text: string,
  m: ScanMeter = newMeter(),
): { frontMatter: string | undefined; body: string } {
  let start = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const firstEnd = lineEnd(text, start, m);
  if (!isFrontMatterFence(text, start, firstEnd, false, m)) return { frontMatter: undefined, body: text };
  start = firstEnd + 1;
  let pos = start;
  while (pos <= text.length) {
    const end = lineEnd(text, pos, m);
    if (isFrontMatterFence(text, pos, end, true, m)) {
      m.steps += text.length;
      return { frontMatter: text.slice(start, pos), body: text.slice(Math.min(end + 1, text.length)) };
    }
    if (end >= text.length) break;
    pos = end + 1;
  }
  return { frontMatter: undefined, body: text };
}

/** What the front matter says that search uses. */
export interface FrontMatter {
  /** `title` when it is a single string (a quoted scalar, or a plain one YAML would not read as null, a boolean or a number). */
  title: string | undefined;
  tags: string[];
  aliases: string[];
}

/**
 * The `title`, `tags` and `aliases` of a front matter block. Only top-level keys (no indentation) are considered;
 * the first occurrence of a key counts; values of any other key, nested maps and multi-line scalars are ignored.
 */
export function readMeta(block: string, m: ScanMeter = newMeter()): FrontMatter {
  const found = new Map<string, { values: string[]; scalar: boolean; plain: boolean }>();
  const lines = blockLines(block, m);
  for (let i = 0; i < lines.length; i += 2) {
    const from = lines[i]!;
    const to = lines[i + 1]!;
    const k = keyLine(block, from, to, m);
    // A key of the three is at most 7 code units: no longer key is ever sliced.
    const key = k === undefined || k.keyEnd - from > 7 ? undefined : block.slice(from, k.keyEnd);
    if (k === undefined || key === undefined || !META_KEYS.has(key) || found.has(key)) continue;
    m.steps += 3 * (to - k.value);
    const rest = stripComment(block.slice(k.value, to)).trim();
    const values: string[] = [];
    let isScalar = false;
    if (rest === '') {
      // A block list: following lines "  - value" (indentation optional, as YAML allows at the top level).
      while (i + 2 < lines.length) {
        const value = listItem(block, lines[i + 2]!, lines[i + 3]!, m);
        if (value === undefined) break;
        i += 2;
        m.steps += 4 * (lines[i + 1]! - value);
        const v = scalar(stripComment(block.slice(value, lines[i + 1]!)));
        if (v !== '') values.push(v);
      }
    } else if (rest.startsWith('[')) {
      if (!rest.endsWith(']')) continue; // a flow list spread over lines: unknown shape, ignored
      m.steps += 4 * rest.length;
      for (const part of splitFlow(rest.slice(1, -1))) {
        const v = scalar(part);
        if (v !== '') values.push(v);
      }
    } else if (!rest.startsWith('{') && !rest.startsWith('|') && !rest.startsWith('>')) {
      m.steps += 2 * rest.length;
      const v = scalar(rest);
      isScalar = true;
      if (v !== '') values.push(v);
    }
    found.set(key, { values, scalar: isScalar, plain: isScalar && rest[0] !== '"' && rest[0] !== "'" });
  }
  const title = found.get('title');
  let titleText: string | undefined;
  if (title?.scalar && title.values.length === 1) {
    // The value is trimmed (`scalar`), so it holds white space exactly when its collapsed form does, and no YAML
    // null, boolean or number holds any: the test may read the value as it is, and only the title's own length of
    // it needs collapsing.
    const raw = title.values[0]!;
    const v = collapseWhiteSpace(raw, m, 0, raw.length, TITLE_UNITS);
    if (v !== '' && !(title.plain && isPlainNonString(raw, m))) titleText = clipTitle(v, m);
  }
  return { title: titleText, tags: found.get('tags')?.values ?? [], aliases: found.get('aliases')?.values ?? [] };
}

/**
 * The lines of a front matter block as positions: start, end, start, end, … (split at LF; an end excludes one CR
 * before the LF), one `indexOf` per line.
 */
function blockLines(block: string, m: ScanMeter): number[] {
  const out: number[] = [];
  for (let pos = 0; ; ) {
    const end = lineEnd(block, pos, m);
    out.push(pos, withoutCr(block, pos, end));
    if (end >= block.length) return out;
    pos = end + 1;
  }
}

/** Drop a YAML comment (" #…") that is not inside quotes. */
function stripComment(s: string): string {
  if (!s.includes('#')) return s;
  let quote: string | undefined;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (quote !== undefined) {
      if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") {
      quote = c;
    } else if (c === '#' && (i === 0 || s[i - 1] === ' ' || s[i - 1] === '\t')) {
      return s.slice(0, i);
    }
  }
  return s;
}

/** Split the inside of a flow list on commas outside quotes. */
function splitFlow(s: string): string[] {
  const parts: string[] = [];
  let quote: string | undefined;
  let cur = '';
  for (const c of s) {
    if (quote !== undefined) {
      if (c === quote) quote = undefined;
      cur += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      cur += c;
    } else if (c === ',') {
      parts.push(cur);
      cur = '';
    } else {
      cur += c;
    }
  }
  parts.push(cur);
  return parts;
}

/**
 * A plain or quoted scalar, unquoted and trimmed. In a single-quoted scalar `''` is one quote; in a double-quoted
 * one the YAML escapes are interpreted (`\\`, `\"`, `\/`, `\t`, `\n`, `\r`, `\0`, `\xXX`, `\uXXXX`,
 * `\UXXXXXXXX`), so a title written `"\u00e9t\u00e9"` reads "été" as its owner sees it; any other backslash is
 * kept as written. One pass, linear in the scalar. Characters an escape produces are shown like any other at the
 * response boundary (hidden controls as `<U+XXXX>`, docs/TOOLS.md §Characters).
 */
function scalar(raw: string): string {
  const s = raw.trim();
  if (s.length < 2 || (s[0] !== '"' && s[0] !== "'") || s[s.length - 1] !== s[0]) return s;
  const body = s.slice(1, -1);
  return (s[0] === "'" ? body.replaceAll("''", "'") : unescapeDoubleQuoted(body)).trim();
}

const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  '\\': '\\',
  '"': '"',
  '/': '/',
  t: '\t',
  n: '\n',
  r: '\r',
  '0': '\0',
};
const HEX_DIGITS: Readonly<Record<string, number>> = { x: 2, u: 4, U: 8 };

function unescapeDoubleQuoted(body: string): string {
  if (!body.includes('\\')) return body;
  let out = '';
  let i = 0;
  while (i < body.length) {
    const c = body[i]!;
    if (c !== '\\' || i + 1 >= body.length) {
      out += c;
      i++;
      continue;
    }
    const e = body[i + 1]!;
    const simple = SIMPLE_ESCAPES[e];
    if (simple !== undefined) {
      out += simple;
      i += 2;
      continue;
    }
    const digits = HEX_DIGITS[e];
    const hex = digits === undefined ? '' : body.slice(i + 2, i + 2 + digits);
    const cp =
      digits !== undefined && /^[0-9A-Fa-f]+$/.test(hex) && hex.length === digits ? Number.parseInt(hex, 16) : -1;
    if (cp >= 0 && cp <= 0x10ffff && (cp < 0xd800 || cp > 0xdfff)) {
      out += String.fromCodePoint(cp);
      i += 2 + (digits ?? 0);
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

/**
 * Text of the first non-empty level-1 heading of `body` outside fenced code blocks, or undefined (see
 * `scanHeadings` for what a heading is). Headings of other levels (`##`, a setext `---` underline) are never
 * titles. Cut to MAX_TITLE_CHARS code points. One pass over the lines (linear in the body).
 */
export function firstHeading(body: string, m: ScanMeter = newMeter()): string | undefined {
  let found: string | undefined;
  scanHeadings(
    body,
    (level, text) => {
      if (level !== 1) return true;
      found = clipTitle(text, m);
      return false;
    },
    TITLE_UNITS,
    m,
  );
  return found;
}

/** Most heading characters `sectionHeadings` keeps, in UTF-16 units (bounds the field on pathological notes). */
export const MAX_HEADINGS_CHARS = 16_384;

/**
 * The texts of every heading of `body` (any level, ATX or setext, outside fenced code), one per line, in order, at
 * most MAX_HEADINGS_CHARS UTF-16 units. Indexed as the `headings` field: a section named after what a query asks
 * for is a strong sign the note is about it.
 */
export function sectionHeadings(body: string, m: ScanMeter = newMeter()): string {
  let out = '';
  scanHeadings(
    body,
    (_level, text) => {
      out += out === '' ? text : `\n${text}`;
      return out.length < MAX_HEADINGS_CHARS;
    },
    MAX_HEADINGS_CHARS,
    m,
  );
  return out.length > MAX_HEADINGS_CHARS ? out.slice(0, MAX_HEADINGS_CHARS) : out;
}

/** Most lines of a paragraph kept for a setext heading's text (64 lines, two positions each). */
const MAX_PARA_POSITIONS = 128;

/**
 * Calls `found(level, text)` for every non-empty heading of `body` outside fenced code blocks (``` or ~~~, at least
 * three, closed by the same character repeated at least as often), in order, until it returns false. A heading is
 * an ATX line (1–6 `#` followed by a space, tab or line end, indented at most three spaces; a closing run of `#`
 * preceded by a space is removed) or a setext heading: a paragraph followed by a line of `=` (level 1) or `-`
 * (level 2), indented at most three spaces. Text has its whitespace collapsed, and only its first `limit` UTF-16
 * units are built (what the caller keeps: a prefix of the whole text). One pass over the lines, each judged by the
 * scanners of `markdown-lines.ts` (each reads the line at most twice). `start` is the UTF-16 index in `body` where
 * the heading's first line starts (a setext heading: its paragraph's first line), `next` where the line after it
 * (after the underline) starts, at most `body.length` (src/search/sections.ts cuts sections at them).
 */
export function scanHeadings(
  body: string,
  found: (level: number, text: string, start: number, next: number) => boolean,
  limit: number,
  m: ScanMeter,
): void {
  let fence: { char: number; length: number } | undefined;
  /**
   * Where the lines of the paragraph being read start and end in `body` (start, end, start, end, …; a setext
   * underline turns them into a heading), or undefined. Positions, not strings: most lines are never sliced.
   */
  let para: number[] | undefined;
  let pos = 0;
  while (pos < body.length) {
    const end = lineEnd(body, pos, m);
    const from = pos;
    const stop = withoutCr(body, pos, end);
    pos = end + 1;
    const kind = lineKind(body, from, stop, m);
    if (kind !== OTHER_LINE) {
      // Most lines: a paragraph line, a blank line, a list item or a quote outside a fence, or a line inside one
      // that cannot close it.
      if (fence !== undefined) continue;
      if (kind === ENDS_PARAGRAPH) para = undefined;
      else if (para === undefined) para = [from, stop];
      else if (para.length < MAX_PARA_POSITIONS) para.push(from, stop);
      continue;
    }
    const f = fenceLine(body, from, stop, m);
    if (fence !== undefined) {
      if (f !== undefined && closesFence(body, f, stop, fence, m)) fence = undefined;
      continue;
    }
    if (f !== undefined && opensFence(body, f, stop, m)) {
      fence = { char: f.char, length: f.length };
      para = undefined;
      continue;
    }
    if (isBlankLine(body, from, stop, m)) {
      para = undefined;
      continue;
    }
    const h = atxHeading(body, from, stop, m);
    if (h !== undefined) {
      para = undefined;
      const text = collapseWhiteSpace(body, m, h.text, withoutClosingHashes(body, h.text, stop, m), limit);
      if (text !== '' && !found(h.level, text, from, Math.min(pos, body.length))) return;
      continue;
    }
    const underline = para === undefined ? 0 : setextUnderline(body, from, stop, m);
    if (para !== undefined && underline !== 0) {
      const lines: string[] = [];
      for (let k = 0; k < para.length; k += 2) lines.push(body.slice(para[k], para[k + 1]));
      const joined = lines.join(' ');
      m.steps += 2 * joined.length;
      const text = collapseWhiteSpace(joined, m, 0, joined.length, limit);
      const start = para[0]!;
      para = undefined;
      if (text !== '' && !found(underline, text, start, Math.min(pos, body.length))) return;
      continue;
    }
    // A block quote, list item, table row, thematic break or HTML block ends a paragraph and starts none (a setext
    // underline after it is not a heading); indented code starts none either.
    if (opensOtherBlock(body, from, stop, m)) {
      para = undefined;
      continue;
    }
    if (para !== undefined) {
      if (para.length < MAX_PARA_POSITIONS) para.push(from, stop);
      continue;
    }
    if (!isIndented(body, from, stop, m)) para = [from, stop];
  }
}

/**
 * First characters (after at most three spaces) with which a line may be something other than a non-blank
 * paragraph line: a fence, ATX heading, setext underline, block quote, list item, table row, HTML block, thematic
 * break, or (a fourth space, a tab) indented code or a blank line.
 */
const SPECIAL_START = new Uint8Array(128);
for (const c of ' \t#`~=->|<+*_0123456789') SPECIAL_START[c.charCodeAt(0)] = 1;

/** What `lineKind` can tell from a line's first characters. */
const PARAGRAPH_LINE = 0;
const ENDS_PARAGRAPH = 1;
const OTHER_LINE = 2;

/**
 * PARAGRAPH_LINE when the line `body[from .. stop)` can only be a non-blank paragraph line (or a line inside a
 * fence that does not close it): its first character after at most three spaces starts no other kind of line, or
 * is a single backtick or tilde (a fence needs three). ENDS_PARAGRAPH when it ends a paragraph and is no fence,
 * heading or setext underline: at most three spaces (a blank line); `>`, `|` or `<` first (a block quote, table row
 * or HTML block); or `-`, `+` or `*`, a space or tab, then a character that is no space, tab, `-`, `*` or `_` (a
 * bullet item, not a thematic break). OTHER_LINE when the line scanners of `scanHeadings` must decide. Reads at
 * most six code units.
 */
function lineKind(body: string, from: number, stop: number, m: ScanMeter): number {
  m.steps += 6;
  let p = from;
  while (p < from + 3 && p < stop && body.charCodeAt(p) === 0x20) p++;
  if (p >= stop) return ENDS_PARAGRAPH;
  const c = body.charCodeAt(p);
  if (c >= 128 || SPECIAL_START[c] === 0) return PARAGRAPH_LINE;
  if (c === 0x3e || c === 0x7c || c === 0x3c) return ENDS_PARAGRAPH;
  if ((c === 0x60 || c === 0x7e) && (p + 1 >= stop || body.charCodeAt(p + 1) !== c)) return PARAGRAPH_LINE;
  if (c === 0x2d || c === 0x2b || c === 0x2a) {
    const next = p + 1 < stop ? body.charCodeAt(p + 1) : -1;
    const after = p + 2 < stop ? body.charCodeAt(p + 2) : -1;
    if ((next === 0x20 || next === 0x09) && p + 2 < stop) {
      if (after !== 0x20 && after !== 0x09 && after !== 0x2d && after !== 0x2a && after !== 0x5f) return ENDS_PARAGRAPH;
    }
  }
  return OTHER_LINE;
}
