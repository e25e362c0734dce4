/**
 * The glob dialect end to end, as a fixed truth table: each allow (and each deny) pattern is written into a real
 * policy, and the set of notes that `read` serves and `search` returns must be exactly the expected set. Covers
 * `*`, `?`, `**` at every position, `[!x]`, braces, case, dot segments and extglobs (invalid → unavailable).
 */
import test from 'ava';
import { writeNote } from '../helpers/fixtures.js';
import { UNAVAILABLE, idsOf, makeArena, type Arena } from './support.js';

const IDS = [
  'A.md',
  'a.b.md',
  'a.md',
  'b.md',
  'x.md',
  'dir/a.md',
  'dir/sub/a.md',
  'dir/sub/deep/a.md',
  'other/a.md',
] as const;
const HIDDEN = ['.hidden.md', '.obsidian/x.md', 'dir/.h.md', 'dir/.sub/a.md'] as const;
const TOP = ['A.md', 'a.b.md', 'a.md', 'b.md', 'x.md'];
const ALL_A = ['A.md', 'a.md', 'dir/a.md', 'dir/sub/a.md', 'dir/sub/deep/a.md', 'other/a.md'];

let arena: Arena;
test.before(() => {
  arena = makeArena();
  for (const id of IDS) writeNote(arena.root, id, `# ${id}\n\nlantern ${id.replace(/[^a-z]/gi, ' ')}\n`);
  // Dot-names match like any name in the glob, but the name rule skips them: no pattern ever serves them.
  for (const id of HIDDEN) writeNote(arena.root, id, `# hidden\n\nlantern hidden\n`);
});
test.after.always(() => arena?.cleanup());

/** [pattern, ids it selects among IDS, or 'invalid']. */
const TABLE: [string, readonly string[] | 'invalid'][] = [
  ['**', [...IDS]],
  ['*', TOP],
  ['*.md', TOP],
  ['?.md', ['A.md', 'a.md', 'b.md', 'x.md']],
  ['??.md', []],
  ['a.md', ['A.md', 'a.md']],
  ['A.MD', ['A.md', 'a.md']],
  ['[!a]*.md', ['b.md', 'x.md']],
  ['[!a]?md', ['b.md', 'x.md']],
  ['[ab].md', ['A.md', 'a.md', 'b.md']],
  ['[a-b].md', ['A.md', 'a.md', 'b.md']],
  ['[^a].md', ['A.md', 'a.md']],
  ['{a,b}.md', ['A.md', 'a.md', 'b.md']],
  ['{a,x}{.b,}.md', ['A.md', 'a.b.md', 'a.md', 'x.md']],
  ['{dir,other}/*.md', ['dir/a.md', 'other/a.md']],
  ['**/a.md', ALL_A],
  ['**/**/a.md', ALL_A],
  ['*/a.md', ['dir/a.md', 'other/a.md']],
  ['dir', []],
  ['dir/*', ['dir/a.md']],
  ['dir/**', ['dir/a.md', 'dir/sub/a.md', 'dir/sub/deep/a.md']],
  ['DIR/**', ['dir/a.md', 'dir/sub/a.md', 'dir/sub/deep/a.md']],
  ['dir/**/a.md', ['dir/a.md', 'dir/sub/a.md', 'dir/sub/deep/a.md']],
  ['dir/**/deep/**', ['dir/sub/deep/a.md']],
  ['**/sub/**', ['dir/sub/a.md', 'dir/sub/deep/a.md']],
  ['**/sub', []],
  ['d*/**', ['dir/a.md', 'dir/sub/a.md', 'dir/sub/deep/a.md']],
  ['*i*/s*/*', ['dir/sub/a.md']],
  ['.*', []],
  ['**/.*', []],
  ['.obsidian/**', []],
  ['**/.*/**', []],
  ['dir/.h.md', []],
  ['**/.h*', []],
  ['a.md|b.md', []],
  ['(a).md', []],
  ['@(a).md', 'invalid'],
  ['!(a).md', 'invalid'],
  ['+(a|b).md', 'invalid'],
  ['*(a).md', 'invalid'],
  ['?(a).md', 'invalid'],
  ['!a.md', 'invalid'],
  ['/a.md', 'invalid'],
  ['./a.md', 'invalid'],
  ['dir/../a.md', 'invalid'],
  ['dir//a.md', 'invalid'],
  ['dir/', 'invalid'],
  ['a**.md', 'invalid'],
  ['dir\\a.md', 'invalid'],
  ['[b-a].md', 'invalid'],
  ['[].md', 'invalid'],
  ['{a}.md', 'invalid'],
  ['{a,b.md', 'invalid'],
  ['', 'invalid'],
];

function served(a: Arena): string[] | 'unavailable' {
  const out: string[] = [];
  for (const id of [...IDS, ...HIDDEN]) {
    const r = a.read(id);
    if (JSON.stringify(r) === UNAVAILABLE) return 'unavailable';
    if (r.ok) out.push(id);
  }
  return out.sort();
}

function searched(a: Arena): string[] | 'unavailable' {
  const r = a.search('lantern', 10);
  if (JSON.stringify(r) === UNAVAILABLE) return 'unavailable';
  return (idsOf(r) ?? []).sort();
}

test.serial('glob-dialect › each allow pattern serves exactly its truth-table row through read and search', (t) => {
  for (const [pattern, expected] of TABLE) {
    arena.setPolicy({ allow: [pattern] });
    const want = expected === 'invalid' ? 'unavailable' : [...expected].sort();
    t.deepEqual(served(arena), want, `allow ${JSON.stringify(pattern)} (read)`);
    t.deepEqual(searched(arena), want, `allow ${JSON.stringify(pattern)} (search)`);
  }
});

test.serial(
  'glob-dialect › each deny pattern removes exactly its truth-table row, and an invalid deny is unavailable',
  (t) => {
    for (const [pattern, expected] of TABLE) {
      arena.setPolicy({ allow: ['**'], deny: [pattern] });
      const want = expected === 'invalid' ? 'unavailable' : IDS.filter((id) => !expected.includes(id)).sort();
      t.deepEqual(served(arena), want, `deny ${JSON.stringify(pattern)} (read)`);
      t.deepEqual(searched(arena), want, `deny ${JSON.stringify(pattern)} (search)`);
    }
  },
);

test.serial('glob-dialect › deny wins over every overlapping allow, whatever the order and case', (t) => {
  arena.setPolicy({ allow: ['**', 'dir/**', 'dir/sub/a.md', '**/a.md'], deny: ['DIR/SUB/**'] });
  t.deepEqual(served(arena), IDS.filter((id) => !id.startsWith('dir/sub/')).sort());
  arena.setPolicy({ allow: ['dir/sub/deep/a.md'], deny: ['**/deep/*'] });
  t.deepEqual(served(arena), []);
  t.deepEqual(searched(arena), []);
});
