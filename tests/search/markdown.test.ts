import test from 'ava';
import {
  firstHeading,
  MAX_TITLE_CHARS,
  parseNote,
  readMetaValues,
  splitFrontMatter,
} from '../../src/search/markdown.js';

test('front matter is cut from the body and its title/tags/aliases are kept', (t) => {
  const note = parseNote(
    '---\ntitle: "Secret FM title"\ntags: [alpha, "beta gamma"]\naliases:\n  - Other name\n  - third # comment\nowner: hidden-value\n---\n# Visible\nBody text.\n',
  );
  t.is(note.body, '# Visible\nBody text.\n');
  t.is(note.title, 'Visible');
  t.deepEqual(note.meta, ['Secret FM title', 'alpha', 'beta gamma', 'Other name', 'third']);
  t.false(note.meta.includes('hidden-value'));
});

test('a front matter block may close with "..." and use CRLF line ends', (t) => {
  const { frontMatter, body } = splitFrontMatter('---\r\ntags: x\r\n...\r\nrest');
  t.is(frontMatter, 'tags: x\r\n');
  t.is(body, 'rest');
  t.deepEqual(readMetaValues(frontMatter!), ['x']);
});

test('an unclosed leading --- is not front matter', (t) => {
  const text = '---\ntitle: x\nno closing line\n# Head';
  const note = parseNote(text);
  t.is(note.body, text);
  t.deepEqual(note.meta, []);
  t.is(note.title, 'Head');
});

test('front matter must start at the first byte', (t) => {
  const text = '\n---\ntitle: x\n---\nbody';
  t.is(parseNote(text).body, text);
  t.deepEqual(parseNote(text).meta, []);
});

test('a front matter heading-like line never becomes the title', (t) => {
  const note = parseNote('---\ntitle: x\n# comment in yaml\n---\nno heading here');
  t.is(note.title, undefined);
});

test('unknown front matter shapes are ignored without error', (t) => {
  t.deepEqual(readMetaValues('title: |\n  folded\ntags: {a: 1}\naliases: [unclosed\n  nested:\n    title: deep\n'), []);
});

test('title is the first ATX heading outside fenced code, closing hashes trimmed', (t) => {
  t.is(firstHeading('intro\n```md\n# in code\n```\n~~~\n## also code\n~~~\n### Real one ###\n# Later'), 'Real one');
  t.is(firstHeading('#hashtag\n#\n   #   Spaced   words  #\n'), 'Spaced words');
  t.is(firstHeading('    # indented four is code\ntext'), undefined);
  t.is(firstHeading('####### seven is not a heading'), undefined);
  t.is(firstHeading('no headings at all'), undefined);
});

test('an unclosed fence hides every later heading', (t) => {
  t.is(firstHeading('````\n# a\n```\n# b'), undefined);
});

test('a very long heading is cut to the title bound in code points', (t) => {
  const title = firstHeading('# ' + '😀'.repeat(MAX_TITLE_CHARS + 50))!;
  t.is(Array.from(title).length, MAX_TITLE_CHARS);
  t.true(Array.from(title).every((c) => c === '😀'));
});

test('a heading with a huge run of spaces is handled in linear time', (t) => {
  // A backtracking pattern needs minutes here; the linear scan needs milliseconds.
  t.is(firstHeading('# a' + ' '.repeat(300_000) + 'b'), 'a b');
  t.is(firstHeading('# a' + ' '.repeat(300_000) + '##'), 'a');
  t.is(firstHeading('# C#'), 'C#');
});
