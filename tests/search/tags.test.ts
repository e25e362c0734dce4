/**
 * The tag scanner of src/search/tags.ts (docs/TOOLS.md §Filters): Obsidian's rules on real shapes, and linear cost
 * whatever the note holds — its ScanMeter steps stay below MAX_STEPS_PER_CODE_UNIT × (length + 1) on random notes of
 * the characters it looks at, and crafted long lines cost about 8 × as much CPU at 8 × the length (not 64 ×).
 */
import test from 'ava';
import fc from 'fast-check';
import { MAX_STEPS_PER_CODE_UNIT } from '../../src/search/markdown.js';
import { MAX_NOTE_TAGS, noteTags, normalizeTag } from '../../src/search/tags.js';
import { newMeter } from '../../src/text/line-scan.js';
import { costRatio } from '../helpers/cpu-cost.js';

test('tags › Obsidian rules: start or after space, not only digits, code spans and fences skipped', (t) => {
  t.deepEqual(noteTags('a#b c #d e\t#f\u3000#g'), ['d', 'f', 'g']);
  t.deepEqual(noteTags('`` #no ` still no `` #yes'), ['yes']);
  t.deepEqual(noteTags('` #unclosed'), ['unclosed']);
  t.deepEqual(noteTags('    ```\n#in\n```\n#out'), ['in'], 'a fence indented four spaces is no fence');
  t.deepEqual(noteTags('```js\n#a\n````\n#b\n```\n#c'), ['b'], 'a longer run closes; the last fence stays open');
  t.deepEqual(noteTags('#Café #日本語 #emoji😀'), ['café', 'emoji', '日本語']);
  t.deepEqual(noteTags('---\ntags: "#x/y"\n---\n'), ['x', 'x/y']);
  t.deepEqual(noteTags('---\ntags:\n---\nbody'), undefined);
  t.is(normalizeTag('#'), undefined);
  t.is(normalizeTag('2026'), undefined);
  t.is(normalizeTag('2026/x'), '2026/x');
  t.is(normalizeTag('a b'), undefined);
  t.is(normalizeTag('A/B/'), 'a/b');
  const many = Array.from({ length: 200 }, (_, i) => `#t${i}`).join(' ');
  t.is(noteTags(many)!.length, MAX_NOTE_TAGS);
});

const PIECES = [
  '#',
  '#a',
  '#1',
  '`',
  '``',
  '```',
  '~~~',
  '\n',
  '\r\n',
  ' ',
  'a',
  '/',
  '-',
  'é',
  '😀',
  '---\n',
  'tags: ',
];

test('tags › steps stay linear on random notes', (t) => {
  fc.assert(
    fc.property(fc.array(fc.constantFrom(...PIECES), { maxLength: 400 }), (parts) => {
      const text = parts.join('');
      const m = newMeter();
      noteTags(text, m);
      return m.steps <= MAX_STEPS_PER_CODE_UNIT * (text.length + 1);
    }),
    { numRuns: 500 },
  );
  t.pass();
});

test('tags › reading only the lines from each # on gives the tags of reading every line', (t) => {
  fc.assert(
    fc.property(
      fc.array(fc.constantFrom(...PIECES, '```\n', '~~~\n', '`', 'b #c', '\n\n'), { maxLength: 300 }),
      (parts) => {
        const text = parts.join('');
        t.deepEqual(noteTags(text), noteTags(text, newMeter(), true), JSON.stringify(text));
      },
    ),
    { numRuns: 1000 },
  );
});

const SHAPES: Record<string, (n: number) => string> = {
  hashes: (n) => '#'.repeat(n),
  'hash words': (n) => '#a '.repeat(n / 3),
  'unmatched backtick runs': (n) => Array.from({ length: n / 4 }, (_, i) => '`'.repeat((i % 50) + 1)).join(' '),
  'code span openers': (n) => '` #a '.repeat(n / 5),
  'one long tag': (n) => `#${'a'.repeat(n)}`,
  'many lines of #': (n) => '#\n'.repeat(n / 2),
};

for (const [name, make] of Object.entries(SHAPES)) {
  test(`tags › ${name}: 8 × the length costs about 8 × the CPU`, (t) => {
    const small = make(32_768);
    const large = make(8 * 32_768);
    const ratio = costRatio((text: string) => noteTags(text), small, large, 24);
    t.true(ratio < 24, `ratio ${ratio.toFixed(1)}`);
  });
}
