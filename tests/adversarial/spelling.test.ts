/**
 * Every spelling of a path a model might try: dot segments, doubled and leading slashes, file: URLs,
 * percent-encoding, backslashes, drive letters, Windows device names and stream suffixes, trailing dots and
 * spaces, NUL and control characters, over-long ids and segments. Each must be `invalid_request` (fixed hint) or
 * byte-identical to a missing note — never the content of the denied or outside note it aims at, under both
 * name rules.
 */
import test from 'ava';
import { writeNote } from '../helpers/fixtures.js';
import { MARK, NOT_FOUND, assertClean, makeArena, planted, type Arena } from './support.js';

const arenas: Arena[] = [];
test.after.always(() => {
  for (const a of arenas) a.cleanup();
});

const INVALID = JSON.stringify({
  ok: false,
  error: {
    code: 'invalid_request',
    message: 'The request is invalid.',
    hint: 'id: a relative document path as returned by memory_bridge_search',
  },
});
const TOO_LONG = JSON.stringify({
  ok: false,
  error: {
    code: 'invalid_request',
    message: 'The request is invalid.',
    hint: 'id: a non-empty string of at most 512 characters',
  },
});

function spellings(a: Arena): string[] {
  return [
    // dot segments
    '../outside/secret.md',
    'notes/../private/secret.md',
    './private/secret.md',
    'private/./secret.md',
    'notes/..',
    '..',
    '.',
    'notes/.../secret.md',
    'notes/..../secret.md',
    // slashes
    '/private/secret.md',
    '//private/secret.md',
    'private//secret.md',
    'private/secret.md/',
    `${a.root.slice(1)}/private/secret.md`,
    `${a.root}/private/secret.md`,
    `${a.outside}/secret.md`,
    // URLs and encodings
    `file://${a.outside}/secret.md`,
    'file:private/secret.md',
    'file:///private/secret.md',
    'private%2Fsecret.md',
    'private%2fsecret.md',
    '%2e%2e/outside/secret.md',
    '..%2Foutside%2Fsecret.md',
    'private/secret%2Emd',
    'private/%73ecret.md',
    'private%5Csecret.md',
    'private%00/secret.md',
    // backslashes and Windows forms
    'private\\secret.md',
    '..\\outside\\secret.md',
    'C:\\private\\secret.md',
    'C:/private/secret.md',
    'c:private/secret.md',
    '\\\\?\\C:\\secret.md',
    '\\\\server\\share\\secret.md',
    'CON',
    'CON.md',
    'nul.md',
    'aux.md',
    'com1.md',
    'LPT1.md',
    'private/secret.md::$DATA',
    'private/secret.md:stream',
    'private/secret.md:$DATA',
    'private/SECRET~1.MD',
    // trailing dots and spaces, look-alikes
    'private/secret.md.',
    'private/secret.md ',
    'private./secret.md',
    'private /secret.md',
    ' private/secret.md',
    'private/secret.md\u200b',
    'private\u2215secret.md',
    'private\uff0fsecret.md',
    'private/secret\u2024md',
    // NUL and control characters
    'private/secret.md\u0000',
    'private\u0000/secret.md',
    'notes/plain.md\u0000../../outside/secret.md',
    'private/secret.md\n',
    'private/\tsecret.md',
    'private/secret.md\r',
    '\u001bprivate/secret.md',
    'private/secret.md\u007f',
    'private/secret.md\u0085',
    'private/secret\u202e.md',
    // over-long ids and segments
    `${'a/'.repeat(15)}secret.md`,
    `${'a/'.repeat(16)}secret.md`,
    `${'x'.repeat(255)}.md`,
    `${'x'.repeat(256)}.md`,
    `private/${'x'.repeat(300)}.md`,
    `${'é'.repeat(510)}.md`,
    `${'😀'.repeat(509)}.md`,
    'a'.repeat(513),
    `${'../'.repeat(170)}etc/passwd`,
  ];
}

function check(t: import('ava').ExecutionContext, a: Arena, id: string, real: readonly string[] = []): void {
  const r = a.read(id);
  const text = JSON.stringify(r);
  t.true(
    (real.includes(id) && r.ok) || text === NOT_FOUND || text === INVALID || text === TOO_LONG,
    `${JSON.stringify(id.slice(0, 80))} → ${text.slice(0, 120)}`,
  );
  assertClean(t, r, a, id.slice(0, 80));
}

for (const names of ['portable', 'unicode'] as const) {
  test(`spelling › every alternative spelling of a denied or outside note is invalid or not found (${names} names)`, (t) => {
    const a = makeArena({ deny: ['private/**'], names });
    arenas.push(a);
    writeNote(a.root, 'private/secret.md', planted(MARK.denied));
    writeNote(a.root, 'notes/plain.md', '# Plain\n\nlantern\n');
    for (const id of spellings(a)) check(t, a, id);
    t.true(a.read('notes/plain.md').ok);
  });

  test(`spelling › allowed files whose real names look like encodings are found only by their exact bytes (${names} names)`, (t) => {
    const a = makeArena({ deny: ['private/**'], names });
    arenas.push(a);
    writeNote(a.root, 'private/secret.md', planted(MARK.denied));
    // Real files named like an escaped form of the denied note: found as themselves, never as the denied one.
    const literal =
      names === 'unicode'
        ? ['private%2Fsecret.md', 'private~secret.md', 'C%3Asecret.md']
        : ['private_secret.md', 'private-secret.md'];
    for (const name of literal) writeNote(a.root, name, `# ${name}\n\nplain lantern\n`);
    for (const name of literal) {
      const r = a.read(name);
      t.true(r.ok && 'content' in r && r.content.includes('plain lantern'), name);
    }
    for (const id of spellings(a)) check(t, a, id, literal);
  });
}

test('spelling › search answers the same for every query spelling and never carries the denied note', (t) => {
  const a = makeArena({ deny: ['private/**'] });
  arenas.push(a);
  writeNote(a.root, 'private/secret.md', planted(MARK.denied));
  writeNote(a.root, 'notes/plain.md', '# Plain\n\nlantern\n');
  for (const q of [
    MARK.denied,
    `../${MARK.denied}`,
    `private/secret.md`,
    `file://${a.root}/private/secret.md`,
    `${MARK.denied}\u0000`,
    `%2e%2e ${MARK.denied}`,
  ]) {
    const r = a.search(q, 10);
    assertClean(t, r, a, q);
  }
});
