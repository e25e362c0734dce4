/**
 * The warm path (index by identity, listing memo; docs/DESIGN.md, "Why warm calls are cheap and still safe") never
 * hides a change. A chmod, an ACL change, a replaced file and a policy edit made right after a warm call are each
 * seen by the very next call, with the default racy margin and no waiting.
 */
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { createBridge } from '../../src/tools/bridge.js';
import type { ReadResult, SearchResult } from '../../src/tools/types.js';
import { grantMaskedUserWrite, writeNote } from '../helpers/fixtures.js';
import { worldTracker, type World } from './world.js';

const { world, removeAll } = worldTracker();
test.after.always(removeAll);

function warmWorld(): { w: World; bridge: ReturnType<typeof createBridge> } {
  const w = world({ allow: ['notes/**'] });
  writeNote(w.root, 'notes/alpha.md', '# Alpha\n\nThe lantern festival starts at dusk.\n');
  writeNote(w.root, 'notes/beta.md', '# Beta\n\nLanterns hang along the east fence.\n');
  const bridge = createBridge({ log: () => undefined });
  // Two calls: the first builds the index, the second is a warm call.
  for (let i = 0; i < 2; i++) t0(bridge.search({ query: 'lantern' }, w.caller));
  return { w, bridge };
}

function t0(r: unknown): SearchResult {
  const s = r as SearchResult;
  if (!s.ok) throw new Error('search refused');
  return s;
}
const idsOf = (r: unknown): string[] =>
  t0(r)
    .results.map((h) => h.id)
    .sort();

test('freshness › a chmod that makes a note group-writable is seen by the very next search and read', (t) => {
  const { w, bridge } = warmWorld();
  fs.chmodSync(path.join(w.root, 'notes/alpha.md'), 0o620);
  t.deepEqual(idsOf(bridge.search({ query: 'lantern' }, w.caller)), ['notes/beta.md']);
  t.false(bridge.read({ id: 'notes/alpha.md' }, w.caller).ok);
});

test('freshness › an ACL write grant (mask without write) is seen by the very next search and read', (t) => {
  const { w, bridge } = warmWorld();
  const file = path.join(w.root, 'notes/alpha.md');
  grantMaskedUserWrite(file);
  t.is(fs.statSync(file).mode & 0o077, 0o040, 'the mode bits alone show no write for anyone else');
  t.deepEqual(idsOf(bridge.search({ query: 'lantern' }, w.caller)), ['notes/beta.md']);
  t.false(bridge.read({ id: 'notes/alpha.md' }, w.caller).ok);
});

test('freshness › a note replaced by rename is read anew by the very next search', (t) => {
  const { w, bridge } = warmWorld();
  const tmp = path.join(w.root, 'notes/.alpha.tmp');
  fs.writeFileSync(tmp, '# Alpha\n\nThe lantern parade was moved to the harbour.\n', { mode: 0o600 });
  fs.renameSync(tmp, path.join(w.root, 'notes/alpha.md'));
  const r = t0(bridge.search({ query: 'harbour' }, w.caller));
  t.deepEqual(
    r.results.map((h) => h.id),
    ['notes/alpha.md'],
  );
  t.regex(r.results[0]!.snippet, /harbour/);
  t.regex((bridge.read({ id: 'notes/alpha.md' }, w.caller) as ReadResult).content, /harbour/);
});

test('freshness › a policy edit that denies a note is seen by the very next search and read', (t) => {
  const { w, bridge } = warmWorld();
  w.setPolicy({ allow: ['notes/**'], deny: ['notes/alpha.md'] });
  t.deepEqual(idsOf(bridge.search({ query: 'lantern' }, w.caller)), ['notes/beta.md']);
  t.false(bridge.read({ id: 'notes/alpha.md' }, w.caller).ok);
});
