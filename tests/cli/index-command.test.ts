/**
 * `memory-bridge index` through the built CLI (docs/CLI.md §index): it writes the persisted index 0600 beside the
 * policy from the profile's own view (denied notes absent), says what it wrote, and refuses with a reason code, its
 * remedy and exit 1 when the policy or the plugin-data directory fails the trust rule; usage errors exit 2.
 */
import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { removeTree } from '../helpers/fixtures.js';
import { loadPolicy } from '../../src/policy/load.js';
import { loadPersistedIndex, persistedIndexPath } from '../../src/tools/persisted-index.js';
import { cli, makeTree, type Tree } from './tree.js';

let tree: Tree;
test.before(() => {
  tree = makeTree();
});
test.after.always(() => {
  if (tree !== undefined) removeTree(tree.base);
});

test.serial('writes the view of the policy, 0600, and a summary; --json gives the same as one object', (t) => {
  const r = cli(['index', '--home', tree.plainHome]);
  t.is(r.code, 0, r.stderr);
  const file = persistedIndexPath(tree.plainHome);
  t.regex(r.stdout, /^wrote .*search-index\.mbi: 3 notes, \d+ terms, \d+ postings, \d+ bytes in [\d.]+ s/);
  t.regex(r.stderr, /scanned 3 notes/);
  t.is(fs.statSync(file).mode & 0o777, 0o600);
  const loaded = loadPersistedIndex(tree.plainHome, loadPolicy(tree.plainHome));
  t.is(loaded.state, 'loaded');
  if (loaded.state === 'loaded')
    t.false(
      loaded.index.ids.some((id) => id.includes('private')),
      'denied note absent',
    );
  const json = cli(['index', '--home', tree.plainHome, '--json', '--quiet']);
  t.is(json.code, 0);
  t.is(json.stderr, '');
  t.like(JSON.parse(json.stdout), { file, notes: 3, cut: null });
});

test.serial('a refused policy or plugin-data directory writes nothing and exits 1 with the reason and remedy', (t) => {
  const home = tree.cronHome;
  const dir = path.dirname(persistedIndexPath(home));
  const policy = path.join(dir, 'policy.json');
  fs.chmodSync(policy, 0o620);
  try {
    const r = cli(['index', '--home', home]);
    t.is(r.code, 1);
    t.regex(r.stderr, /refused: policy_untrusted → /);
    t.false(fs.existsSync(persistedIndexPath(home)));
  } finally {
    fs.chmodSync(policy, 0o600);
  }
  fs.chmodSync(dir, 0o770);
  try {
    const r = cli(['index', '--home', home]);
    t.is(r.code, 1);
    t.regex(r.stderr, /refused: policy_untrusted/);
    t.false(fs.existsSync(persistedIndexPath(home)));
  } finally {
    fs.chmodSync(dir, 0o700);
  }
});

test('usage errors exit 2; --help exits 0', (t) => {
  t.is(cli(['index', 'extra']).code, 2);
  t.is(cli(['index', '--nope']).code, 2);
  const help = cli(['index', '--help']);
  t.is(help.code, 0);
  t.regex(help.stdout, /^usage: memory-bridge index/);
});
