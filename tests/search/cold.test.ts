/**
 * searchCold / rankCold answer exactly what a fresh NoteIndex answers after sync (same ids, coverage, scores to the
 * last bit, matched terms, titles, snippets, truncated), on the real notes that ship in tests/corpora (Node.js site
 * pages, the project's vault, tldr Japanese pages), a generated corpus and random queries; and the two radix-tree orders they reproduce without the tree equal MiniSearch's SearchableMap.
 */
import test from 'ava';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import SearchableMap from 'minisearch/SearchableMap';
import { rankCold, searchCold } from '../../src/search/cold.js';
import { NoteIndex, oneEditApart, type ResponseLimits, TermDictionary } from '../../src/search/index.js';
import { TermTable } from '../../src/search/terms.js';
import { tokenize } from '../../src/search/tokenize.js';
import type { ScannedNote } from '../../src/trust/types.js';
import { markdownFiles, NODEJS, TLDR, VAULT } from '../helpers/corpora.js';
import { STAT } from './stat.js';

const note = (id: string, text: string | undefined): ScannedNote => ({ id, key: `k:${id}`, stat: STAT, text });
const WIDE: ResponseLimits = { snippet_chars: 300, total_chars: 100_000 };

/** Notes of a shipped corpus (ids relative to `dir`, after `prefix`, in sorted walk order like the scan's). */
function readCorpus(dir: string, prefix = ''): ScannedNote[] {
  return markdownFiles(dir).map((id) => note(prefix + id, readFileSync(join(dir, id), 'utf8')));
}

/** A small deterministic PRNG (mulberry32), so the generated corpus is the same on every run. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A generated corpus built to stress the ranking paths: word families sharing prefixes (so prefix expansions
 * branch at many depths), words one edit apart (several typo expansions per query term, so summation order
 * matters), accents, Japanese, astral characters, front matter with tags and aliases, notes without heading,
 * empty notes, repeated words (term frequencies > 1).
 */
function generated(): ScannedNote[] {
  const words = [
    'river',
    'rivers',
    'riverbank',
    'rive',
    'driver',
    'rover',
    'raver',
    'riven',
    'livers',
    'stone',
    'stones',
    'atone',
    'stoned',
    'store',
    'storm',
    'moss',
    'mosses',
    'lichen',
    'fern',
    'ferns',
    'bark',
    'barks',
    'template',
    'temple',
    'temples',
    'tempest',
    'vault',
    'vaults',
    'fault',
    'valley',
    'note',
    'notes',
    'noted',
    'link',
    'links',
    'blink',
    'graph',
    'graphs',
    'garden',
    'gardens',
    'gardener',
    'harden',
    'café',
    'cafés',
    'naïve',
    'don’t',
    "won't",
    '😀moss',
    'a',
    'ab',
    'abc',
    'abcd',
    'abcde',
    'x1',
    'x12',
    'x123',
  ];
  // Japanese goes through the word segmenter, which is slow; a few notes carry it.
  const japanese = ['庭', '水やり', '手入れ', 'ノート', 'ノートの設定', 'ファイル'];
  const rand = prng(20261130);
  const pick = () => words[Math.floor(rand() * words.length)]!;
  const notes: ScannedNote[] = [];
  for (let i = 0; i < 240; i++) {
    const body: string[] = [];
    const n = Math.floor(rand() * 60);
    for (let j = 0; j < n; j++) body.push(pick() + (rand() < 0.1 ? '.' : ''));
    if (i % 10 === 3) body.push(japanese[i % japanese.length]!, japanese[(i * 7) % japanese.length]!);
    const heading = rand() < 0.8 ? `# ${pick()} ${pick()}\n` : '';
    const front =
      rand() < 0.3 ? `---\ntitle: ${pick()}\ntags: [${pick()}, ${pick()}]\naliases:\n  - ${pick()}\n---\n` : '';
    const text = i % 47 === 0 ? '' : `${front}${heading}${body.join(' ')}\n`;
    notes.push(note(`d${i % 7}/n${String(i).padStart(3, '0')}.md`, text));
  }
  return notes;
}

/** Distinct terms of the notes, sorted (what random queries draw words from). */
function vocabularyOf(notes: readonly ScannedNote[]): string[] {
  const terms = new Set<string>();
  for (const n of notes) for (const t of tokenize(n.text!)) terms.add(t);
  return [...terms].sort();
}

/**
 * Random queries: 1–4 words, each a corpus term, a prefix of one (1–6 code points), a term with one typo
 * (substitution, deletion, insertion or swap), a Japanese word, or punctuation; joined by spaces or punctuation,
 * sometimes upper-cased. Covers empty and punctuation-only queries.
 */
function queryArb(vocabulary: readonly string[]): fc.Arbitrary<string> {
  const word = fc.constantFrom(...vocabulary);
  const prefix = fc.tuple(word, fc.integer({ min: 1, max: 6 })).map(([w, k]) => Array.from(w).slice(0, k).join(''));
  const typo = fc
    .tuple(word, fc.nat(), fc.constantFrom('sub', 'del', 'ins', 'swap'), fc.constantFrom(...'aeiorstxzé'))
    .map(([w, at, kind, c]) => {
      const cps = Array.from(w);
      const i = at % cps.length;
      if (kind === 'sub') cps[i] = c;
      else if (kind === 'del' && cps.length > 1) cps.splice(i, 1);
      else if (kind === 'ins') cps.splice(i, 0, c);
      else if (i + 1 < cps.length) [cps[i], cps[i + 1]] = [cps[i + 1]!, cps[i]!];
      return cps.join('');
    });
  const japanese = fc.constantFrom('庭', '水やり', '手入れ', 'ノート', 'ファイル', '設定', 'リンク', 'プラグイン');
  const noise = fc.constantFrom('', '?!', '—', '...', '#', '"');
  const part = fc.oneof(
    { arbitrary: word, weight: 4 },
    { arbitrary: prefix, weight: 3 },
    { arbitrary: typo, weight: 3 },
    japanese,
    noise,
  );
  return fc
    .tuple(fc.array(part, { minLength: 1, maxLength: 4 }), fc.constantFrom(' ', ', ', ' - ', '/'), fc.boolean())
    .map(([parts, sep, upper]) => {
      const q = parts.join(sep);
      return upper ? q.toUpperCase() : q;
    });
}

/** Response limits small enough to cut by count and by total_chars. */
const limitsArb = fc.record({
  limit: fc.integer({ min: 1, max: 12 }),
  snippet_chars: fc.integer({ min: 1, max: 200 }),
  total_chars: fc.integer({ min: 1, max: 1500 }),
});

/**
 * Deep equality by JSON text (numbers print as the shortest text that round-trips, so scores compare to the bit);
 * ava's structural diff only on failure, because it is slow on long rankings.
 */
function same(t: import('ava').ExecutionContext, actual: unknown, expected: unknown, message: string): void {
  if (JSON.stringify(actual) === JSON.stringify(expected)) t.pass();
  else t.deepEqual(actual, expected, message);
}

/** Assert, over random queries, that the cold answers equal the index's answers (returns the number of hits seen). */
function assertSameAnswers(
  t: import('ava').ExecutionContext,
  notes: ScannedNote[],
  numRuns: number,
  seed: number,
): void {
  const index = new NoteIndex();
  index.sync(notes);
  const vocabulary = vocabularyOf(notes);
  let matched = 0;
  let truncated = 0;
  fc.assert(
    fc.property(queryArb(vocabulary), limitsArb, (q, { limit, ...limits }) => {
      const ranked = index.rank(q);
      same(t, rankCold(notes, q), ranked, `rank: ${q}`);
      same(t, rankCold(notes, q, limit), index.rank(q, limit), `bounded rank: ${q}`);
      const hot = index.search(q, limit, limits);
      same(t, searchCold(notes, q, limit, limits), hot, `search: ${q}`);
      if (ranked.length > 0) matched++;
      if (hot.truncated) truncated++;
    }),
    { numRuns, seed },
  );
  // The queries did exercise matches and both kinds of truncation.
  t.true(matched > numRuns / 4, `${matched} of ${numRuns} queries matched`);
  t.true(truncated > 0);
}

test('cold › equals a fresh index on a generated corpus for random queries and limits', (t) => {
  assertSameAnswers(t, generated(), 150, 1);
});

test('cold › equals a fresh index on real English notes (Node.js site pages, the vault) for random queries', (t) => {
  const english = [...readCorpus(NODEJS, 'nodejs/'), ...readCorpus(VAULT, 'vault/')];
  t.true(english.length > 150);
  assertSameAnswers(t, english, 40, 2);
});

test('cold › equals a fresh index on the vault and tldr Japanese pages, Japanese queries included', (t) => {
  const notes = [...readCorpus(VAULT, 'vault/'), ...readCorpus(join(TLDR, 'pages.ja'), 'tldr/')];
  const index = new NoteIndex();
  index.sync(notes);
  // Each cold pass segments the Japanese notes anew, so a few queries only.
  const queries = ['ノート', 'プラグイン 設定', 'garden sync', 'irigation', 'グラフ ビュー', 'ファイル 圧縮'];
  for (const q of queries) {
    same(t, rankCold(notes, q), index.rank(q), q);
    same(
      t,
      searchCold(notes, q, 7, { snippet_chars: 120, total_chars: 900 }),
      index.search(q, 7, { snippet_chars: 120, total_chars: 900 }),
      q,
    );
  }
  t.true(rankCold(notes, 'ノート').length > 0);
  t.true(rankCold(notes, 'ファイル').length > 10);
});

test('cold › hits carry titles and snippets exactly as the index builds them', (t) => {
  const notes = [
    note(
      'a.md',
      '---\ntitle: Hidden\ntags: [zebracorn]\n---\n# Shown heading\nPlain body words about zebracorn fields.',
    ),
    note('b.md', 'no heading, only zebracorn here'),
    note('c.md', `# Long\n${'filler words '.repeat(80)}zebracorn at the end`),
  ];
  const index = new NoteIndex();
  index.sync(notes);
  const cold = searchCold(notes, 'zebracorn', 5, { snippet_chars: 40, total_chars: 4000 });
  t.deepEqual(cold, index.search('zebracorn', 5, { snippet_chars: 40, total_chars: 4000 }));
  t.deepEqual(cold.hits.map((h) => h.id).sort(), ['a.md', 'b.md', 'c.md']);
  t.is(cold.hits.find((h) => h.id === 'a.md')!.title, 'Hidden');
  t.is(cold.hits.find((h) => h.id === 'b.md')!.title, 'b');
  t.regex(cold.hits.find((h) => h.id === 'c.md')!.snippet, /zebracorn/);
});

test('cold › an empty query, no notes or a bound of zero give nothing, like the index', (t) => {
  const notes = [note('a.md', 'moss')];
  t.deepEqual(searchCold(notes, ' ?! — ', 5, WIDE), { hits: [], truncated: false });
  t.deepEqual(searchCold([], 'moss', 5, WIDE), { hits: [], truncated: false });
  t.deepEqual(rankCold(notes, 'moss', 0), []);
  t.is(rankCold(notes, 'moss').length, 1);
});

test('cold › a note without text or a repeated id is refused, as sync refuses it', (t) => {
  t.throws(() => searchCold([note('a.md', 'x'), note('b.md', undefined)], 'x', 5, WIDE), { message: /without text/ });
  t.throws(() => searchCold([note('a.md', 'x'), note('a.md', 'y')], 'x', 5, WIDE), { message: /duplicate/ });
  t.throws(() => rankCold([note('a.md', undefined)], '', 5), { message: /without text/ });
  t.throws(() => new NoteIndex().sync([note('a.md', 'x'), note('a.md', 'y')]));
});

/** Distinct keys over a tiny alphabet (shared prefixes at every depth), one astral character included. */
const keysArb = fc.uniqueArray(
  fc.array(fc.constantFrom('a', 'b', 'c', '😀'), { minLength: 1, maxLength: 6 }).map((cs) => cs.join('')),
  { minLength: 1, maxLength: 60 },
);
const probeArb = fc
  .array(fc.constantFrom('a', 'b', 'c', '😀'), { minLength: 1, maxLength: 6 })
  .map((cs) => cs.join(''));

/** A dictionary of `keys`: the first `sorted` merged into its sorted array, the rest left as recent additions. */
function dictionaryOf(keys: readonly string[], sorted: number): { dict: TermDictionary; table: TermTable } {
  const table = new TermTable();
  const dict = new TermDictionary(
    (id) => table.term(id),
    () => true,
  );
  for (const [i, k] of keys.entries()) {
    dict.add(table.intern(k));
    if (i === sorted - 1) dict.settle(() => undefined, true);
  }
  return { dict, table };
}

test('cold › the dictionary lists the terms one edit away exactly as MiniSearch finds them, in lexicographic order', (t) => {
  fc.assert(
    fc.property(keysArb, probeArb, fc.nat(60), (keys, probe, sorted) => {
      const tree = new SearchableMap<number>();
      for (const [i, k] of keys.entries()) tree.set(k, i);
      const expected = [...tree.fuzzyGet(probe, 1)]
        .filter(([, [, d]]) => d === 1)
        .map(([k]) => k)
        .sort();
      const { dict, table } = dictionaryOf(keys, sorted);
      const found = dict.oneEditFrom(probe, (k) => table.find(k)).map((id) => table.term(id));
      t.deepEqual(found, expected, `${JSON.stringify(keys)} ${probe}`);
    }),
    { numRuns: 3000, seed: 7 },
  );
});

test('cold › the dictionary lists the terms extending a prefix exactly as MiniSearch finds them, in lexicographic order', (t) => {
  fc.assert(
    fc.property(keysArb, probeArb, fc.nat(60), (keys, probe, sorted) => {
      const tree = new SearchableMap<number>();
      for (const [i, k] of keys.entries()) tree.set(k, i);
      const expected = [...tree.atPrefix(probe)]
        .map(([k]) => k)
        .filter((k) => k !== probe)
        .sort();
      const { dict, table } = dictionaryOf(keys, sorted);
      t.deepEqual(
        dict.extending(probe).map((id) => table.term(id)),
        expected,
        `${JSON.stringify(keys)} ${probe}`,
      );
    }),
    { numRuns: 3000, seed: 8 },
  );
});

test('cold › oneEditApart is Levenshtein distance exactly 1 in UTF-16 code units', (t) => {
  const cases: [string, string, boolean][] = [
    ['vault', 'vault', false],
    ['vault', 'vaul', true],
    ['vault', 'vaultz', true],
    ['vault', 'fault', true],
    ['vault', 'vualt', false],
    ['moss', '😀moss', false],
    ['a😀', 'ab😀', true],
    ['', 'a', true],
  ];
  for (const [a, b, expected] of cases) {
    t.is(oneEditApart(a, b), expected, `${a} ${b}`);
    t.is(oneEditApart(b, a), expected, `${b} ${a}`);
  }
});
