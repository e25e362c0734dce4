/**
 * Ranking narrowed to a scope (memory_bridge_search `within`; docs/DESIGN.md "Narrowing a search"): an index of the
 * whole view, asked with a scope, answers exactly what an index holding only the scope's notes answers — ids,
 * scores to the bit, matched terms, snippets, `truncated` — for exact terms, capped prefix expansions and typo
 * expansions, also after syncs that change, add and remove notes (the kept selections are counted again).
 */
import test from 'ava';
import fc from 'fast-check';
import { NoteIndex, PREFIX_SHORT_MAX_TERMS, type NoteScope } from '../../src/search/index.js';
import type { ScannedNote } from '../../src/trust/types.js';
import { STAT } from './stat.js';

const LIMITS = { snippet_chars: 80, total_chars: 100_000 };

const note = (id: string, text: string): ScannedNote => ({ id, key: `k:${id}:${text.length}`, stat: STAT, text });

/** A scope selecting the ids `pick` accepts, named `key`. */
function scopeOf(key: string, pick: (id: string) => boolean): NoteScope {
  return { key, matcher: () => pick };
}

/** The answer of a fresh index holding only the notes `pick` selects. */
function alone(notes: readonly ScannedNote[], pick: (id: string) => boolean, query: string, limit: number) {
  const index = new NoteIndex();
  index.sync(notes.filter((n) => pick(n.id)));
  return { ranked: index.rank(query), hits: index.search(query, limit, LIMITS) };
}

function narrowed(index: NoteIndex, scope: NoteScope, query: string, limit: number) {
  return { ranked: index.rank(query, Infinity, scope), hits: index.search(query, limit, LIMITS, scope) };
}

// Many terms share short prefixes ("a…", "mo…"), so the capped prefix expansions of the whole view and of a scope
// differ; five-letter words one edit apart give typo expansions.
const WORD = fc.oneof(
  fc.constantFrom('moss', 'mossy', 'stone', 'stones', 'stove', 'store', 'lantern', 'lanterm', 'garden', 'gardens'),
  fc.stringMatching(/^a[b-z]{2,4}$/),
  fc.stringMatching(/^mo[a-z]{1,3}$/),
);
const TEXT = fc
  .array(WORD, { minLength: 1, maxLength: 30 })
  .map((ws) => (ws.length > 3 ? `# ${ws[0]} ${ws[1]}\n\n${ws.slice(2).join(' ')}\n` : `${ws.join(' ')}\n`));
const ID = fc.constantFrom(
  ...['x', 'y', 'x/sub', 'z/deep/er'].flatMap((d) => Array.from({ length: 8 }, (_, i) => `${d}/n${i}.md`)),
  'top.md',
);
const QUERY = fc.constantFrom(
  'moss',
  'a',
  'ab',
  'mo',
  'stone stove',
  'lantern',
  'gardns',
  'stonez',
  'a mo garden',
  'zzz',
);
const STATE = fc.dictionary(ID, TEXT, { minKeys: 1, maxKeys: 30 });
const PICK = fc.array(ID, { maxLength: 20 }).map((ids) => new Set(ids));

test('scope › a narrowed ranking equals the ranking of an index holding only the selected notes', (t) => {
  fc.assert(
    fc.property(fc.array(fc.tuple(STATE, PICK, QUERY), { minLength: 1, maxLength: 4 }), (steps) => {
      const index = new NoteIndex();
      for (const [state, picked, query] of steps) {
        const notes = Object.entries(state).map(([id, text]) => note(id, text));
        index.sync(notes);
        // The same key across steps: a kept selection must be counted again after a sync that changed notes.
        for (const [key, pick] of [
          ['picked', (id: string) => picked.has(id)],
          ['x-dir', (id: string) => id.startsWith('x/')],
          ['none', () => false],
          ['all', () => true],
        ] as const) {
          const picker = key === 'picked' ? (id: string) => picked.has(id) : pick;
          const scope = scopeOf(key === 'picked' ? `picked:${[...picked].sort().join(',')}` : key, picker);
          for (const limit of [1, 3, 10]) {
            const got = JSON.stringify(narrowed(index, scope, query, limit));
            const want = JSON.stringify(alone(notes, picker, query, limit));
            if (got !== want) return false;
          }
        }
      }
      return true;
    }),
    { numRuns: 150, seed: 2203 },
  );
  t.pass();
});

test('scope › capped prefix expansions are chosen among the selected notes', (t) => {
  // Over PREFIX_SHORT_MAX_TERMS terms start with "q" in x/, a few others in y/: the whole view's cap keeps x/'s
  // most frequent ones, a scope of y/ must expand to y/'s own terms.
  const notes: ScannedNote[] = [];
  for (let i = 0; i < PREFIX_SHORT_MAX_TERMS + 20; i++)
    notes.push(note(`x/n${i}.md`, `q${i.toString(36)}x q${i.toString(36)}x q${(i + 1).toString(36)}x\n`));
  notes.push(note('y/one.md', 'qrare qrare\n'), note('y/two.md', 'qother\n'));
  const index = new NoteIndex();
  index.sync(notes);
  const inY = (id: string): boolean => id.startsWith('y/');
  const got = narrowed(index, scopeOf('y', inY), 'q', 10);
  t.deepEqual(
    got.ranked.map((m) => m.id),
    ['y/one.md', 'y/two.md'],
  );
  t.is(JSON.stringify(got), JSON.stringify(alone(notes, inY, 'q', 10)));
});

test('scope › a scope selecting nothing ranks nothing; the index is unchanged by narrowed rankings', (t) => {
  const notes = [note('a.md', 'moss stone\n'), note('b/c.md', 'moss\n')];
  const index = new NoteIndex();
  index.sync(notes);
  const before = JSON.stringify(index.search('moss', 10, LIMITS));
  t.deepEqual(
    index.rank(
      'moss',
      Infinity,
      scopeOf('none', () => false),
    ),
    [],
  );
  t.is(
    index.search(
      'moss',
      10,
      LIMITS,
      scopeOf('b', (id) => id.startsWith('b/')),
    ).hits.length,
    1,
  );
  t.is(JSON.stringify(index.search('moss', 10, LIMITS)), before);
  t.deepEqual(index.stats().documentCount, 2);
});
