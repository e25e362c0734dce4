import test from 'ava';
import { countCodePoints, makeSnippet } from '../../src/search/snippet.js';

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
    t.false(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(s), `no lone surrogate at max ${max}`);
  }
  t.true(makeSnippet(body, new Set(['目標']), 50).includes('目標'));
});

test('near the end of the body the window is filled backwards', (t) => {
  const body = `${filler(100)} final`;
  const s = makeSnippet(body, new Set(['final']), 80);
  t.true(s.endsWith('final'));
  t.true(countCodePoints(s) > 60);
});
