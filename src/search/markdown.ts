/**
 * Splitting a Markdown note into what search indexes and shows (docs/TOOLS.md, docs/SEARCH.md):
 * - a leading YAML front matter block is cut off the body, so it never reaches a title or a snippet;
 * - from that block only the `title`, `tags` and `aliases` values are kept (indexed, never shown);
 * - the title shown is the text of the first ATX heading of the body outside fenced code blocks.
 *
 * The front matter reader is deliberately tiny and tolerant: it understands `key: scalar`, `key: [a, b]` and a
 * block list (`key:` followed by `- a` lines). Any other shape is ignored, never an error. No YAML library: the
 * block is untrusted text and we want none of YAML's features (anchors, tags, multi-documents).
 */

/** Longest title kept, in code points (a pathological one-line heading must not eat the response budget). */
export const MAX_TITLE_CHARS = 300;

export interface ParsedNote {
  /** The note text without its front matter block (the whole text when there is none). */
  body: string;
  /** Text of the first ATX heading in `body`, trimmed; undefined when there is none. */
  title: string | undefined;
  /** Front matter `title`, `tags` and `aliases` values, in that order (indexed only). */
  meta: string[];
}

const META_KEYS = new Set(['title', 'tags', 'aliases']);

/**
 * Split a note into body, heading title and front matter values.
 *
 * Front matter: the text starts (after an optional U+FEFF) with a line that is exactly `---` (trailing spaces or
 * tabs allowed), and a later line is exactly `---` or `...`. Without a closing line there is no front matter and
 * the whole text is the body.
 */
export function parseNote(text: string): ParsedNote {
  const { frontMatter, body } = splitFrontMatter(text);
  const meta = frontMatter === undefined ? [] : readMetaValues(frontMatter);
  return { body, title: firstHeading(body), meta };
}

/** Separate a leading front matter block (without its fence lines) from the body. */
export function splitFrontMatter(text: string): { frontMatter: string | undefined; body: string } {
  let start = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const firstEnd = lineEnd(text, start);
  if (!/^---[ \t]*\r?$/.test(text.slice(start, firstEnd))) return { frontMatter: undefined, body: text };
  start = firstEnd + 1;
  let pos = start;
  while (pos <= text.length) {
    const end = lineEnd(text, pos);
    const line = text.slice(pos, end);
    if (/^(?:---|\.\.\.)[ \t]*\r?$/.test(line)) {
      return { frontMatter: text.slice(start, pos), body: text.slice(Math.min(end + 1, text.length)) };
    }
    if (end >= text.length) break;
    pos = end + 1;
  }
  return { frontMatter: undefined, body: text };
}

/** Index of the next "\n" at or after `from`, or text.length. */
function lineEnd(text: string, from: number): number {
  const i = text.indexOf('\n', from);
  return i === -1 ? text.length : i;
}

/**
 * The values of `title`, `tags` and `aliases` in a front matter block, as plain strings. Only top-level keys
 * (no indentation) are considered; values of any other key, nested maps and multi-line scalars are ignored.
 */
export function readMetaValues(block: string): string[] {
  const found = new Map<string, string[]>();
  const lines = block.split('\n').map((l) => l.replace(/\r$/, ''));
  for (let i = 0; i < lines.length; i++) {
    const m = /^([A-Za-z_][\w-]*)[ \t]*:(?:[ \t]+(.*))?$/.exec(lines[i]!);
    if (m === null || !META_KEYS.has(m[1]!) || found.has(m[1]!)) continue;
    const rest = stripComment(m[2] ?? '').trim();
    const values: string[] = [];
    if (rest === '') {
      // A block list: following lines "  - value" (indentation optional, as YAML allows at the top level).
      while (i + 1 < lines.length) {
        const item = /^[ \t]*-(?:[ \t]+(.*))?$/.exec(lines[i + 1]!);
        if (item === null) break;
        i++;
        const v = scalar(stripComment(item[1] ?? ''));
        if (v !== '') values.push(v);
      }
    } else if (rest.startsWith('[')) {
      if (!rest.endsWith(']')) continue; // a flow list spread over lines: unknown shape, ignored
      for (const part of splitFlow(rest.slice(1, -1))) {
        const v = scalar(part);
        if (v !== '') values.push(v);
      }
    } else if (!rest.startsWith('{') && !rest.startsWith('|') && !rest.startsWith('>')) {
      const v = scalar(rest);
      if (v !== '') values.push(v);
    }
    found.set(m[1]!, values);
  }
  return ['title', 'tags', 'aliases'].flatMap((k) => found.get(k) ?? []);
}

/** Drop a YAML comment (" #…") that is not inside quotes. */
function stripComment(s: string): string {
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

/** A plain or quoted scalar, unquoted and trimmed (escapes are not interpreted: the text is only indexed). */
function scalar(raw: string): string {
  const s = raw.trim();
  if (s.length >= 2 && (s[0] === '"' || s[0] === "'") && s[s.length - 1] === s[0]) return s.slice(1, -1).trim();
  return s;
}

/**
 * Text of the first non-empty ATX heading (`#` … `######` followed by a space, tab or line end, indented at most
 * three spaces) outside fenced code blocks (``` or ~~~, at least three, closed by the same character repeated at
 * least as often). A closing run of `#` preceded by a space is removed. Cut to MAX_TITLE_CHARS code points.
 */
export function firstHeading(body: string): string | undefined {
  let fence: { char: string; len: number } | undefined;
  let pos = 0;
  while (pos < body.length) {
    const end = lineEnd(body, pos);
    const line = body.slice(pos, end).replace(/\r$/, '');
    pos = end + 1;
    const f = /^ {0,3}(`{3,}|~{3,})(.*)$/.exec(line);
    if (fence !== undefined) {
      if (f !== null && f[1]![0] === fence.char && f[1]!.length >= fence.len && f[2]!.trim() === '') fence = undefined;
      continue;
    }
    if (f !== null) {
      // A backtick fence's info string may not contain a backtick (CommonMark); otherwise it is inline code.
      if (f[1]![0] === '`' && f[2]!.includes('`')) continue;
      fence = { char: f[1]![0]!, len: f[1]!.length };
      continue;
    }
    const h = /^ {0,3}#{1,6}(?:[ \t]+(.*))?$/.exec(line);
    if (h === null) continue;
    const text = withoutClosingHashes(h[1] ?? '')
      .replace(/\s+/g, ' ')
      .trim();
    if (text === '') continue;
    const cps = Array.from(text);
    return cps.length > MAX_TITLE_CHARS ? cps.slice(0, MAX_TITLE_CHARS).join('').trimEnd() : text;
  }
  return undefined;
}

/**
 * Remove an ATX heading's closing sequence: trailing `#`s preceded by a space or tab (or making up the whole
 * text). Written without a backtracking regex, which would be quadratic on long runs of spaces.
 */
function withoutClosingHashes(raw: string): string {
  const text = raw.trimEnd();
  let i = text.length;
  while (i > 0 && text[i - 1] === '#') i--;
  if (i === text.length) return text;
  if (i === 0) return '';
  return text[i - 1] === ' ' || text[i - 1] === '\t' ? text.slice(0, i) : text;
}
