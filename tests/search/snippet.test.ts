import test from 'ava';
import fc from 'fast-check';
import { countCodePoints, makeSnippet } from '../../src/search/snippet.js';

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const filler = (n: number) => Array.from({ length: n }, (_, i) => `word${i}`).join(' ');

test('a short body is returned whole with whitespace collapsed', (t) => {
  t.is(makeSnippet('  # Title\n\n\tSome   text\r\nhere  ', new Set(['text']), 300), '# Title Some text here');
});

test('the passage holds the first matched term and starts at a word boundary shortly before it', (t) => {
  const body = `${filler(200)} the lantern garden blooms ${filler(200)}`;
  const s = makeSnippet(body, new Set(['lantern']), 120);
  t.true(countCodePoints(s) <= 120);
  t.true(s.includes('lantern'));
  const before = s.slice(0, s.indexOf('lantern'));
  t.true(countCodePoints(before) <= 40);
  t.true(body.includes(` ${s.split(' ')[0]} `), 'starts at a whole word');
});

test('prefers the window holding the most distinct matched terms', (t) => {
  const body = `alpha ${filler(100)} alpha beta gamma ${filler(100)}`;
  const s = makeSnippet(body, new Set(['alpha', 'beta', 'gamma']), 60);
  t.true(s.includes('alpha beta gamma'));
});

test('without a matched term in the body it is the start of the body', (t) => {
  const body = filler(300);
  const s = makeSnippet(body, new Set(['absent']), 50);
  t.true(s.startsWith('word0 word1'));
  t.true(countCodePoints(s) <= 50);
});

test('bounds are code points and never split emoji or CJK', (t) => {
  const body = `${'😀🌸漢字'.repeat(200)} 目標 ${'🎉字'.repeat(200)}`;
  for (const max of [1, 2, 7, 50, 300]) {
    const s = makeSnippet(body, new Set(['目標']), max);
    t.true(countCodePoints(s) <= max, `max ${max}`);
    t.false(LONE_SURROGATE.test(s), `no lone surrogate at max ${max}`);
  }
  t.true(makeSnippet(body, new Set(['目標']), 50).includes('目標'));
});

test('near the end of the body the window is filled backwards', (t) => {
  const body = `${filler(100)} final`;
  const s = makeSnippet(body, new Set(['final']), 80);
  t.true(s.endsWith('final'));
  t.true(countCodePoints(s) > 60);
});

test('for any text and bound the snippet is a passage of the collapsed text within the bound', (t) => {
  const piece = fc.constantFrom(
    'garden',
    'Garden',
    ' ',
    '\n',
    '\t',
    '😀',
    '漢字',
    'の',
    'é',
    'word',
    '  ',
    'x'.repeat(30),
    '🌸🌸',
    '.',
  );
  fc.assert(
    fc.property(
      fc.array(piece, { maxLength: 200 }),
      fc.integer({ min: 1, max: 300 }),
      fc.subarray(['garden', '漢字', 'word', 'の']),
      (parts, max, terms) => {
        const body = parts.join('');
        const s = makeSnippet(body, new Set(terms), max);
        const collapsed = body.replace(/\s+/gu, ' ').trim();
        return (
          countCodePoints(s) <= max &&
          collapsed.includes(s) &&
          s === s.trim() &&
          !/\s\s/u.test(s) &&
          !LONE_SURROGATE.test(s)
        );
      },
    ),
    { numRuns: 500, seed: 7 },
  );
  t.pass();
});
