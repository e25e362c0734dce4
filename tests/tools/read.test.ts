import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { createBridge } from '../../src/tools/bridge.js';
import { capContent } from '../../src/tools/read.js';
import type { LogEvent } from '../../src/tools/types.js';
import { FOREIGN_UID, isRoot, writeNote } from '../helpers/fixtures.js';
import { worldTracker } from './world.js';

const { world, removeAll } = worldTracker();
test.after.always(removeAll);

const NOT_FOUND = JSON.stringify({
  ok: false,
  error: { code: 'not_found_or_denied', message: 'No readable document has that id.' },
});

test('read › returns the full text of an allowed note', (t) => {
  const w = world({ allow: ['projects/**'] });
  const text = '---\ntitle: kept in read\n---\n# Lantern Garden\n\nPlant blue asters.\n';
  writeNote(w.root, 'projects/garden.md', text);
  t.deepEqual(createBridge().read({ id: 'projects/garden.md' }, w.caller), {
    ok: true,
    id: 'projects/garden.md',
    title: 'kept in read',
    content: text,
    truncated: false,
  });
});

test('read › a capped note ends with the truncation note on its own line', (t) => {
  const w = world({ limits: { read_chars: 5, snippet_chars: 5, total_chars: 5 } });
  writeNote(w.root, 'e.md', '😀😀漢字ab\ncd');
  t.deepEqual(createBridge().read({ id: 'e.md' }, w.caller), {
    ok: true,
    id: 'e.md',
    title: 'e',
    content: '😀😀漢字a\n[truncated: first 5 characters shown]',
    truncated: true,
  });
  writeNote(w.root, 'f.md', '12345');
  t.deepEqual(createBridge().read({ id: 'f.md' }, w.caller), {
    ok: true,
    id: 'f.md',
    title: 'f',
    content: '12345',
    truncated: false,
  });
});

test('read › capContent counts code points and never splits one', (t) => {
  t.deepEqual(capContent('abc', 3), { content: 'abc', truncated: false });
  t.deepEqual(capContent('😀😀😀', 3), { content: '😀😀😀', truncated: false });
  t.deepEqual(capContent('😀😀😀😀', 3), { content: '😀😀😀\n[truncated: first 3 characters shown]', truncated: true });
  t.deepEqual(capContent('line\n\nmore', 5), {
    content: 'line\n\n[truncated: first 5 characters shown]',
    truncated: true,
  });
});

test('read › denied, outside-allow, missing, symlinked, hard-linked, untrusted, too deep, binary and invalid UTF-8 notes give identical bytes', (t) => {
  const w = world({ allow: ['projects/**'], deny: ['**/private/**'], limits: { max_depth: 3 } });
  const good = writeNote(w.root, 'projects/good.md', '# Good\n');
  writeNote(w.root, 'projects/private/secret.md', '# Secret\n');
  writeNote(w.root, 'other/outside.md', '# Outside\n');
  fs.symlinkSync(good, path.join(w.root, 'projects/link.md'));
  const linked = writeNote(w.root, 'projects/hard.md', '# Hard\n');
  fs.linkSync(linked, path.join(w.root, 'projects/hard2.md'));
  writeNote(w.root, 'projects/gw.md', '# Group writable\n', 0o620);
  writeNote(w.root, 'projects/a/b/c/deep.md', '# Deep\n');
  writeNote(w.root, 'projects/bin.md', Buffer.from([0x23, 0x20, 0x00, 0x41]));
  writeNote(w.root, 'projects/bad.md', Buffer.from([0x23, 0x20, 0xc3, 0x28]));
  writeNote(w.root, 'projects/notes.txt', 'text');
  const logs: LogEvent[] = [];
  const bridge = createBridge({ log: (e) => logs.push(e) });
  const ids = [
    'projects/private/secret.md',
    'other/outside.md',
    'projects/missing.md',
    'projects/link.md',
    'projects/hard.md',
    'projects/gw.md',
    'projects/a/b/c/deep.md',
    'projects/bin.md',
    'projects/bad.md',
    'projects/notes.txt',
    'projects/GOOD.md',
  ];
  for (const id of ids) t.is(JSON.stringify(bridge.read({ id }, w.caller)), NOT_FOUND, id);
  t.is(logs.length, ids.length, 'one log event per refusal');
  t.true(logs.every((e) => e.tool === 'memory_bridge_read'));
  t.true(bridge.read({ id: 'projects/good.md' }, w.caller).ok);
});

const rootTest = isRoot ? test : test.skip;
rootTest('read › a note owned by another user is not found (needs root)', (t) => {
  const w = world();
  const file = writeNote(w.root, 'n.md', '# N\n');
  fs.chownSync(file, FOREIGN_UID, FOREIGN_UID);
  t.is(JSON.stringify(createBridge({ log: () => undefined }).read({ id: 'n.md' }, w.caller)), NOT_FOUND);
});

test('read › a malformed id is invalid before the policy is even loaded', (t) => {
  const logs: string[] = [];
  const bridge = createBridge({ log: (e) => logs.push(e.reason) });
  // No home at all: an id syntax error must still win, proving it is checked first.
  const caller = { home: null, cron: false, subagent: false };
  for (const id of ['../etc/passwd', '/abs.md', 'a//b.md', 'a\\b.md', 'x/./y.md', 'nul\0.md']) {
    const r = bridge.read({ id }, caller);
    t.false(r.ok);
    t.is(!r.ok && r.error.code, 'invalid_request', id);
    t.true(!r.ok && typeof r.error.hint === 'string' && !r.error.hint.includes(id));
  }
  t.true(logs.every((reason) => reason === 'bad_id'));
});

test('read › cron and subagent reads need their opt-ins', (t) => {
  const w = world();
  writeNote(w.root, 'a.md', '# A\n');
  const bridge = createBridge({ log: () => undefined });
  const unavailable = { ok: false, error: { code: 'unavailable', message: 'Memory is unavailable.' } };
  t.deepEqual(bridge.read({ id: 'a.md' }, { ...w.caller, cron: true }), unavailable);
  t.deepEqual(bridge.read({ id: 'a.md' }, { ...w.caller, subagent: true }), unavailable);
  w.setPolicy({ allow_cron: true, allow_subagents: true });
  t.true(bridge.read({ id: 'a.md' }, { ...w.caller, cron: true, subagent: true }).ok);
});
