import test from 'ava';
import fc from 'fast-check';
import { rankCold, searchCold } from '../../src/search/cold.js';
import { NoteIndex } from '../../src/search/index.js';
import type { ScannedNote } from '../../src/trust/types.js';
import { MiniSearchOracle, sameRanking } from './oracle.js';
import { STAT } from './stat.js';

const note = (id: string, text: string | undefined, key = `k:${id}:${text?.length ?? 'same'}`): ScannedNote => ({
  id,
  key,
  stat: STAT,
  text,
});
const LIMITS = { snippet_chars: 300, total_chars: 4000 };

function indexOf(notes: Record<string, string>): NoteIndex {
  const ix = new NoteIndex();
  ix.sync(Object.entries(notes).map(([id, text]) => note(id, text)));
  return ix;
}

test('front matter never reaches a snippet; its title is the title, its tags and aliases are searchable', (t) => {
  const ix = indexOf({
    'a.md':
      '---\ntitle: Front Title\ntags: [zebracorn]\naliases:\n  - moonpath\nsecret: nope\n---\n# Shown heading\nPlain body words.',
  });
  for (const q of ['zebracorn', 'moonpath', 'front title']) {
    const { hits } = ix.search(q, 5, LIMITS);
    t.is(hits.length, 1, q);
    t.is(hits[0]!.title, 'Front Title');
    t.false(hits[0]!.snippet.includes('zebracorn'));
    t.false(hits[0]!.snippet.includes('---'));
    t.is(hits[0]!.snippet, '# Shown heading Plain body words.');
  }
  t.is(ix.search('secret nope', 5, LIMITS).hits.length, 0, 'other front matter keys are not indexed');
});

test('a note without a level-1 heading or front matter title is titled by its file name', (t) => {
  const { hits } = indexOf({ 'dir/Otter facts.md': '## Habitat\njust words about otters' }).search('otters', 5, LIMITS);
  t.deepEqual(hits[0], {
    id: 'dir/Otter facts.md',
    title: 'Otter facts',
    snippet: '## Habitat just words about otters',
  });
});

test('file names are searchable with the title weight, tokenized like text', (t) => {
  const ix = indexOf({
    'Obsidian Publish/Custom domains.md': '## Set up using CloudFlare\nPoint the record at the service.',
    'tools/ssh-keygen.md': 'Generate a key pair for a server.',
    'other.md': '# Other\nA page that says custom once and domains once, about keys and ssh.',
  });
  t.is(ix.search('custom domains', 5, LIMITS).hits[0]!.id, 'Obsidian Publish/Custom domains.md');
  t.is(ix.search('ssh keygen', 5, LIMITS).hits[0]!.id, 'tools/ssh-keygen.md');
  // Only the name matched: the snippet is the start of the body.
  const only = ix.search('keygen', 5, LIMITS).hits;
  t.deepEqual(only, [{ id: 'tools/ssh-keygen.md', title: 'ssh-keygen', snippet: 'Generate a key pair for a server.' }]);
  const long = indexOf({ 'zeta-name.md': `First words here. ${'filler text '.repeat(60)}` }).search('zeta', 5, {
    snippet_chars: 30,
    total_chars: 4000,
  }).hits[0]!;
  t.true(long.snippet.startsWith('First words here.'), long.snippet);
});

test('a title match outranks a body match', (t) => {
  const { hits } = indexOf({
    'body.md': '# Something\nThe heron stood by the pond for a long while.',
    'title.md': '# Heron\nA bird that stood by the pond for a long while.',
  }).search('heron', 5, LIMITS);
  t.deepEqual(
    hits.map((h) => h.id),
    ['title.md', 'body.md'],
  );
});

test('a Japanese query finds a Japanese note', (t) => {
  const ix = indexOf({
    'ja.md': '# 庭の手入れ\n庭の水やりは朝に行う。',
    'en.md': '# Garden\nWater the garden at dawn.',
  });
  const { hits } = ix.search('水やり', 5, LIMITS);
  t.deepEqual(
    hits.map((h) => h.id),
    ['ja.md'],
  );
  t.true(hits[0]!.snippet.includes('水やり'));
});

test('every query term matches as a prefix, below an exact match', (t) => {
  const ix = indexOf({ 'g.md': 'lantern garden', 'o.md': 'other words', 'v.md': 'lant views' });
  t.deepEqual(
    ix.search('lantern gard', 5, LIMITS).hits.map((h) => h.id),
    ['g.md'],
  );
  // "lant" is not the last term and still expands to "lantern"; the exact "lant" ranks first.
  t.deepEqual(
    ix.search('lant zzz', 5, LIMITS).hits.map((h) => h.id),
    ['v.md', 'g.md'],
  );
  t.deepEqual(
    ix.search('view other', 5, LIMITS).hits.map((h) => h.id),
    ['o.md', 'v.md'],
  );
});

test('a section heading of any level counts above the same words in the body, cold as warm', (t) => {
  const texts = {
    'h.md': '# Guide\n\nintro text\n\n## Sync settings\n\nsome words\n\n```\n## not a heading quartz\n```\n',
    'b.md': '# Other\n\nintro text\n\nsync settings are here\n\nsome words\n',
    'q.md': 'Quartz\n------\n\nintro text\n',
  };
  const ix = indexOf(texts);
  t.deepEqual(
    ix.search('sync settings', 5, LIMITS).hits.map((h) => h.id),
    ['h.md', 'b.md'],
  );
  // A setext level-2 heading counts; a heading inside fenced code is body text only.
  t.deepEqual(
    ix.rank('quartz').map((m) => m.id),
    ['q.md', 'h.md'],
  );
  const notes = Object.entries(texts).map(([id, text]) => note(id, text));
  for (const q of ['sync settings', 'quartz', 'intro']) t.deepEqual(rankCold(notes, q), ix.rank(q), q);
});

test('terms of five or more characters tolerate one typo, shorter ones do not', (t) => {
  const ix = indexOf({ 'a.md': 'asters beside the east gate', 'b.md': 'a cat sat' });
  t.deepEqual(
    ix.search('astres beside', 5, LIMITS).hits.map((h) => h.id),
    ['a.md'],
    'beside as last term; astres fuzzy',
  );
  t.deepEqual(
    ix.search('asterz gate', 5, LIMITS).hits.map((h) => h.id),
    ['a.md'],
  );
  t.deepEqual(
    ix.search('cot sat', 5, LIMITS).hits.map((h) => h.id),
    ['b.md'],
  );
  t.deepEqual(ix.search('cot zzz', 5, LIMITS).hits, [], 'a three-letter typo does not match');
});

test('notes holding all query words rank before notes holding some', (t) => {
  const ix = indexOf({
    'one.md': 'pumpkin pumpkin pumpkin pumpkin pumpkin soup',
    'both.md': 'pumpkin and a long rambling text about bread and many other things bread',
    'none.md': 'unrelated',
  });
  t.deepEqual(
    ix.search('pumpkin bread', 5, LIMITS).hits.map((h) => h.id),
    ['both.md', 'one.md'],
  );
});

test('coverage counts query terms, not the document terms a prefix expanded to', (t) => {
  const ix = indexOf({
    'many.md': 'garden gardens gardener gardening '.repeat(10),
    'both.md': `bloom garden ${'filler words that dilute the score '.repeat(10)}`,
  });
  t.deepEqual(
    ix.rank('bloom gard').map((m) => [m.id, m.coverage]),
    [
      ['both.md', 2],
      ['many.md', 1],
    ],
  );
});

test('tied scores are ordered by id ascending, whatever the insertion order', (t) => {
  const ids = ['c.md', 'a.md', 'b/x.md', 'b.md', 'A.md'];
  const forward = new NoteIndex();
  forward.sync(ids.map((id) => note(id, 'identical text about kites')));
  const backward = new NoteIndex();
  backward.sync([...ids].reverse().map((id) => note(id, 'identical text about kites')));
  const expected = [...ids].sort();
  t.deepEqual(
    forward.search('kites', 10, LIMITS).hits.map((h) => h.id),
    expected,
  );
  t.deepEqual(
    backward.search('kites', 10, LIMITS).hits.map((h) => h.id),
    expected,
  );
});

test('more matches than the limit sets truncated', (t) => {
  const ix = indexOf({ 'a.md': 'moss', 'b.md': 'moss', 'c.md': 'moss' });
  t.deepEqual(ix.search('moss', 3, LIMITS), { hits: ix.search('moss', 3, LIMITS).hits, truncated: false });
  const r = ix.search('moss', 2, LIMITS);
  t.is(r.hits.length, 2);
  t.true(r.truncated);
});

test('total_chars bounds id + title + snippet code points and omitting a match sets truncated', (t) => {
  const ix = indexOf({ 'a.md': '# T\nfern 😀😀', 'b.md': '# T\nfern 😀😀' });
  // Each hit costs 4 (id) + 1 (title) + 11 (snippet "# T fern 😀😀") = 16 code points.
  const full = ix.search('fern', 5, { snippet_chars: 300, total_chars: 32 });
  t.is(full.hits.length, 2);
  t.false(full.truncated);
  const cut = ix.search('fern', 5, { snippet_chars: 300, total_chars: 31 });
  t.is(cut.hits.length, 1);
  t.true(cut.truncated);
});

test('clipping a snippet alone does not set truncated', (t) => {
  const r = indexOf({ 'a.md': 'reed '.repeat(500) }).search('reed', 5, { snippet_chars: 20, total_chars: 4000 });
  t.is(r.hits.length, 1);
  t.true(Array.from(r.hits[0]!.snippet).length <= 20);
  t.false(r.truncated);
});

test('an empty query after tokenizing gives no results', (t) => {
  t.deepEqual(indexOf({ 'a.md': 'text' }).search(' ?! — ', 5, LIMITS), { hits: [], truncated: false });
});

test('has() answers by id and identity key', (t) => {
  const ix = new NoteIndex();
  ix.sync([note('a.md', 'x', 'key1')]);
  t.true(ix.has('a.md', 'key1'));
  t.false(ix.has('a.md', 'key2'));
  t.false(ix.has('b.md', 'key1'));
});

test('has() with the scan hint gives the answer without it, across removals, replacements and moves', (t) => {
  const ix = new NoteIndex();
  ix.sync([note('a.md', 'alpha', 'a1'), note('b.md', 'beta', 'b1'), note('c.md', 'gamma', 'c1')]);
  // The warm scan hands back the objects without text it returned before; the index then holds them by position.
  const a = note('a.md', undefined, 'a1');
  const b = note('b.md', undefined, 'b1');
  const c = note('c.md', undefined, 'c1');
  ix.sync([a, b, c]);
  const both = (id: string, key: string, last: ScannedNote | undefined, at: number): boolean => {
    const plain = ix.has(id, key);
    t.is(ix.has(id, key, last, at), plain, `${id} ${key} at ${at}`);
    return plain;
  };
  t.true(both('a.md', 'a1', a, 0));
  t.false(both('a.md', 'a2', a, 0), 'another key is not held, hint or not');
  t.true(both('b.md', 'b1', b, 1));
  t.true(both('b.md', 'b1', b, 0), 'a hint at another position is not used');
  // b removed, c replaced (new text under a new key): the records the hint pointed at are gone.
  ix.sync([a, note('c.md', 'gamma two', 'c2')]);
  t.false(both('b.md', 'b1', b, 1));
  t.false(both('c.md', 'c1', c, 1));
  t.true(both('c.md', 'c2', c, 1) === ix.has('c.md', 'c2'));
  // Same count of notes as the last sync (the memo is rewritten in place): answers still follow the map.
  const c2 = note('c.md', undefined, 'c2');
  ix.sync([a, c2]);
  ix.sync([note('c.md', undefined, 'c2'), a]);
  t.true(both('a.md', 'a1', a, 1));
  t.true(both('c.md', 'c2', c2, 0));
  t.is(ix.size, 2);
  // A repeated id is refused whether it comes by position or by lookup, and the positions are forgotten.
  t.throws(() => ix.sync([a, a]), { message: /duplicate id/ });
  t.true(both('a.md', 'a1', a, 0));
});

test('sync by position survives the renumbering of notes (compaction) with the same answers as a fresh index', (t) => {
  const ix = new NoteIndex();
  const many = Array.from({ length: 1500 }, (_, i) => note(`n${i}.md`, `walrus number ${i}`, `k${i}`));
  ix.sync(many);
  const known = many.map((n) => note(n.id, undefined, n.key));
  ix.sync(known);
  // Keep 100 of them (most numbers unused: the index renumbers), then sync the same objects twice more.
  const kept = known.filter((_, i) => i % 15 === 0);
  ix.sync(kept);
  ix.sync(kept);
  ix.sync(kept);
  t.is(ix.size, kept.length);
  for (const [i, n] of kept.entries()) t.true(ix.has(n.id, n.key, n, i));
  t.false(ix.has('n1.md', 'k1'));
  const fresh = new NoteIndex();
  fresh.sync(kept.map((n) => note(n.id, `walrus number ${n.id.slice(1, -3)}`, n.key)));
  t.deepEqual(
    ix.search('walrus', 10, LIMITS).hits.map((h) => h.id),
    fresh.search('walrus', 10, LIMITS).hits.map((h) => h.id),
  );
});

test('sync keeps unchanged notes, replaces changed ones and drops missing ones', (t) => {
  const ix = new NoteIndex();
  ix.sync([note('a.md', 'old words walrus', 'a1'), note('b.md', 'beta', 'b1'), note('c.md', 'gamma walrus', 'c1')]);
  ix.sync([note('a.md', 'new words narwhal', 'a2'), note('b.md', undefined, 'b1')]);
  t.is(ix.size, 2);
  t.deepEqual(ix.search('walrus', 5, LIMITS).hits, []);
  t.deepEqual(
    ix.search('narwhal', 5, LIMITS).hits.map((h) => h.id),
    ['a.md'],
  );
  t.deepEqual(
    ix.search('beta', 5, LIMITS).hits.map((h) => h.id),
    ['b.md'],
  );
});

test('a note without text that the index does not hold is refused', (t) => {
  const ix = new NoteIndex();
  t.throws(() => ix.sync([note('a.md', undefined, 'k')]));
});

test('a repeated id in one sync is refused, whether new or held', (t) => {
  const ix = new NoteIndex();
  t.throws(() => ix.sync([note('a.md', 'one', 'k1'), note('a.md', 'two', 'k2')]), { message: /duplicate/ });
  const held = new NoteIndex();
  held.sync([note('b.md', 'x', 'k')]);
  t.throws(() => held.sync([note('b.md', undefined, 'k'), note('b.md', undefined, 'k')]), { message: /duplicate/ });
});

test('after additions, replacements and removals the statistics and scores equal a fresh index', (t) => {
  const corpus: Record<string, string> = {};
  for (let i = 0; i < 40; i++)
    corpus[`n${String(i).padStart(2, '0')}.md`] =
      `# Note ${i}\n${'river stone '.repeat(i % 7)} moss ${i % 3 === 0 ? 'lichen fern' : 'bark'} ${'x'.repeat(i % 5)}`;
  const ids = Object.keys(corpus);
  const incremental = new NoteIndex();
  incremental.sync(ids.map((id) => note(id, corpus[id]!, 'v1')));
  // Change a few, drop many, re-add some: history that a fresh index never saw.
  const kept = ids.filter((_, i) => i % 3 !== 1);
  incremental.sync(
    kept.map((id, i) => (i % 4 === 0 ? note(id, `${corpus[id]!} extra river`, 'v2') : note(id, undefined, 'v1'))),
  );
  const finalText = (id: string, i: number) => (i % 4 === 0 ? `${corpus[id]!} extra river` : corpus[id]!);
  const fresh = new NoteIndex();
  fresh.sync(kept.map((id, i) => note(id, finalText(id, i), 'f')));
  t.deepEqual(incremental.stats(), fresh.stats());
  for (const q of ['river', 'moss lichen', 'stone bar', 'note extra rive']) {
    t.deepEqual(incremental.rank(q), fresh.rank(q), q);
  }
});

test('any history of syncs answers exactly like a fresh index of the final notes', (t) => {
  const word = fc.constantFrom(
    'river',
    'stone',
    'moss',
    'lichen',
    'fern',
    'bark',
    'rivers',
    'stones',
    '庭',
    '水やり',
    'x',
  );
  const text = fc.array(word, { minLength: 1, maxLength: 12 }).map((ws) => `# ${ws[0]}\n${ws.join(' ')}`);
  const state = fc.dictionary(fc.constantFrom('a.md', 'b.md', 'c/d.md', 'e.md', 'f.md', 'g.md'), text);
  fc.assert(
    fc.property(fc.array(state, { minLength: 1, maxLength: 5 }), (history) => {
      const incremental = new NoteIndex();
      for (const step of history) incremental.sync(Object.entries(step).map(([id, body]) => note(id, body, body)));
      const last = history[history.length - 1]!;
      const fresh = new NoteIndex();
      fresh.sync(
        Object.entries(last)
          .reverse()
          .map(([id, body]) => note(id, body, body)),
      );
      for (const q of ['river', 'stone moss', 'riv', 'lichen fern bark', '水やり', 'rivers stones']) {
        if (JSON.stringify(incremental.search(q, 10, LIMITS)) !== JSON.stringify(fresh.search(q, 10, LIMITS)))
          return false;
        if (JSON.stringify(incremental.rank(q)) !== JSON.stringify(fresh.rank(q))) return false;
      }
      return JSON.stringify(incremental.stats()) === JSON.stringify(fresh.stats());
    }),
    { numRuns: 200, seed: 11 },
  );
  t.pass();
});

test('the sum of id, title and snippet code points never exceeds total_chars', (t) => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 300 }),
      fc.integer({ min: 1, max: 600 }),
      fc.integer({ min: 1, max: 10 }),
      (snippetChars, extra, limit) => {
        const totalChars = snippetChars + extra;
        const notes: Record<string, string> = {};
        for (let i = 0; i < 12; i++)
          notes[`n${i}.md`] = `# Title ${'😀'.repeat(i)} ${i}\n${'meadow grass '.repeat(i * 7 + 1)}`;
        const { hits } = indexOf(notes).search('meadow', limit, {
          snippet_chars: snippetChars,
          total_chars: totalChars,
        });
        const used = hits.reduce(
          (n, h) => n + Array.from(h.id).length + Array.from(h.title ?? '').length + Array.from(h.snippet).length,
          0,
        );
        return (
          used <= totalChars && hits.length <= limit && hits.every((h) => Array.from(h.snippet).length <= snippetChars)
        );
      },
    ),
    { numRuns: 100, seed: 3 },
  );
  t.pass();
});

/** A generated document: id and field texts (title '' when none). */
interface Doc {
  id: string;
  title: string;
  body: string;
  meta: string;
}

function generatedDocs(count: number, vocabulary: number, seed: number): Doc[] {
  let state = seed;
  const next = (n: number): number => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return state % n;
  };
  const word = (): string => {
    const w = `w${next(vocabulary).toString(36)}`;
    return next(9) === 0 ? w.toUpperCase() : next(13) === 0 ? `${w}'s` : w;
  };
  const docs: Doc[] = [];
  for (let i = 0; i < count; i++) {
    const body = Array.from({ length: 5 + next(120) }, word).join(next(2) === 0 ? ' ' : ', ');
    docs.push({
      id: `g${i}.md`,
      title: next(4) === 0 ? '' : `${word()} ${word()}`,
      body,
      meta: next(3) === 0 ? `${word()}\n${word()}` : '',
    });
  }
  return docs;
}

/** The note text whose fields are `d`'s (front matter aliases carry the meta lines). */
function textOf(d: Doc): string {
  const meta = d.meta === '' ? '' : `---\naliases: [${d.meta.split('\n').join(', ')}]\n---\n`;
  return `${meta}${d.title === '' ? '' : `# ${d.title}\n`}${d.body}`;
}

test('batches of syncs, small and large, with removals between them, answer like a fresh index and like MiniSearch', (t) => {
  const docs = generatedDocs(300, 400, 9);
  // A small staging log, so large batches are written in several flushes.
  const ix = new NoteIndex(512);
  let at = 0;
  const held = new Map<string, Doc>();
  for (const size of [1, 1, 2, 40, 120, 3, 1, 60, 72]) {
    for (const d of docs.slice(at, at + size)) held.set(d.id, d);
    at += size;
    let k = 0;
    for (const id of [...held.keys()]) if (k++ % (7 + size) === 0 && held.size > 1) held.delete(id);
    const notes = [...held.values()].map((d) => note(d.id, textOf(d), textOf(d)));
    ix.sync(notes);
    const fresh = new NoteIndex();
    fresh.sync(notes);
    const oracle = new MiniSearchOracle(notes.map((n) => ({ id: n.id, text: n.text! })));
    t.deepEqual(ix.stats(), fresh.stats(), `stats after a batch of ${size}`);
    // Terms of 3 or more code points: under the prefix cap, where the oracle (uncapped) must agree.
    for (const q of ['w1a', 'w2a w3b', 'w10', "w1's", 'w1z w20 w3b']) {
      t.deepEqual(ix.rank(q), fresh.rank(q), `${q} after a batch of ${size}`);
      sameRanking(t, ix.rank(q), oracle.rank(q), `${q} (oracle) after a batch of ${size}`);
    }
  }
});

test('after enough removals to compact terms and note numbers, the index still answers like a fresh one', (t) => {
  // Every sync replaces all notes with ones of fresh vocabulary, so most interned terms die and most note numbers
  // fall out of use: both are compacted.
  const ix = new NoteIndex();
  let last: Doc[] = [];
  for (let round = 0; round < 4; round++) {
    last = generatedDocs(300, 500, 100 + round).map((d) => ({
      ...d,
      body: `${d.body} r${round}x`.replace(/w/g, `v${round}`),
    }));
    ix.sync(last.map((d) => note(d.id, textOf(d), `r${round}`)));
  }
  const fresh = new NoteIndex();
  fresh.sync(last.map((d) => note(d.id, textOf(d), 'f')));
  t.deepEqual(ix.stats(), fresh.stats());
  for (const q of ['v31 v32', 'r3x', 'v3a', 'r2x']) t.deepEqual(ix.rank(q), fresh.rank(q), q);
});

test('terms sharing prefixes, thousands of first characters and astral characters expand like MiniSearch', (t) => {
  const words = [
    'abcdef',
    'abc',
    'abd',
    'a',
    'abcdeg',
    'b',
    'bcd',
    'bc',
    '庭',
    '庭園',
    '庭師',
    '𠀋x',
    '𠀋y',
    '𠀋',
    'x𠀋',
    'x𠀌',
  ];
  for (let c = 0x4e00; c < 0x4e00 + 1500; c += 3) words.push(String.fromCharCode(c, c + 1), String.fromCharCode(c));
  const notes: ScannedNote[] = [];
  for (let i = 0; i < 60; i++) {
    const body = words.filter((_, k) => (k * 7 + i) % 5 === 0 || k % 61 === i).join(' ');
    notes.push(note(`t${i}.md`, `# ${words[(i * 13) % words.length]!}\n${body}`));
  }
  const ix = new NoteIndex();
  ix.sync(notes.slice(0, 40));
  ix.sync(notes.filter((_, i) => i % 3 !== 0));
  const final = notes.filter((_, i) => i % 3 !== 0);
  const oracle = new MiniSearchOracle(final.map((n) => ({ id: n.id, text: n.text! })));
  for (const q of ['庭', 'ab', 'abc', 'abcdeh', '𠀋', 'x', '一', 'bcd abcdef', 'abcdez'])
    sameRanking(t, ix.rank(q), oracle.rank(q), q);
});

test('term frequencies past what a posting holds inline rank like MiniSearch, through removals and renumbering', (t) => {
  // A posting keeps a frequency below 1023 inline and a larger one beside its list: frequencies on both sides of
  // that edge, in the body and in the headings, must score as MiniSearch scores them, also after other notes are
  // removed (note numbers compacted) and after the heavy notes themselves are replaced.
  const notes: Record<string, string> = {};
  const tfs = [1, 2, 1021, 1022, 1023, 1024, 1500, 5000];
  tfs.forEach((tf, i) => {
    notes[`heavy/${i}.md`] = `# Heavy ${i}\n${'quokka '.repeat(tf)}\n## ${'wombat '.repeat(tf)}\nend`;
  });
  for (let i = 0; i < 1100; i++)
    notes[`light/${String(i).padStart(4, '0')}.md`] = `quokka ${i % 2 === 0 ? 'wombat' : 'bilby'}`;
  const ix = indexOf(notes);
  const check = (held: Record<string, string>, label: string): void => {
    const oracle = new MiniSearchOracle(Object.entries(held).map(([id, text]) => ({ id, text })));
    for (const q of ['quokka', 'wombat', 'quokka wombat', 'quok'])
      sameRanking(t, ix.rank(q), oracle.rank(q), `${label}: ${q}`);
  };
  check(notes, 'built');
  // Remove most light notes: the index renumbers the rest (more than 1,024 numbers, fewer than half in use).
  const kept = Object.fromEntries(
    Object.entries(notes).filter(([id]) => !id.startsWith('light/') || id < 'light/0100'),
  );
  ix.sync(Object.entries(kept).map(([id, text]) => note(id, text)));
  check(kept, 'after renumbering');
  // Replace the heavy notes with other frequencies and remove one of them.
  const changed = { ...kept };
  delete changed['heavy/5.md'];
  for (let i = 0; i < tfs.length; i++)
    if (i !== 5) changed[`heavy/${i}.md`] = `# Heavy ${i}\n${'quokka '.repeat(tfs[tfs.length - 1 - i]!)}\nend`;
  ix.sync(Object.entries(changed).map(([id, text]) => note(id, text)));
  check(changed, 'after replacing');
  t.is(ix.size, Object.keys(changed).length);
});

test('texts come back exactly as given: any code units, front matter, astral characters, lone surrogates', (t) => {
  // The store keeps texts as UTF-8 (a lone surrogate, which UTF-8 cannot hold, as UTF-16): snippets are cut from
  // the stored body, and removing a note re-reads its stored text to find its postings.
  fc.assert(
    fc.property(
      fc.string({ unit: 'binary', maxLength: 60 }),
      fc.string({ unit: 'grapheme', maxLength: 60 }),
      fc.boolean(),
      (a, b, front) => {
        const text = `${front ? `---\ntitle: ${b.replace(/\n/g, ' ')}\n---\n` : ''}zzmarker ${a} ${b} ${a}`;
        const ix = new NoteIndex();
        ix.sync([note('x.md', text, 'k1')]);
        const fresh = new NoteIndex();
        fresh.sync([note('x.md', text, 'k1')]);
        const limits = { snippet_chars: 50, total_chars: 4000 };
        t.deepEqual(ix.search('zzmarker', 5, limits), fresh.search('zzmarker', 5, limits));
        // The built index and the answer straight from the text agree on the snippet (cold.ts cuts it from the string).
        t.deepEqual(ix.search('zzmarker', 5, limits).hits, rankColdHits(text));
        // Removing it must find every posting again (it throws when one is missing).
        ix.sync([]);
        t.is(ix.size, 0);
        t.deepEqual(ix.search('zzmarker', 5, limits).hits, []);
      },
    ),
    { numRuns: 300 },
  );
});

/** The hits `searchCold` gives for `zzmarker` over the one note `x.md` holding `text`. */
function rankColdHits(text: string) {
  return searchCold([note('x.md', text, 'k1')], 'zzmarker', 5, { snippet_chars: 50, total_chars: 4000 }).hits;
}

test('a build written in many batches (lists grown, then repacked) answers exactly like one written at once', (t) => {
  // A small staging limit makes the first sync write its postings in many bulk batches: lists grow batch by batch
  // and are then moved into one buffer; later syncs append, replace and remove.
  const words = ['alder', 'birch', 'cedar', 'dogwood', 'elm', 'fir', 'ginkgo', 'hazel'];
  const text = (i: number, round: number): string =>
    `# Tree ${i}\n${Array.from({ length: 3 + ((i * 7 + round) % 11) }, (_, k) => words[(i * k + round) % words.length]).join(' ')}`;
  const notesOf = (count: number, round: number): ScannedNote[] =>
    Array.from({ length: count }, (_, i) =>
      note(`t/${String(i).padStart(4, '0')}.md`, text(i, round), `k${i}:${round}`),
    );
  const batched = new NoteIndex(2000);
  const whole = new NoteIndex();
  for (const [count, round] of [
    [400, 0],
    [420, 1],
    [150, 1],
    [500, 2],
  ] as const) {
    const notes = notesOf(count, round);
    batched.sync(notes);
    whole.sync(notes);
    for (const q of ['alder', 'birch cedar', 'tree', 'gink', 'hazle', 'tree 17'])
      t.deepEqual(batched.rank(q), whole.rank(q), `${count} notes, round ${round}: ${q}`);
    t.deepEqual(batched.stats(), whole.stats());
  }
});

test('a sync that drops many notes at once (a narrowing policy edit) and the one that brings them back answer like a fresh index', (t) => {
  const docs = generatedDocs(400, 400, 21);
  const ix = new NoteIndex();
  const all = docs.map((d) => note(d.id, textOf(d), textOf(d)));
  ix.sync(all);
  // Narrow: 300 of 400 notes leave the view in one sync (over the bulk threshold), a few others change.
  const kept = docs.filter((_, i) => i % 4 === 0);
  const narrowed = kept.map((d, i) =>
    i % 9 === 0 ? note(d.id, `${textOf(d)} w1a w2b`, `${textOf(d)}+`) : note(d.id, undefined, textOf(d)),
  );
  ix.sync(narrowed);
  const narrowedFresh = new NoteIndex();
  narrowedFresh.sync(kept.map((d, i) => note(d.id, i % 9 === 0 ? `${textOf(d)} w1a w2b` : textOf(d), 'f')));
  t.is(ix.size, kept.length);
  t.deepEqual(ix.stats(), narrowedFresh.stats());
  for (const q of ['w1a', 'w2a w3b', 'w10', 'w1z w20 w3b']) {
    t.deepEqual(ix.rank(q), narrowedFresh.rank(q), q);
    t.deepEqual(ix.search(q, 10, LIMITS), narrowedFresh.search(q, 10, LIMITS), q);
  }
  // Widen back: every note again, the changed ones as they now are.
  const widened = docs.map((d, i) =>
    i % 4 === 0 && (i / 4) % 9 === 0
      ? note(d.id, undefined, `${textOf(d)}+`)
      : i % 4 === 0
        ? note(d.id, undefined, textOf(d))
        : note(d.id, textOf(d), textOf(d)),
  );
  ix.sync(widened);
  const widenedFresh = new NoteIndex();
  widenedFresh.sync(
    docs.map((d, i) => note(d.id, i % 4 === 0 && (i / 4) % 9 === 0 ? `${textOf(d)} w1a w2b` : textOf(d), 'f')),
  );
  t.deepEqual(ix.stats(), widenedFresh.stats());
  const oracle = new MiniSearchOracle(
    docs.map((d, i) => ({ id: d.id, text: i % 4 === 0 && (i / 4) % 9 === 0 ? `${textOf(d)} w1a w2b` : textOf(d) })),
  );
  for (const q of ['w1a', 'w2a w3b', 'w10', 'w1z w20 w3b']) {
    t.deepEqual(ix.rank(q), widenedFresh.rank(q), q);
    sameRanking(t, ix.rank(q), oracle.rank(q), `${q} (oracle)`);
  }
});
