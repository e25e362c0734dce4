/**
 * `within` is no name oracle (docs/DESIGN.md "Narrowing a search", docs/TOOLS.md §Results): `incomplete` and the
 * scan's part of `truncated` are those of the profile's view, whatever the `within` patterns. Before, a narrowed
 * search narrowed the depth look-ahead too, so `incomplete` answered, pattern by pattern, whether an allowed note
 * with a given name exists below `max_depth`, where no search and no read can ever return it.
 */
import test from 'ava';
import { writeNote } from '../helpers/fixtures.js';
import type { SearchResult } from '../../src/tools/types.js';
import { makeArena, type Arena } from './support.js';

const arenas: Arena[] = [];
test.after.always(() => {
  for (const a of arenas) a.cleanup();
});

function arena(fields: Record<string, unknown>): Arena {
  const a = makeArena(fields);
  arenas.push(a);
  return a;
}

/** Probes that name the note below the limit, its directory, its neighbours, nothing, or everything. */
const PROBES: string[][] = [
  ['deep/a/b/payroll-2026.md'],
  ['deep/a/b/payroll-2027.md'],
  ['deep/a/b/*.md'],
  ['deep/a/b/p*.md'],
  ['deep/a/b/q*.md'],
  ['**/payroll-*.md'],
  ['**/salaries-*.md'],
  ['deep/**'],
  ['nowhere/**'],
  ['top.md'],
  ['**'],
  ['deep/a/**', 'top.md'],
];

function answer(a: Arena, query: string, within?: string[]): SearchResult {
  const args = within === undefined ? { query, limit: 10 } : { query, limit: 10, within };
  const r = a.bridge.search(args, a.caller) as SearchResult;
  if (!r.ok) throw new Error('search refused');
  return r;
}

test('within-oracle › probing with within patterns never changes incomplete: a note below max_depth', (t) => {
  const a = arena({ limits: { max_depth: 3 } });
  writeNote(a.root, 'top.md', '# Top\nlantern at the top\n');
  writeNote(a.root, 'deep/mid.md', '# Mid\nlantern in the middle\n');
  // Depth 4: allowed and trusted, but below max_depth, so no search returns it and no read accepts it.
  writeNote(a.root, 'deep/a/b/payroll-2026.md', '# Payroll\nlantern payroll\n');
  const plain = answer(a, 'lantern');
  t.true(plain.incomplete);
  for (const query of ['lantern', 'payroll', 'zzzq']) {
    for (const within of PROBES) {
      const r = answer(a, query, within);
      t.is(r.incomplete, true, `${query} ${within.join(' ')}`);
      t.true(r.truncated, `${query} ${within.join(' ')}`);
      for (const hit of r.results) t.not(hit.id, 'deep/a/b/payroll-2026.md');
    }
  }
  // A within that selects no readable note answers byte for byte the same, whether or not it names the deep note.
  const named = JSON.stringify(answer(a, 'lantern', ['deep/a/b/payroll-2026.md']));
  t.is(JSON.stringify(answer(a, 'lantern', ['deep/a/b/payroll-2027.md'])), named);
  t.is(JSON.stringify(answer(a, 'lantern', ['nowhere/**'])), named);
  t.is(named, JSON.stringify({ ok: true, results: [], truncated: true, incomplete: true }));
});

test('within-oracle › without a note below max_depth, no probe sets incomplete', (t) => {
  const a = arena({ limits: { max_depth: 3 } });
  writeNote(a.root, 'top.md', '# Top\nlantern at the top\n');
  writeNote(a.root, 'deep/mid.md', '# Mid\nlantern in the middle\n');
  // Below the limit, but not a note the policy could allow (not Markdown): the look-ahead ignores it.
  writeNote(a.root, 'deep/a/b/payroll-2026.txt', 'lantern payroll\n');
  t.is(answer(a, 'lantern').incomplete, undefined);
  for (const within of PROBES) t.is(answer(a, 'lantern', within).incomplete, undefined, within.join(' '));
});

test('within-oracle › a budget cut of the profile view is reported the same under every within', (t) => {
  const a = arena({ limits: { max_entries: 2 } });
  for (const id of ['a.md', 'b.md', 'c/one.md', 'c/two.md']) writeNote(a.root, id, `# ${id}\nlantern\n`);
  t.true(answer(a, 'lantern').incomplete);
  for (const within of [['c/**'], ['c/two.md'], ['a.md'], ['nowhere/**'], ['**']])
    t.is(answer(a, 'lantern', within).incomplete, true, within.join(' '));
});
