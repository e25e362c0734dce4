import test from 'ava';
import fc from 'fast-check';
import picomatch from 'picomatch/posix.js';
import {
  MAX_BRACE_EXPANSION,
  MAX_PATTERNS,
  PICOMATCH_OPTIONS,
  PatternError,
  PatternSet,
  asciiKeyOfLiteral,
  picomatchGlobs,
  validatePattern,
  type PatternReason,
} from '../../src/policy/glob.js';

// The truth table of the dialect (docs/POLICY.md): [pattern, id, matches].
const truth: Array<[string, string, boolean]> = [
  // a pattern without wildcards is one exact id
  ['projects', 'projects', true],
  ['projects', 'projects/a.md', false],
  ['projects/a.md', 'projects/a.md', true],
  ['projects/a.md', 'projects/a.mdx', false],
  ['projects/a.md', 'x/projects/a.md', false],
  ['a.md', 'axmd', false],
  // case-insensitive over the whole id
  ['Projects/**', 'projects/Garden.md', true],
  ['projects/GARDEN.md', 'PROJECTS/garden.md', true],
  ['ÜBER.md', 'über.md', true],
  ['*.md', 'note.MD', true],
  // dot-names are names like any other
  ['*.md', '.hidden.md', true],
  ['**/*.md', '.obsidian/x.md', true],
  ['**', '.a/.b/.c.md', true],
  ['notes/*', 'notes/.x.md', true],
  ['?md', '.md', true],
  ['.obsidian/**', '.obsidian/plugins/a.md', true],
  // * stays inside one segment, may be empty
  ['*', 'a.md', true],
  ['*', 'a/b.md', false],
  ['*.md', 'a/b.md', false],
  ['a*', 'a', true],
  ['*a*b*c*', 'xaybzc', true],
  ['*a*b*c*', 'xcybza', false],
  ['x*y*z.md', 'xyz.md', true],
  ['x*y*z.md', 'xy/z.md', false],
  // ? is exactly one character (code point) inside a segment
  ['?.md', 'a.md', true],
  ['?.md', 'ab.md', false],
  ['?.md', '.md', false],
  ['a?b', 'a/b', false],
  ['?.md', 'é.md', true],
  ['?.md', '🌱.md', true],
  // classes
  ['[a-z].md', 'q.md', true],
  ['[a-z].md', 'Q.md', true],
  ['[a-z].md', '1.md', false],
  ['[a-z].md', 'ab.md', false],
  ['[0-9][0-9].md', '42.md', true],
  ['[abc]x', 'bx', true],
  ['[abc]x', '[abc]x', false],
  ['[!x].md', 'a.md', true],
  ['[!x].md', 'x.md', false],
  ['[!x].md', 'X.md', false],
  ['[!x]/a.md', 'b/a.md', true],
  ['[!x]/a.md', 'xb/a.md', false],
  ['[^a]x', '^x', true],
  ['[^a]x', 'bx', false],
  ['[!!]x', 'ax', true],
  ['[!!]x', '!x', false],
  ['[-a]x', '-x', true],
  ['[a-]x', '-x', true],
  ['[(]1).md', '(1).md', true],
  ['[🌱x].md', '🌱.md', true],
  // braces
  ['{a,b}.md', 'a.md', true],
  ['{a,b}.md', 'b.md', true],
  ['{a,b}.md', 'c.md', false],
  ['{a,b}.md', '{a,b}.md', false],
  ['{projects,decisions}/**', 'decisions/x/y.md', true],
  ['x{,-old}.md', 'x.md', true],
  ['x{,-old}.md', 'x-old.md', true],
  ['{a,{b,c}}/n.md', 'c/n.md', true],
  ['{a/b,c}/n.md', 'a/b/n.md', true],
  ['{a/b,c}/n.md', 'a/n.md', false],
  ['a,b.md', 'a,b.md', true],
  // ** as a whole segment: zero or more segments
  ['**', 'a.md', true],
  ['**', 'a/b/c.md', true],
  ['**/x.md', 'x.md', true],
  ['**/x.md', 'a/b/x.md', true],
  ['**/x.md', 'a/bx.md', false],
  ['a/**/x.md', 'a/x.md', true],
  ['a/**/x.md', 'a/b/c/x.md', true],
  ['a/**/x.md', 'b/a/x.md', false],
  ['a/**', 'a/b.md', true],
  ['a/**', 'a/b/c.md', true],
  ['a/**', 'ab/c.md', false],
  ['a/**', 'a', true],
  ['**/private/**', 'x/private/y.md', true],
  ['**/private/**', 'private/y.md', true],
  ['**/private/**', 'privatex/y.md', false],
  ['a/**/**/b', 'a/b', true],
  ['a/**/b/**/c.md', 'a/x/b/y/z/c.md', true],
  ['a/**/b/**/c.md', 'a/x/y/z/c.md', false],
  // characters picomatch would treat specially are literal here
  ['Meeting (2024).md', 'Meeting (2024).md', true],
  ['Meeting (2024).md', 'Meeting 2024.md', false],
  ['c++.md', 'c++.md', true],
  ['c++.md', 'c.md', false],
  ['c++.md', 'cc.md', false],
  ['a@b.md', 'a@b.md', true],
  ['hello!.md', 'hello!.md', true],
  ['a|b.md', 'a|b.md', true],
  ['a|b.md', 'a', false],
  ['a|b.md', 'b.md', false],
  ['$HOME.md', '$home.md', true],
  ['x^2.md', 'x^2.md', true],
  ['"quoted".md', '"quoted".md', true],
  ['"quoted".md', 'quoted.md', false],
  ["it's.md", "it's.md", true],
  ['a]b.md', 'a]b.md', true],
  ['100%.md', '100%.md', true],
  ['a b.md', 'a b.md', true],
  ['x{2,3}', 'x2', true],
  ['x{2,3}', 'xx', false],
  ['(a|b)*.md', '(a|b) notes.md', true],
  ['(a|b)*.md', 'a.md', false],
];

for (const [pattern, id, expected] of truth) {
  test(`glob › ${JSON.stringify(pattern)} ${expected ? 'matches' : 'does not match'} ${JSON.stringify(id)}`, (t) => {
    t.is(validatePattern(pattern), null);
    t.is(PatternSet.compile([pattern]).matches(id), expected);
  });
}

// [pattern, reason]
const invalid: Array<[string, PatternReason]> = [
  ['', 'empty'],
  ['x@(a|b).md', 'extglob'],
  ['@(a|b).md', 'extglob'],
  ['x!(a).md', 'extglob'],
  ['+(a)', 'extglob'],
  ['*(a)', 'extglob'],
  ['?(a)', 'extglob'],
  ['a/[x]*(1).md', 'extglob'],
  ['{@,x}(y)', 'extglob'],
  ['!a', 'leading_bang'],
  ['!(a)', 'leading_bang'],
  ['{!a,b}', 'leading_bang'],
  ['a\\b', 'backslash'],
  ['\\(x\\)', 'backslash'],
  ['../a', 'dot_segment'],
  ['a/../b', 'dot_segment'],
  ['./a', 'dot_segment'],
  ['a/.', 'dot_segment'],
  ['.', 'dot_segment'],
  ['{.,a}/b', 'dot_segment'],
  ['/abs', 'absolute'],
  ['/', 'absolute'],
  ['{/a,b}', 'absolute'],
  ['x'.repeat(257), 'too_long'],
  ['🌱'.repeat(257), 'too_long'],
  ['a//b', 'empty_segment'],
  ['a/', 'empty_segment'],
  ['a/{b,}/c', 'empty_segment'],
  ['{,a}', 'empty'],
  ['a**b', 'globstar_in_segment'],
  ['**b', 'globstar_in_segment'],
  ['a**', 'globstar_in_segment'],
  ['a/***/b', 'globstar_in_segment'],
  ['a{*,b}*', 'globstar_in_segment'],
  ['[abc', 'unclosed_class'],
  ['a[', 'unclosed_class'],
  ['[]', 'empty_class'],
  ['[]a]', 'empty_class'],
  ['[!]', 'empty_class'],
  ['[a/b]', 'bad_class_char'],
  ['[a-/]', 'bad_class_char'],
  ['[[:alpha:]]', 'bad_class_char'],
  ['[z-a]', 'bad_range'],
  ['{a,b', 'unbalanced_brace'],
  ['a}', 'unbalanced_brace'],
  ['{a,{b,c}', 'unbalanced_brace'],
  ['{a}', 'brace_without_alternatives'],
  ['{}', 'brace_without_alternatives'],
  ['x{1..3}', 'brace_without_alternatives'],
  ['{a,b}'.repeat(7), 'too_many_expansions'],
  ['{a,b}'.repeat(50), 'too_many_expansions'],
  ['{a,b,c,d,e,f,g,h}{a,b,c,d,e,f,g,h}{a,b}', 'too_many_expansions'],
  ['{{a,b},{c,d},{e,f}}{{a,b},{c,d},{e,f}}{{a,b},{c,d}}', 'too_many_expansions'],
  ['x{2}', 'brace_without_alternatives'],
  ['a\u0000b', 'control_char'],
  ['a\u007fb', 'control_char'],
  ['a\nb', 'control_char'],
  ['a\u0085b', 'control_char'],
  ['a\ud800b', 'lone_surrogate'],
  ['a\udc00', 'lone_surrogate'],
];

for (const [pattern, reason] of invalid) {
  test(`glob › refuses ${JSON.stringify(pattern.length > 40 ? `${pattern.slice(0, 40)}…` : pattern)} (${reason})`, (t) => {
    t.is(validatePattern(pattern), reason);
    const err = t.throws(() => PatternSet.compile(['ok/**', pattern]), { instanceOf: PatternError });
    t.is(err?.reason, reason);
    t.is(err?.index, 1);
  });
}

test('glob › accepts the boundaries: 256 characters, 256 astral characters, exactly 64 expansions', (t) => {
  t.is(validatePattern('x'.repeat(256)), null);
  t.is(validatePattern('🌱'.repeat(256)), null);
  t.is(validatePattern('{a,b}'.repeat(6)), null);
  t.is(validatePattern('{a,b,c,d,e,f,g,h}{a,b,c,d,e,f,g,h}'), null);
  t.is(2 ** 6, MAX_BRACE_EXPANSION);
  t.true(PatternSet.compile(['{a,b}'.repeat(6)]).matches('abbaab'));
});

test('glob › a list of 256 patterns compiles and 257 is refused as a list', (t) => {
  const list = Array.from({ length: MAX_PATTERNS }, (_, i) => `p${i}/**`);
  t.true(PatternSet.compile(list).matches('p255/x.md'));
  const err = t.throws(() => PatternSet.compile([...list, 'one-more']), { instanceOf: PatternError });
  t.is(err?.reason, 'too_many_patterns');
  t.is(err?.index, -1);
});

test('glob › a list of 100,000 patterns is refused before any pattern is parsed', (t) => {
  // Every entry would also be invalid: the list length is judged first.
  const list = new Array<string>(100_000).fill('{a,b}'.repeat(50));
  const err = t.throws(() => PatternSet.compile(list), { instanceOf: PatternError });
  t.is(err?.reason, 'too_many_patterns');
});

test('glob › a brace bomb is refused by counting, not by expanding', (t) => {
  // 2^51 alternatives if expanded; counting saturates at 65.
  t.is(validatePattern('{a,b}'.repeat(51)), 'too_many_expansions');
  t.is(validatePattern('{a,b}'.repeat(52)), 'too_long');
  t.is(validatePattern('{a,b}'.repeat(25) + '{c,d}'.repeat(25)), 'too_many_expansions');
});

test('glob › many stars against a long near-miss name finish (no regex backtracking blow-up)', (t) => {
  // Four or more stars in one picomatch regex take seconds on a 255-character near miss; ours is linear.
  const set = PatternSet.compile(['*a*a*a*a*a*a*a*a*a*a*a*b']);
  t.false(set.matches('a'.repeat(255)));
  t.true(set.matches(`${'a'.repeat(254)}b`));
  const deep = PatternSet.compile([`${'**/a/'.repeat(40)}b`]);
  t.false(deep.matches(Array(16).fill('a').join('/')));
});

test('glob › PICOMATCH_OPTIONS is frozen and pins the options the dialect depends on', (t) => {
  t.true(Object.isFrozen(PICOMATCH_OPTIONS));
  t.like(PICOMATCH_OPTIONS, {
    flags: 'iu',
    dot: true,
    nonegate: true,
    noextglob: true,
    nobrace: true,
    posix: false,
    literalBrackets: false,
    fastpaths: false,
    debug: true,
  });
});

test('glob › picomatchGlobs escapes literals and keeps wildcards, one glob per brace alternative', (t) => {
  t.deepEqual(picomatchGlobs('{a,b}/Meeting (1)+x|y.md'), [
    'a/Meeting \\(1\\)\\+x\\|y.md',
    'b/Meeting \\(1\\)\\+x\\|y.md',
  ]);
  t.deepEqual(picomatchGlobs('**/[!a]?*.md'), ['**/[^a]?*.md']);
  t.deepEqual(picomatchGlobs('"q".md'), ['["]q["].md']);
});

test('glob › the escaped globs agree with picomatch itself on the truth table', (t) => {
  // The dialect's `a/**` also matches `a` itself; picomatch's does not. Every other row agrees.
  for (const [pattern, id, expected] of truth) {
    const viaPicomatch = picomatchGlobs(pattern).some((g) =>
      picomatch.makeRe(g, { ...PICOMATCH_OPTIONS, noglobstar: false }).test(id),
    );
    if (pattern === 'a/**' && id === 'a') {
      t.false(viaPicomatch);
      continue;
    }
    t.is(viaPicomatch, expected, `${pattern} vs ${id}`);
  }
});

// [patterns, dirId, mayContainBelow, coversAllBelow]
const dirs: Array<[string[], string, boolean, boolean]> = [
  [['projects/**'], '', true, false],
  [['projects/**'], 'projects', true, true],
  [['projects/**'], 'Projects', true, true],
  [['projects/**'], 'projects/a/b', true, true],
  [['projects/**'], 'other', false, false],
  [['projects/**'], 'projectsx', false, false],
  [['projects/*.md'], 'projects', true, false],
  [['projects/*.md'], 'projects/sub', false, false],
  [['projects'], '', true, false],
  [['projects'], 'projects', false, false],
  [['projects/a.md'], 'projects', true, false],
  [['**/*.md'], 'any/dir', true, false],
  [['**'], '', true, true],
  [['**'], 'x/y', true, true],
  [['**/private/**'], 'a', true, false],
  [['**/private/**'], 'a/private', true, true],
  [['**/private/**'], 'private', true, true],
  [['**/private/**'], 'a/b/private/c', true, true],
  [['a/*/c/**'], 'a', true, false],
  [['a/*/c/**'], 'a/b', true, false],
  [['a/*/c/**'], 'a/b/c', true, true],
  [['a/*/c/**'], 'a/b/d', false, false],
  [['a/*/c/**'], 'x', false, false],
  [['{a,b}/**'], 'b', true, true],
  [['{a,b}/**'], 'c', false, false],
  [['a/**/b.md'], 'a/x/y', true, false],
  [['a/**/**'], 'a', true, true],
  [['*'], 'x', false, false],
  [['[!.]*/**'], '.obsidian', false, false],
  [['[!.]*/**'], 'notes', true, true],
  [['x.md', 'notes/**'], 'notes', true, true],
  [['x.md', 'notes/**'], 'x.md', false, false],
  [[], '', false, false],
];

for (const [patterns, dir, may, covers] of dirs) {
  test(`glob › below ${JSON.stringify(dir)} with ${JSON.stringify(patterns)}: may contain ${may}, covers all ${covers}`, (t) => {
    const set = PatternSet.compile(patterns);
    t.is(set.mayContainBelow(dir), may);
    t.is(set.coversAllBelow(dir), covers);
  });
}

test('glob › every printable ASCII character that is not wildcard syntax is a literal matching only itself', (t) => {
  const syntax = new Set(['*', '?', '[', '{', '}', '\\', '/']);
  for (let code = 0x20; code <= 0x7e; code++) {
    const c = String.fromCharCode(code);
    if (syntax.has(c)) continue;
    const pattern = `x${c}y.md`;
    t.is(validatePattern(pattern), null, pattern);
    const set = PatternSet.compile([pattern]);
    t.true(set.matches(`x${c}y.md`), pattern);
    t.true(set.matches(`X${c.toUpperCase()}Y.MD`), pattern);
    const other = c === 'q' || c === 'Q' ? 'w' : 'q';
    t.false(set.matches(`x${other}y.md`), pattern);
    t.false(set.matches(`xy.md`), pattern);
    t.false(set.matches(`x${c}${c}y.md`), pattern);
  }
});

test('glob › characters outside ASCII are literals too, and a class may hold them', (t) => {
  const set = PatternSet.compile(['日本語/メモ*.md', '[αβ]-notes.md', 'Ω.md']);
  t.true(set.matches('日本語/メモ 2024.md'));
  t.true(set.matches('Β-notes.md'));
  t.true(set.matches('ω.md'));
  t.false(set.matches('日本/メモ.md'));
});

test('glob › malformed ids (empty, "." or ".." segments, leading or trailing "/") match nothing and enter nothing', (t) => {
  const set = PatternSet.compile(['**', 'a/*/b.md', '*']);
  for (const bad of ['a//b.md', '/a', 'a/', 'a/./b.md', 'a/../b.md', '.', '..']) {
    t.false(set.matches(bad), bad);
    t.false(set.mayContainBelow(bad), bad);
    t.false(set.coversAllBelow(bad), bad);
  }
  t.true(set.matches('a/x/b.md'));
});

test('glob › "**" alone and the empty list answer every id as the trie run does, malformed ids included', (t) => {
  const all = PatternSet.compile(['**']);
  const allToo = PatternSet.compile(['notes/*.md', '**/x.md', '**']);
  // The same list in a shape the fast path does not recognise: the trie run answers, and must agree.
  const viaTrie = PatternSet.compile(['*', '*/**']);
  const none = PatternSet.compile([]);
  const ids = ['a', 'a.md', 'a/b/c.md', '.x/y.md', '...', '..md', 'a/...md', 'é/ß.md', 'a b/c'];
  for (const id of ids) {
    for (const set of [all, allToo]) {
      t.true(set.matches(id), id);
      t.true(set.mayContainBelow(id), id);
      t.true(set.coversAllBelow(id), id);
    }
    t.is(viaTrie.matches(id), true, id);
    t.is(viaTrie.coversAllBelow(id), true, id);
    t.false(none.matches(id), id);
    t.false(none.mayContainBelow(id), id);
    t.false(none.coversAllBelow(id), id);
  }
  t.true(all.matches(''));
  t.true(all.mayContainBelow(''));
  t.false(none.mayContainBelow(''));
  for (const bad of ['', 'a//b.md', '/a', 'a/', 'a/./b.md', 'a/../b.md', '.', '..', './a', 'a/.', '/', '//']) {
    if (bad === '') continue;
    for (const set of [all, allToo, none, viaTrie]) {
      t.false(set.matches(bad), bad);
      t.false(set.mayContainBelow(bad), bad);
      t.false(set.coversAllBelow(bad), bad);
    }
  }
});

test('glob › property: literal-only patterns (built without picomatch) match exactly as picomatch matches them', (t) => {
  // Syntax characters of globs and regular expressions, case pairs with special folds, non-ASCII, CJK.
  const CHARS = ['a', 'B', 'k', 'K', 'K', 'ſ', 's', 'S', 'é', 'É', 'ß', 'ẞ', 'İ', 'i', 'ı', '庭', '.', '(', ')', '|'];
  CHARS.push('+', '$', '^', '@', '!', ',', '-', ' ', '=', '#', '&', '%', "'", '~', '`', ';', 'Σ', 'σ', 'ς', '1');
  const name = fc.array(fc.constantFrom(...CHARS), { minLength: 1, maxLength: 6 }).map((cs) => cs.join(''));
  const segs = fc.array(name, { minLength: 1, maxLength: 3 }).map((ns) => ns.join('/'));
  fc.assert(
    fc.property(segs, fc.array(segs, { minLength: 1, maxLength: 6 }), (pattern, others) => {
      if (validatePattern(pattern) !== null) return true;
      const set = PatternSet.compile([pattern]);
      const globs = picomatchGlobs(pattern);
      for (const id of [pattern, pattern.toUpperCase(), pattern.toLowerCase(), ...others]) {
        if (id.split('/').some((s) => s === '' || s === '.' || s === '..')) continue;
        const viaPicomatch = globs.some((g) => picomatch.makeRe(g, PICOMATCH_OPTIONS).test(id));
        if (set.matches(id) !== viaPicomatch) return false;
      }
      return true;
    }),
    { numRuns: 500, seed: 2281 },
  );
  t.pass();
});

test('glob › idMatcher answers matches for every id, directories matched once', (t) => {
  const lists = [
    ['projects/**', '*.md'],
    ['**/private/**', 'a/*/c.md'],
    ['{a,b}/**/x?.md', '**/[!p]*.md'],
    ['**'],
    ['a.md'],
    ['a/**/**', '**/**/x1.md'],
    ['caf\u00e9/**', '**/\u00e9t\u00e9.md'],
    ['{aa,ab,ac,ad,ae,af,ag,ah,ai,aj,a}/**', '{b,c,d,e,f,g,h,i,j,k}/*.md'],
  ];
  const ids = ['a.md', 'x.md', 'projects/a.md', 'projects/b/c.md', 'a/b/c.md', 'a/b/d/c.md', 'b/x1.md', 'b/q/x1.md'];
  ids.push('cafe\u0301/a.md', 'caf\u00e9/e\u0301te\u0301.md', 'x/e\u0301te\u0301.md', 'CAFE\u0301/b.md');
  ids.push('q/private/s.md', 'private/s.md', 'p.md', 'a/./c.md', 'a//c.md', '', 'a/b/', 'PROJECTS/A.MD', 'b/xy.md');
  for (const list of lists) {
    const set = PatternSet.compile(list);
    const matcher = set.idMatcher();
    for (const id of [...ids, ...ids]) t.is(matcher(id), set.matches(id), `${list.join(' ')} vs ${JSON.stringify(id)}`);
  }
});

test('glob › under flags iu only U+017F and U+212A of the non-ASCII code points match an ASCII character', (t) => {
  const anyAscii = /^[\x20-\x7e]$/iu;
  const found: number[] = [];
  for (let u = 0x80; u <= 0x10ffff; u++) {
    if (u >= 0xd800 && u <= 0xdfff) continue;
    if (anyAscii.test(String.fromCodePoint(u))) found.push(u);
  }
  t.deepEqual(found, [0x17f, 0x212a]);
  t.true(/^s$/iu.test('\u017f') && /^k$/iu.test('\u212a'));
  for (let a = 0x20; a < 0x7f; a++)
    for (let b = 0x20; b < 0x7f; b++) {
      const x = String.fromCharCode(a);
      const y = String.fromCharCode(b);
      const re = new RegExp(`^${x.replace(/[\^$\\.*+?()[\]{}|/]/gu, '\\$&')}$`, 'iu');
      if (re.test(y) !== (x.toLowerCase() === y.toLowerCase())) t.fail(`${x} ${y}`);
    }
  t.is(asciiKeyOfLiteral('Ab\u017f\u212a.md'), 'absk.md');
  t.is(asciiKeyOfLiteral('é.md'), null);
});

test('glob › property: lists with many literal alternatives (looked up by key) match exactly as picomatch', (t) => {
  const CH = ['a', 'A', 'k', 'K', '\u212a', 's', 'S', '\u017f', 'é', 'É', 'x', '1', '.', '-', '(', '庭'];
  const lit = fc.array(fc.constantFrom(...CH), { minLength: 1, maxLength: 4 }).map((cs) => cs.join(''));
  const alt = fc.oneof(
    lit,
    lit.map((l) => `${l}*`),
    lit.map((l) => `[ak]${l}`),
    lit.map((l) => `?${l}`),
  );
  // One brace group of 9–20 alternatives puts more than LOOKUP_MIN_EDGES edges on one node.
  const group = fc.uniqueArray(alt, { minLength: 9, maxLength: 20 }).map((alts) => `{${alts.join(',')}}`);
  const pattern = fc.tuple(group, fc.constantFrom('', '/**', '/*.md', '/x.md')).map(([g, tail]) => g + tail);
  const id = fc
    .tuple(fc.array(fc.constantFrom(...CH), { minLength: 1, maxLength: 5 }), fc.constantFrom('', '/x.md', '/a/b.md'))
    .map(([cs, tail]) => cs.join('') + tail);
  fc.assert(
    fc.property(pattern, fc.array(id, { minLength: 1, maxLength: 20 }), (p, ids) => {
      if (validatePattern(p) !== null) return true;
      const set = PatternSet.compile([p]);
      const globs = picomatchGlobs(p);
      const matcher = set.idMatcher();
      for (const x of ids) {
        if (x.split('/').some((s) => s === '.' || s === '..')) continue;
        const want = globs.some((g) => picomatch.makeRe(g, { ...PICOMATCH_OPTIONS, noglobstar: false }).test(x));
        const wantDialect = want || (p.endsWith('/**') && set.matches(x) && !x.includes('/'));
        if (set.matches(x) !== wantDialect || matcher(x) !== set.matches(x)) return false;
      }
      return true;
    }),
    { numRuns: 400, seed: 2290 },
  );
  t.pass();
});
