/**
 * Hidden controls made visible (docs/DESIGN.md, "Returned text").
 *
 * Two kinds of code points change what a reader sees without being seen themselves:
 * - Unicode tag characters, U+E0000–U+E007F (they can spell a whole ASCII instruction that renders as nothing);
 * - bidirectional embedding, override and isolate controls, U+202A–U+202E and U+2066–U+2069 (they reorder what is
 *   displayed around them).
 * Text handed to a model (read content, snippets, titles) shows each such code point as the ASCII escape
 * `<U+XXXX>`: `<U+`, the code point in upper-case hexadecimal with at least four digits, `>` (U+202E → `<U+202E>`,
 * U+E0041 → `<U+E0041>`). Every other code point, including a literal `<U+202E>` typed in a note, is kept as is.
 *
 * Lengths are Unicode code points, as every character limit of the response is; an escape is 8 or 9 code points.
 */

/** First and last code point of the Unicode tag block. */
const TAG_FIRST = 0xe0000;
const TAG_LAST = 0xe007f;

/** Any hidden control (tags as surrogate pairs: U+E0000–U+E007F is D B40, DC00–DC7F). */
const HIDDEN = /[\u202A-\u202E\u2066-\u2069]|\uDB40[\uDC00-\uDC7F]/;
const HIDDEN_ALL = /[\u202A-\u202E\u2066-\u2069]|\uDB40[\uDC00-\uDC7F]/g;

/**
 * Whether `cp` is a hidden control: a tag character (U+E0000–U+E007F) or a bidi embedding/override/isolate control
 * (U+202A–U+202E, U+2066–U+2069). Other bidi marks (U+200E, U+200F, U+061C) are not: they only affect neutral
 * characters next to them and cannot hide or reorder a run of text.
 */
export function isHiddenControl(cp: number): boolean {
  return (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) || (cp >= TAG_FIRST && cp <= TAG_LAST);
}

/** Whether `text` holds at least one hidden control (see isHiddenControl). Linear in `text.length`. */
export function hasHiddenControls(text: string): boolean {
  return HIDDEN.test(text);
}

/** How many hidden controls `text` holds. Linear in `text.length`. */
export function countHiddenControls(text: string): number {
  HIDDEN_ALL.lastIndex = 0;
  let n = 0;
  while (HIDDEN_ALL.exec(text) !== null) n++;
  return n;
}

/** The visible escape of one code point: `<U+` + upper-case hex (at least 4 digits) + `>`. */
export function escapeOf(cp: number): string {
  return `<U+${cp.toString(16).toUpperCase().padStart(4, '0')}>`;
}

/**
 * `text` with every hidden control replaced by its escape (escapeOf). Text without any is returned as is (the same
 * string). Linear in `text.length`; never splits a surrogate pair (a lone surrogate is kept as it was).
 */
export function escapeHidden(text: string): string {
  if (!HIDDEN.test(text)) return text;
  return text.replace(HIDDEN_ALL, (m) => escapeOf(m.codePointAt(0)!));
}

/** The result of cutVisible. */
export interface VisibleCut {
  /** The escaped text, at most `limit` code points. */
  text: string;
  /** True when some of the source from `from` on did not fit. */
  cut: boolean;
  /** UTF-16 index in the source just after the last code point shown (the source's length when not cut). */
  end: number;
  /** Source code points shown (each escape counts as the one code point it stands for). */
  sourceCodePoints: number;
}

/**
 * Escape `text` from UTF-16 index `from` and keep at most `limit` code points of the escaped form. The cut falls
 * only between source code points: never inside a surrogate pair and never inside an escape (an escape that does
 * not fit whole is left out, with everything after it). Work is proportional to the part shown, not to
 * `text.length`.
 *
 * @param text  source text (unescaped)
 * @param limit most code points of the returned text (≥ 0)
 * @param from  UTF-16 index to start at (default 0); must not split a surrogate pair
 */
export function cutVisible(text: string, limit: number, from = 0): VisibleCut {
  let out = '';
  let runStart = from;
  let i = from;
  let width = 0;
  let shown = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    const pair = c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00;
    const size = pair ? 2 : 1;
    const cp = pair ? text.codePointAt(i)! : c;
    if (isHiddenControl(cp)) {
      const shown = escapeOf(cp);
      if (width + shown.length > limit) break;
      out += text.slice(runStart, i) + shown;
      width += shown.length;
      runStart = i + size;
    } else {
      if (width + 1 > limit) break;
      width++;
    }
    shown++;
    i += size;
  }
  out += text.slice(runStart, i);
  return { text: out, cut: i < text.length, end: i, sourceCodePoints: shown };
}

/** Code points of escapeHidden(`text`), without building it. Linear in `text.length`. */
export function visibleLength(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      const cp = text.codePointAt(i)!;
      n += isHiddenControl(cp) ? escapeOf(cp).length : 1;
      i++;
    } else n += isHiddenControl(c) ? escapeOf(c).length : 1;
  }
  return n;
}
