import test from 'ava';
import fc from 'fast-check';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  fold,
  MAX_TERM_CHARS,
  needsSegmenter,
  SPACELESS,
  scanTerms,
  tokenize,
  WORD,
} from '../../src/search/tokenize.js';

test('lowercases, folds compatibility forms and splits on non-word characters', (t) => {
  t.deepEqual(tokenize('Hello, WORLD! ＡＢＣ ﬁne foo_bar v1.2 naïve'), [
    'hello',
    'world',
    'abc',
    'fine',
    'foo',
    'bar',
    'v1',
    '2',
    'naïve',
  ]);
});

test('inner apostrophes join a word and are dropped', (t) => {
  t.deepEqual(tokenize("Don’t can't 'quoted'"), ['dont', 'cant', 'quoted']);
});

test('Japanese text is segmented into words, the same way for notes and queries', (t) => {
  const terms = tokenize('庭の水やりは朝に行う');
  t.true(terms.length > 3);
  t.true(terms.includes('庭'));
  t.true(terms.includes('朝'));
  // A query phrase segments to terms that all occur in the note's terms.
  for (const q of tokenize('水やり')) t.true(terms.includes(q));
});

test('is deterministic', (t) => {
  const text = 'Mixed テキスト 한국어 ภาษาไทย and English 中文分词';
  t.deepEqual(tokenize(text), tokenize(text));
});

test('over-long terms are cut without splitting a code point', (t) => {
  const [term] = tokenize('𝒜'.repeat(MAX_TERM_CHARS + 10));
  t.is(Array.from(term!).length, MAX_TERM_CHARS);
});

test('text without any word gives no terms', (t) => {
  t.deepEqual(tokenize('  — ?! ... '), []);
});

test('scanTerms › reports original offsets of each term', (t) => {
  const text = 'Go to the Garden, 庭へ';
  const spans = [...scanTerms(text)];
  const garden = spans.find((s) => s.term === 'garden')!;
  t.is(text.slice(garden.start, garden.end), 'Garden');
  const niwa = spans.find((s) => s.term === '庭')!;
  t.is(text.slice(niwa.start, niwa.end), '庭');
});

test('a very long spaceless run is segmented piece by piece with correct offsets', (t) => {
  // One run of 11,000 UTF-16 units (more than one piece); below, a run where a piece boundary would fall inside a
  // surrogate pair unless the cut moves.
  const text = `start ${'東京都に住んでいる𠀋'.repeat(1000)} end`;
  const spans = [...scanTerms(text)];
  t.is(spans[0]!.term, 'start');
  t.is(spans[spans.length - 1]!.term, 'end');
  let last = -1;
  for (const s of spans) {
    t.true(s.start > last);
    last = s.start;
    if (s.term !== 'start' && s.term !== 'end') t.is(text.slice(s.start, s.end), s.term);
  }
  const astral = tokenize(`字${'𠀋'.repeat(3000)}`);
  t.is(Array.from(astral.join('')).length, 3001, 'no character is lost at a piece boundary');
  const terms = [...tokenize(text), ...astral];
  t.true(terms.includes('東京'));
  t.false(terms.some((term) => /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(term)));
});

test('the ASCII fast path gives the same terms as the general path on random ASCII text', (t) => {
  // Appending " é" forces the general (NFKC + Unicode classes) path; NFKC leaves ASCII as it is.
  const ascii = fc.string({ unit: fc.constantFrom(..."abcXYZ019 '-_.\n\t\u0000~"), maxLength: 80 });
  const long = fc
    .tuple(fc.nat(3), fc.integer({ min: 60, max: 140 }))
    .map(([k, n]) => `${'x'.repeat(n)}'${'y'.repeat(k)} ok`);
  fc.assert(
    fc.property(
      fc.oneof(ascii, long),
      (text) => JSON.stringify(tokenize(text)) === JSON.stringify(tokenize(`${text} é`).slice(0, -1)),
    ),
    { numRuns: 2000, seed: 21 },
  );
  t.deepEqual(tokenize("Don't STOP '90s rock'n'roll o'"), ['dont', 'stop', '90s', 'rocknroll', 'o']);
});

test('a word of Hangul syllables is one term without the segmenter, exactly what the segmenter gives (real Korean notes)', (t) => {
  const dir = new URL('../../../../shared/corpora/tldr-cjk/pages.ko/common', import.meta.url).pathname;
  let texts: string[];
  try {
    texts = readdirSync(dir)
      .filter((n) => n.endsWith('.md'))
      .slice(0, 400)
      .map((n) => readFileSync(join(dir, n), 'utf8'));
  } catch {
    // Without the corpus: hand-written Korean, with the mixed forms the segmenter splits (x축, 인자1, lone jamo).
    texts = ['파일을 압축합니다 x축 인자1 ᄎ두가 로그아웃 사용자의 홈 디렉토리'];
  }
  const segmenter = new Intl.Segmenter('und', { granularity: 'word' });
  let shortcut = 0;
  for (const text of texts) {
    for (const m of fold(text).matchAll(WORD)) {
      const word = m[0];
      const segments = [...segmenter.segment(word)].filter((s) => s.isWordLike).map((s) => s.segment);
      if (!needsSegmenter(word) && SPACELESS.test(word)) {
        shortcut++;
        t.deepEqual(segments, [word], word);
      }
    }
  }
  t.true(shortcut > 0);
});
