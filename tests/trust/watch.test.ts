/**
 * Change notification (src/trust/warm/watch.ts; docs/DESIGN.md §Change notification) on real files and the real kernel.
 * Each test warms a view up until a scan statted no note at all (call 1 lists, call 2 adds the watches and stats,
 * call 3 keeps every answer), makes ONE change, and checks that the very next scan sees it exactly as a scan
 * without notification would (a fresh memo, no watch): the same note ids and identity keys, the same skip counts,
 * the same stat for the changed note, which that scan must have statted itself.
 *
 * The memos' clock is an hour ahead, so every listing is reusable at once (the racy margin has its own tests in
 * scan-memo.test.ts); a directory is changed only after one clock tick, as the margin ensures in real use. Changes
 * to a note's inode are made at once, without waiting: its watch reports them, whatever the timestamps say.
 *
 * Anything that mounts or unmounts in this mount namespace (other test files do, as root) moves every watch's epoch,
 * and the next scan stats every note. The helpers allow that, and only when the view counted a mount-table change.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import test, { type ExecutionContext } from 'ava';
import { openTrustedDir } from '../../src/trust/path.js';
import { scanTree } from '../../src/trust/scan.js';
import { CallerView } from '../../src/trust/view.js';
import type { ScanOptions, ScanResult } from '../../src/trust/types.js';
import { statPool } from '../../src/trust/warm/stat-pool.js';
import type { StatThread } from '../../src/trust/warm/stat-thread.js';
import { setWatchCeilingForTests, watchesHeld } from '../../src/trust/warm/watch.js';
import {
  ACL_TAG,
  FOREIGN_GID,
  FOREIGN_UID,
  aclBytes,
  countingNative,
  grantMaskedUserWrite,
  isRoot,
  makeTempDir,
  mkdirs,
  openDescriptorCount,
  readyStatThread,
  removeTree,
  setXattr,
  writeNote,
} from '../helpers/fixtures.js';
import { ALLOW_ALL, Learning, NONE_KNOWN, limits, realNative } from './support.js';

const base = makeTempDir('mb-watch-');
test.after.always(() => removeTree(base));
const native = realNative();

/** Notification needs inotify and a local filesystem under the temporary directory (not overlay, NFS or FUSE). */
const supported = ((): boolean => {
  if (native.watchOpen === undefined || native.localFilesystem === undefined) return false;
  const fd = openTrustedDir(base, 'root', native);
  try {
    return native.localFilesystem(fd);
  } finally {
    native.close(fd);
  }
})();
// Serial: the watch ceiling and the count of watches held are per process.
const watchTest = supported ? test.serial : test.skip;
const rootWatchTest = supported && isRoot ? test.serial : test.skip;

const NOTES = 20;
const DIRS = ['', 'a', 'b', 'b/c'];

interface Tree {
  root: string;
  /** A directory beside the root, on the same filesystem, never scanned. */
  outside: string;
  /** Note ids, n00.md … n19.md spread over DIRS (base names are unique). */
  ids: string[];
}

let counter = 0;

/** A fresh tree: 20 notes (0644) in four directories (0755), one non-note file, and an outside directory. */
function makeTree(): Tree {
  const top = mkdirs(base, `t${++counter}`);
  const root = mkdirs(top, 'root');
  const outside = mkdirs(top, 'outside');
  const ids: string[] = [];
  for (let i = 0; i < NOTES; i++) {
    const dir = DIRS[i % DIRS.length]!;
    const id = `${dir === '' ? '' : `${dir}/`}n${String(i).padStart(2, '0')}.md`;
    writeNote(root, id, `# Note ${i}\n\nword${i} shared\n`, 0o644);
    ids.push(id);
  }
  writeNote(root, 'a/readme.txt', 'not a note\n', 0o644);
  for (const dir of DIRS) fs.chmodSync(path.join(root, dir), 0o755);
  return { root, outside, ids };
}

const file = (tree: Tree, id: string): string => path.join(tree.root, id);
const nameOf = (id: string): string => path.basename(id);

/** One caller view: its memo (clock an hour ahead), what its index would know, and a counting binding. */
class View {
  readonly memo = new CallerView(0, () => Date.now() + 3_600_000);
  readonly known = new Learning(this.memo);
  readonly counting = countingNative(native);
  /** The process's stat thread, counted like the binding, when the view scans with it. */
  private readonly thread: StatThread | undefined;
  constructor(
    readonly tree: Tree,
    withThread = false,
  ) {
    this.thread = withThread ? this.counting.statThread(statPool()) : undefined;
  }

  /** One scan with notification on (or off), learned as the index would learn it; counts are for this scan only. */
  scan(watch = true, noteSink?: ScanOptions['noteSink']): ScanResult {
    const fd = openTrustedDir(this.tree.root, 'root', native);
    this.counting.reset();
    try {
      const options = {
        view: this.memo,
        watch,
        noteSink,
        ...(this.thread === undefined ? {} : { statThread: this.thread }),
      };
      const r = scanTree(fd, ALLOW_ALL, limits(), this.known, this.counting.native, options);
      return this.known.learn(r);
    } finally {
      native.close(fd);
    }
  }

  /** statx calls of the last scan (the main thread's and, with the stat thread, the worker's). */
  get stats(): number {
    return this.counting.calls.statRawAt ?? 0;
  }

  /** Base names the last scan statted by name (its statx, and the stats of a note it read), sorted, once each. */
  statted(): string[] {
    const names = this.counting.touched.filter((s) => s.startsWith('statAt:')).map((s) => s.slice('statAt:'.length));
    return [...new Set(names)].sort();
  }

  get mountChanges(): number {
    return this.memo.watch?.counts.mountChanges ?? 0;
  }

  /** The kept entry of `id` in the memo. */
  entry(id: string): { wd: number; clean: number } {
    const e = this.memo.watchStateOf(id);
    if (e === undefined) throw new Error(`no entry for ${id}`);
    return e;
  }
}

/** Views made by the running test, closed at its end whatever happens. */
const open: View[] = [];
test.afterEach.always(() => {
  for (const v of open.splice(0)) v.memo.close();
});

function view(tree: Tree, withThread = false): View {
  const v = new View(tree, withThread);
  open.push(v);
  return v;
}

/** The same tree scanned as a new process would: a fresh memo, no notification, an empty index. */
function fresh(tree: Tree): ScanResult {
  const fd = openTrustedDir(tree.root, 'root', native);
  try {
    return scanTree(fd, ALLOW_ALL, limits(), NONE_KNOWN, native);
  } finally {
    native.close(fd);
  }
}

const keysOf = (r: ScanResult): [string, string][] => r.notes.map((n) => [n.id, n.key]);
const idsOf = (r: ScanResult): string[] => r.notes.map((n) => n.id);

/** What a statx of the note told the scan, or null when it was not returned. */
function statOf(r: ScanResult, id: string): Record<string, unknown> | null {
  const n = r.notes.find((x) => x.id === id);
  if (n === undefined) return null;
  const { dev, ino, mode, nlink, uid, gid, size, mtimeNs, ctimeNs } = n.stat;
  return { dev, ino, mode, nlink, uid, gid, size, mtimeNs, ctimeNs };
}

/** `r` agrees with a scan without notification: ids, keys, skips, flags, and the stats of `changed`. */
function sameAsFresh(t: ExecutionContext, tree: Tree, r: ScanResult, changed: readonly string[]): ScanResult {
  const f = fresh(tree);
  t.deepEqual(keysOf(r), keysOf(f), 'same notes and identity keys as without notification');
  t.deepEqual(r.skipped, f.skipped, 'same skip reasons as without notification');
  t.is(r.truncated, f.truncated);
  t.is(r.rawEntries, f.rawEntries);
  for (const id of changed) t.deepEqual(statOf(r, id), statOf(f, id), `same stat of ${id} as without notification`);
  return f;
}

/**
 * Scans until one statted no note (at most a few times, and a scan may stat only when the mount table changed
 * during it); that scan kept every candidate's answer. `first` scans are made before without looking at them.
 */
function quiet(t: ExecutionContext, v: View, first = 0, notes = NOTES): ScanResult {
  for (let i = 0; i < first; i++) v.scan();
  for (let tries = 0; tries < 6; tries++) {
    const moved = v.mountChanges;
    const r = v.scan();
    if (v.stats === 0) {
      t.is(r.unstatted, notes, 'every candidate note kept its answer');
      return r;
    }
    if (v.mountChanges === moved) {
      t.fail(`a quiet scan statted ${v.statted().join(',')} with no event and no mount change`);
      return r;
    }
  }
  t.fail('the mount table kept changing');
  return v.scan();
}

/** A scan during which the mount table did not change (another process may mount at any time; see above). */
function steady(v: View, watch = true): ScanResult {
  for (let tries = 0; ; tries++) {
    const moved = v.mountChanges;
    const r = v.scan(watch);
    if (v.mountChanges === moved || tries === 5) return r;
  }
}

/** Opens this process's mount-table descriptor (kept for the process's life) before descriptors are counted. */
const primeMountTable = (): void => void native.mountsChanged?.();

/** Warm-up: call 1 lists, call 2 watches and stats, call 3 keeps every answer. */
const warm = (t: ExecutionContext, v: View): ScanResult => quiet(t, v, 2);

/**
 * The scan right after one change to the notes `changed`: it statted each of them, and (with `only`, unless the
 * mount table moved meanwhile) no other note; and it answers as a scan without notification would.
 */
function next(t: ExecutionContext, v: View, changed: readonly string[], only = true): ScanResult {
  const moved = v.mountChanges;
  const r = v.scan();
  const statted = v.statted();
  for (const id of changed) t.true(statted.includes(nameOf(id)), `${id} statted after its change`);
  if (only && v.mountChanges === moved) t.deepEqual(statted, changed.map(nameOf).sort(), 'no other note statted');
  sameAsFresh(t, v.tree, r, changed);
  return r;
}

watchTest('watch › chmod g+w and o+w on a note: refused at once as without notification; chmod back: accepted', (t) => {
  const tree = makeTree();
  const v = view(tree);
  const id = tree.ids[5]!;
  const before = warm(t, v).notes.find((n) => n.id === id)!.key;
  fs.chmodSync(file(tree, id), 0o664);
  let r = next(t, v, [id]);
  t.false(idsOf(r).includes(id));
  t.is(r.skipped.group_writable, 1);
  quiet(t, v);
  fs.chmodSync(file(tree, id), 0o644);
  r = next(t, v, [id]);
  t.true(idsOf(r).includes(id));
  fs.chmodSync(file(tree, id), 0o646);
  r = next(t, v, [id]);
  t.false(idsOf(r).includes(id));
  t.is(r.skipped.world_writable, 1);
  fs.chmodSync(file(tree, id), 0o644);
  r = next(t, v, [id]);
  const back = r.notes.find((n) => n.id === id)!;
  t.not(back.key, before, 'the chmods moved ctime');
  t.true(back.text?.includes(`word5`), 'a note accepted again is read again');
  quiet(t, v);
});

rootWatchTest('watch › chown of a note to another uid: refused at once; chown back: accepted (needs root)', (t) => {
  const tree = makeTree();
  const v = view(tree);
  const id = tree.ids[6]!;
  warm(t, v);
  const { uid, gid } = fs.statSync(file(tree, id));
  fs.chownSync(file(tree, id), FOREIGN_UID, FOREIGN_GID);
  let r = next(t, v, [id]);
  t.false(idsOf(r).includes(id));
  t.is(r.skipped.untrusted_owner, 1);
  quiet(t, v);
  fs.chownSync(file(tree, id), uid, gid);
  r = next(t, v, [id]);
  t.true(idsOf(r).includes(id));
  quiet(t, v);
});

watchTest('watch › an ACL entry granting a named user write: refused at once; the ACL taken back: accepted', (t) => {
  const tree = makeTree();
  const v = view(tree);
  const id = tree.ids[7]!;
  warm(t, v);
  grantMaskedUserWrite(file(tree, id));
  let r = next(t, v, [id]);
  t.false(idsOf(r).includes(id));
  t.is(r.skipped.acl_write, 1, 'the mode bits show no write: only the ACL entry grants it');
  quiet(t, v);
  // A minimal ACL is stored as mode bits alone (the kernel drops the attribute): rw-r--r--.
  setXattr(
    file(tree, id),
    'system.posix_acl_access',
    aclBytes([
      { tag: ACL_TAG.USER_OBJ, perm: 6 },
      { tag: ACL_TAG.GROUP_OBJ, perm: 4 },
      { tag: ACL_TAG.OTHER, perm: 4 },
    ]),
  );
  r = next(t, v, [id]);
  t.true(idsOf(r).includes(id));
  quiet(t, v);
});

watchTest(
  'watch › a hard link made from outside the tree: refused at once (only the inode tells); removed: accepted',
  (t) => {
    const tree = makeTree();
    const v = view(tree);
    const id = tree.ids[9]!;
    warm(t, v);
    const alias = path.join(tree.outside, 'grab.md');
    fs.linkSync(file(tree, id), alias);
    let r = next(t, v, [id]);
    t.false(idsOf(r).includes(id));
    t.is(r.skipped.hard_link, 1);
    // The refusal stands on the kept answer while nothing changes.
    r = quiet(t, v);
    t.is(r.skipped.hard_link, 1);
    fs.unlinkSync(alias);
    r = next(t, v, [id]);
    t.true(idsOf(r).includes(id));
    t.is(r.skipped.hard_link, undefined);
    quiet(t, v);
  },
);

watchTest('watch › a second name made inside the tree: both names refused; the second removed: accepted', async (t) => {
  const tree = makeTree();
  const v = view(tree);
  const id = tree.ids[5]!; // a/n05.md
  warm(t, v);
  await sleep(30);
  const twin = path.join(tree.root, 'b', 'twin.md');
  fs.linkSync(file(tree, id), twin);
  let r = next(t, v, [id, 'b/twin.md'], false);
  t.is(r.skipped.hard_link, 2);
  // One inode under two names shares one watch: the second name is left unwatched and statted every call.
  v.scan();
  v.scan();
  r = steady(v);
  t.deepEqual(v.statted(), ['twin.md'], 'the unwatched second name, nothing else');
  t.is(r.unstatted, NOTES);
  t.is(r.skipped.hard_link, 2);
  await sleep(30);
  fs.unlinkSync(twin);
  r = next(t, v, [id], false);
  t.true(idsOf(r).includes(id));
  t.is(r.skipped.hard_link, undefined);
  quiet(t, v, 1);
});

watchTest(
  'watch › writes and a truncation through descriptors opened before the warm-up, one by a name since removed',
  (t) => {
    const tree = makeTree();
    const [a, b, c] = [tree.ids[1]!, tree.ids[2]!, tree.ids[3]!];
    const fdA = fs.openSync(file(tree, a), 'r+');
    const alias = path.join(tree.outside, 'alias.md');
    fs.linkSync(file(tree, b), alias);
    const fdB = fs.openSync(alias, 'r+');
    fs.unlinkSync(alias);
    const fdC = fs.openSync(file(tree, c), 'r+');
    const fds = [fdA, fdB, fdC];
    try {
      const v = view(tree);
      // While a descriptor has a note open for writing, it is refused (open_for_write), with or without notification.
      sameAsFresh(t, tree, warm(t, v), [a, b, c]);
      const append = (fd: number, word: string): void => {
        fs.writeSync(fd, ` ${word}\n`, fs.fstatSync(fd).size);
        fs.fsyncSync(fd);
      };
      append(fdA, 'quartzite');
      next(t, v, [a]);
      fs.closeSync(fdA);
      fds.shift();
      let r = next(t, v, [a]);
      t.true(
        r.notes.find((n) => n.id === a)?.text?.includes('quartzite'),
        'the word written through the old descriptor',
      );
      quiet(t, v);

      append(fdB, 'basaltic');
      next(t, v, [b]);
      fs.closeSync(fdB);
      fds.shift();
      r = next(t, v, [b]);
      t.true(r.notes.find((n) => n.id === b)?.text?.includes('basaltic'), 'written through a name removed since');
      quiet(t, v);

      fs.ftruncateSync(fdC, 8);
      next(t, v, [c]);
      fs.closeSync(fdC);
      fds.shift();
      r = next(t, v, [c]);
      t.is(r.notes.find((n) => n.id === c)?.text, '# Note 3');
      quiet(t, v);

      // A note the index knows, written through a descriptor opened after the warm-up and still open.
      const d = tree.ids[4]!;
      const known = r.notes.find((n) => n.id === d)!.key;
      const fdD = fs.openSync(file(tree, d), 'r+');
      fds.push(fdD);
      r = quiet(t, v);
      t.is(r.notes.find((n) => n.id === d)?.key, known, 'an open alone changes nothing a statx shows');
      append(fdD, 'obsidian');
      r = next(t, v, [d]);
      t.false(idsOf(r).includes(d), 'a note with a writer is refused once its change is seen');
    } finally {
      for (const fd of fds) fs.closeSync(fd);
    }
  },
);

watchTest('watch › a note replaced by rename, a note deleted, a new note: the next scan sees each', async (t) => {
  const tree = makeTree();
  const v = view(tree);
  warm(t, v);
  const replaced = tree.ids[1]!; // a/n01.md
  const inA = tree.ids.filter((id) => id.startsWith('a/'));
  await sleep(30);
  const tmp = path.join(tree.root, 'a', 'n01.md.tmp');
  fs.writeFileSync(tmp, '# Replaced\n\nreplacement text\n', { mode: 0o644 });
  fs.chmodSync(tmp, 0o644);
  fs.renameSync(tmp, file(tree, replaced));
  let r = next(t, v, inA, false);
  t.is(r.notes.find((n) => n.id === replaced)?.text, '# Replaced\n\nreplacement text\n');
  quiet(t, v, 1);

  const deleted = tree.ids[2]!; // b/n02.md
  const inB = tree.ids.filter((id) => id.startsWith('b/') && !id.startsWith('b/c/') && id !== deleted);
  const held = watchesHeld();
  await sleep(30);
  fs.unlinkSync(file(tree, deleted));
  r = next(t, v, [], false);
  t.false(idsOf(r).includes(deleted));
  t.deepEqual(v.statted(), inB.map(nameOf).sort(), 'b/ was listed afresh: its notes statted, no other');
  t.is(watchesHeld(), held - 5, 'the deleted inode took its watch along; the other watches of b/ were given back');
  v.scan();
  t.deepEqual(v.statted(), inB.map(nameOf).sort(), 'the reused listing of b/: its notes watched and statted');
  t.is(watchesHeld(), held - 1);
  quiet(t, v, 0, NOTES - 1);

  await sleep(30);
  writeNote(tree.root, 'b/c/n20.md', '# New\n\nnewcomer\n', 0o644);
  r = next(t, v, ['b/c/n20.md'], false);
  t.true(r.notes.find((n) => n.id === 'b/c/n20.md')?.text?.includes('newcomer'));
  quiet(t, v, 1);
});

watchTest(
  'watch › a first scan beside a build watches what it lists, so the second keeps every answer; changes are still seen',
  async (t) => {
    const tree = makeTree();
    const v = view(tree);
    const held = watchesHeld();
    // What the cold thread's feed says while its worker builds beside the scan (src/search/cold-thread.ts).
    const beside = { accept: () => undefined, besideScan: () => true };
    const first = v.scan(true, beside);
    t.is(v.stats, NOTES, 'the first scan statted every note, each after its watch');
    t.is(watchesHeld(), held + NOTES, 'every note of the listings it took got a watch');
    sameAsFresh(t, tree, first, []);
    quiet(t, v, 0);
    const changed = tree.ids[5]!;
    await sleep(30);
    fs.appendFileSync(file(tree, changed), 'appended after the first scan\n');
    const r = next(t, v, [changed]);
    t.true(r.notes.find((n) => n.id === changed)?.text?.includes('appended after the first scan'));

    // Without a build beside it the first scan adds no watch, and the second watches and stats every note.
    const w = view(makeTree());
    const before = watchesHeld();
    w.scan(true, { accept: () => undefined, besideScan: () => false });
    t.is(watchesHeld(), before, 'no watch in a first scan with nothing beside it');
    w.scan();
    t.is(w.stats, NOTES);
    quiet(t, w, 0);
  },
);

watchTest('watch › utimes setting a note’s mtime back: the next scan sees a new identity key', (t) => {
  const tree = makeTree();
  const v = view(tree);
  const id = tree.ids[11]!;
  const before = warm(t, v).notes.find((n) => n.id === id)!.key;
  const st = fs.statSync(file(tree, id));
  fs.utimesSync(file(tree, id), st.atime, new Date(st.mtimeMs - 86_400_000));
  const r = next(t, v, [id]);
  const after = r.notes.find((n) => n.id === id)!;
  t.not(after.key, before);
  t.true(after.stat.mtimeNs < BigInt(Math.floor(st.mtimeMs - 86_000_000)) * 1_000_000n, 'the mtime set back');
  quiet(t, v);
});

/** True when this process may mount (a tmpfs in a temporary directory is tried and unmounted). */
function mayMount(): boolean {
  const dir = mkdirs(base, `probe-${++counter}`);
  const tried = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', dir], { stdio: 'ignore' });
  if (tried.status !== 0) return false;
  spawnSync('umount', [dir], { stdio: 'ignore' });
  return true;
}

rootWatchTest(
  'watch › a file bind-mounted over a note: the next scan does not serve the old stat (needs root)',
  (t) => {
    if (!mayMount()) {
      t.log('SKIPPED: mounting is not permitted here');
      t.pass();
      return;
    }
    const tree = makeTree();
    const v = view(tree);
    const id = tree.ids[13]!;
    const other = writeNote(tree.outside, 'other.md', '# Other\n\nbound over\n', 0o644);
    const target = file(tree, id);
    warm(t, v);
    const changes = v.mountChanges;
    execFileSync('mount', ['--bind', other, target], { stdio: 'ignore' });
    try {
      const r = next(t, v, [id], false);
      t.true(v.mountChanges > changes, 'the mount table poll saw the mount');
      t.is(v.stats, NOTES, 'a mount change voids every kept answer');
      t.false(idsOf(r).includes(id));
      t.false(
        r.notes.some((n) => n.text?.includes('bound over')),
        'the file mounted over the note is not served',
      );
      quiet(t, v);
    } finally {
      if (spawnSync('umount', [target]).status !== 0) spawnSync('umount', ['-l', target]);
    }
    const r = next(t, v, [id], false);
    t.is(v.stats, NOTES, 'the unmount voids every kept answer too');
    t.true(idsOf(r).includes(id));
  },
);

watchTest(
  'watch › a queue overflow (20,000 events) voids every kept answer; a change whose event was lost is seen',
  (t) => {
    const tree = makeTree();
    const v = view(tree);
    warm(t, v);
    // Two notes take turns (the kernel merges an event only into an identical one at the tail of the queue): 20,000
    // events, past the queue's 16,384 (/proc/sys/fs/inotify/max_queued_events). Then the one change whose own event
    // finds the queue full: only the overflow tells of it.
    const [a, b] = [file(tree, tree.ids[0]!), file(tree, tree.ids[1]!)];
    const lost = tree.ids[19]!;
    const started = process.hrtime.bigint();
    for (let round = 0; round < 10_000; round++) {
      const mode = round % 2 === 0 ? 0o640 : 0o644;
      fs.chmodSync(a, mode);
      fs.chmodSync(b, mode);
    }
    t.log(`20,000 chmods in ${Number(process.hrtime.bigint() - started) / 1e6} ms`);
    fs.chmodSync(file(tree, lost), 0o664);
    const overflows = v.memo.watch!.counts.overflows;
    const r = next(t, v, tree.ids, false);
    t.true(v.memo.watch!.counts.overflows > overflows, 'the kernel reported an overflow');
    t.is(v.stats, NOTES, 'every note statted');
    t.is(r.unstatted, undefined);
    t.false(idsOf(r).includes(lost));
    t.is(r.skipped.group_writable, 1);
    quiet(t, v);
  },
);

watchTest('watch › notification turned off after being on: the instance is closed and every note is statted', (t) => {
  const tree = makeTree();
  primeMountTable();
  const held = watchesHeld();
  const descriptors = openDescriptorCount();
  const v = view(tree);
  warm(t, v);
  t.is(watchesHeld(), held + NOTES);
  t.is(openDescriptorCount(), descriptors + 1, 'one inotify instance for the view');
  let r = v.scan(false);
  t.is(v.memo.watch, null);
  t.is(watchesHeld(), held);
  t.is(openDescriptorCount(), descriptors);
  t.is(v.stats, NOTES);
  t.is(r.unstatted, undefined);
  sameAsFresh(t, tree, r, []);
  fs.chmodSync(file(tree, tree.ids[0]!), 0o664);
  r = v.scan(false);
  t.is(v.stats, NOTES);
  sameAsFresh(t, tree, r, [tree.ids[0]!]);
  // On again: a new instance, new watches (the listings are reused), then quiet.
  v.scan(true);
  t.is(v.stats, NOTES);
  quiet(t, v);
});

watchTest(
  'watch › past the watch ceiling the other notes are statted every call, and changes to both are seen',
  (t) => {
    const tree = makeTree();
    const held = watchesHeld();
    setWatchCeilingForTests(held + 5);
    try {
      const v = view(tree);
      v.scan();
      v.scan();
      t.is(v.memo.watch!.size, 5, 'five watches, no more');
      let r = steady(v);
      t.is(v.stats, NOTES - 5);
      t.is(r.unstatted, 5);
      sameAsFresh(t, tree, r, []);
      const watched = tree.ids.filter((id) => v.entry(id).wd > 0);
      const unwatched = tree.ids.filter((id) => v.entry(id).wd <= 0);
      t.is(watched.length, 5);
      fs.chmodSync(file(tree, watched[0]!), 0o664);
      fs.chmodSync(file(tree, unwatched[0]!), 0o646);
      r = steady(v);
      t.is(v.stats, NOTES - 5 + 1, 'the unwatched notes and the changed watched one');
      t.true(v.statted().includes(nameOf(watched[0]!)));
      sameAsFresh(t, tree, r, [watched[0]!, unwatched[0]!]);
      t.is(r.skipped.group_writable, 1);
      t.is(r.skipped.world_writable, 1);
    } finally {
      setWatchCeilingForTests(-1);
    }
  },
);

watchTest('watch › memos made and closed give back every descriptor and watch', (t) => {
  const tree = makeTree();
  primeMountTable();
  const descriptors = openDescriptorCount();
  const held = watchesHeld();
  for (let round = 0; round < 3; round++) {
    const one = new View(tree);
    const two = new View(makeTree());
    try {
      warm(t, one);
      warm(t, two);
      t.is(openDescriptorCount(), descriptors + 2);
      t.is(watchesHeld(), held + 2 * NOTES);
    } finally {
      one.memo.close();
      two.memo.close();
    }
    t.is(one.memo.watch, null);
    t.is(openDescriptorCount(), descriptors);
    t.is(watchesHeld(), held);
  }
  // A scan under another root starts over: the old watches are given back before new ones are added.
  const v = view(tree);
  warm(t, v);
  const other = makeTree();
  const fd = openTrustedDir(other.root, 'root', native);
  try {
    scanTree(fd, ALLOW_ALL, limits(), NONE_KNOWN, native, { view: v.memo, watch: true });
  } finally {
    native.close(fd);
  }
  t.is(watchesHeld(), held, 'no watch left from the first root');
  t.is(openDescriptorCount(), descriptors + 1);
});

// Last: it makes the process's stat thread take part in every scan given it (the views above are given none).
watchTest(
  'watch › with the stat thread: clean notes are not handed to the worker, and changes are seen the same',
  async (t) => {
    t.true(await readyStatThread(native), 'the stat thread runs');
    const tree = makeTree();
    const v = view(tree, true);
    warm(t, v);
    const id = tree.ids[10]!;
    fs.chmodSync(file(tree, id), 0o664);
    let r = next(t, v, [id]);
    t.is(r.skipped.group_writable, 1);
    const alias = path.join(tree.outside, 'grab.md');
    fs.chmodSync(file(tree, id), 0o644);
    fs.linkSync(file(tree, id), alias);
    r = next(t, v, [id]);
    t.is(r.skipped.hard_link, 1);
    fs.unlinkSync(alias);
    r = next(t, v, [id]);
    t.true(idsOf(r).includes(id));
    quiet(t, v);
  },
);
