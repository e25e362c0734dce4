/**
 * memory_bridge_search's `within` (docs/DESIGN.md "Narrowing a search"): it only narrows the policy's view, its
 * statistics come from the narrowed set, a within that reaches nothing allowed answers like one that matches
 * nothing, and a narrowed search is served by the profile's own view (no view, index or read of its own).
 */
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import fc from 'fast-check';
import { PatternError } from '../../src/policy/glob.js';
import { loadPolicy } from '../../src/policy/load.js';
import { createBridge } from '../../src/tools/bridge.js';
import { IndexCache, runSearch } from '../../src/tools/search.js';
import { SEARCH_INPUT_SCHEMA, TOOL_DESCRIPTIONS } from '../../src/tools/schemas.js';
import type { SearchResult } from '../../src/tools/types.js';
import { compileWithin, WITHIN_CACHE_SIZE } from '../../src/tools/within.js';
import { FOREIGN_UID, isRoot, writeNote } from '../helpers/fixtures.js';
import { addHome, countingOpens, worldTracker, type World } from './world.js';

const { world, removeAll } = worldTracker();
test.after.always(removeAll);

/** A tree with allowed, denied, unallowed and untrusted notes that all say "lantern". */
function tree(fields: Record<string, unknown> = {}): World {
  const w = world({ allow: ['projects/**', 'decisions/**', 'notes/*.md'], deny: ['**/private/**'], ...fields });
  writeNote(w.root, 'projects/garden.md', '# Garden\nlantern by the gate\n');
  writeNote(w.root, 'projects/sub/deep.md', '# Deep\nlantern lantern deep\n');
  writeNote(w.root, 'projects/private/secret.md', '# Secret\nlantern code 4711\n');
  writeNote(w.root, 'decisions/light.md', '# Light\nwe chose a lantern\n');
  writeNote(w.root, 'decisions/gw.md', '# Group writable\nlantern\n', 0o620);
  writeNote(w.root, 'notes/top.md', 'lantern notes\n');
  writeNote(w.root, 'notes/nested/no.md', 'lantern not allowed by notes/*.md\n');
  writeNote(w.root, 'other/outside.md', '# Outside\nlantern outside\n');
  return w;
}

function ids(r: unknown): string[] {
  const s = r as SearchResult;
  if (!s.ok) throw new Error(JSON.stringify(r));
  return s.results.map((h) => h.id).sort();
}

test('within › narrows the policy view to the notes one pattern matches', (t) => {
  const w = tree();
  const bridge = createBridge({ log: () => undefined });
  const search = (within?: string[]) =>
    bridge.search(
      within === undefined ? { query: 'lantern', limit: 10 } : { query: 'lantern', limit: 10, within },
      w.caller,
    );
  t.deepEqual(ids(search()), ['decisions/light.md', 'notes/top.md', 'projects/garden.md', 'projects/sub/deep.md']);
  t.deepEqual(ids(search(['decisions/**'])), ['decisions/light.md']);
  t.deepEqual(ids(search(['projects/*.md'])), ['projects/garden.md']);
  t.deepEqual(ids(search(['PROJECTS/**', 'notes/**'])), ['notes/top.md', 'projects/garden.md', 'projects/sub/deep.md']);
  t.deepEqual(ids(search(['**/{garden,light}.md'])), ['decisions/light.md', 'projects/garden.md']);
  // The unnarrowed view is unchanged after narrowed calls (which rank within it).
  t.deepEqual(ids(search()), ['decisions/light.md', 'notes/top.md', 'projects/garden.md', 'projects/sub/deep.md']);
});

test('within › a within reaching only denied, unallowed or untrusted notes answers exactly like one matching nothing', (t) => {
  const w = tree();
  const bridge = createBridge({ log: () => undefined });
  const nothing = JSON.stringify(bridge.search({ query: 'lantern', within: ['nowhere/at/all.md'] }, w.caller));
  t.is(nothing, JSON.stringify({ ok: true, results: [], truncated: false }));
  for (const within of [
    ['projects/private/**'],
    ['**/secret.md'],
    ['other/**'],
    ['notes/nested/**'],
    ['decisions/gw.md'],
    ['projects/private/secret.md', 'other/outside.md', 'decisions/gw.md', 'notes/nested/no.md'],
    ['**/private/**', '*/private/*.md'],
  ]) {
    t.is(JSON.stringify(bridge.search({ query: 'lantern', within }, w.caller)), nothing, within.join(' '));
    t.is(JSON.stringify(bridge.search({ query: '4711', within }, w.caller)), nothing, within.join(' '));
  }
});

test('within › ranking statistics come from the narrowed set: the answer equals that of a policy allowing only it', (t) => {
  const w = world({ allow: ['**'] });
  writeNote(w.root, 'a/one.md', '# One\nmoss moss stone\n');
  writeNote(w.root, 'a/two.md', '# Two\nstone stone stone moss\n');
  writeNote(w.root, 'b/three.md', '# Three\nmoss\n');
  for (let i = 0; i < 20; i++) writeNote(w.root, `b/filler${i}.md`, `stone ${'gravel '.repeat(i)}\n`);
  const bridge = createBridge({ log: () => undefined });
  const narrowedAnswer = JSON.stringify(bridge.search({ query: 'moss stone', within: ['a/**'] }, w.caller));
  w.setPolicy({ allow: ['a/**'] });
  t.is(
    narrowedAnswer,
    JSON.stringify(createBridge({ log: () => undefined }).search({ query: 'moss stone' }, w.caller)),
  );
});

test('within › invalid values are invalid_request with one fixed hint, before the policy is read', (t) => {
  const w = tree();
  fs.rmSync(w.policyPath); // a missing policy would be unavailable: the arguments are judged first
  const bridge = createBridge({ log: () => undefined });
  const hint = 'within: a list of 1 to 8 patterns in the policy\'s glob dialect, e.g. "decisions/**"';
  for (const within of [
    [],
    Array.from({ length: 9 }, (_, i) => `d${i}/**`),
    [''],
    ['/etc/**'],
    ['../x.md'],
    ['a/./b.md'],
    ['!(x)'],
    ['a**b'],
    ['a\\b'],
    ['x'.repeat(257)],
    ['{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}'],
    ['[z-a]'],
    ['e\u0301.md'],
    'projects/**',
    [1],
    null,
  ]) {
    t.deepEqual(
      bridge.search({ query: 'lantern', within }, w.caller),
      { ok: false, error: { code: 'invalid_request', message: 'The request is invalid.', hint } },
      JSON.stringify(within),
    );
  }
});

test('within › the schema and the tool description document it', (t) => {
  const within = SEARCH_INPUT_SCHEMA.properties.within;
  t.is(within.type, 'array');
  t.is(within.minItems, 1);
  t.is(within.maxItems, 8);
  t.is(within.items.maxLength, 256);
  t.regex(within.description, /only narrows/);
  t.regex(TOOL_DESCRIPTIONS.memory_bridge_search, /within/);
});

test.serial(
  'within › a narrowed search uses the profile view: no view, index or note read of its own, and no eviction',
  (t) => {
    const w = tree();
    const other = addHome(w, 'other', { allow: ['projects/**'] });
    // Two views fit: this home's and the other home's. Before, each distinct within list was a third view.
    const cache = new IndexCache(2, undefined, 0);
    const otherKey = IndexCache.keyOf(other.home!, loadPolicy(other.home!));
    const key = IndexCache.keyOf(w.caller.home!, loadPolicy(w.caller.home!));
    t.true((runSearch({ query: 'lantern' }, other, cache) as SearchResult).ok);
    t.true((runSearch({ query: 'lantern' }, w.caller, cache) as SearchResult).ok);
    const held = cache.get(key);
    const otherIndex = cache.get(otherKey);
    const patterns = [
      ['decisions/**'],
      ['projects/*.md'],
      ['nothing/matches/this.md'],
      ['**/{garden,light}.md'],
      ['zz0/**', 'zz1/**', 'zz2/**', 'zz3/**', 'zz4/**', 'zz5/**', 'zz6/**', 'zz7/**'],
      ...Array.from({ length: 12 }, (_, i) => [`churn${i}/**`]),
    ];
    for (const within of patterns) {
      const call = countingOpens(() => runSearch({ query: 'lantern', within }, w.caller, cache));
      t.true((call.value as SearchResult).ok);
      t.is(call.opens, 0, `no note is read again: ${within.join(' ')}`);
      t.is(cache.size, 2, 'no view of its own');
      t.true(cache.holds(otherKey), "the other home's view is kept");
      t.is(cache.get(key), held, 'the same index serves every within');
      t.is(held.size, 4, 'the profile index holds the whole view, not the narrowed notes');
    }
    const back = countingOpens(() => runSearch({ query: 'lantern' }, other, cache));
    t.is(back.opens, 0, "the other home's next call is warm");
    t.is(cache.get(otherKey), otherIndex);
  },
);

test('within › a note owned by another user never appears, whatever the within (needs root)', (t) => {
  if (!isRoot) {
    t.pass('skipped: needs root');
    return;
  }
  const w = world({ allow: ['**'] });
  const foreign = writeNote(w.root, 'x/foreign.md', 'lantern\n');
  fs.chownSync(foreign, FOREIGN_UID, FOREIGN_UID);
  writeNote(w.root, 'x/own.md', 'lantern\n');
  const bridge = createBridge({ log: () => undefined });
  for (const within of [['x/**'], ['x/foreign.md'], ['**/foreign.md'], ['**']])
    t.false(ids(bridge.search({ query: 'lantern', within }, w.caller)).includes('x/foreign.md'));
});

/** Pieces of the glob dialect, for generated within patterns. */
const SEGMENT = fc.oneof(
  fc.constantFrom('projects', 'decisions', 'notes', 'other', 'private', 'sub', 'nested', 'PROJECTS', 'Private'),
  fc.constantFrom('*', '**', '?*', 'p*', '*s', '[a-p]*', '[!p]*', '{projects,other}', '{private,sub}', 'n?tes'),
);
const LEAF = fc.constantFrom(
  '*.md',
  'garden.md',
  'secret.md',
  '*.MD',
  'gw.md',
  '{no,top}.md',
  '?????.md',
  'outside.md',
  '**',
);
const PATTERN = fc
  .tuple(fc.array(SEGMENT, { maxLength: 3 }), LEAF)
  .map(([segs, leaf]) => [...segs, leaf].join('/'))
  .filter((p) => !p.includes('**/**'));

test('within › property: no within value makes a denied, unallowed or untrusted note appear, and the answer equals that of the policy narrowed by hand', (t) => {
  const w = tree();
  const allowed = new Set(['decisions/light.md', 'notes/top.md', 'projects/garden.md', 'projects/sub/deep.md']);
  const bridge = createBridge({ log: () => undefined });
  const byHand = world({ allow: ['**'] });
  // The same files under a policy whose allow is the within list and whose deny is the original deny, with every
  // file the original policy does not allow removed (so "allow ∩ within" is what remains).
  for (const id of allowed) writeNote(byHand.root, id, fs.readFileSync(path.join(w.root, id)));
  writeNote(byHand.root, 'decisions/gw.md', '# Group writable\nlantern\n', 0o620);
  fc.assert(
    fc.property(fc.array(PATTERN, { minLength: 1, maxLength: 8 }), (within) => {
      const r = bridge.search({ query: 'lantern 4711', limit: 10, within }, w.caller) as SearchResult;
      if (!r.ok) return false;
      for (const hit of r.results) if (!allowed.has(hit.id)) return false;
      byHand.setPolicy({ allow: within, deny: ['**/private/**'] });
      const expected = createBridge({ log: () => undefined }).search(
        { query: 'lantern 4711', limit: 10 },
        byHand.caller,
      );
      return JSON.stringify(r) === JSON.stringify(expected);
    }),
    { numRuns: 60, seed: 1414 },
  );
  t.pass();
});

test('within › compiled lists are kept by their text, at most WITHIN_CACHE_SIZE of them; invalid ones never', (t) => {
  const list = ['{a,b,c,d}{e,f,g,h}{i,j,k,l}/**/*x*y*.md', 'decisions/**'];
  const first = compileWithin(list);
  t.is(compileWithin([...list]), first, 'the same text: the same compiled list');
  t.not(compileWithin([...list].reverse()), first, 'another order is another text');
  t.throws(() => compileWithin(['a**b']), { instanceOf: PatternError });
  t.throws(() => compileWithin(['a**b']), { instanceOf: PatternError }, 'refused again, not cached');
  for (let i = 0; i < WITHIN_CACHE_SIZE; i++) compileWithin([`fill${i}/**`]);
  t.not(compileWithin(list), first, 'dropped after WITHIN_CACHE_SIZE other lists');
});

const ID_SEGMENT = fc.constantFrom('projects', 'decisions', 'notes', 'private', 'sub', 'Private', 'nested', 'x', 'pa');
const NOTE_ID = fc
  .tuple(fc.array(ID_SEGMENT, { maxLength: 4 }), fc.constantFrom('garden.md', 'secret.md', 'top.md', 'a.md', 'no.md'))
  .map(([segs, leaf]) => [...segs, leaf].join('/'));

test('within › property: the scope selects exactly the ids the patterns match (directory answers are sound)', (t) => {
  fc.assert(
    fc.property(
      fc.array(PATTERN, { minLength: 1, maxLength: 8 }),
      fc.array(NOTE_ID, { maxLength: 40 }),
      (list, ids) => {
        const { set, scope } = compileWithin(list);
        const matches = scope.matcher();
        return ids.every((id) => matches(id) === set.matches(id));
      },
    ),
    { numRuns: 300, seed: 2208 },
  );
  t.pass();
});
