import test from 'ava';
import fc from 'fast-check';
import { KATAKANA_SEGMENT_MIN, MAX_TERM_CHARS, scanTerms, tokenize } from '../../src/search/tokenize.js';

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

test('Han runs give overlapping bigrams, and a run of three to eight characters also itself', (t) => {
  t.deepEqual(tokenize('文件'), ['文件']);
  t.deepEqual(tokenize('目标文件'), ['目标', '标文', '文件', '目标文件']);
  t.deepEqual(tokenize('庭'), ['庭']);
  // Nine characters: bigrams only (a clause, not a compound word).
  t.deepEqual(tokenize('一二三四五六七八九'), ['一二', '二三', '三四', '四五', '五六', '六七', '七八', '八九']);
  // Punctuation ends a run.
  t.deepEqual(tokenize('更多信息：文件'), ['更多', '多信', '信息', '更多信息', '文件']);
});

test('a word is cut where its script changes: Han, hiragana (bigrams), katakana (segmented), the rest', (t) => {
  t.deepEqual(tokenize('庭の水やりは朝に行う'), ['庭', 'の', '水', 'やり', 'りは', '朝', 'に', '行', 'う']);
  // A query phrase gives terms that all occur in the note's terms.
  const note = tokenize('庭の水やりは朝に行う');
  for (const q of tokenize('水やり')) t.true(note.includes(q), q);
  // Katakana goes through the word segmenter: a compound is split into its words. A run of fewer than
  // KATAKANA_SEGMENT_MIN code units is one term as it is.
  t.deepEqual(tokenize('キーボードショートカット'), ['キーボード', 'ショートカット']);
  t.deepEqual(tokenize('ヘルプ漢データ'), ['ヘルプ', '漢', 'データ']);
  t.is(KATAKANA_SEGMENT_MIN, 5);
  // ー continues the kana run it is in; Latin, digits and Hangul stay one run; Han and kana cut it.
  t.deepEqual(tokenize('tar命令 x축 인자1 ファイル1 サーバー'), [
    'tar',
    '命令',
    'x축',
    '인자1',
    'ファイル',
    '1',
    'サーバー',
  ]);
  t.deepEqual(tokenize('ひらがなカタカナ漢字abc'), ['ひら', 'らが', 'がな', 'カタカナ', '漢字', 'abc']);
  // An apostrophe joins only letters of the spaced scripts.
  t.deepEqual(tokenize("日本's don't 한국'어"), ['日本', 's', 'dont', '한국어']);
});

test('a word of Hangul syllables is one term, like a Latin word', (t) => {
  t.deepEqual(tokenize('파일을 압축합니다 사용자의 홈 디렉토리'), [
    '파일을',
    '압축합니다',
    '사용자의',
    '홈',
    '디렉토리',
  ]);
});

test('half-width katakana folds to full-width and gives the same terms', (t) => {
  t.deepEqual(tokenize('ｶﾀｶﾅ ﾌｧｲﾙ ｷﾞﾀｰ'), tokenize('カタカナ ファイル ギター'));
  // Snippets scan the text as written: the half-width word is found with its own offsets.
  const text = 'x ﾌｧｲﾙ y';
  const span = [...scanTerms(text)].find((s) => s.term === 'ファイル')!;
  t.is(text.slice(span.start, span.end), 'ﾌｧｲﾙ');
});

test('a combining mark stays with the character before it, whatever its script', (t) => {
  t.deepEqual(tokenize('cafe\u0301 \u0301x'), ['café', '\u0301x']);
  // After Han the mark is part of that character's bigrams (NFKC leaves U+0301 after 漢 as it is).
  t.deepEqual(tokenize('漢\u0301字'), ['漢\u0301字']);
  t.deepEqual(tokenize('漢\u0301字文'), ['漢\u0301字', '字文', '漢\u0301字文']);
  // The voiced sound mark composes with the kana before it under NFKC.
  t.deepEqual(tokenize('か\u3099'), tokenize('が'));
});

test('Han characters outside the BMP pair up whole (surrogate pairs are never split)', (t) => {
  t.deepEqual(tokenize('𠀋𠀋字'), ['𠀋𠀋', '𠀋字', '𠀋𠀋字']);
  const terms = tokenize(`字${'𠀋'.repeat(3000)}`);
  t.is(terms.length, 3000);
  for (const term of terms) t.is(Array.from(term).length, 2);
  t.false(terms.some((term) => /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(term)));
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

test('a very long spaceless run gives its terms in order with correct offsets', (t) => {
  // One word of 11,000 UTF-16 units: Han, hiragana and astral Han mixed.
  const text = `start ${'東京都に住んでいる𠀋'.repeat(1000)} end`;
  const spans = [...scanTerms(text)];
  t.is(spans[0]!.term, 'start');
  t.is(spans[spans.length - 1]!.term, 'end');
  let last = -1;
  for (const s of spans) {
    t.true(s.start >= last);
    last = s.start;
    if (s.term !== 'start' && s.term !== 'end') t.is(text.slice(s.start, s.end), s.term);
  }
  // The same terms as tokenize (a Han run's whole-run term is listed at its start here, after its bigrams there).
  t.deepEqual(spans.map((s) => s.term).sort(), tokenize(text).sort());
  const terms = new Set(tokenize(text));
  for (const term of ['東京', '京都', '東京都', '𠀋東', 'に', '住', 'んで', 'いる']) t.true(terms.has(term), term);
});

test('a katakana or Thai run longer than a segmenter piece is segmented piece by piece, never splitting a pair', (t) => {
  const lone = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
  for (const text of [
    'カタカナ'.repeat(1200),
    'ภาษาไทย'.repeat(800),
    `${'ア'.repeat(4095)}\u{1d167}${'ア'.repeat(10)}`,
  ]) {
    const spans = [...scanTerms(text)];
    t.true(spans.length > 1);
    let end = 0;
    for (const s of spans) {
      t.true(s.start >= end, 'in order, not overlapping');
      t.false(lone.test(text.slice(s.start, s.end)), 'no surrogate pair is cut');
      end = s.end;
    }
    t.deepEqual(
      spans.map((s) => s.term),
      tokenize(text),
    );
  }
  // Away from a piece boundary every character is in a segment.
  const kana = 'カタカナ'.repeat(1200);
  t.is([...scanTerms(kana)].map((s) => kana.slice(s.start, s.end)).join(''), kana);
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
