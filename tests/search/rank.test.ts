import test from 'ava';
import fc from 'fast-check';
import { join } from 'node:path';
import { NoteIndex, PREFIX_FULL_CHARS, PREFIX_SHORT_MAX_TERMS } from '../../src/search/index.js';
import { tokenize } from '../../src/search/tokenize.js';
import type { ScannedNote } from '../../src/trust/types.js';
import { MiniSearchOracle, rankingDifference, sameRanking } from './oracle.js';
import { markdownTexts, NODEJS, TLDR, VAULT } from '../helpers/corpora.js';
import { STAT } from './stat.js';

const note = (id: string, text: string): ScannedNote => ({ id, key: `k:${id}`, stat: STAT, text });

/** Real notes that ship in tests/corpora: the vault (EN and JA), Node.js site pages and tldr Japanese pages. */
function corpus(): Record<string, string> {
  const prefixed = (dir: string, prefix: string): [string, string][] =>
    Object.entries(markdownTexts(dir)).map(([id, text]) => [prefix + id, text]);
  return Object.fromEntries([
    ...prefixed(VAULT, 'vault/'),
    ...prefixed(NODEJS, 'nodejs/'),
    ...prefixed(join(TLDR, 'pages.ja'), 'tldr/'),
  ]);
}

const notes = corpus();
const index = new NoteIndex();
index.sync(Object.entries(notes).map(([id, text]) => note(id, text)));
const oracle = new MiniSearchOracle(Object.entries(notes).map(([id, text]) => ({ id, text })));
const vocabulary = [...new Set(Object.values(notes).flatMap((text) => tokenize(text)))].sort();

/** A query of 1–3 vocabulary words; the last is sometimes cut to a prefix or given a typo. */
const query = fc
  .tuple(fc.array(fc.constantFrom(...vocabulary), { minLength: 1, maxLength: 3 }), fc.nat(4), fc.nat(20))
  .map(([words, mode, cut]) => {
    const last = words[words.length - 1]!;
    if (mode === 1 && last.length > PREFIX_FULL_CHARS)
      words[words.length - 1] = last.slice(0, Math.max(PREFIX_FULL_CHARS, last.length - 1 - (cut % last.length)));
    if (mode === 2 && last.length >= 5) words[words.length - 1] = `${last.slice(0, 2)}${last.slice(3)}`;
    return words.join(' ');
  })
  .filter((q) => {
    const terms = tokenize(q);
    // Every term expands as a prefix; shorter terms' expansions are capped (NoteIndex.rank), the oracle's are not.
    return terms.length > 0 && terms.every((term) => Array.from(term).length >= PREFIX_FULL_CHARS);
  });

test('rank equals the MiniSearch oracle (ids, coverage, matched terms; scores and order within the tolerance) on random queries over a real corpus', (t) => {
  fc.assert(
    fc.property(query, (q) => rankingDifference(index.rank(q), oracle.rank(q)) === null),
    { numRuns: 400, seed: 5 },
  );
  t.true(index.rank('note').length > 0);
});

test('rank with a bound returns the head of the full ranking', (t) => {
  fc.assert(
    fc.property(
      query,
      fc.integer({ min: 1, max: 12 }),
      (q, max) => JSON.stringify(index.rank(q, max)) === JSON.stringify(index.rank(q).slice(0, max)),
    ),
    { numRuns: 200, seed: 9 },
  );
  t.pass();
});

test('a short query term expands to a bounded, deterministic set of terms and still matches exactly', (t) => {
  const letters = [...new Set(vocabulary.map((w) => w[0]!))].filter((c) => /[a-z]/.test(c));
  t.true(letters.length > 0);
  for (const letter of letters) {
    const ranked = index.rank(letter);
    t.deepEqual(index.rank(letter), ranked, letter);
    const expansions = new Set(ranked.flatMap((m) => m.terms).filter((term) => term !== letter));
    t.true(expansions.size <= PREFIX_SHORT_MAX_TERMS, letter);
    // Every note holding the letter as a whole term is still found.
    const reference = oracle
      .rank(letter)
      .filter((m) => m.terms.includes(letter))
      .map((m) => m.id);
    const found = new Set(ranked.map((m) => m.id));
    t.true(
      reference.every((id) => found.has(id)),
      letter,
    );
  }
});

test('a short query term with few expansions ranks like the MiniSearch oracle', (t) => {
  const ix = new NoteIndex();
  const small = [note('a.md', '# Ox\nox oxen oxbow'), note('b.md', 'oxen graze'), note('c.md', 'nothing here')];
  ix.sync(small);
  const own = new MiniSearchOracle(small.map((n) => ({ id: n.id, text: n.text! })));
  sameRanking(t, ix.rank('ox'), own.rank('ox'), 'ox');
  sameRanking(t, ix.rank('o'), own.rank('o'), 'o');
  t.is(ix.rank('ox').length, 2);
});
