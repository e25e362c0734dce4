import test from 'ava';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseNote } from '../../src/search/markdown.js';
import { TermTable } from '../../src/search/terms.js';
import { MAX_TERM_CHARS, tokenize } from '../../src/search/tokenize.js';
import { markdownFiles, NODEJS, TLDR, TLDR_LANGUAGES, VAULT } from '../helpers/corpora.js';

/** The terms `ids` gave for `text`, as strings. */
function termsOf(table: TermTable, text: string): string[] {
  const n = table.ids(text);
  const out: string[] = [];
  for (let k = 0; k < n; k++) out.push(table.term(table.scratch[k]!));
  return out;
}

/** True when `table.ids(text)` names exactly tokenize(text), and every id is the one `find` gives its term. */
function agrees(table: TermTable, text: string): boolean {
  const expected = tokenize(text);
  const n = table.ids(text);
  if (n !== expected.length) return false;
  const ids = table.scratch.slice(0, n);
  for (let k = 0; k < n; k++) {
    if (table.term(ids[k]!) !== expected[k]) return false;
    if (table.find(expected[k]!) !== ids[k]) return false;
  }
  return true;
}

/** Every shipped real note (tests/corpora): the vault, Node.js site pages and the tldr pages in four languages. */
const realNotes = [VAULT, NODEJS, TLDR].flatMap((dir) => markdownFiles(dir).map((rel) => join(dir, rel)));

test('ids are given in order of first sight and repeat for a repeated term', (t) => {
  const table = new TermTable();
  const n = table.ids('Moss river moss STONE river');
  t.deepEqual([...table.scratch.slice(0, n)], [0, 1, 0, 2, 1]);
  t.is(table.size, 3);
  t.deepEqual(
    [0, 1, 2].map((id) => table.term(id)),
    ['moss', 'river', 'stone'],
  );
  const m = table.ids('stone lichen');
  t.deepEqual([...table.scratch.slice(0, m)], [2, 3]);
});

test('find answers -1 for a term never seen and intern gives the next id', (t) => {
  const table = new TermTable();
  t.is(table.find('moss'), -1);
  t.is(table.intern('moss'), 0);
  t.is(table.intern('庭'), 1);
  t.is(table.find('moss'), 0);
  t.is(table.find('庭'), 1);
  t.is(table.size, 2);
  // A term interned as a string is found by the ASCII scan, and the other way round.
  const n = table.ids('MOSS fern');
  t.deepEqual([...table.scratch.slice(0, n)], [0, 2]);
  t.is(table.find('fern'), 2);
});

test('hand-picked edges give exactly the terms of tokenize', (t) => {
  const long = 'a'.repeat(MAX_TERM_CHARS + 7);
  const edges = [
    '',
    ' ',
    "'",
    "''",
    "a'",
    "'a",
    "don't",
    "Don't STOP '90s rock'n'roll o'",
    "it''s",
    "x'y'z",
    `${long} ${long.toUpperCase()}`,
    `${'b'.repeat(MAX_TERM_CHARS - 1)}'${'c'.repeat(5)}`,
    `${'d'.repeat(MAX_TERM_CHARS)}'e`,
    'foo_bar v1.2 a-b a/b A\tB\nC\r\nD',
    '\u0000abc\u007f',
    'naïve café',
    "don'\u0301t",
    'cafe\u0301 done',
    'word\u2019s',
    "word'\u00e9",
    'abc\u212a',
    'ﬁle ＡＢＣ',
    '庭の水やりは朝に行う and english',
    'english then 😀 emoji',
    'lone \ud800 surrogate',
    'ΟΔΟΣ. Abc ΟΔΟΣ.Abc ΟΔΟΣ\nabc ΣΑΣ',
    'a =\u0338 b, a=\u0338b',
    'x \u0301y \u0301',
    'plain words — then “quoted” text… and more\u00a0words',
    'é',
    ' é ',
    'ascii only then é\nascii again\tand 庭 end',
    'x'.repeat(10000),
    `start ${'東京都に住んでいる𠀋'.repeat(500)} end`,
    `${'字'.repeat(4095)}𠀋${'字'.repeat(10)}`,
    "日本's 日本’s it’s l'été",
  ];
  const table = new TermTable();
  for (const text of edges) t.true(agrees(table, text), JSON.stringify(text.slice(0, 80)));
  // The same edges again, now with every term known (the hit path of the probe).
  for (const text of edges) t.true(agrees(table, text), JSON.stringify(text.slice(0, 80)));
});

test('ids equals tokenize on random text', (t) => {
  // Mostly ASCII with the characters tokenize's rules turn on (apostrophes, digits, upper case, separators), long
  // runs near the term length limit, and some non-ASCII (accents, combining marks, the typographic apostrophe, CJK,
  // astral and lone surrogates) that sends a text down the fallback path.
  const asciiUnit = fc.constantFrom(
    ...'abcxyzABCXYZ0189',
    "'",
    "'",
    ' ',
    ' ',
    '-',
    '_',
    '.',
    ':',
    '=',
    '\n',
    '\t',
    '\r',
    '\v',
    '\f',
    '\u0000',
    '~',
  );
  // Σ lowercases by context (final sigma); U+0338 composes with "=" under NFKC; U+00A0, U+2026 and U+3000 become
  // ASCII under NFKC.
  const rareUnit = fc.constantFrom(
    'é',
    'É',
    '\u0301',
    '\u0338',
    '\u2019',
    '庭',
    'の',
    '😀',
    '\ud800',
    'ﬁ',
    'Ａ',
    '\u212a',
    'ß',
    'İ',
    'Σ',
    'ΟΔΟΣ',
    '\u00a0',
    '…',
    '\u3000',
    '²',
    'ภาษา',
    '한국어',
    '\u1161',
    'ລາວ',
    'ខ្មែរ',
    'မြန်',
    'カタカナー',
    '𠀋',
  );
  const run = fc
    .tuple(fc.constantFrom('q', 'Q', 'z9'), fc.integer({ min: 58, max: 70 }))
    .map(([c, n]) => c.repeat(n).slice(0, n));
  const piece = fc.oneof(
    { weight: 12, arbitrary: asciiUnit },
    { weight: 1, arbitrary: rareUnit },
    { weight: 1, arbitrary: run },
  );
  const text = fc.array(piece, { maxLength: 120 }).map((parts) => parts.join(''));
  const table = new TermTable();
  fc.assert(
    fc.property(text, (s) => agrees(table, s)),
    { numRuns: 5000, seed: 42 },
  );
  // Also from a fresh table each time (no term known before).
  fc.assert(
    fc.property(text, (s) => agrees(new TermTable(), s)),
    { numRuns: 1000, seed: 7 },
  );
  t.pass();
});

test('a table grown past many rehashes still finds every term', (t) => {
  const table = new TermTable();
  const words: string[] = [];
  for (let i = 0; i < 20000; i++) words.push(`w${i.toString(36)}`);
  const n = table.ids(words.join(' '));
  t.is(n, words.length);
  t.is(table.size, words.length);
  for (let i = 0; i < words.length; i += 97) t.is(table.find(words[i]!), i);
  t.deepEqual(termsOf(table, 'W0 w1 wz'), ['w0', 'w1', 'wz']);
});

test('ids equals tokenize on every field of every shipped real note', (t) => {
  const table = new TermTable();
  let fields = 0;
  for (const path of realNotes) {
    const text = readFileSync(path, 'utf8');
    const parsed = parseNote(text);
    for (const field of [text, parsed.title ?? '', parsed.body, parsed.meta.join('\n')]) {
      if (!agrees(table, field)) t.fail(`differs on ${path}`);
      fields++;
    }
  }
  t.true(fields > 4000);
});

test('a character that NFKC turns into several words gives every term, however long the run', (t) => {
  // U+FDFA becomes four Arabic words under NFKC: more terms than the text has code units.
  for (const n of [1, 21, 22, 64, 65, 1000]) {
    for (const text of ['\uFDFA'.repeat(n), `zeta ${'\uFDFA'.repeat(n)} lantern`, `x${'\uFDFA'.repeat(n)}y ok`]) {
      const table = new TermTable();
      table.ids('first');
      t.true(agrees(table, text), `run of ${n}`);
      t.deepEqual(termsOf(table, text), tokenize(text));
    }
  }
});

test('terms that all share one hash are each kept and found (the probe bound sends the rest to a map)', (t) => {
  // Three-letter blocks with equal h × 31 + c contributions: any concatenation of 21 of them is a distinct
  // 63-character term with the same hash, which someone who writes notes can choose.
  const blocks = ['ann', 'ap0', 'c0n', 'c20'];
  const terms: string[] = [];
  for (let k = 0; k < 20_000; k++) {
    let term = '';
    for (let d = 0, v = k; d < 21; d++, v = Math.floor(v / 4)) term += blocks[v % 4];
    terms.push(term);
  }
  t.is(new Set(terms).size, terms.length);
  const table = new TermTable();
  const text = terms.join(' ');
  t.true(agrees(table, text));
  t.is(table.size, terms.length);
  // Again, so every lookup goes through the filled table: the same ids, no new ones.
  const n = table.ids(text);
  t.is(n, terms.length);
  for (let k = 0; k < n; k++) t.is(table.scratch[k], k);
  t.is(table.size, terms.length);
  for (const [k, term] of terms.entries()) {
    if (k % 997 !== 0) continue;
    t.is(table.find(term), k);
    t.is(table.intern(term), k);
  }
  t.is(table.find(`${terms[0]!.slice(0, 60)}c20`), terms.indexOf(`${terms[0]!.slice(0, 60)}c20`));
});

test('ids equals tokenize on random CJK, Hangul and full-width text (pieces scanned in place or folded first)', (t) => {
  // Characters a piece may be scanned in place with (Hangul, Han, kana, CJK punctuation, upper-case ASCII) and
  // characters that force folding first (full-width letters, half-width katakana, the combining voiced mark, the
  // typographic apostrophe).
  const unit = fc.constantFrom(
    ...'abcABC019',
    "'",
    ' ',
    '\n',
    '파일',
    '을',
    '漢字',
    '文',
    'の',
    'ひらがな',
    'カタカナ',
    'ー',
    '：',
    '，',
    '（',
    '）',
    '、',
    '。',
    '「',
    '“',
    '…',
    '\u2019',
    'Ａ',
    'ｶﾞ',
    '\u3099',
    '𠀋',
    '\u3000',
  );
  const text = fc.array(unit, { maxLength: 60 }).map((parts) => parts.join(''));
  const table = new TermTable();
  fc.assert(
    fc.property(text, (s) => agrees(table, s)),
    { numRuns: 3000, seed: 13 },
  );
  t.pass();
});

test('ids equals tokenize on real Korean, Chinese and Japanese notes, one table across languages', (t) => {
  const table = new TermTable();
  let notes = 0;
  for (const lang of TLDR_LANGUAGES) {
    const dir = join(TLDR, lang);
    for (const rel of markdownFiles(dir, 150)) {
      const text = readFileSync(join(dir, rel), 'utf8');
      if (!agrees(table, text)) t.fail(`differs on ${lang}/${rel}`);
      notes++;
    }
  }
  t.is(notes, 600);
});

test('more distinct katakana runs than the segmentation cache holds give the same terms every time', (t) => {
  // 6,000 distinct runs (the cache keeps 4,096 and is emptied when full), twice.
  const kana = 'アイウエオカキクケコサシスセソタチツテトナニヌネノ';
  const runs: string[] = [];
  for (let k = 0; k < 6000; k++) {
    let run = 'ファイル';
    for (let v = k; v > 0; v = Math.floor(v / kana.length)) run += kana[v % kana.length];
    runs.push(run);
  }
  const text = runs.join(' ');
  const first = tokenize(text);
  t.deepEqual(tokenize(text), first);
  t.true(agrees(new TermTable(), text));
});
