/**
 * Writes that raise no inotify event (issue 22 point 9; docs/DESIGN.md §Change notification, the proof table):
 * a Linux AIO write (io_submit) changes a note's bytes, size and times without IN_MODIFY; its writer's close raises
 * IN_CLOSE_WRITE. An io_uring write raises IN_MODIFY. Then what a warm bridge answers after an AIO write, with the
 * writer's descriptor still open and after it closes, compared with a bridge that stats every note. Real AIO and
 * io_uring through syscall(2) (tests/adversarial/async-io.ts), real inotify instances.
 */
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import test, { type ExecutionContext } from 'ava';
import { getNative } from '../../native/index.js';
import { createBridge } from '../../src/tools/bridge.js';
import type { Bridge } from '../../src/tools/types.js';
import { openTrustedDir } from '../../src/trust/path.js';
import { IN, notesVouched } from '../../src/trust/warm/watch.js';
import { removeTree, writeNote } from '../helpers/fixtures.js';
import { makeWorld, type World } from '../tools/world.js';
import { aioPwrite, uringWrite } from './async-io.js';
import { idsOf } from './support.js';

const native = getNative();
const worlds: World[] = [];
test.after.always(() => {
  for (const w of worlds) removeTree(w.tmp);
});

/** Bodies of equal length, so a write over the word keeps the size: only the times tell. */
const body = (word: string): string => `# Note\n\nlantern ${word}\n`;
/** Where the word starts in `body`. */
const WORD_AT = Buffer.byteLength('# Note\n\nlantern ');

function notesWorld(): World {
  const w = makeWorld();
  worlds.push(w);
  writeNote(w.root, 'a.md', body('amber'), 0o600);
  writeNote(w.root, 'b.md', body('basil'), 0o600);
  return w;
}

const supported = (() => {
  if (process.platform !== 'linux' || native?.watchOpen === undefined || native.localFilesystem === undefined)
    return false;
  const w = notesWorld();
  const fd = openTrustedDir(w.root, 'root', native);
  try {
    return native.localFilesystem(fd);
  } finally {
    native.close(fd);
  }
})();
const linuxTest = supported ? test.serial : test.skip;

// Written now, used once their directory is older than the listings' racy margin (3 s).
const written = Date.now();
const AIO_WORLD = supported ? notesWorld() : undefined;
test.before(async () => {
  const left = written + 3000 + 250 - Date.now();
  if (left > 0) await sleep(left);
});

/** The event masks an inotify watch on `file` (asking for IN_MODIFY, IN_ATTRIB, IN_CLOSE_WRITE) reports for `act`. */
function eventsOf(file: string, act: () => void): number[] {
  const n = native!;
  const ifd = n.watchOpen!();
  const dir = openTrustedDir(path.dirname(file), 'root', n);
  try {
    const cname = Buffer.from(`${path.basename(file)}\0`);
    mustHold(n.watchAdd!(ifd, dir, cname, IN.MODIFY | IN.ATTRIB | IN.CLOSE_WRITE) > 0, 'watch added');
    act();
    const buf = Buffer.alloc(4096);
    const masks: number[] = [];
    for (let got = n.watchRead!(ifd, buf); got > 0; got = n.watchRead!(ifd, buf))
      for (let at = 0; at + 16 <= got; at += 16 + buf.readUInt32LE(at + 12)) masks.push(buf.readUInt32LE(at + 4));
    return masks;
  } finally {
    n.close(dir);
    n.close(ifd);
  }
}

function mustHold(ok: boolean, what: string): void {
  if (!ok) throw new Error(what);
}

linuxTest(
  'async writes › an AIO write raises no inotify event but moves mtime and ctime; its close raises IN_CLOSE_WRITE',
  (t) => {
    const w = notesWorld();
    const file = path.join(w.root, 'a.md');
    const before = fs.statSync(file, { bigint: true });
    let fd = -1;
    const onWrite = eventsOf(file, () => {
      fd = fs.openSync(file, 'r+');
      t.is(aioPwrite(fd, Buffer.from('cedar'), WORD_AT), 5);
    });
    t.deepEqual(onWrite, [], 'no event for the AIO write');
    t.is(fs.readFileSync(file, 'utf8'), body('cedar'));
    const after = fs.statSync(file, { bigint: true });
    t.is(after.size, before.size);
    t.true(after.mtimeNs > before.mtimeNs && after.ctimeNs > before.ctimeNs, 'statx sees the times move');
    const onClose = eventsOf(file, () => fs.closeSync(fd));
    t.deepEqual(onClose, [IN.CLOSE_WRITE]);
  },
);

linuxTest('async writes › an io_uring write raises IN_MODIFY', (t) => {
  const w = notesWorld();
  const file = path.join(w.root, 'b.md');
  const fd = fs.openSync(file, 'r+');
  try {
    const masks = eventsOf(file, () => t.is(uringWrite(fd, Buffer.from('cedar'), WORD_AT), 5));
    t.deepEqual(masks, [IN.MODIFY]);
    t.is(fs.readFileSync(file, 'utf8'), body('cedar'));
  } finally {
    fs.closeSync(fd);
  }
});

/** The answer of a bridge without notification and without warm state. */
function freshAnswer(w: World, args: { query: string; limit?: number }): string {
  return JSON.stringify(createBridge({ log: () => undefined, racyMarginMs: 0, watch: false }).search(args, w.caller));
}

function warmBridge(t: ExecutionContext, w: World): Bridge {
  const bridge = createBridge({ log: () => undefined, racyMarginMs: 0, watch: true });
  for (let i = 0; i < 2; i++) bridge.search({ query: 'lantern' }, w.caller);
  const before = notesVouched();
  bridge.search({ query: 'lantern' }, w.caller);
  t.true(notesVouched() > before, 'kept answers stand in for statx');
  return bridge;
}

linuxTest(
  'async writes › after an AIO write a warm search returns what a statting search returns; the close catches up',
  (t) => {
    const w = AIO_WORLD!;
    const bridge = warmBridge(t, w);
    const file = path.join(w.root, 'a.md');
    const fd = fs.openSync(file, 'r+');
    let closed = false;
    try {
      t.is(aioPwrite(fd, Buffer.from('cedar'), WORD_AT), 5);
      // The writer's descriptor is open: a statting search refuses a.md (open_for_write). The warm index still holds
      // a.md's old bytes, but a hit is statted again before it is returned, the changed times void every kept answer
      // and the call scans again statting every note, so the answer is the same; and a read opens and judges a.md.
      for (const query of ['amber', 'cedar', 'lantern', 'basil']) {
        t.is(JSON.stringify(bridge.search({ query }, w.caller)), freshAnswer(w, { query }), query);
      }
      t.false(bridge.read({ id: 'a.md' }, w.caller).ok, 'a read refuses it while the writer holds it open');
      fs.closeSync(fd);
      closed = true;
      // The close raised IN_CLOSE_WRITE: the warm bridge reads the new bytes.
      for (const query of ['amber', 'cedar', 'lantern']) {
        t.is(JSON.stringify(bridge.search({ query }, w.caller)), freshAnswer(w, { query }), query);
      }
      t.deepEqual(idsOf(bridge.search({ query: 'cedar' }, w.caller)), ['a.md']);
    } finally {
      if (!closed) fs.closeSync(fd);
    }
  },
);
