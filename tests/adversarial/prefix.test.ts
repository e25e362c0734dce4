/**
 * Sibling-prefix roots and homes: a root `/x/mem` must never serve `/x/mem-secret` or `/x/memory`, and a home
 * `/x/home` never lends its policy to `/x/home-evil`. String-prefix containment is the classic fault here; the
 * bridge resolves every id by descriptors from the root, so no spelling reaches a sibling.
 */
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { makeHome, makeTempDir, mkdirs, removeTree, writeNote } from '../helpers/fixtures.js';
import { createBridge } from '../../src/tools/bridge.js';
import { MARK, NOT_FOUND, UNAVAILABLE, assertClean, idsOf, planted } from './support.js';

const base = makeTempDir('mb-adv-prefix-');
test.after.always(() => removeTree(base));

const root = mkdirs(base, 'mem');
writeNote(root, 'a.md', '# A\n\nlantern in the root\n');
for (const sibling of ['mem-secret', 'memory', 'mem.old', 'mem ', 'mem_']) {
  writeNote(mkdirs(base, sibling), 'a.md', planted(MARK.outside));
  writeNote(path.join(base, sibling), 'deep/b.md', planted(MARK.outside));
}
const { home } = makeHome(base, { version: 1, root, allow: ['**'], names: 'unicode' }, 'home');
const bridge = createBridge({ log: () => {} });
const caller = { home, cron: false, subagent: false };

test('prefix › no id spelling reaches a sibling directory whose name starts with the root name', (t) => {
  const ids = [
    '../mem-secret/a.md',
    '../memory/a.md',
    '..%2Fmem-secret/a.md',
    '-secret/a.md',
    'ory/a.md',
    '.old/a.md',
    ' /a.md',
    '_/a.md',
    `${base}/mem-secret/a.md`.slice(1),
    'mem-secret/a.md',
    'memory/deep/b.md',
  ];
  for (const id of ids) {
    const r = bridge.read({ id }, caller);
    const text = JSON.stringify(r);
    t.true(text === NOT_FOUND || (!r.ok && r.error.code === 'invalid_request'), id);
    assertClean(t, r, { tmp: base, root, home }, id);
  }
  t.true(bridge.read({ id: 'a.md' }, caller).ok);
});

test('prefix › search over a root with prefix siblings finds only the root’s notes', (t) => {
  const r = bridge.search({ query: `lantern ${MARK.outside}`, limit: 10 }, caller);
  assertClean(t, r, { tmp: base, root, home });
  t.deepEqual(idsOf(r), ['a.md']);
});

test('prefix › a policy root naming a sibling by a prefix spelling (trailing slash, dot, dot-dot) is unavailable', (t) => {
  const { home: h2, policyPath } = makeHome(base, { version: 1, root, allow: ['**'] }, 'home2');
  const c2 = { home: h2, cron: false, subagent: false };
  for (const bad of [
    `${root}/`,
    `${root}/.`,
    `${root}/../mem-secret/..${'/mem'}`,
    `${root}//`,
    `${base}//mem`,
    'mem',
    './mem',
    `${root}\u0000`,
  ]) {
    fs.writeFileSync(policyPath, JSON.stringify({ version: 1, root: bad, allow: ['**'] }));
    t.is(JSON.stringify(bridge.search({ query: 'lantern' }, c2)), UNAVAILABLE, JSON.stringify(bad));
    t.is(JSON.stringify(bridge.read({ id: 'a.md' }, c2)), UNAVAILABLE, JSON.stringify(bad));
  }
});

test('prefix › a home whose name extends a configured home has no policy of its own and gets nothing', (t) => {
  for (const name of ['home-evil', 'homex', 'home.bak']) mkdirs(base, name);
  for (const h of [`${home}-evil`, `${home}x`, `${home}.bak`, `${home}/`, `${home}/.`, `${home}/../home`]) {
    const c = { home: h, cron: false, subagent: false };
    t.is(JSON.stringify(bridge.search({ query: 'lantern' }, c)), UNAVAILABLE, h);
    t.is(JSON.stringify(bridge.read({ id: 'a.md' }, c)), UNAVAILABLE, h);
  }
});
