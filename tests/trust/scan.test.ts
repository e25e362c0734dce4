import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import test from 'ava';
import type { Native } from '../../native/types.js';
import { BridgeError } from '../../src/errors.js';
import { openTrustedDir } from '../../src/trust/path.js';
import { scanTree } from '../../src/trust/scan.js';
import type { KnownNotes, NoteFilter, ScanLimits, ScanResult } from '../../src/trust/types.js';
import {
  ACL_TAG,
  FOREIGN_GID,
  FOREIGN_UID,
  aclBytes,
  countingNative,
  isRoot,
  readyStatThread,
  scanTwoWays,
  makeFifo,
  makeTempDir,
  mkdirs,
  openDescriptorCount,
  removeTree,
  setXattr,
  writeNote,
  type AclEntrySpec,
} from '../helpers/fixtures.js';
import { ALLOW_ALL, KeyMap, NONE_KNOWN, filterDenying, limits, realNative, reasonOf } from './support.js';

const rootTest = isRoot ? test : test.skip;
const base = makeTempDir('mb-scan-');
test.after.always(() => removeTree(base));
const native = realNative();
// Every scan below runs with the stat thread and without (scanTwoWays), and must agree on both.
test.before(() => readyStatThread(native));
const STRANGER = 4242;

let counter = 0;
/** A fresh owner-only root directory for one test. */
function freshRoot(): string {
  return mkdirs(base, `root-${++counter}`);
}

function scan(
  root: string,
  filter: NoteFilter = ALLOW_ALL,
  lim: ScanLimits = limits(),
  known: KnownNotes = NONE_KNOWN,
  nat: Native = native,
): ScanResult {
  const fd = openTrustedDir(root, 'root', native);
  try {
    return scanTwoWays(fd, filter, lim, known, nat);
  } finally {
    native.close(fd);
  }
}

const ids = (r: ScanResult): string[] => r.notes.map((n) => n.id);

/** A named-user or named-group rwx ACL entry with a mask of r-x, so the mode bits show no group write. */
function maskedWriteAcl(p: string, kind: 'user' | 'group', id: number): void {
  const mode = fs.statSync(p).mode;
  const entries: AclEntrySpec[] = [{ tag: ACL_TAG.USER_OBJ, perm: (mode >> 6) & 7 }];
  if (kind === 'user') entries.push({ tag: ACL_TAG.USER, perm: 7, id });
  entries.push({ tag: ACL_TAG.GROUP_OBJ, perm: 0 });
  if (kind === 'group') entries.push({ tag: ACL_TAG.GROUP, perm: 7, id });
  entries.push({ tag: ACL_TAG.MASK, perm: 5 }, { tag: ACL_TAG.OTHER, perm: 0 });
  setXattr(p, 'system.posix_acl_access', aclBytes(entries));
}

test('scan › notes come in ascending byte order of names, depth first, directories and files interleaved', (t) => {
  const root = freshRoot();
  for (const id of ['b.md', 'B.md', '_c.md', 'a.md', 'a/x.md', 'a/b/y.md', 'a-z.md', 'a/B.md'])
    writeNote(root, id, `# ${id}\n`);
  const r = scan(root);
  t.deepEqual(ids(r), ['B.md', '_c.md', 'a/B.md', 'a/b/y.md', 'a/x.md', 'a-z.md', 'a.md', 'b.md']);
  t.is(r.notes.find((n) => n.id === 'a/b/y.md')?.text, '# a/b/y.md\n');
  t.false(r.truncated);
  t.deepEqual(r.skipped, {});
});

test('scan › a note’s key and stat come from its own descriptor', (t) => {
  const root = freshRoot();
  const file = writeNote(root, 'k.md', 'key');
  const st = fs.statSync(file, { bigint: true });
  const [note] = scan(root).notes;
  t.is(note?.key, `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`);
  t.is(note?.stat.ino, st.ino);
});

test('scan › hidden, non-Markdown and rule-breaking names are skipped without being opened; an NFD name passes the unicode rule', (t) => {
  const root = freshRoot();
  writeNote(root, 'ok.md', 'x');
  writeNote(root, '.obsidian/workspace.md', 'x');
  writeNote(root, '.hidden.md', 'x');
  writeNote(root, 'with space.md', 'x');
  writeNote(root, 'image.png', 'x');
  writeNote(root, 'UPPER.MD', 'x');
  writeNote(root, 'e\u0301.md', 'x'); // NFD
  writeNote(root, 'Pasted image 1.png', 'x'); // fails "portable", but is no note under any rule
  fs.writeFileSync(Buffer.concat([Buffer.from(`${root}/bad`), Buffer.from([0xff]), Buffer.from('.md')]), 'x');
  const counting = countingNative(native);
  const portable = scan(root, ALLOW_ALL, limits(), NONE_KNOWN, counting.native);
  t.deepEqual(ids(portable), ['ok.md']);
  t.deepEqual(counting.touched, ['statAt:ok.md', 'openFileAt:ok.md', 'statAt:ok.md']);
  t.is(portable.skipped.hidden, 2);
  t.is(portable.skipped.bad_name, 3);
  t.is(portable.skipped.not_markdown, 3);
  const unicode = scan(root, ALLOW_ALL, limits({ names: 'unicode' }));
  // The NFD name is served as stored (docs/POLICY.md §Names).
  t.deepEqual(ids(unicode), ['e\u0301.md', 'ok.md', 'with space.md']);
  t.is(unicode.skipped.bad_name, 1);
  t.is(unicode.skipped.not_markdown, 3);
});

test('scan › a name starting with a byte order mark is its own name, never an alias of the name without it', (t) => {
  const root = freshRoot();
  writeNote(root, 'a.md', 'plain');
  fs.writeFileSync(path.join(root, '\ufeffa.md'), 'with bom');
  const r = scan(root, ALLOW_ALL, limits({ names: 'unicode' }));
  t.deepEqual(
    r.notes.map((n) => [n.id, n.text]),
    [['a.md', 'plain']],
  );
  t.is(r.skipped.bad_name, 1);
});

test('scan › symlinks are skipped: leaf, directory in the middle, loop and dangling', (t) => {
  const root = freshRoot();
  writeNote(root, 'real.md', 'x');
  writeNote(root, 'dir/inner.md', 'x');
  fs.symlinkSync('real.md', path.join(root, 'leaf.md'));
  fs.symlinkSync('dir', path.join(root, 'linkdir'));
  fs.symlinkSync('loop.md', path.join(root, 'loop.md'));
  fs.symlinkSync('nowhere.md', path.join(root, 'dangling.md'));
  fs.symlinkSync(base, path.join(root, 'outside'));
  const r = scan(root);
  t.deepEqual(ids(r), ['dir/inner.md', 'real.md']);
  t.is(r.skipped.symlink, 5);
});

test('scan › a hard-linked note is skipped under both names', (t) => {
  const root = freshRoot();
  const a = writeNote(root, 'a.md', 'x');
  fs.linkSync(a, path.join(root, 'b.md'));
  writeNote(root, 'c.md', 'x');
  const r = scan(root);
  t.deepEqual(ids(r), ['c.md']);
  t.is(r.skipped.hard_link, 2);
});

test('scan › a group-writable directory is skipped with everything in it', (t) => {
  const root = freshRoot();
  writeNote(root, 'shared/a.md', 'x');
  writeNote(root, 'mine/b.md', 'x');
  fs.chmodSync(path.join(root, 'shared'), 0o770);
  const r = scan(root);
  t.deepEqual(ids(r), ['mine/b.md']);
  t.is(r.skipped.group_writable, 1);
});

test('scan › group- and world-writable notes are skipped', (t) => {
  const root = freshRoot();
  writeNote(root, 'gw.md', 'x', 0o620);
  writeNote(root, 'ww.md', 'x', 0o602);
  writeNote(root, 'ok.md', 'x', 0o644);
  const r = scan(root);
  t.deepEqual(ids(r), ['ok.md']);
  t.is(r.skipped.group_writable, 1);
  t.is(r.skipped.world_writable, 1);
});

test('scan › an ACL write grant skips a note and a directory (named user and named group)', (t) => {
  const root = freshRoot();
  const f = writeNote(root, 'acl-user.md', 'x');
  const g = writeNote(root, 'acl-group.md', 'x');
  writeNote(root, 'acl-dir/inside.md', 'x');
  writeNote(root, 'ok.md', 'x');
  maskedWriteAcl(f, 'user', STRANGER);
  maskedWriteAcl(g, 'group', 0);
  maskedWriteAcl(path.join(root, 'acl-dir'), 'user', STRANGER);
  const r = scan(root);
  t.deepEqual(ids(r), ['ok.md']);
  t.is(r.skipped.acl_write, 3);
});

test('scan › an ACL write entry for the running user does not skip the note', (t) => {
  const root = freshRoot();
  const f = writeNote(root, 'self.md', 'x');
  maskedWriteAcl(f, 'user', process.getuid!());
  t.deepEqual(ids(scan(root)), ['self.md']);
});

rootTest('scan › notes and directories owned by another user are skipped (needs root)', (t) => {
  const root = freshRoot();
  const f = writeNote(root, 'foreign.md', 'x');
  writeNote(root, 'foreign-dir/in.md', 'x');
  writeNote(root, 'ok.md', 'x');
  fs.chownSync(f, FOREIGN_UID, FOREIGN_GID);
  fs.chownSync(path.join(root, 'foreign-dir'), FOREIGN_UID, FOREIGN_GID);
  const r = scan(root);
  t.deepEqual(ids(r), ['ok.md']);
  t.is(r.skipped.untrusted_owner, 2);
});

test('scan › a FIFO and a socket named like notes never block the scan and are skipped', async (t) => {
  const root = freshRoot();
  makeFifo(path.join(root, 'fifo.md'));
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(path.join(root, 'sock.md'), resolve));
  try {
    writeNote(root, 'ok.md', 'x');
    const r = scan(root);
    t.deepEqual(ids(r), ['ok.md']);
    t.is(r.skipped.not_regular, 2);
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

rootTest('scan › a filesystem mounted inside the root is skipped as another device (needs root)', (t) => {
  const root = freshRoot();
  writeNote(root, 'ok.md', 'x');
  const mnt = mkdirs(root, 'mnt');
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'mode=0700,size=1m', 'tmpfs', mnt]);
  if (mounted.status !== 0) return t.fail(`mount failed: ${mounted.stderr}`);
  try {
    writeNote(mnt, 'inside.md', 'x');
    const r = scan(root);
    t.deepEqual(ids(r), ['ok.md']);
    t.is(r.skipped.other_device, 1);
  } finally {
    spawnSync('umount', [mnt]);
  }
});

test('scan › notes deeper than max_depth are not returned, and the look-ahead sets truncated for an allowed name', (t) => {
  const root = freshRoot();
  writeNote(root, 'a.md', 'x');
  writeNote(root, 'd1/b.md', 'x');
  writeNote(root, 'd1/d2/c.md', 'x');
  const counting = countingNative(native);
  const r = scan(root, ALLOW_ALL, limits({ maxDepth: 2 }), NONE_KNOWN, counting.native);
  t.deepEqual(ids(r), ['a.md', 'd1/b.md']);
  t.true(r.truncated);
  // The look-ahead checks the one file it found against the trust rule (an untrusted one must not set truncated)
  // and stops there: it never reads it.
  t.deepEqual(
    counting.touched.filter((x) => x.endsWith(':c.md')),
    ['statAt:c.md', 'openFileAt:c.md'],
  );
  t.is(counting.calls.pread ?? 0, 4, 'only a.md and d1/b.md are read (one read and one end-of-file probe each)');
});

test('scan › the depth look-ahead finds allowed names several levels down', (t) => {
  const root = freshRoot();
  writeNote(root, 'd1/d2/d3/d4/deep.md', 'x');
  t.true(scan(root, ALLOW_ALL, limits({ maxDepth: 2 })).truncated);
  t.false(scan(root, ALLOW_ALL, limits({ maxDepth: 5 })).truncated);
});

test('scan › the depth look-ahead ignores denied, non-Markdown, hidden and untrusted names', (t) => {
  const root = freshRoot();
  writeNote(root, 'd1/d2/secret.md', 'x');
  writeNote(root, 'd1/d2/notes.txt', 'x');
  writeNote(root, 'd1/d2/.hidden.md', 'x');
  writeNote(root, 'd1/d2/.dot/x.md', 'x');
  writeNote(root, 'd1/gw/x.md', 'x');
  writeNote(root, 'd1/private/x.md', 'x');
  fs.symlinkSync(path.join(root, 'd1/d2/secret.md'), path.join(root, 'd1/link.md'));
  fs.chmodSync(path.join(root, 'd1/gw'), 0o770);
  const lim = limits({ maxDepth: 2 });
  const counting = countingNative(native);
  const r = scan(root, filterDenying('d1/d2/secret.md', 'd1/private/'), lim, NONE_KNOWN, counting.native);
  t.deepEqual(ids(r), []);
  t.false(r.truncated);
  t.false(counting.touched.includes('openDirAt:private'), 'a directory the filter may not enter is never opened');
  t.true(scan(root, ALLOW_ALL, lim).truncated, 'the same tree with everything allowed is truncated');
});

test('scan › a note below the 16-segment id limit cuts the scan (no max_depth reaches it); the look-ahead stops at 32', (t) => {
  const root = freshRoot();
  const sixteen = Array.from({ length: 15 }, () => 'd').join('/');
  writeNote(root, `${sixteen}/ok.md`, 'x'); // 16 segments
  const r = scan(root, ALLOW_ALL, limits({ maxDepth: 16 }));
  t.deepEqual(ids(r), [`${sixteen}/ok.md`]);
  t.false(r.truncated);
  writeNote(root, `${sixteen}/e/too-deep.md`, 'x'); // 17 segments: the read tool refuses its id
  const cut = scan(root, ALLOW_ALL, limits({ maxDepth: 16 }));
  t.deepEqual(ids(cut), [`${sixteen}/ok.md`]);
  t.true(cut.truncated);
  t.is(cut.cut, 'max_depth');
  const deep: string[] = [];
  scan(root, ALLOW_ALL, limits({ maxDepth: 16, onDeep: (id: string) => deep.push(id) }));
  t.deepEqual([...new Set(deep)], [`${sixteen}/e/too-deep.md`]); // told once per scan (scanTwoWays runs two)
  // Past 32 segments the look-ahead does not look: a chain that deep costs a bounded number of opens.
  const far = freshRoot();
  writeNote(far, `${Array.from({ length: 32 }, () => 'd').join('/')}/far.md`, 'x'); // 33 segments
  t.false(scan(far, ALLOW_ALL, limits({ maxDepth: 16 })).truncated);
});

test('scan › ids longer than 512 code points are skipped (search never returns an id read refuses)', (t) => {
  const root = freshRoot();
  const a = 'a'.repeat(200);
  writeNote(root, `${a}/${a}/${'y'.repeat(120)}.md`, 'x'); // 525 code points
  writeNote(root, `${a}/${a}/${'z'.repeat(100)}.md`, 'x'); // 505 code points
  const r = scan(root);
  t.deepEqual(ids(r), [`${a}/${a}/${'z'.repeat(100)}.md`]);
  t.is(r.skipped.bad_name, 1);
});

test('scan › oversized, binary and invalid UTF-8 notes are skipped; an oversized one costs no bytes', (t) => {
  const root = freshRoot();
  writeNote(root, 'a-big.md', 'x'.repeat(11));
  writeNote(root, 'b-nul.md', Buffer.from('ab\0cd'));
  writeNote(root, 'c-latin1.md', Buffer.from([0x63, 0x61, 0x66, 0xe9])); // "café" in Latin-1
  writeNote(root, 'd-surrogate.md', Buffer.from([0xed, 0xa0, 0x80]));
  writeNote(root, 'e-ok.md', 'x'.repeat(10));
  writeNote(root, 'f-ok.md', 'ü'.repeat(5));
  // Rejected content is still charged (its bytes were read); the oversized note is refused by metadata and is not.
  const r = scan(root, ALLOW_ALL, limits({ maxFileBytes: 10, maxTotalBytes: 5 + 4 + 3 + 10 + 10 }));
  t.deepEqual(ids(r), ['e-ok.md', 'f-ok.md']);
  t.is(r.notes[1]?.text, 'üüüüü');
  t.is(r.skipped.too_large, 1);
  t.is(r.skipped.binary, 1);
  t.is(r.skipped.invalid_utf8, 2);
  t.false(r.truncated);
});

test('scan › max_entries stops at the first candidate past the limit and sets truncated', (t) => {
  const root = freshRoot();
  for (const n of ['1', '2', '3', '4', '5']) writeNote(root, `${n}.md`, 'x');
  const three = scan(root, ALLOW_ALL, limits({ maxEntries: 3 }));
  t.deepEqual(ids(three), ['1.md', '2.md', '3.md']);
  t.true(three.truncated);
  const five = scan(root, ALLOW_ALL, limits({ maxEntries: 5 }));
  t.is(five.notes.length, 5);
  t.false(five.truncated);
});

test('scan › denied, non-note and untrusted names do not count toward max_entries', (t) => {
  const root = freshRoot();
  for (const n of ['1', '2', '3']) writeNote(root, `${n}.md`, 'x');
  writeNote(root, '0-denied.md', 'x');
  writeNote(root, '0-text.txt', 'x');
  const r = scan(root, filterDenying('0-denied.md'), limits({ maxEntries: 3 }));
  t.deepEqual(ids(r), ['1.md', '2.md', '3.md']);
  t.false(r.truncated);
  const linked = freshRoot();
  const a = writeNote(linked, 'a.md', 'x');
  fs.linkSync(a, path.join(linked, 'b.md'));
  writeNote(linked, 'c.md', 'x');
  const r2 = scan(linked, ALLOW_ALL, limits({ maxEntries: 2 }));
  t.deepEqual(ids(r2), ['c.md']);
  t.false(r2.truncated, 'untrusted (hard-linked) notes never use the budget (docs/SEARCH.md)');
});

test('scan › max_total_bytes stops before the note that would exceed it, cold and warm alike', (t) => {
  const root = freshRoot();
  for (const n of ['a', 'b', 'c']) writeNote(root, `${n}.md`, n.repeat(10));
  const cold = scan(root, ALLOW_ALL, limits({ maxTotalBytes: 25 }));
  t.deepEqual(ids(cold), ['a.md', 'b.md']);
  t.true(cold.truncated);
  const known = new KeyMap();
  for (const n of cold.notes) known.keys.set(n.id, n.key);
  const warm = scan(root, ALLOW_ALL, limits({ maxTotalBytes: 25 }), known);
  t.deepEqual(ids(warm), ['a.md', 'b.md']);
  t.true(warm.truncated);
  t.true(warm.notes.every((n) => n.text === undefined));
  const all = scan(root, ALLOW_ALL, limits({ maxTotalBytes: 30 }));
  t.is(all.notes.length, 3);
  t.false(all.truncated);
});

test('scan › a note the index already knows by identity is returned without text and never opened', (t) => {
  const root = freshRoot();
  for (const n of ['a', 'b', 'c']) writeNote(root, `${n}.md`, `text ${n}`);
  const first = scan(root);
  const known = new KeyMap();
  for (const n of first.notes) known.keys.set(n.id, n.key);
  const counting = countingNative(native);
  const warm = scan(root, ALLOW_ALL, limits(), known, counting.native);
  t.deepEqual(ids(warm), ['a.md', 'b.md', 'c.md']);
  t.true(warm.notes.every((n) => n.text === undefined));
  t.is(counting.calls.openFileAt ?? 0, 0);
  t.is(counting.calls.pread ?? 0, 0);
  t.is(counting.calls.statAt, 3, 'one statAt per candidate');

  // Changing a note changes its identity: it is opened and read again, the others still are not.
  fs.writeFileSync(path.join(root, 'b.md'), 'new text b');
  counting.reset();
  const after = scan(root, ALLOW_ALL, limits(), known, counting.native);
  t.deepEqual(
    after.notes.map((n) => n.text),
    [undefined, 'new text b', undefined],
  );
  t.deepEqual(
    counting.touched.filter((x) => x.startsWith('openFileAt')),
    ['openFileAt:b.md'],
  );
});

test('scan › a known note that became untrusted is skipped, not served from the index', (t) => {
  const root = freshRoot();
  writeNote(root, 'a.md', 'x');
  const known = new KeyMap();
  for (const n of scan(root).notes) known.keys.set(n.id, n.key);
  fs.chmodSync(path.join(root, 'a.md'), 0o620);
  const r = scan(root, ALLOW_ALL, limits(), known);
  t.deepEqual(ids(r), []);
  t.is(r.skipped.group_writable, 1);
});

test('scan › a directory the filter may not enter is never opened or listed, and denied notes are never touched', (t) => {
  const root = freshRoot();
  writeNote(root, 'private/secret.md', 'x');
  writeNote(root, 'denied.md', 'x');
  writeNote(root, 'ok.md', 'x');
  const counting = countingNative(native);
  const r = scan(root, filterDenying('private/', 'denied.md'), limits(), NONE_KNOWN, counting.native);
  t.deepEqual(ids(r), ['ok.md']);
  t.deepEqual(counting.touched, ['statAt:ok.md', 'openFileAt:ok.md', 'statAt:ok.md']);
  t.is(counting.calls.listDir, 1);
  t.is(r.rawEntries, 3);
});

test('scan › a directory named like a note is scanned as a directory', (t) => {
  const root = freshRoot();
  writeNote(root, 'folder.md/inner.md', 'x');
  t.deepEqual(ids(scan(root)), ['folder.md/inner.md']);
});

test('scan › rawEntries counts every listed entry, look-ahead included', (t) => {
  const root = freshRoot();
  writeNote(root, 'a.md', 'x');
  writeNote(root, 'x.txt', 'x');
  writeNote(root, 'd/e/f.md', 'x');
  writeNote(root, 'd/e/g.md', 'x');
  const r = scan(root, ALLOW_ALL, limits({ maxDepth: 1 }));
  // root: a.md, x.txt, d; d: e; e: f.md (the look-ahead stops at the first allowed name)
  t.true(r.truncated);
  t.true(r.rawEntries >= 4 && r.rawEntries <= 6);
});

test('scan › a closed root descriptor makes the scan unavailable', (t) => {
  const root = freshRoot();
  const fd = openTrustedDir(root, 'root', native);
  native.close(fd);
  const err = t.throws(() => scanTree(fd, ALLOW_ALL, limits(), NONE_KNOWN, native), { instanceOf: BridgeError });
  t.is(err?.code, 'unavailable');
});

test.serial('scan › many scans, successful and failing, leave the descriptor count unchanged', (t) => {
  const root = freshRoot();
  for (let i = 0; i < 20; i++) writeNote(root, `d${i % 4}/n${i}.md`, i % 5 === 0 ? Buffer.from([0xff]) : `note ${i}`);
  writeNote(root, 'gw/x.md', 'x');
  fs.chmodSync(path.join(root, 'gw'), 0o770);
  fs.symlinkSync('d0', path.join(root, 'link'));
  const a = writeNote(root, 'hard.md', 'x');
  fs.linkSync(a, path.join(root, 'hard2.md'));
  const throwing: KnownNotes = {
    has: (id) => {
      if (id === 'd2/n10.md') throw new Error('index failure');
      return false;
    },
  };
  const before = openDescriptorCount();
  for (let i = 0; i < 100; i++) {
    scan(root);
    scan(root, ALLOW_ALL, limits({ maxDepth: 1 }));
    scan(root, ALLOW_ALL, limits({ maxEntries: 3 }));
    t.regex(
      reasonOf(() => scan(root, ALLOW_ALL, limits(), throwing)),
      /index failure/,
    );
  }
  t.is(openDescriptorCount(), before);
});

test('scan › a note verified within the racy margin of its last change is verified again on the next call', (t) => {
  // Kernel timestamps are coarse: an ACL grant added in the same clock tick as the note's last change, right after
  // a verification, would leave the identity key unchanged. With the real margin, a freshly written note is stored
  // under a key the warm path never matches, so the next call opens it and sees the ACL.
  const root = freshRoot();
  writeNote(root, 'fresh.md', 'just written');
  const lim = limits({ racyMarginMs: undefined });
  const known = new KeyMap();
  const first = scan(root, ALLOW_ALL, lim, known);
  t.is(first.notes.length, 1);
  t.regex(first.notes[0]!.key, /:racy$/);
  known.keys.set('fresh.md', first.notes[0]!.key);
  const counting = countingNative(native);
  const second = scan(root, ALLOW_ALL, lim, known, counting.native);
  t.is(second.notes[0]!.text, 'just written', 'the racy note was read again, not vouched for by its key');
  t.true((counting.calls.openFileAt ?? 0) >= 1);
  maskedWriteAcl(path.join(root, 'fresh.md'), 'user', STRANGER);
  known.keys.set('fresh.md', second.notes[0]!.key);
  t.deepEqual(ids(scan(root, ALLOW_ALL, lim, known)), [], 'the ACL grant is seen by the very next call');
});

test('scan › a note whose last change is older than the racy margin is vouched for by its identity key', (t) => {
  const root = freshRoot();
  writeNote(root, 'settled.md', 'old enough');
  const lim = limits({ racyMarginMs: 0 });
  const known = new KeyMap();
  const first = scan(root, ALLOW_ALL, lim, known);
  t.notRegex(first.notes[0]!.key, /:racy$/);
  known.keys.set('settled.md', first.notes[0]!.key);
  const counting = countingNative(native);
  const second = scan(root, ALLOW_ALL, lim, known, counting.native);
  t.is(second.notes[0]!.text, undefined);
  t.is(counting.calls.openFileAt ?? 0, 0);
});

test('scan › a binary or invalid UTF-8 note never takes a trusted note’s max_entries place (its bytes stay charged)', (t) => {
  const root = freshRoot();
  writeNote(root, '0-nul.md', Buffer.from('zz\0\n'));
  writeNote(root, '1-latin1.md', Buffer.from([0x7a, 0xe9]));
  writeNote(root, '2-ok.md', 'zz ok\n');
  const r = scan(root, ALLOW_ALL, limits({ maxEntries: 1 }));
  t.deepEqual(ids(r), ['2-ok.md']);
  t.false(r.truncated);
  t.true(
    scan(root, ALLOW_ALL, limits({ maxEntries: 1, maxTotalBytes: 4 + 2 })).truncated,
    'bytes read are still charged',
  );
});

test('scan › the depth look-ahead ignores an allowed note too large to be served', (t) => {
  const root = freshRoot();
  writeNote(root, 'top.md', 'zz');
  writeNote(root, 'a/b/big.md', 'x'.repeat(50));
  t.false(scan(root, ALLOW_ALL, limits({ maxDepth: 2, maxFileBytes: 20 })).truncated);
  t.true(scan(root, ALLOW_ALL, limits({ maxDepth: 2, maxFileBytes: 60 })).truncated);
});
