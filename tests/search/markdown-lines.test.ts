/**
 * The line scanners of src/search/markdown-lines.ts and src/text/line-scan.ts against the regular expressions they
 * replace (tests/helpers/markdown-oracle.ts; each scanner's docstring names its own). The expressions are the
 * oracle here only, on short random lines, where their backtracking costs nothing: each scanner must give the same
 * answer and the same positions on every line, so notes read exactly as before.
 */
import test from 'ava';
import fc from 'fast-check';
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
} from '../../src/search/markdown-lines.js';
import { collapseWhiteSpace, newMeter, noJsLineTerminator } from '../../src/text/line-scan.js';
import {
  ATX,
  BLANK,
  FENCE,
  FM_CLOSE,
  FM_OPEN,
  INDENTED,
  ITEM,
  KEY,
  NOT_A_STRING,
  OTHER_BLOCK,
  SETEXT,
  withoutClosingHashesRef,
} from '../helpers/markdown-oracle.js';
import { LINE_PIECES } from '../helpers/long-lines.js';

const linePiece = fc.constantFrom(...LINE_PIECES);
/** A line: no LF inside (the reader splits at LF before it asks a scanner). */
const line = fc.array(linePiece, { maxLength: 12 }).map((parts) => parts.join(''));

/** A line placed inside a longer text, so positions are checked too: [text, from, to]. */
const placed = fc
  .tuple(fc.string({ maxLength: 3 }), line, fc.string({ maxLength: 3 }))
  .map(([before, l, after]): [string, number, number] => [
    `${before}${l}${after}`,
    before.length,
    before.length + l.length,
  ]);

const RUNS = { numRuns: 20_000, seed: 22 };

test('fenceLine, closesFence and opensFence answer as the fence pattern did', (t) => {
  fc.assert(
    fc.property(placed, fc.constantFrom('`', '~'), fc.integer({ min: 3, max: 5 }), ([text, from, to], c, len) => {
      const l = text.slice(from, to);
      const m = FENCE.exec(l);
      const f = fenceLine(text, from, to, newMeter());
      if (m === null) return f === undefined;
      if (f === undefined || f.char !== m[1]!.charCodeAt(0) || f.length !== m[1]!.length) return false;
      if (text.slice(f.rest, to) !== m[2]) return false;
      const closes = m[1]![0] === c && m[1]!.length >= len && m[2]!.trim() === '';
      const opens = !(m[1]![0] === '`' && m[2]!.includes('`'));
      const open = { char: c.charCodeAt(0), length: len };
      return closesFence(text, f, to, open, newMeter()) === closes && opensFence(text, f, to, newMeter()) === opens;
    }),
    RUNS,
  );
  t.pass();
});

test('atxHeading and withoutClosingHashes give the text the heading pattern did', (t) => {
  fc.assert(
    fc.property(placed, ([text, from, to]) => {
      const m = ATX.exec(text.slice(from, to));
      const h = atxHeading(text, from, to, newMeter());
      if (m === null) return h === undefined;
      if (h === undefined || h.level !== m[1]!.length || text.slice(h.text, to) !== (m[2] ?? '')) return false;
      const end = withoutClosingHashes(text, h.text, to, newMeter());
      const want = withoutClosingHashesRef(m[2] ?? '')
        .replace(/\s+/g, ' ')
        .trim();
      return collapseWhiteSpace(text, newMeter(), h.text, end) === want;
    }),
    RUNS,
  );
  t.pass();
});

test('setext, blank, indented and other-block lines answer as their patterns did', (t) => {
  fc.assert(
    fc.property(placed, ([text, from, to]) => {
      const l = text.slice(from, to);
      const level = SETEXT.test(l) ? (l.trim()[0] === '=' ? 1 : 2) : 0;
      return (
        setextUnderline(text, from, to, newMeter()) === level &&
        isBlankLine(text, from, to, newMeter()) === BLANK.test(l) &&
        isIndented(text, from, to, newMeter()) === INDENTED.test(l) &&
        opensOtherBlock(text, from, to, newMeter()) === OTHER_BLOCK.test(l)
      );
    }),
    RUNS,
  );
  t.pass();
});

test('front matter fences, keys and list items answer as their patterns did', (t) => {
  fc.assert(
    fc.property(placed, ([text, from, to]) => {
      const l = text.slice(from, to);
      // A fence is judged on the line up to its LF, CR included; keys and items on the line without it.
      if (isFrontMatterFence(text, from, to, false, newMeter()) !== FM_OPEN.test(l)) return false;
      if (isFrontMatterFence(text, from, to, true, newMeter()) !== FM_CLOSE.test(l)) return false;
      const km = KEY.exec(l);
      const k = keyLine(text, from, to, newMeter());
      if ((km === null) !== (k === undefined)) return false;
      if (km !== null && (text.slice(from, k!.keyEnd) !== km[1] || text.slice(k!.value, to) !== (km[2] ?? '')))
        return false;
      const im = ITEM.exec(l);
      const i = listItem(text, from, to, newMeter());
      if ((im === null) !== (i === undefined)) return false;
      return im === null || text.slice(i, to) === (im[1] ?? '');
    }),
    RUNS,
  );
  t.pass();
});

test('isPlainNonString agrees with the YAML null, boolean and number pattern', (t) => {
  const piece = fc.constantFrom(
    '0',
    '7',
    '19',
    '_',
    '.',
    'e',
    'E',
    '-',
    '+',
    'x',
    'o',
    'a',
    'F',
    '0x',
    '0o',
    'inf',
    'Inf',
    'nan',
    'NaN',
    'null',
    'True',
    '~',
    ' ',
  );
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 8 }), (parts) => {
      const s = parts.join('');
      return isPlainNonString(s, newMeter()) === NOT_A_STRING.test(s);
    }),
    RUNS,
  );
  for (const s of ['1', '-1.5', '1e10', '+.inf', '.NaN', '0x1F', '0o17', '1_000', '7.', '1_', '_1', '0x', '', 'x'])
    t.is(isPlainNonString(s, newMeter()), NOT_A_STRING.test(s), JSON.stringify(s));
});

test('line-scan › collapseWhiteSpace is replace(/\\s+/g, " ").trim() and noJsLineTerminator is /^.*$/', (t) => {
  fc.assert(
    fc.property(placed, ([text, from, to]) => {
      const l = text.slice(from, to);
      return (
        collapseWhiteSpace(text, newMeter(), from, to) === l.replace(/\s+/g, ' ').trim() &&
        noJsLineTerminator(text, from, to, newMeter()) === /^.*$/.test(l)
      );
    }),
    RUNS,
  );
  // Every code point JavaScript's \s matches, and its neighbours that it does not.
  for (let c = 0; c <= 0xffff; c++) {
    const ch = String.fromCharCode(c);
    if (collapseWhiteSpace(`a${ch}b`, newMeter()) !== `a${ch}b`.replace(/\s+/g, ' ')) t.fail(`U+${c.toString(16)}`);
  }
  t.pass();
});
