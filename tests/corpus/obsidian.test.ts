/**
 * The real Obsidian help vault (English and Japanese, names with spaces and Japanese letters), copied into a
 * trusted temp root, through the real bridge: "unicode" names find and read real notes, "portable" skips them.
 */
import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { makeHome, makeTempDir, removeTree } from '../helpers/fixtures.js';
import { copyOwnerOnly } from '../../src/cli/demo.js';
import { createBridge } from '../../src/tools/bridge.js';
import type { Caller, ReadResult, SearchResult, ToolResult } from '../../src/tools/types.js';
import { REPO_ROOT } from '../cli/tree.js';

const CORPUS = path.resolve(REPO_ROOT, '../shared/corpora/obsidian-help');
const present = fs.existsSync(CORPUS);
const corpusTest = present ? test : test.skip;
const NEEDS = present ? '' : ' (skipped: ../shared/corpora/obsidian-help is absent)';

let base = '';
let unicode: Caller;
let portable: Caller;
const bridge = createBridge({ log: () => {} });

test.before(() => {
  if (!present) return;
  base = makeTempDir('mb-corpus-');
  const root = path.join(base, 'vault');
  copyOwnerOnly(CORPUS, root);
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

const CALLOUTS = 'en/Editing and formatting/Callouts.md';

corpusTest(`corpus › with unicode names a note whose path has spaces is found and read${NEEDS}`, (t) => {
  const ids = hits(bridge.search({ query: 'callout blockquote', limit: 10 }, unicode));
  t.true(ids.includes(CALLOUTS), ids.join(', '));
  const read = bridge.read({ id: CALLOUTS }, unicode);
  t.true(read.ok);
  const text = fs.readFileSync(path.join(CORPUS, CALLOUTS), 'utf8');
  t.is((read as ReadResult).content.slice(0, 200), text.slice(0, 200));
});

corpusTest(`corpus › with unicode names a Japanese query finds Japanese notes with Japanese names${NEEDS}`, (t) => {
  const ids = hits(bridge.search({ query: 'エイリアス', limit: 10 }, unicode));
  t.true(ids.length > 0);
  t.true(
    ids.every((id) => id.startsWith('ja/')),
    ids.join(', '),
  );
  t.true(
    ids.some((id) => /[\u3040-\u30ff\u4e00-\u9fff]/u.test(id)),
    'a note with a Japanese name is among them',
  );
  const first = ids.find((id) => /[\u3040-\u30ff]/u.test(id))!;
  const read = bridge.read({ id: first }, unicode);
  t.true(read.ok, first);
  t.regex((read as ReadResult).content, /エイリアス/);
});

corpusTest(`corpus › with portable names notes with spaces or Japanese letters are skipped${NEEDS}`, (t) => {
  const portableName = /^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/;
  for (const query of ['callout blockquote', 'エイリアス', 'canvas', 'plugin']) {
    const ids = hits(bridge.search({ query, limit: 10 }, portable));
    t.true(
      ids.every((id) => portableName.test(id)),
      `${query}: ${ids.join(', ')}`,
    );
  }
  t.true(
    hits(bridge.search({ query: 'canvas', limit: 10 }, portable)).includes('en/Plugins/Canvas.md'),
    'portable notes still work',
  );
  const refused = bridge.read({ id: CALLOUTS }, portable);
  t.false(refused.ok);
  t.is(!refused.ok ? refused.error.code : '', 'not_found_or_denied');
});
