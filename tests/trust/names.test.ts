import test from 'ava';
import { BridgeError } from '../../src/errors.js';
import { codePointLength, isNoteName, segmentOk, segmentReason, validateId } from '../../src/trust/names.js';

// [name, portable, unicode]
const table: Array<[string, boolean, boolean]> = [
  ['garden.md', true, true],
  ['Garden_2024-01.md', true, true],
  ['a', true, true],
  ['.hidden.md', false, false],
  ['.', false, false],
  ['..', false, false],
  ['', false, false],
  ['with space.md', false, true],
  [' leading.md', false, false],
  ['trailing.md ', false, false],
  ['Über.md', false, true],
  ['日本語のメモ.md', false, true],
  ['emoji 🌱.md', false, true],
  ['e\u0301.md', false, true], // NFD: served as stored (patterns compare its NFC form)
  ['\u212aelvin.md', false, true], // Kelvin sign: a singleton NFC maps to K, served as stored
  ['\u00e9.md', false, true], // NFC é
  ['a/b.md', false, false],
  ['a\\b.md', false, false],
  ['a:b.md', false, false],
  ['tab\there.md', false, false],
  ['nl\nhere.md', false, false],
  ['nul\0.md', false, false],
  ['bidi\u202eevil.md', false, false], // format character (Cf)
  ['zero\u200bwidth.md', false, false], // zero-width space (Cf)
  ['family \u{1f468}\u200d\u{1f469}.md', false, false], // emoji joined by a zero-width joiner (Cf)
  ['\ufeffbom.md', false, false], // byte order mark (Cf)
  ['line\u2028sep.md', false, false], // line separator (Zl)
  ['nbsp\u00a0.md', false, false], // no-break space (Zs, not U+0020)
  ['private\ue000.md', false, false], // private use (Co)
  ['lone\ud800.md', false, false], // surrogate (Cs)
  ['unassigned\u0378.md', false, false], // unassigned (Cn)
  ['c1\u0085.md', false, false],
  ['punct!#$%&()+,;=@[]^`{}~.md', false, true],
  ['dash-dot_under.score', true, true],
];

for (const [name, portable, unicode] of table) {
  test(`names › ${JSON.stringify(name)}: portable ${portable ? 'passes' : 'fails'}, unicode ${unicode ? 'passes' : 'fails'}`, (t) => {
    t.is(segmentOk(name, 'portable'), portable);
    t.is(segmentOk(name, 'unicode'), unicode);
  });
}

test('names › a leading dot is reported as hidden under both rules', (t) => {
  t.is(segmentReason('.git', 'portable'), 'hidden');
  t.is(segmentReason('.obsidian', 'unicode'), 'hidden');
  t.is(segmentReason('bad name', 'portable'), 'bad_name');
});

const notes: Array<[string, boolean]> = [
  ['a.md', true],
  ['garden.md', true],
  ['.md', false],
  ['md', false],
  ['a.MD', false],
  ['a.Md', false],
  ['a.markdown', false],
  ['a.md.txt', false],
  ['a.md ', false],
  ['x.md.md', true],
];
for (const [name, ok] of notes) {
  test(`names › isNoteName(${JSON.stringify(name)}) is ${ok}`, (t) => {
    t.is(isNoteName(name), ok);
  });
}

test('names › codePointLength counts a surrogate pair once', (t) => {
  t.is(codePointLength('a🌱b'), 3);
  t.is(codePointLength('\ud800x'), 2);
});

const goodIds = [
  'garden.md',
  'projects/garden.md',
  'a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p.md', // 16 segments
  `${'x'.repeat(509)}.md`, // 512 code points
  `${'🌱'.repeat(509)}.md`, // 512 code points, 1021 UTF-16 units
  'with space/Über.md',
  '..md',
  'a..b.md',
  '.hidden/x.md', // syntax only: the name rule refuses it later, not validateId
];
for (const id of goodIds) {
  test(`names › validateId accepts ${JSON.stringify(id.length > 40 ? `${id.slice(0, 20)}…(${id.length})` : id)}`, (t) => {
    t.is(validateId(id), id);
  });
}

const badIds: Array<[string, unknown]> = [
  ['a number', 42],
  ['null', null],
  ['undefined', undefined],
  ['an object', { id: 'a.md' }],
  ['an array', ['a.md']],
  ['an empty string', ''],
  ['513 code points', `${'x'.repeat(510)}.md`],
  ['513 code points of astral characters', `${'🌱'.repeat(510)}.md`],
  ['17 segments', 'a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q.md'],
  ['a leading slash', '/etc/passwd'],
  ['an empty segment', 'a//b.md'],
  ['a trailing slash', 'a/b/'],
  ['a lone slash', '/'],
  ['a dot segment', 'a/./b.md'],
  ['a leading dot segment', './b.md'],
  ['a dot-dot segment', 'a/../b.md'],
  ['a leading dot-dot', '../b.md'],
  ['only dot-dot', '..'],
  ['a backslash', 'a\\b.md'],
  ['a backslash traversal', '..\\b.md'],
  ['NUL', 'a\0.md'],
  ['a tab', 'a\tb.md'],
  ['a newline', 'a\nb.md'],
  ['DEL', 'a\u007fb.md'],
  ['a C1 control', 'a\u0085b.md'],
  ['a C1 control (CSI)', 'a\u009bb.md'],
];
for (const [what, raw] of badIds) {
  test(`names › validateId refuses ${what} as invalid_request with the id hint`, (t) => {
    const err = t.throws(() => validateId(raw), { instanceOf: BridgeError });
    t.is(err?.code, 'invalid_request');
    t.is(err?.reason, 'bad_id');
    t.is(err?.hint, 'id: a relative document path as returned by memory_bridge_search');
  });
}
