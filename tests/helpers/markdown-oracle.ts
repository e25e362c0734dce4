/**
 * The Markdown reader as it was in v0.2, all regular expressions: the oracle the tests hold the linear scanners to
 * (src/search/markdown-lines.ts, src/search/markdown.ts). Only ever run on short test inputs, where the patterns'
 * backtracking costs nothing.
 */

export const FENCE = /^ {0,3}(`{3,}|~{3,})(.*)$/;
export const ATX = /^ {0,3}(#{1,6})(?:[ \t]+(.*))?$/;
export const SETEXT = /^ {0,3}(?:=+|-+)[ \t]*$/;
export const BLANK = /^[ \t]*$/;
export const INDENTED = /^(?: {4}|\t)/;
export const OTHER_BLOCK = /^ {0,3}(?:[>|<]|[-+*](?:[ \t]|$)|\d{1,9}[.)](?:[ \t]|$)|[-*_](?:[ \t]*[-*_]){2,}[ \t]*$)/;
export const FM_OPEN = /^---[ \t]*\r?$/;
export const FM_CLOSE = /^(?:---|\.\.\.)[ \t]*\r?$/;
export const KEY = /^([A-Za-z_][\w-]*)[ \t]*:(?:[ \t]+(.*))?$/;
export const ITEM = /^[ \t]*-(?:[ \t]+(.*))?$/;
export const NOT_A_STRING =
  /^(?:~|null|Null|NULL|true|True|TRUE|false|False|FALSE|[-+]?(?:\d[\d_]*)?\.?\d+(?:[eE][-+]?\d+)?|0x[0-9a-fA-F]+|0o[0-7]+|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$/;

function lineEnd(text: string, from: number): number {
  const i = text.indexOf('\n', from);
  return i === -1 ? text.length : i;
}
/** An ATX heading's text without its closing sequence, as the reader computed it from the captured text. */
export function withoutClosingHashesRef(raw: string): string {
  const text = raw.trimEnd();
  let i = text.length;
  while (i > 0 && text[i - 1] === '#') i--;
  if (i === text.length) return text;
  if (i === 0) return '';
  return text[i - 1] === ' ' || text[i - 1] === '\t' ? text.slice(0, i) : text;
}
/** Every heading of `body`, in order, by the line patterns above run on every line (see scanHeadings). */
export function headingsByRegex(body: string, found: (level: number, text: string) => boolean): void {
  let fence: { char: string; len: number } | undefined;
  /** Lines of the paragraph being read (a setext underline turns it into a heading), or undefined. */
  let para: string[] | undefined;
  let pos = 0;
  while (pos < body.length) {
    const end = lineEnd(body, pos);
    const line = body.slice(pos, end).replace(/\r$/, '');
    pos = end + 1;
    const f = FENCE.exec(line);
    if (fence !== undefined) {
      if (f !== null && f[1]![0] === fence.char && f[1]!.length >= fence.len && f[2]!.trim() === '') fence = undefined;
      continue;
    }
    if (f !== null && !(f[1]![0] === '`' && f[2]!.includes('`'))) {
      // (A backtick fence's info string may not contain a backtick (CommonMark); otherwise it is inline code.)
      fence = { char: f[1]![0]!, len: f[1]!.length };
      para = undefined;
      continue;
    }
    if (BLANK.test(line)) {
      para = undefined;
      continue;
    }
    const h = ATX.exec(line);
    if (h !== null) {
      para = undefined;
      const text = withoutClosingHashesRef(h[2] ?? '')
        .replace(/\s+/g, ' ')
        .trim();
      if (text !== '' && !found(h[1]!.length, text)) return;
      continue;
    }
    if (para !== undefined && SETEXT.test(line)) {
      const text = para.join(' ').replace(/\s+/g, ' ').trim();
      para = undefined;
      if (text !== '' && !found(line.trim()[0] === '=' ? 1 : 2, text)) return;
      continue;
    }
    // A block quote, list item, table row, thematic break or HTML block ends a paragraph and starts none (a setext
    // underline after it is not a heading); indented code starts none either.
    if (OTHER_BLOCK.test(line)) {
      para = undefined;
      continue;
    }
    if (para !== undefined) {
      if (para.length < 64) para.push(line);
      continue;
    }
    if (!INDENTED.test(line)) para = [line];
  }
}
