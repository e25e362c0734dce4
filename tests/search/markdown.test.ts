import test from 'ava';
import fc from 'fast-check';
import {
  firstHeading,
  MAX_TITLE_CHARS,
  noteName,
  noteTitle,
  parseNote,
  readMeta,
  sectionHeadings,
  splitFrontMatter,
  titleAndBody,
} from '../../src/search/markdown.js';
import { headingsByRegex } from '../helpers/markdown-oracle.js';

test('front matter is cut from the body, its title wins over a heading, tags and aliases are kept', (t) => {
  const note = parseNote(
    '---\ntitle: "FM title"\ntags: [alpha, "beta gamma"]\naliases:\n  - Other name\n  - third # comment\nowner: hidden-value\n---\n# Visible\nBody text.\n',
  );
  t.is(note.body, '# Visible\nBody text.\n');
  t.is(note.title, 'FM title');
  t.deepEqual(note.meta, ['alpha', 'beta gamma', 'Other name', 'third']);
  t.false(note.meta.includes('hidden-value'));
});

test('a front matter block may close with "..." and use CRLF line ends', (t) => {
  const { frontMatter, body } = splitFrontMatter('---\r\ntags: x\r\n...\r\nrest');
  t.is(frontMatter, 'tags: x\r\n');
  t.is(body, 'rest');
  t.deepEqual(readMeta(frontMatter!), { title: undefined, tags: ['x'], aliases: [] });
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
  const note = parseNote('---\ntags: x\n# comment in yaml\n---\nno heading here');
  t.is(note.title, undefined);
  t.is(noteTitle(note, 'dir/My note.md'), 'My note');
});

test('unknown front matter shapes are ignored without error', (t) => {
  t.deepEqual(readMeta('title: |\n  folded\ntags: {a: 1}\naliases: [unclosed\n  nested:\n    title: deep\n'), {
    title: undefined,
    tags: [],
    aliases: [],
  });
});

test('front matter title counts only as a string: lists, null, booleans and numbers fall back', (t) => {
  const title = (fm: string) => parseNote(`---\n${fm}\n---\n# Heading\n`).title;
  t.is(title('title: Plain words'), 'Plain words');
  t.is(title("title: '2024'"), '2024');
  t.is(title('title: "  spaced   out "'), 'spaced out');
  for (const fm of [
    'title: [a, b]',
    'title:\n  - a',
    'title: 2024',
    'title: 1.5',
    'title: true',
    'title: null',
    'title: ~',
    'title:',
    'title: ""',
  ])
    t.is(title(fm), 'Heading', fm);
});

test('title order: front matter title, else first level-1 heading, else the file name without .md', (t) => {
  t.is(noteTitle(parseNote('---\ntitle: From FM\n---\n# H1\n'), 'a/b.md'), 'From FM');
  t.is(noteTitle(parseNote('## Level two first\n# The H1\n'), 'a/b.md'), 'The H1');
  t.is(
    noteTitle(parseNote('## Only level two\n### and three\n'), 'Obsidian Publish/Custom domains.md'),
    'Custom domains',
  );
  t.is(noteTitle(parseNote('Setext title\n===\n\nbody'), 'x.md'), 'Setext title');
  t.is(noteTitle(parseNote('Level two\n---\n\nbody'), 'x.MD'), 'x');
  t.is(noteName('deep/dir/ssh-keygen.md'), 'ssh-keygen');
  t.is(noteName('Notes.MD'), 'Notes');
});

test('setext headings: a paragraph (one or more lines) underlined with "="; lists, quotes and code are not', (t) => {
  t.is(firstHeading('Two line\n  title\n=====\n'), 'Two line title');
  t.is(firstHeading('para\n\n===\n'), undefined);
  t.is(firstHeading('- item\n===\n'), undefined);
  t.is(firstHeading('> quoted\n===\n'), undefined);
  t.is(firstHeading('    code\n===\n'), undefined);
  t.is(firstHeading('```\nin fence\n===\n```\nafter\n==\n'), 'after');
  t.is(firstHeading('Two\n---\nOne\n=\n'), 'One');
  t.is(firstHeading('CRLF title\r\n===\r\n'), 'CRLF title');
});

test('title is the first level-1 ATX heading outside fenced code, closing hashes trimmed', (t) => {
  t.is(
    firstHeading('intro\n```md\n# in code\n```\n~~~\n## also code\n~~~\n### Level three ###\n# Real one #\n'),
    'Real one',
  );
  t.is(firstHeading('#hashtag\n#\n   #   Spaced   words  #\n'), 'Spaced words');
  t.is(firstHeading('## two\n### three\n'), undefined);
  t.is(firstHeading('    # indented four is code\ntext'), undefined);
  t.is(firstHeading('####### seven is not a heading'), undefined);
  t.is(firstHeading('no headings at all'), undefined);
});

test('an unclosed fence hides every later heading', (t) => {
  t.is(firstHeading('````\n# a\n```\n# b'), undefined);
});

test('a very long heading is cut to the title bound in code points', (t) => {
  const title = firstHeading(`# ${'😀'.repeat(MAX_TITLE_CHARS + 50)}`)!;
  t.is(Array.from(title).length, MAX_TITLE_CHARS);
  t.true(Array.from(title).every((c) => c === '😀'));
});

test('a heading with a huge run of spaces is handled in linear time', (t) => {
  // A backtracking pattern needs minutes here; the linear scan needs milliseconds.
  t.is(firstHeading(`# a${' '.repeat(300_000)}b`), 'a b');
  t.is(firstHeading(`# a${' '.repeat(300_000)}##`), 'a');
  t.is(firstHeading('# C#'), 'C#');
});

test('quoted front matter scalars read as YAML reads them: escapes in double quotes, doubled single quotes', (t) => {
  const title = (line: string) => readMeta(`title: ${line}\n`).title;
  t.is(title('"\\u00e9t\\u00e9"'), 'été');
  // A tab from an escape is white space like any other in a title (runs of it become one space).
  t.is(title('"tab\\there \\"q\\" back\\\\slash \\x41 \\U0001F600"'), 'tab here "q" back\\slash A \u{1F600}');
  t.is(title("'it''s'"), "it's");
  // Unknown escapes, short or invalid hex and surrogate code points stay as written.
  t.is(title('"\\q \\u12 \\uD800 \\x4G"'), '\\q \\u12 \\uD800 \\x4G');
  t.is(title('"\\u202E"'), '\u202E'); // shown as <U+202E> at the response boundary
  t.deepEqual(readMeta('aliases: ["caf\\u00e9"]\n').aliases, ['café']);
});

test('the headings found equal those of the all-regular-expression line scan on random Markdown', (t) => {
  const line = fc
    .array(
      fc.constantFrom(
        ' ',
        '  ',
        '\t',
        '#',
        '##',
        '###',
        '=',
        '===',
        '-',
        '---',
        '```',
        '~~~',
        '`',
        '>',
        '|',
        '<',
        '+',
        '*',
        '_',
        '1.',
        '2)',
        'word',
        '語',
        '\r',
        '\u2028',
        '\u2029',
        '\u0085',
        '\u00a0',
        'x y',
      ),
      { maxLength: 6 },
    )
    .map((parts) => parts.join(''));
  const body = fc.array(line, { maxLength: 30 }).map((lines) => lines.join('\n'));
  fc.assert(
    fc.property(body, (text) => {
      const expected: string[] = [];
      headingsByRegex(text, (level, heading) => {
        expected.push(`${level}:${heading}`);
        return true;
      });
      // sectionHeadings joins texts; firstHeading picks level 1: check both against the oracle.
      const levelOne = expected.find((h) => h.startsWith('1:'));
      return (
        sectionHeadings(text) === expected.map((h) => h.slice(h.indexOf(':') + 1)).join('\n') &&
        firstHeading(text) === (levelOne === undefined ? undefined : levelOne.slice(2))
      );
    }),
    { numRuns: 3000, seed: 5 },
  );
  t.pass();
});

test('titleAndBody gives the title and body start of parseNote on random notes with front matter', (t) => {
  const piece = fc.constantFrom(
    '---\n',
    'title: ',
    'tags: [a]\n',
    'aliases: x\n',
    '# ',
    'Head',
    '\n',
    '\r\n',
    ' ',
    'w',
    '\ufeff',
    '===\n',
    '```\n',
  );
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 40 }), (parts) => {
      const text = parts.join('');
      const parsed = parseNote(text);
      t.deepEqual(titleAndBody(text), { title: parsed.title, bodyAt: text.length - parsed.body.length });
    }),
    { numRuns: 2000 },
  );
});
