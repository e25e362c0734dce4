/**
 * Filters and section reads over the project's Obsidian-style vault (tests/corpora/vault: front matter tags as lists,
 * inline nested tags, headings), copied into a trusted temp root, through the real bridge (docs/TOOLS.md §Filters,
 * §memory_bridge_read). A denied folder holding the same tag is never shown.
 */
import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { makeHome, makeTempDir, removeTree } from '../helpers/fixtures.js';
import { VAULT } from '../helpers/corpora.js';
import { copyOwnerOnly } from '../../src/cli/demo.js';
import { createBridge } from '../../src/tools/bridge.js';
import type { Caller, OutlineResult, ReadResult, SearchResult, ToolResult } from '../../src/tools/types.js';

let base = '';
let caller: Caller;
const bridge = createBridge({ log: () => {} });
const PLAN = 'Projects/Garden irrigation/Plan.md';

test.before(() => {
  base = makeTempDir('mb-corpus-filters-');
  const root = path.join(base, 'vault');
  copyOwnerOnly(VAULT, root);
  const policy = {
    version: 1,
    root,
    allow: ['**'],
    deny: ['Meetings/**'],
    names: 'unicode',
    limits: { max_results: 10, default_results: 5 },
  };
  caller = { home: makeHome(base, policy, 'home').home, cron: false, subagent: false };
});
test.after.always(() => {
  if (base !== '') removeTree(base);
});

function ids(r: ToolResult): string[] {
  if (!r.ok || !('results' in r)) throw new Error(`search failed: ${JSON.stringify(r)}`);
  return (r as SearchResult).results.map((h) => h.id).sort();
}

test('vault › front matter lists and inline nested tags select the tagged notes; the denied meeting never shows', (t) => {
  const garden = ids(bridge.search({ tags: ['project/garden'], limit: 10 }, caller));
  t.deepEqual(garden, [
    'Projects/Garden irrigation/Controller firmware.md',
    'Projects/Garden irrigation/Parts list.md',
    PLAN,
    '日本語/庭の水やり.md',
  ]);
  t.false(
    garden.some((id) => id.startsWith('Meetings/')),
    'the denied retro carries the tag and stays out',
  );
  // Home.md: "(#project/garden, #project/homelab)" — only the second follows white space, so only it is a tag.
  t.deepEqual(ids(bridge.search({ tags: ['project/homelab'], limit: 10 }, caller)), [
    'Home.md',
    'Projects/Home lab/Backup rotation.md',
    'Projects/Home lab/Network map.md',
  ]);
  const parent = ids(bridge.search({ tags: ['PROJECT'], limit: 10 }, caller));
  t.true(garden.every((id) => parent.includes(id)) && parent.includes('Projects/Home lab/Network map.md'));
  t.deepEqual(ids(bridge.search({ query: 'controller', tags: ['project/garden', 'code'] }, caller)), [
    'Projects/Garden irrigation/Controller firmware.md',
  ]);
});

test('vault › a section of a real note and its outline', (t) => {
  const outline = bridge.read({ id: PLAN, outline: true }, caller) as OutlineResult;
  t.deepEqual(
    outline.outline.map((h) => [h.level, h.text]),
    [
      [1, 'Garden irrigation plan'],
      [2, 'Goals'],
      [2, 'Layout'],
    ],
  );
  const text = fs.readFileSync(path.join(VAULT, PLAN), 'utf8');
  const goals = bridge.read({ id: PLAN, section: 'goals' }, caller) as ReadResult;
  t.is(goals.content, text.slice(text.indexOf('## Goals'), text.indexOf('## Layout')));
  t.is(goals.section, 'Goals');
});
