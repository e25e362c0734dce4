/**
 * A note's headings as positions, for memory_bridge_read `outline` and `section` (docs/TOOLS.md §memory_bridge_read):
 * the headings `scanHeadings` of markdown.ts finds (ATX and setext, outside fenced code, front matter excluded),
 * each with its level, its text and where its section starts and ends in the note.
 *
 * A section is a heading's lines and everything after them up to the next heading of the same or a higher level
 * (a smaller or equal number of `#`), or the end of the note. Cost: one linear pass of `scanHeadings` over the body
 * plus one pass counting code points; no regular expression reads note text.
 */
import { MAX_TITLE_CHARS, scanHeadings, splitFrontMatter } from './markdown.js';

/** One heading of a note. */
export interface Heading {
  /** 1–6 (`#` count; setext `=` is 1, `-` is 2). */
  level: number;
  /** The heading's text with white space collapsed, at most MAX_TITLE_CHARS code points. */
  text: string;
  /** UTF-16 index in the note where the heading's first line starts. */
  start: number;
  /** UTF-16 index in the note where its section ends (the next heading of the same or a higher level, or the end). */
  end: number;
}

/** Most UTF-16 units of heading text built (two per code point, and one more so a longer one is seen as such). */
const TEXT_UNITS = 2 * MAX_TITLE_CHARS + 1;

/** Cut to MAX_TITLE_CHARS code points. */
function clip(text: string): string {
  if (text.length <= MAX_TITLE_CHARS) return text;
  let n = 0;
  let i = 0;
  while (i < text.length && n < MAX_TITLE_CHARS) {
    const c = text.charCodeAt(i);
    i += c >= 0xd800 && c <= 0xdbff && i + 1 < text.length ? 2 : 1;
    n++;
  }
  return text.slice(0, i).trimEnd();
}

/**
 * The headings of `text` in order, each with its section's end, at most `max` of them (and whether more exist).
 * Ends are only exact for the headings returned when every later heading was seen: a heading whose closing heading
 * lies past `max` ends where the note ends only if no heading follows, so `headingsOf` keeps scanning (without
 * keeping) until every returned heading's end is known.
 */
export function headingsOf(text: string, max = Number.POSITIVE_INFINITY): { headings: Heading[]; more: boolean } {
  const { body } = splitFrontMatter(text);
  const shift = text.length - body.length;
  const headings: Heading[] = [];
  /** Indexes into `headings` whose end is not known yet, levels strictly increasing (a stack). */
  const open: number[] = [];
  let more = false;
  scanHeadings(
    body,
    (level, heading, start) => {
      const at = start + shift;
      while (open.length > 0 && headings[open[open.length - 1]!]!.level >= level) headings[open.pop()!]!.end = at;
      if (headings.length >= max) {
        more = true;
        return open.length > 0;
      }
      headings.push({ level, text: clip(heading), start: at, end: text.length });
      open.push(headings.length - 1);
      return true;
    },
    TEXT_UNITS,
    { steps: 0 },
  );
  return { headings, more };
}

/**
 * The comparison form of a heading or a `section` argument: letters and digits lowercased, every other run of
 * characters one space, trimmed. So `Rollout plan`, `rollout-plan` (a slug) and `Rollout: plan!` compare equal.
 */
export function headingKey(s: string): string {
  let out = '';
  let gap = false;
  for (const ch of s) {
    if (/[\p{L}\p{N}]/u.test(ch)) {
      if (gap && out !== '') out += ' ';
      gap = false;
      out += ch.toLowerCase();
    } else gap = true;
  }
  return out;
}

/**
 * The heading a `section` argument names (docs/TOOLS.md §memory_bridge_read): the argument is first taken as
 * written, then with `%XX` escapes decoded (a Markdown link's `#Rollout%20plan`), and with a leading `#` and any
 * `Parent#` path of an Obsidian link (`[[note#Parent#Child]]`) removed. The first heading in note order whose text
 * equals it wins; else the first whose `headingKey` equals its `headingKey`. Undefined when none does.
 */
export function findSection(text: string, section: string): Heading | undefined {
  const { headings } = headingsOf(text);
  let wanted = section;
  try {
    wanted = decodeURIComponent(section);
  } catch {
    // Not valid percent-encoding: taken as written.
  }
  const hash = wanted.lastIndexOf('#');
  const last = hash < 0 ? wanted : wanted.slice(hash + 1);
  for (const h of headings) if (h.text === section || h.text === wanted || h.text === last.trim()) return h;
  const key = headingKey(last);
  if (key === '') return undefined;
  for (const h of headings) if (headingKey(h.text) === key) return h;
  return undefined;
}
