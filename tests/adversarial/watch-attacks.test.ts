/**
 * Attacks on change notification (docs/DESIGN.md §Change notification): after a warm-up in which kept answers
 * stood in for statx, one sequence of real filesystem operations, and the next searches of the warm bridge must
 * answer byte for byte what a bridge without notification (every note statted, no warm state) answers in the same
 * state. Renames and exchanges of files and directories (renameat2 RENAME_EXCHANGE through python3 ctypes), a
 * directory moved out and another moved in, the root replaced, a name swapped between the watch and the statx,
 * narrowed searches (`within`, which rank within the same view), bind mounts (root only), a mount in another mount namespace (root
 * only), stores through a shared writable mapping (python3 mmap).
 *
 * The search tool keeps a listing for reuse only when it was taken more than 3 s after its directory's last change,
 * so the trees are written when this file loads and the tests start once they are that old (as in
 * tests/tools/watch.test.ts). Serial: the mount table and the watch counts are per process.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import test, { type ExecutionContext } from 'ava';
import { getNative } from '../../native/index.js';
import { createBridge } from '../../src/tools/bridge.js';
import type { Bridge, ToolResult } from '../../src/tools/types.js';
import { openTrustedDir } from '../../src/trust/path.js';
import { notesVouched } from '../../src/trust/warm/watch.js';
import { isRoot, makeTempDir, mkdirs, removeTree, writeNote } from '../helpers/fixtures.js';
import { MARK, idsOf } from './support.js';
import { makeWorld, type World } from '../tools/world.js';

const native = getNative()!;
const worlds: World[] = [];
const spares: string[] = [];
test.after.always(() => {
  for (const w of worlds) removeTree(w.tmp);
  for (const d of spares) removeTree(d);
});

/** Notification needs inotify and a local filesystem under the temporary directory. */
const supported = ((): boolean => {
  if (native?.watchOpen === undefined || native.localFilesystem === undefined) return false;
  const dir = makeTempDir('mb-watchatk-');
  spares.push(dir);
  const fd = openTrustedDir(dir, 'root', native);
  try {
    return native.localFilesystem(fd);
  } finally {
    native.close(fd);
  }
})();
const python = spawnSync('python3', ['-c', 'import ctypes, mmap'], { stdio: 'ignore' }).status === 0;
const watchTest = supported && python ? test.serial : test.skip;
const rootWatchTest = supported && python && isRoot ? test.serial : test.skip;

/** Body of a note: its own word, the shared word "lantern", padded so that swapped notes have equal sizes. */
const body = (word: string): string => `# ${word}\n\nlantern ${word}\n`.padEnd(64, '.');

/** The word of each note of the tree. */
const WORDS: Record<string, string> = { 'a/n1': 'amber', 'a/n2': 'azure', 'b/n1': 'basil', 'b/n2': 'beryl' };

/**
 * A world whose root holds `a/` and `b/` with the same two names each (`n1.md`, `n2.md`), `top.md`, and an
 * `outside/` directory beside the root (same filesystem) holding `a/n1.md`, `a/n2.md` and `n1.md` whose bodies carry
 * a marker word at the same sizes (trusted notes, served once moved into the tree). `b/n2.md` is world-writable
 * (never served).
 */
function attackWorld(fields: Record<string, unknown> = {}): World & { outside: string } {
  const w = makeWorld(fields);
  worlds.push(w);
  for (const dir of ['a', 'b'])
    for (const n of ['n1', 'n2']) writeNote(w.root, `${dir}/${n}.md`, body(WORDS[`${dir}/${n}`]!), 0o644);
  fs.chmodSync(path.join(w.root, 'b/n2.md'), 0o646);
  writeNote(w.root, 'top.md', body('topword'), 0o644);
  const outside = mkdirs(w.tmp, 'outside');
  for (const n of ['a/n1', 'a/n2', 'n1']) writeNote(outside, `${n}.md`, body(MARK.untrusted), 0o644);
  for (const dir of [w.root, path.join(w.root, 'a'), path.join(w.root, 'b'), outside, path.join(outside, 'a')])
    fs.chmodSync(dir, 0o755);
  return Object.assign(w, { outside });
}

// Written now, used once their directories are older than the listings' racy margin (3 s).
const written = Date.now();
const W = {
  fileSwap: attackWorld(),
  dirSwap: attackWorld(),
  outSwap: attackWorld(),
  dirMoved: attackWorld(),
  rootSwap: attackWorld(),
  raceSwap: attackWorld(),
  within: attackWorld(),
  bindDir: attackWorld(),
  otherNs: attackWorld(),
  deleted: attackWorld(),
  mmapCut: attackWorld({ limits: { max_entries: 2 } }),
  racyOpen: attackWorld(),
  mmapRank: attackWorld(),
  policy: attackWorld(),
};
test.before(async () => {
  const left = written + 3000 + 250 - Date.now();
  if (left > 0) await sleep(left);
});

const QUERIES = ['lantern', MARK.untrusted, ...Object.values(WORDS), 'topword'];

/** The answer of a bridge without notification and without warm state: what a new process would answer. */
function freshAnswer(w: World, args: { query: string; limit?: number; within?: string[] }): string {
  return JSON.stringify(createBridge({ log: () => undefined, racyMarginMs: 0, watch: false }).search(args, w.caller));
}

/** A bridge with notification, warmed up until one of its searches vouched for notes instead of statting them. */
function warmBridge(t: ExecutionContext, w: World, within?: string[]): Bridge {
  const bridge = createBridge({ log: () => undefined, racyMarginMs: 0, watch: true });
  const args = { query: 'lantern', limit: 10, ...(within === undefined ? {} : { within }) };
  for (let i = 0; i < 2; i++) bridge.search(args, w.caller);
  const before = notesVouched();
  bridge.search(args, w.caller);
  t.true(notesVouched() > before, 'the warm-up reached the state where kept answers stand in for statx');
  return bridge;
}

/** Every query, twice in a row, answers as a bridge without notification would, without any path. */
function sameAsStatx(t: ExecutionContext, bridge: Bridge, w: World, within?: string[]): void {
  for (let round = 0; round < 2; round++)
    for (const query of QUERIES) {
      const args = { query, limit: 10, ...(within === undefined ? {} : { within }) };
      const r: ToolResult = bridge.search(args, w.caller);
      t.false(JSON.stringify(r).includes(w.tmp), 'no path in the answer');
      t.is(JSON.stringify(r), freshAnswer(w, args), `query ${query}, round ${round}`);
    }
}

/** renameat2(RENAME_EXCHANGE) of two paths, through python3 ctypes (no coreutils command does it). */
function exchange(a: string, b: string): void {
  execFileSync('python3', [
    '-c',
    'import ctypes, os, sys\n' +
      'libc = ctypes.CDLL(None, use_errno=True)\n' +
      'if libc.renameat2(-100, os.fsencode(sys.argv[1]), -100, os.fsencode(sys.argv[2]), 2) != 0:\n' +
      '    sys.exit(os.strerror(ctypes.get_errno()))\n',
    a,
    b,
  ]);
}

watchTest('watch attacks › RENAME_EXCHANGE of a trusted note and a world-writable one in one directory', (t) => {
  const w = W.fileSwap;
  const bridge = warmBridge(t, w);
  // Both names keep their sizes; the names now name each other's inode.
  exchange(path.join(w.root, 'b/n1.md'), path.join(w.root, 'b/n2.md'));
  sameAsStatx(t, bridge, w);
  t.deepEqual(idsOf(bridge.search({ query: 'basil' }, w.caller)), ['b/n2.md'], 'the trusted inode, under its new name');
  t.deepEqual(idsOf(bridge.search({ query: 'beryl' }, w.caller)), [], 'the world-writable inode, under either name');
});

watchTest('watch attacks › RENAME_EXCHANGE of two directories of the tree holding the same names', (t) => {
  const w = W.dirSwap;
  const bridge = warmBridge(t, w);
  exchange(path.join(w.root, 'a'), path.join(w.root, 'b'));
  sameAsStatx(t, bridge, w);
  t.deepEqual(idsOf(bridge.search({ query: 'amber' }, w.caller)), ['b/n1.md']);
});

watchTest('watch attacks › RENAME_EXCHANGE of a directory and a note with the outside (same names and sizes)', (t) => {
  const w = W.outSwap;
  const bridge = warmBridge(t, w);
  exchange(path.join(w.root, 'a'), path.join(w.outside, 'a'));
  sameAsStatx(t, bridge, w);
  exchange(path.join(w.root, 'a'), path.join(w.outside, 'a'));
  exchange(path.join(w.root, 'b/n1.md'), path.join(w.outside, 'n1.md'));
  sameAsStatx(t, bridge, w);
});

watchTest('watch attacks › a directory moved out and another moved in under the same name', (t) => {
  const w = W.dirMoved;
  const bridge = warmBridge(t, w);
  fs.renameSync(path.join(w.root, 'a'), path.join(w.tmp, 'a.old'));
  fs.renameSync(path.join(w.outside, 'a'), path.join(w.root, 'a'));
  sameAsStatx(t, bridge, w);
  // And back: the original directory and inodes under their old names, their watches given back meanwhile.
  fs.renameSync(path.join(w.root, 'a'), path.join(w.outside, 'a'));
  fs.renameSync(path.join(w.tmp, 'a.old'), path.join(w.root, 'a'));
  fs.chmodSync(path.join(w.root, 'a/n1.md'), 0o666);
  sameAsStatx(t, bridge, w);
});

watchTest('watch attacks › the root replaced by a copy with the same names, sizes and modes', (t) => {
  const w = W.rootSwap;
  const bridge = warmBridge(t, w);
  const copy = path.join(w.tmp, 'copy');
  fs.cpSync(w.root, copy, { recursive: true, preserveTimestamps: true });
  fs.writeFileSync(path.join(copy, 'top.md'), body(MARK.untrusted));
  fs.chmodSync(path.join(copy, 'top.md'), 0o664);
  exchange(w.root, copy);
  sameAsStatx(t, bridge, w);
  fs.chmodSync(path.join(w.root, 'top.md'), 0o644);
  sameAsStatx(t, bridge, w);
});

watchTest('watch attacks › a name swapped between its watch being added and its statx', (t) => {
  const w = W.raceSwap;
  const bridge = createBridge({ log: () => undefined, racyMarginMs: 0, watch: true });
  const args = { query: 'lantern', limit: 10 };
  bridge.search(args, w.caller); // lists
  // The call that adds the watches: right after b/n1.md's watch is added (on its inode), the name is exchanged
  // with the world-writable b/n2.md, so the statx that follows resolves the name to the other inode.
  const original = native.watchAdd!;
  let swapped = false;
  native.watchAdd = (ifd, dirFd, cname, mask) => {
    const wd = original.call(native, ifd, dirFd, cname, mask);
    if (!swapped && Buffer.from(cname).toString('latin1') === 'n1.md\0') {
      const dir = fs.readlinkSync(`/proc/self/fd/${dirFd}`);
      if (dir === path.join(w.root, 'b')) {
        exchange(path.join(dir, 'n1.md'), path.join(dir, 'n2.md'));
        swapped = true;
      }
    }
    return wd;
  };
  try {
    bridge.search(args, w.caller);
  } finally {
    native.watchAdd = original;
  }
  t.true(swapped, 'the exchange ran inside the call');
  sameAsStatx(t, bridge, w);
});

watchTest('watch attacks › narrowed searches (within) of a watched view see a change as plain ones do', (t) => {
  const w = W.within;
  const bridge = warmBridge(t, w);
  const within = ['a/**'];
  warmBridge(t, w, within); // another bridge: its views are its own
  const narrowedArgs = { query: 'lantern', limit: 10, within };
  for (let i = 0; i < 3; i++) bridge.search(narrowedArgs, w.caller);
  fs.chmodSync(path.join(w.root, 'a/n1.md'), 0o646);
  sameAsStatx(t, bridge, w);
  sameAsStatx(t, bridge, w, within);
  fs.chmodSync(path.join(w.root, 'a/n1.md'), 0o644);
  sameAsStatx(t, bridge, w, within);
  sameAsStatx(t, bridge, w);
});

watchTest('watch attacks › a watched note deleted (IN_IGNORED) and a world-writable one made under its name', (t) => {
  const w = W.deleted;
  const bridge = warmBridge(t, w);
  fs.rmSync(path.join(w.root, 'a/n1.md'));
  sameAsStatx(t, bridge, w);
  writeNote(w.root, 'a/n1.md', body('amber'), 0o646);
  sameAsStatx(t, bridge, w);
});

rootWatchTest('watch attacks › a directory of the tree bind-mounted over by a copy (needs root)', (t) => {
  const w = W.bindDir;
  const bridge = warmBridge(t, w);
  const target = path.join(w.root, 'a');
  execFileSync('mount', ['--bind', path.join(w.outside, 'a'), target]);
  try {
    sameAsStatx(t, bridge, w);
  } finally {
    if (spawnSync('umount', [target]).status !== 0) spawnSync('umount', ['-l', target]);
  }
  sameAsStatx(t, bridge, w);
});

rootWatchTest('watch attacks › mounts and a chmod made in another mount namespace (needs root)', (t) => {
  const w = W.otherNs;
  const bridge = warmBridge(t, w);
  // A private namespace: a tmpfs over a/ there (invisible here), and a chmod of b/n1.md through a bind mount of b/
  // that exists only there. The inode is the same, so its watch reports the chmod.
  const alias = mkdirs(w.tmp, 'alias');
  execFileSync('unshare', [
    '-m',
    '--propagation',
    'private',
    'sh',
    '-c',
    'mount -t tmpfs -o size=1m t "$1" && mount --bind "$2" "$3" && chmod 646 "$3/n1.md"',
    'sh',
    path.join(w.root, 'a'),
    path.join(w.root, 'b'),
    alias,
  ]);
  sameAsStatx(t, bridge, w);
  t.deepEqual(idsOf(bridge.search({ query: 'basil' }, w.caller)), []);
});

/**
 * A store through a shared writable mapping raises no inotify event, but moves the note's mtime and ctime, so a
 * bridge that stats every note sees a new identity, opens the note and refuses it (open for writing: the mapping
 * holds the file open) while the mapping lasts. Runs python3 holding such a mapping of `file` with one store made;
 * `release` unmaps and waits for the process to end.
 */
async function mappedWriter(file: string): Promise<{ release: () => Promise<void> }> {
  const child = spawn(
    'python3',
    [
      '-c',
      'import mmap, os, sys\n' +
        'fd = os.open(sys.argv[1], os.O_RDWR)\n' +
        'm = mmap.mmap(fd, 0, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)\n' +
        'os.close(fd)\n' +
        'm[2:3] = b"X"\n' +
        'print("mapped", flush=True)\n' +
        'sys.stdin.read()\n' +
        'm.close()\n',
      file,
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    child.stdout.once('data', () => resolve());
    child.once('exit', () => reject(new Error('python3 mmap writer ended early')));
  });
  return {
    release: async () => {
      child.stdin.end();
      await exited;
    },
  };
}

watchTest('watch attacks › a store through a shared mapping never makes a budget cut hide a note', async (t) => {
  // max_entries 2: a/n1.md and a/n2.md fill it; the store into a/n1.md makes a statting bridge refuse that note
  // (open for writing), and b/n1.md takes its place.
  // The policy starts without the cut, so the warm-up reaches the state where kept answers stand in for statx; the
  // cut comes with a policy edit, so the first cut scan vouches for notes (and is redone statting every note), and
  // the view then vouches for nothing while its scans are cut (docs/DESIGN.md §Change notification, "Budget cuts").
  const w = W.mmapCut;
  w.setPolicy({ allow: ['**'] });
  const bridge = warmBridge(t, w);
  w.setPolicy({ allow: ['**'], limits: { max_entries: 2 } });
  const args = { query: 'lantern', limit: 10 };
  t.is(JSON.stringify(bridge.search(args, w.caller)), freshAnswer(w, args), 'the first cut scan');
  const before = notesVouched();
  for (let i = 0; i < 3; i++) bridge.search(args, w.caller);
  t.is(notesVouched(), before, 'a view whose scans are cut vouches for no note');
  const writer = await mappedWriter(path.join(w.root, 'a/n1.md'));
  try {
    for (const query of ['basil', 'azure', 'lantern']) {
      const args = { query, limit: 10 };
      t.is(JSON.stringify(bridge.search(args, w.caller)), freshAnswer(w, args), `query ${query}`);
    }
  } finally {
    await writer.release();
  }
  sameAsStatx(t, bridge, w);
});

watchTest(
  'watch attacks › a note read within the racy margin, then opened for writing, is refused as when statted',
  (t) => {
    // Both bridges keep the default racy margin (3 s) and live through the same calls. The note is rewritten in place
    // (same inode, same directory listing) and read within the margin, so its text is held under the racy key. A
    // bridge that stats every note reads it again on every call until a read after the margin, and such a read
    // refuses a note open for writing; the racy rule under notification must not serve it without that check.
    const w = W.racyOpen;
    const watching = createBridge({ log: () => undefined, watch: true });
    const statting = createBridge({ log: () => undefined, watch: false });
    const both = (args: { query: string; limit?: number }): [string, string] => [
      JSON.stringify(watching.search(args, w.caller)),
      JSON.stringify(statting.search(args, w.caller)),
    ];
    const warm = { query: 'lantern', limit: 10 };
    for (let i = 0; i < 3; i++) both(warm);
    const file = path.join(w.root, 'a/n1.md');
    fs.writeFileSync(file, body('acorn'));
    for (let i = 0; i < 3; i++) both({ query: 'acorn' });
    const before = notesVouched();
    const [held] = both({ query: 'acorn' });
    t.true(notesVouched() > before, 'the rewritten note was vouched for (its text held under the racy key)');
    t.deepEqual(
      JSON.parse(held).results.map((h: { id: string }) => h.id),
      ['a/n1.md'],
    );
    const fd = fs.openSync(file, 'r+');
    try {
      for (const query of ['acorn', 'lantern']) {
        const [a, b] = both({ query, limit: 10 });
        t.is(a, b, `query ${query} while open for writing`);
      }
    } finally {
      fs.closeSync(fd);
    }
    for (const query of ['acorn', 'lantern']) {
      const [a, b] = both({ query, limit: 10 });
      t.is(a, b, `query ${query} after the close`);
    }
  },
);

watchTest('watch attacks › the policy rewritten to deny a directory, then to name a writer group', (t) => {
  const w = W.policy;
  const bridge = warmBridge(t, w);
  w.setPolicy({ deny: ['a/**'] });
  sameAsStatx(t, bridge, w);
  w.setPolicy({});
  sameAsStatx(t, bridge, w);
});

// Known divergence (docs/DESIGN.md §Change notification, "The one thing only statx sees"): while a trusted writer
// holds a note under a shared writable mapping with a store made, the warm bridge ranks with the note's previous text
// (hits it returns are statted again, and a budget cut is redone), where a statting bridge refuses the note as open
// for writing. Here the stored-into note is a match below the limit, so only `truncated` differs. Marked failing so
// that it is noticed if it ever holds.
(supported && python ? test.serial.failing : test.skip)(
  'watch attacks › known: a mapped note below the limit still counts toward truncated until it is unmapped',
  async (t) => {
    const w = W.mmapRank;
    const bridge = warmBridge(t, w);
    const writer = await mappedWriter(path.join(w.root, 'b/n1.md'));
    try {
      for (const query of ['amber basil', 'basil amber']) {
        const args = { query, limit: 1 };
        t.is(JSON.stringify(bridge.search(args, w.caller)), freshAnswer(w, args), `query ${query}`);
      }
    } finally {
      await writer.release();
    }
  },
);
