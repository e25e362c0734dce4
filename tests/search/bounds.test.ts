/**
 * No input makes one search cost more than a bounded multiple of a normal one (docs/DESIGN.md, "Bounded query
 * cost"): work is counted (postings lists scored, matched-term checks, the longest run of combining marks handed to
 * `String.prototype.normalize`), never timed. Each test here fails on the code before the bounds: the order-number
 * notes made `rank` score every id below `2024` and check each one against each hit, and a run of 120,000
 * combining marks went to `normalize` whole.
 */
import test from 'ava';
import fc from 'fast-check';
import { COLD_MAX_CANDIDATES, rankCold, searchCold } from '../../src/search/cold.js';
import {
  HIT_MAX_TERMS,
  NoteIndex,
  PREFIX_MAX_TERMS,
  PREFIX_SHORT_MAX_TERMS,
  type ResponseLimits,
  TYPO_MAX_TERMS,
} from '../../src/search/index.js';
import { makeSnippet } from '../../src/search/snippet.js';
import { TermTable } from '../../src/search/terms.js';
import { fold, MAX_MARK_RUN, NORMALIZE_PIECE, scanTerms, tokenize } from '../../src/search/tokenize.js';
import type { ScannedNote } from '../../src/trust/types.js';
import { STAT } from './stat.js';

const note = (id: string, text: string): ScannedNote => ({ id, key: `k:${id}`, stat: STAT, text });
const LIMITS: ResponseLimits = { snippet_chars: 300, total_chars: 100_000 };

/** `notes` notes of lines `order 2024MMNNNN shipped` (`lines` each). */
function orderNotes(notes: number, lines: number): ScannedNote[] {
  return Array.from({ length: notes }, (_, n) => {
    const body: string[] = [`# Orders ${n}`];
    for (let i = 0; i < lines; i++)
      body.push(`order 2024${String(n + 1).padStart(2, '0')}${String(i).padStart(4, '0')} shipped`);
    return note(`orders/${n}.md`, body.join('\n'));
  });
}

test('a query over thousands of ids sharing its prefix scores a bounded number of lists and checks each hit linearly', (t) => {
  const notes = orderNotes(4, 4000);
  const index = new NoteIndex();
  index.sync(notes);
  const query = 'which orders shipped in 2024';
  const ranked = index.rank(query, 10);
  t.is(ranked.length, 4);
  const work = index.lastWork;
  // Query terms: 5; each expands to at most PREFIX_MAX_TERMS ids; each term ≥ 5 code points to at most
  // TYPO_MAX_TERMS neighbours; each list is one field. Before the caps: 16,000 expansions.
  const scored = 5 + 5 * PREFIX_MAX_TERMS + 5 * TYPO_MAX_TERMS;
  t.true(work.lists <= scored * 3, `${work.lists} lists`);
  // Per hit at most one check per scored term (it was: every scored term, then a quadratic de-duplication).
  t.true(work.checks <= scored * ranked.length, `${work.checks} checks`);
  for (const m of ranked) t.true(m.terms.length <= HIT_MAX_TERMS);
  // The cold ranking answers the same (from a built index: the query reaches more than COLD_MAX_CANDIDATES terms
  // only in a larger corpus, so here the ranking straight from texts is compared).
  t.deepEqual(rankCold(notes, query, 10), ranked);
});

test('prefix expansions beyond the cap keep those with the most postings, ties by term, the same cold and warm', (t) => {
  // Terms zq000 … zq999: zqN is in N mod 7 + 1 notes, so postings decide first and the term breaks ties.
  const notes: ScannedNote[] = [];
  for (let n = 0; n < 7; n++) {
    const words: string[] = [];
    for (let i = 0; i < 1000; i++) if (i % 7 >= n) words.push(`zq${String(i).padStart(3, '0')}`);
    notes.push(note(`p/${n}.md`, words.join(' ')));
  }
  const index = new NoteIndex();
  index.sync(notes);
  const expected = (cap: number): string[] =>
    Array.from({ length: 1000 }, (_, i) => ({ term: `zq${String(i).padStart(3, '0')}`, n: (i % 7) + 1 }))
      .sort((a, b) => b.n - a.n || (a.term < b.term ? -1 : 1))
      .slice(0, cap)
      .map((e) => e.term)
      .sort();
  for (const [query, cap] of [
    ['zq', PREFIX_SHORT_MAX_TERMS],
    ['zq0', PREFIX_MAX_TERMS],
  ] as const) {
    const ranked = index.rank(query);
    const used = new Set(ranked.flatMap((m) => m.terms));
    const want = expected(cap).filter((term) => term.startsWith(query));
    if (query === 'zq0') {
      // zq0 has only 100 expansions (zq000 … zq099): under the cap, all of them are scored (one field each).
      t.is(index.lastWork.lists, 100);
    } else {
      t.is(index.lastWork.lists, cap);
      t.deepEqual([...used].sort(), want);
    }
    t.deepEqual(rankCold(notes, query), ranked, query);
  }
});

test('typo expansions are capped at TYPO_MAX_TERMS and chosen the same way cold and warm', (t) => {
  // 'lotus' has 5 × 25 substitutions + deletions + insertions in the corpus: far more neighbours than the cap.
  const letters = 'abcdefghijklmnopqrstuvwxyz';
  const neighbours: string[] = [];
  const base = 'lotus';
  for (let i = 0; i < base.length; i++)
    for (const c of letters) if (c !== base[i]) neighbours.push(base.slice(0, i) + c + base.slice(i + 1));
  t.true(neighbours.length > TYPO_MAX_TERMS);
  const notes = neighbours.map((w, i) => note(`t/${i}.md`, `${w} ${i % 3 === 0 ? w : ''}`));
  const index = new NoteIndex();
  index.sync(notes);
  const ranked = index.rank('lotus');
  t.is(ranked.length, TYPO_MAX_TERMS);
  t.deepEqual(rankCold(notes, 'lotus'), ranked);
  // Those with more postings (the ones written twice count once per note, so every neighbour has one) — ties by
  // term: the first TYPO_MAX_TERMS neighbours in UTF-16 order.
  t.deepEqual(ranked.flatMap((m) => m.terms).sort(), [...neighbours].sort().slice(0, TYPO_MAX_TERMS));
});

test('a cold query reaching more than COLD_MAX_CANDIDATES terms is answered from the built index, the same answer', (t) => {
  const notes = orderNotes(3, Math.ceil(COLD_MAX_CANDIDATES / 3) + 100);
  const index = new NoteIndex();
  const cold = searchCold(notes, 'shipped 2024', 5, LIMITS, index);
  t.is(index.size, 3);
  const fresh = new NoteIndex();
  fresh.sync(notes);
  t.deepEqual(cold, fresh.search('shipped 2024', 5, LIMITS));
  // A narrow query still takes the path straight from texts (the index it was given stays empty).
  const unused = new NoteIndex();
  searchCold(notes, 'shipped', 5, LIMITS, unused);
  t.is(unused.size, 0);
});

/** Runs `fn` and returns the longest run of combining marks in any string `normalize` was called on. */
function longestMarkRunNormalized(fn: () => void): number {
  const original = String.prototype.normalize;
  let longest = 0;
  const marks = /\p{M}+/gu;
  String.prototype.normalize = function (this: string, form?: string): string {
    for (const m of this.matchAll(marks)) longest = Math.max(longest, m[0].length);
    return original.call(this, form);
  };
  try {
    fn();
  } finally {
    String.prototype.normalize = original;
  }
  return longest;
}

test('no normalize call sees a run of more than MAX_MARK_RUN combining marks, whatever the note holds', (t) => {
  const marks = `${'\u0301'.repeat(6000)}${'\u0316'.repeat(6000)}`;
  const text = `# Marks\nmarks note e${marks} end and café\n`;
  const notes = [note('m.md', text), note('n.md', `plain note ${marks}`)];
  const longest = longestMarkRunNormalized(() => {
    tokenize(text);
    new TermTable().ids(text);
    for (const _ of scanTerms(text));
    makeSnippet(text, new Set(['end', 'marks']), 40);
    const index = new NoteIndex();
    index.sync(notes);
    index.search(`note e${marks}`, 5, LIMITS);
    searchCold(notes, `marks e${marks}`, 5, LIMITS);
  });
  t.true(longest <= MAX_MARK_RUN, `longest run handed to normalize: ${longest}`);
  // The note is still found, by its plain words and by the mark-laden word (cut the same way in the query).
  const index = new NoteIndex();
  index.sync(notes);
  t.deepEqual(
    index.rank('end').map((m) => m.id),
    ['m.md'],
  );
  t.true(index.rank(`e${marks}`).some((m) => m.id === 'm.md'));
});

test('fold equals NFKC then lowercase of the whole text when no mark run is cut (pieces are cut only where safe)', (t) => {
  const alphabet = [
    'a',
    'Z',
    'Σ',
    'σ',
    ' ',
    '\n',
    '.',
    ',',
    "'",
    ':',
    '1',
    '-',
    '\u0301',
    '\u0316',
    '\uFF9E',
    'ｶ',
    'か',
    '\u3000',
    '。',
    'ﬁ',
    '\u1100',
    '\u1161',
    '\u11A8',
    'İ',
    '①',
    'Ⅻ',
    '\u0E33',
    'e',
  ];
  const text = fc
    .array(fc.constantFrom(...alphabet), { minLength: NORMALIZE_PIECE - 50, maxLength: 3 * NORMALIZE_PIECE })
    .map((cs) => cs.join(''));
  fc.assert(
    fc.property(text, (s) => fold(s) === s.normalize('NFKC').toLowerCase()),
    { numRuns: 150, seed: 11 },
  );
  t.pass();
});
