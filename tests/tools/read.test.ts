import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import fc from 'fast-check';
import { createBridge } from '../../src/tools/bridge.js';
import { escapeHidden } from '../../src/text/visible.js';
import { readWindow } from '../../src/tools/read.js';
import type { LogEvent, ReadResult } from '../../src/tools/types.js';
import { FOREIGN_UID, isRoot, writeNote } from '../helpers/fixtures.js';
import { type World, worldTracker } from './world.js';

const { world, removeAll } = worldTracker();
test.after.always(removeAll);

const NOT_FOUND = JSON.stringify({
  ok: false,
  error: { code: 'not_found_or_denied', message: 'No readable document has that id.' },
});

/** A read answer without its version (which is random per process), after checking that it is a version. */
function withoutVersion(r: unknown): Record<string, unknown> {
  const { version, ...rest } = r as Record<string, unknown>;
  if (typeof version !== 'string' || !/^[A-Za-z0-9_-]{22}$/.test(version)) throw new Error('no version');
  return rest;
}

test('read › returns the full text of an allowed note, its title, offset 0 and a version', (t) => {
  const w = world({ allow: ['projects/**'] });
  const text = '---\ntitle: kept in read\n---\n# Lantern Garden\n\nPlant blue asters.\n';
  writeNote(w.root, 'projects/garden.md', text);
  t.deepEqual(withoutVersion(createBridge().read({ id: 'projects/garden.md' }, w.caller)), {
    ok: true,
    id: 'projects/garden.md',
    title: 'kept in read',
    content: text,
    truncated: false,
    offset: 0,
  });
});

test('read › a capped note ends with a truncation line naming the offset to continue from', (t) => {
  const w = world({ limits: { read_chars: 5, snippet_chars: 5, total_chars: 5 } });
  writeNote(w.root, 'e.md', '😀😀漢字ab\ncd');
  t.deepEqual(withoutVersion(createBridge().read({ id: 'e.md' }, w.caller)), {
    ok: true,
    id: 'e.md',
    title: 'e',
    content: '😀😀漢字a\n[truncated: characters 0 to 4 of 9 shown; continue with offset 5]',
    truncated: true,
    offset: 0,
    next_offset: 5,
  });
  t.deepEqual(withoutVersion(createBridge().read({ id: 'e.md', offset: 5 }, w.caller)), {
    ok: true,
    id: 'e.md',
    title: 'e',
    content: 'b\ncd',
    truncated: false,
    offset: 5,
  });
  writeNote(w.root, 'f.md', '12345');
  t.deepEqual(withoutVersion(createBridge().read({ id: 'f.md' }, w.caller)), {
    ok: true,
    id: 'f.md',
    title: 'f',
    content: '12345',
    truncated: false,
    offset: 0,
  });
  // At and past the end: ok, empty, nothing follows.
  for (const offset of [5, 6, 1e9, Number.MAX_SAFE_INTEGER]) {
    t.deepEqual(withoutVersion(createBridge().read({ id: 'f.md', offset }, w.caller)), {
      ok: true,
      id: 'f.md',
      title: 'f',
      content: '',
      truncated: false,
      offset,
    });
  }
});

test('read › offset must be an integer of at least 0', (t) => {
  const w = world();
  writeNote(w.root, 'f.md', '12345');
  const bridge = createBridge({ log: () => undefined });
  for (const offset of [-1, 1.5, '3', null, Number.POSITIVE_INFINITY, Number.MAX_SAFE_INTEGER + 2]) {
    const r = bridge.read({ id: 'f.md', offset }, w.caller);
    t.deepEqual(
      r,
      {
        ok: false,
        error: {
          code: 'invalid_request',
          message: 'The request is invalid.',
          hint: 'offset: an integer of at least 0 (characters to skip; a read answer gives next_offset)',
        },
      },
      String(offset),
    );
  }
});

/** Reads `id` from offset 0 following next_offset to the end; returns the joined windows and the versions seen. */
function readAll(
  bridge: ReturnType<typeof createBridge>,
  id: string,
  caller: World['caller'],
): { text: string; calls: number; versions: Set<string> } {
  let offset = 0;
  let text = '';
  let calls = 0;
  const versions = new Set<string>();
  for (;;) {
    const r = bridge.read({ id, offset }, caller) as ReadResult;
    if (!r.ok) throw new Error(JSON.stringify(r));
    calls++;
    versions.add(r.version);
    if (r.next_offset === undefined) {
      text += r.content;
      return { text, calls, versions };
    }
    const note = r.content.lastIndexOf('\n[truncated: ');
    t0(r.content.slice(note).endsWith(`continue with offset ${r.next_offset}]`));
    text += r.content.slice(0, note);
    offset = r.next_offset;
  }
}

function t0(ok: boolean): void {
  if (!ok) throw new Error('truncation line does not name next_offset');
}

test('read › a 100,000-character note read in pieces gives back exactly its text (astral characters, CRLF)', (t) => {
  const w = world({ limits: { read_chars: 8000, max_file_bytes: 1_048_576 } });
  const pieces = ['word ', '😀', '\r\n', '漢字', '𝒜𝒷', 'é', '\n', 'line end\r\n'];
  let text = '';
  let cps = 0;
  for (let i = 0; cps < 100_000; i++) {
    const p = pieces[(i * 7) % pieces.length]!;
    text += p;
    cps += Array.from(p).length;
  }
  // Exactly 100,000 code points, ending on a surrogate pair boundary region.
  text = Array.from(text).slice(0, 100_000).join('');
  writeNote(w.root, 'long.md', text);
  const bridge = createBridge({ log: () => undefined });
  const got = readAll(bridge, 'long.md', w.caller);
  t.is(got.text, text);
  t.is(got.calls, 13);
  t.is(got.versions.size, 1);
  // Odd window sizes split surrogate pairs' neighbourhoods differently; still exact.
  w.setPolicy({ limits: { read_chars: 997, max_file_bytes: 1_048_576 } });
  t.is(readAll(bridge, 'long.md', w.caller).text, text);
});

test('read › every read is fresh: a note changed between two reads is read as it is now, with another version', (t) => {
  const w = world({ limits: { read_chars: 4 } });
  const file = writeNote(w.root, 'v.md', 'abcdefgh');
  const bridge = createBridge({ log: () => undefined });
  const first = bridge.read({ id: 'v.md' }, w.caller) as ReadResult;
  t.is(first.content.split('\n')[0], 'abcd');
  const again = bridge.read({ id: 'v.md' }, w.caller) as ReadResult;
  t.is(again.version, first.version, 'unchanged note, same version');
  fs.writeFileSync(file, 'ABCDEFGHIJ');
  const second = bridge.read({ id: 'v.md', offset: 4 }, w.caller) as ReadResult;
  t.is(second.content.split('\n')[0], 'EFGH');
  t.not(second.version, first.version);
  // A chmod alone (same bytes) changes the identity too.
  fs.chmodSync(file, 0o400);
  const third = bridge.read({ id: 'v.md', offset: 4 }, w.caller) as ReadResult;
  t.not(third.version, second.version);
  // The version is the same length and alphabet whatever the note, and does not contain the identity's numbers.
  const st = fs.statSync(file);
  t.false(third.version.includes(String(st.ino)));
  // Past the end after a shrink: ok and empty. Owner-writable again first: only root writes through a 0400 mode.
  fs.chmodSync(file, 0o600);
  fs.writeFileSync(file, 'ab');
  t.like(bridge.read({ id: 'v.md', offset: 4 }, w.caller), { ok: true, content: '', truncated: false, offset: 4 });
});

test('read › readWindow walks any text in windows that join to exactly the text', (t) => {
  fc.assert(
    fc.property(
      fc.string({
        unit: fc.oneof(fc.constantFrom('\u202E', '\u{E0041}', '\r\n'), fc.string({ unit: 'binary', maxLength: 1 })),
        maxLength: 300,
      }),
      fc.integer({ min: 1, max: 40 }),
      (text, size) => {
        let offset = 0;
        let out = '';
        for (let i = 0; i < 1000; i++) {
          const win = readWindow(text, offset, size);
          if (win.nextOffset === undefined) {
            out += win.content;
            break;
          }
          out += win.content.slice(0, win.content.lastIndexOf('\n[truncated: '));
          if (win.nextOffset <= offset) return false;
          offset = win.nextOffset;
        }
        return out === escapeHidden(text);
      },
    ),
    { numRuns: 300, seed: 14 },
  );
  // Hidden controls among the text: the windows join to its escaped form, offsets in the note's code points.
  const hidden = `a\u202Eb${String.fromCodePoint(0xe0041)}c`;
  t.deepEqual(readWindow(hidden, 1, 8), {
    content: '<U+202E>\n[truncated: characters 1 to 1 of 5 shown; continue with offset 2]',
    truncated: true,
    nextOffset: 2,
  });
  t.deepEqual(readWindow('😀😀😀', 3, 2), { content: '', truncated: false });
  t.deepEqual(readWindow('😀😀😀', 1, 1), {
    content: '😀\n[truncated: characters 1 to 1 of 3 shown; continue with offset 2]',
    truncated: true,
    nextOffset: 2,
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
