/**
 * Long lines of every shape the Markdown reader looks at, each ended by every line terminator JavaScript knows:
 * the inputs of the linear-cost property test (tests/search/linear.test.ts) and of the "worst cases" section of
 * the benchmark (bench/worst-lines.ts). A shape builds a whole note around one line whose long part is about `n`
 * code units (`n` even):
 * a run of padding (spaces or tabs), of a marker character (`#`, a backtick, `7`), or of words. Each shape puts the
 * terminator where a backtracking pattern would have to give the run back: right after the run, before the rest
 * of the note.
 */

/** The line terminators of JavaScript (a regular expression's `.` matches none of the first five, nor `\n`). */
export const TERMINATORS = {
  LF: '\n',
  CR: '\r',
  CRLF: '\r\n',
  'U+2028': '\u2028',
  'U+2029': '\u2029',
  'U+0085': '\u0085',
} as const;

export type TerminatorName = keyof typeof TERMINATORS;
export const TERMINATOR_NAMES = Object.keys(TERMINATORS) as TerminatorName[];

/**
 * One shape: `note(n, end, pad)` is a note holding one line of about `n` code units of the shape, ended by `end`,
 * with `pad` (a space or a tab) as its padding character. `where` says which reader meets it.
 */
export interface LineShape {
  name: string;
  where: 'body' | 'front matter';
  note(n: number, end: string, pad: string): string;
}

const words = (n: number): string => 'lantern '.repeat(Math.ceil(n / 8)).slice(0, n);
/** A front matter block holding `line`, then a closing fence and a short body. */
const fm = (line: string): string => `---\n${line}\n---\nBody of the note.\n`;

/** Every shape (see LineShape). */
export const LINE_SHAPES: readonly LineShape[] = [
  { name: 'ATX heading, padded', where: 'body', note: (n, end, pad) => `# ${pad.repeat(n)}${end}Body.\n` },
  { name: 'ATX heading, padded text', where: 'body', note: (n, end, pad) => `## a${pad.repeat(n)}b${end}Body.\n` },
  { name: 'ATX heading, words', where: 'body', note: (n, end) => `# ${words(n)}${end}Body.\n` },
  { name: 'ATX heading, closing hashes', where: 'body', note: (n, end, pad) => `# a ${'#'.repeat(n)}${pad}${end}x\n` },
  { name: 'hash run', where: 'body', note: (n, end) => `${'#'.repeat(n)}${end}Body.\n` },
  { name: 'backtick fence run', where: 'body', note: (n, end) => `${'`'.repeat(n)}${end}code\n` },
  { name: 'tilde fence run', where: 'body', note: (n, end) => `${'~'.repeat(n)}${end}code\n` },
  { name: 'fence, padded info', where: 'body', note: (n, end, pad) => `\`\`\`${pad.repeat(n)}${end}code\n` },
  { name: 'fence, closing run', where: 'body', note: (n, end, pad) => `~~~\ncode\n${'~'.repeat(n)}${pad}${end}x\n` },
  {
    name: 'setext underline',
    where: 'body',
    note: (n, end, pad) => `Para\n${'='.repeat(n / 2)}${pad.repeat(n / 2)}${end}x\n`,
  },
  { name: 'thematic break', where: 'body', note: (n, end, pad) => `Para\n${`-${pad}`.repeat(n / 2)}x${end}y\n` },
  { name: 'ordered list digits', where: 'body', note: (n, end) => `Para\n${'7'.repeat(n)}.${end}x\n` },
  { name: 'blank padding', where: 'body', note: (n, end, pad) => `Para\n${pad.repeat(n)}${end}x\n` },
  { name: 'paragraph words', where: 'body', note: (n, end) => `${words(n / 2)}${end}${words(n / 2)}\n` },
  { name: 'front matter fence, padded', where: 'front matter', note: (n, end, pad) => `---${pad.repeat(n)}${end}x\n` },
  { name: 'key, padded value', where: 'front matter', note: (n, end, pad) => fm(`title:${pad.repeat(n)}${end}`) },
  { name: 'key, padded before colon', where: 'front matter', note: (n, end, pad) => fm(`tags${pad.repeat(n)}:${end}`) },
  { name: 'other key, padded', where: 'front matter', note: (n, end, pad) => fm(`owner:${pad.repeat(n)}x${end}`) },
  {
    name: 'list item, padded',
    where: 'front matter',
    note: (n, end, pad) => fm(`aliases:\n${pad.repeat(n / 2)}-${pad.repeat(n / 2)}${end}`),
  },
  { name: 'title, digits', where: 'front matter', note: (n, end) => fm(`title: ${'7'.repeat(n)}x${end}`) },
  { name: 'title, digits and dot', where: 'front matter', note: (n, end) => fm(`title: ${'7'.repeat(n)}.x${end}`) },
  { name: 'title, exponent', where: 'front matter', note: (n, end) => fm(`title: 1e${'7'.repeat(n)}x${end}`) },
  { name: 'title, underscores', where: 'front matter', note: (n, end) => fm(`title: 7${'_7'.repeat(n / 2)}_${end}`) },
  { name: 'title, words', where: 'front matter', note: (n, end) => fm(`title: ${words(n)}${end}`) },
  {
    name: 'title, quoted escapes',
    where: 'front matter',
    note: (n, end) => fm(`title: "${'\\u00e9'.repeat(n / 6)}${end}"`),
  },
  { name: 'title, comment', where: 'front matter', note: (n, end, pad) => fm(`title: a${pad.repeat(n)}#${end}`) },
  {
    name: 'flow list',
    where: 'front matter',
    note: (n, end, pad) => fm(`tags: [${`a,${pad}`.repeat(n / 3)}"b'${end}]`),
  },
];

/**
 * Pieces that random lines are made of: every character a line shape turns on, every JavaScript line terminator
 * but LF (a line holds none) and some white space `\s` matches, and a few words and keys.
 */
export const LINE_PIECES: readonly string[] = [
  ' ',
  '   ',
  '\t',
  '\r',
  '\u2028',
  '\u2029',
  '\u0085',
  '\u00a0',
  '\u3000',
  '\v',
  '#',
  '###',
  '`',
  '```',
  '~',
  '~~~',
  '=',
  '-',
  '---',
  '*',
  '_',
  '+',
  '>',
  '|',
  '<',
  '.',
  '...',
  ')',
  ':',
  '"',
  "'",
  '[',
  ']',
  ',',
  '\\',
  'u',
  '0',
  '7',
  '123456789',
  'x',
  'e',
  'a',
  'Key_1-x',
  'title',
  'title: ',
  'tags:',
  'aliases:',
];
