/**
 * The project's Obsidian-style vault (tests/corpora/vault: English and Japanese, names with spaces, Japanese letters
 * and NFD accents, front matter, wikilinks), copied into a trusted temp root, through the real bridge: "unicode" names
 * find and read real notes, "portable" skips them.
 */
import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { makeHome, makeTempDir, removeTree } from '../helpers/fixtures.js';
import { markdownFiles, VAULT, VAULT_NFD_NOTES } from '../helpers/corpora.js';
import { copyOwnerOnly } from '../../src/cli/demo.js';
import { createBridge } from '../../src/tools/bridge.js';
import type { Caller, ReadResult, SearchResult, ToolResult } from '../../src/tools/types.js';

let base = '';
let unicode: Caller;
let portable: Caller;
const bridge = createBridge({ log: () => {} });

test.before(() => {
  base = makeTempDir('mb-corpus-');
  const root = path.join(base, 'vault');
  copyOwnerOnly(VAULT, root);
  const policy = (names: string) => ({
    version: 1,
    root,
    allow: ['**'],
    names,
    limits: { max_results: 10, default_results: 5 },
  });
  const interactive = { cron: false, subagent: false };
  unicode = { home: makeHome(base, policy('unicode'), 'unicode').home, ...interactive };
  portable = { home: makeHome(base, policy('portable'), 'portable').home, ...interactive };
});
test.after.always(() => {
  if (base !== '') removeTree(base);
});

function hits(r: ToolResult): string[] {
  if (!r.ok || !('results' in r)) throw new Error(`search failed: ${JSON.stringify(r)}`);
  return (r as SearchResult).results.map((h) => h.id);
}

const PLAN = 'Projects/Garden irrigation/Plan.md';
const JAPANESE = /[\u3040-\u30ff\u4e00-\u9fff]/u;

test('corpus › the shipped vault keeps its decomposed (NFD) names through the checkout', (t) => {
  const nfd = markdownFiles(VAULT).filter((id) => id.normalize('NFC') !== id);
  t.deepEqual(nfd.map((id) => id.normalize('NFC')).sort(), [...VAULT_NFD_NOTES]);
});

test('corpus › with unicode names a note whose path has spaces is found and read', (t) => {
  const ids = hits(bridge.search({ query: 'irrigation valve', limit: 10 }, unicode));
  t.true(ids.includes(PLAN), ids.join(', '));
  const read = bridge.read({ id: PLAN }, unicode);
  t.true(read.ok);
  const text = fs.readFileSync(path.join(VAULT, PLAN), 'utf8');
  t.is((read as ReadResult).content.slice(0, 200), text.slice(0, 200));
});

test('corpus › with unicode names a Japanese query finds Japanese notes with Japanese names', (t) => {
  const ids = hits(bridge.search({ query: 'エイリアス', limit: 10 }, unicode));
  t.true(ids.length > 0);
  t.true(
    ids.every((id) => id.startsWith('日本語/')),
    ids.join(', '),
  );
  t.true(
    ids.some((id) => JAPANESE.test(id.slice('日本語/'.length))),
    'a note with a Japanese name is among them',
  );
  const first = ids.find((id) => JAPANESE.test(id.slice('日本語/'.length)))!;
  const read = bridge.read({ id: first }, unicode);
  t.true(read.ok, first);
  t.regex((read as ReadResult).content, /エイリアス/);
});

test('corpus › with portable names notes with spaces or Japanese letters are skipped', (t) => {
  const portableName = /^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/;
  for (const query of ['irrigation valve', 'エイリアス', 'git', 'backup']) {
    const ids = hits(bridge.search({ query, limit: 10 }, portable));
    t.true(
      ids.every((id) => portableName.test(id)),
      `${query}: ${ids.join(', ')}`,
    );
  }
  t.true(
    hits(bridge.search({ query: 'git commit', limit: 10 }, portable)).includes('Reference/git-cheatsheet.md'),
    'portable notes still work',
  );
  const refused = bridge.read({ id: PLAN }, portable);
  t.false(refused.ok);
  t.is(!refused.ok ? refused.error.code : '', 'not_found_or_denied');
});
