/**
 * Descriptors opened for writing before a chmod (docs/DESIGN.md "Descriptors opened for writing before a chmod"):
 * a note that any process holds open for writing is refused (`open_for_write`) for as long as it does, whatever
 * the note's mode says now. Real descriptors held by a second process, as another user when the suite runs as root.
 */
import test from 'ava';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createBridge } from '../../src/tools/bridge.js';
import type { SearchResult } from '../../src/tools/types.js';
import { isRoot, writeNote } from '../helpers/fixtures.js';
import { worldTracker } from '../tools/world.js';
import { realNative } from './support.js';
import { holder } from './write-holder.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const LEASE_HOLDER = path.join(HERE, 'lease-holder.js');
const rootTest = isRoot ? test : test.skip;
const worlds = worldTracker();
test.after.always(() => worlds.removeAll());

/** An unused uid/gid for "another user" (not 65534: the suite also runs as that user). */
const OTHER = 4242;
const UNAVAILABLE_READ = {
  ok: false,
  error: { code: 'not_found_or_denied', message: 'No readable document has that id.' },
};

/** A world whose note `garden.md` another user could open while it was 0666, with every directory 0755. */
function exposedWorld() {
  const w = worlds.world();
  const file = writeNote(w.root, 'garden.md', '# Garden\n\nThe lantern garden, as the owner wrote it.\n', 0o666);
  for (let dir = w.root; dir !== path.dirname(w.tmp); dir = path.dirname(dir)) fs.chmodSync(dir, 0o755);
  return { w, file };
}

const searchIds = (r: unknown) => ((r as SearchResult).results ?? []).map((h) => h.id);

async function heldOpenScenario(t: import('ava').ExecutionContext, uid?: number): Promise<void> {
  const { w, file } = exposedWorld();
  const reasons: string[] = [];
  // A search that skips the note says so in a hidden_notes line whose detail starts with the skip reason.
  const bridge = createBridge({
    log: (e) => reasons.push(e.reason === 'hidden_notes' ? (e.detail ?? '').split(' ')[0]! : e.reason),
    racyMarginMs: 0,
  });
  const h = holder(file, uid);
  await h.ready;
  // The owner takes write access away; the descriptor opened before keeps it and writes through it.
  fs.chmodSync(file, 0o600);
  await h.write('qzattackmarkqz injected after the chmod');
  t.true(fs.readFileSync(file, 'utf8').includes('qzattackmarkqz'), 'the old descriptor still writes');
  try {
    t.deepEqual(bridge.read({ id: 'garden.md' }, w.caller), UNAVAILABLE_READ);
    t.deepEqual(searchIds(bridge.search({ query: 'lantern' }, w.caller)), []);
    t.deepEqual(searchIds(bridge.search({ query: 'qzattackmarkqz' }, w.caller)), []);
    t.true(reasons.length > 0 && reasons.every((r) => r === 'open_for_write'), reasons.join(' '));
  } finally {
    await h.stop();
  }
  // Once no descriptor is open for writing the note passes again, bytes and all: nothing in the file shows what
  // was written through the old descriptor, which is why an exposed note must be replaced, not chmodded (docs/THREAT-MODEL.md).
  t.deepEqual(searchIds(bridge.search({ query: 'lantern' }, w.caller)), ['garden.md']);
}

rootTest('a note another user holds open for writing is refused while the descriptor lives (needs root)', (t) =>
  heldOpenScenario(t, OTHER),
);

test('a note any process of the running user holds open for writing is refused too', (t) => heldOpenScenario(t));

rootTest(
  'replacing the note (new file, rename over) serves the new inode while the old descriptor lives (needs root)',
  async (t) => {
    const { w, file } = exposedWorld();
    const h = holder(file, OTHER);
    await h.ready;
    try {
      const fresh = path.join(path.dirname(file), '.garden.md.new');
      fs.writeFileSync(fresh, '# Garden\n\nThe lantern garden, replaced.\n', { mode: 0o600 });
      fs.renameSync(fresh, file);
      await h.write('qzattackmarkqz into the old inode');
      const read = createBridge().read({ id: 'garden.md' }, w.caller) as { ok: boolean; content: string };
      t.true(read.ok);
      t.is(read.content, '# Garden\n\nThe lantern garden, replaced.\n');
    } finally {
      await h.stop();
    }
  },
);

rootTest(
  'the policy file held open for writing by another user makes every call unavailable (needs root)',
  async (t) => {
    const { w } = exposedWorld();
    fs.chmodSync(w.policyPath, 0o666);
    for (let dir = path.dirname(w.policyPath); dir !== path.dirname(w.tmp); dir = path.dirname(dir))
      fs.chmodSync(dir, 0o755);
    const h = holder(w.policyPath, OTHER);
    await h.ready;
    fs.chmodSync(w.policyPath, 0o600);
    const reasons: string[] = [];
    try {
      const r = createBridge({ log: (e) => reasons.push(e.reason) }).search({ query: 'lantern' }, w.caller);
      t.deepEqual(r, { ok: false, error: { code: 'unavailable', message: 'Memory is unavailable.' } });
      t.deepEqual(reasons, ['policy_untrusted']);
    } finally {
      await h.stop();
    }
    t.true(createBridge().search({ query: 'lantern' }, w.caller).ok);
  },
);

test('the check answers yes, no, and unknown where a lease cannot be taken', (t) => {
  const native = realNative();
  const { file } = exposedWorld();
  const fd = fs.openSync(file, 'r');
  try {
    t.is(native.openForWriting!(fd), 'no');
    const writer = fs.openSync(file, 'a');
    t.is(native.openForWriting!(fd), 'yes');
    fs.closeSync(writer);
    t.is(native.openForWriting!(fd), 'no');
  } finally {
    fs.closeSync(fd);
  }
  if (isRoot) {
    // Not the file's owner and no CAP_LEASE: the kernel refuses any lease (EACCES), so the answer is unknown. The
    // probe runs as root with CAP_LEASE dropped from its bounding set (a new uid might not reach this checkout,
    // e.g. under a private temporary directory), on a file another user owns.
    const probe = `const { getNative } = await import(${JSON.stringify(path.join(HERE, '..', '..', 'native', 'index.js'))});
      const fs = await import('node:fs'); const fd = fs.openSync(process.argv[1], 'r');
      process.stdout.write(getNative().openForWriting(fd));`;
    const st = fs.statSync(file);
    fs.chownSync(file, OTHER, OTHER);
    try {
      const r = spawnSync(
        'setpriv',
        ['--bounding-set', '-lease', process.execPath, '--input-type=module', '-e', probe, file],
        { encoding: 'utf8' },
      );
      t.is(r.stdout, 'unknown', r.stderr);
    } finally {
      fs.chownSync(file, st.uid, st.gid);
    }
  }
});

test('a lease broken in the instant it is held sends SIGURG, not the SIGIO that would end the process', async (t) => {
  // The facts openForWriting relies on, shown with a process that holds a read lease for a while: with F_SETSIG
  // SIGURG it survives a writer's open (which waits until the lease is released); without, SIGIO kills it.
  const { file } = exposedWorld();
  fs.chmodSync(file, 0o600);
  for (const withSetsig of [true, false]) {
    const lessee = spawn(process.execPath, [LEASE_HOLDER, file, withSetsig ? 'setsig' : 'default']);
    let out = '';
    lessee.stdout.setEncoding('utf8');
    const held = new Promise<void>((resolve) =>
      lessee.stdout.on('data', (c: string) => {
        out += c;
        if (out.includes('held')) resolve();
      }),
    );
    const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      lessee.on('close', (code, signal) => resolve({ code, signal })),
    );
    await held;
    // A writer of the same user opens the file for writing: this breaks the lease.
    const writer = spawn('bash', ['-c', 'exec 3>>"$1"; echo opened', 'writer', file]);
    const writerDone = new Promise<number | null>((resolve) => writer.on('close', (code) => resolve(code)));
    const end = await ended;
    t.is(await writerDone, 0);
    if (withSetsig) {
      t.deepEqual(end, { code: 0, signal: null }, out);
      t.true(out.includes('released'));
    } else t.is(end.signal, 'SIGIO');
  }
});

test('doctor counts a note held open for writing and says to replace it, not chmod it', async (t) => {
  const { runDoctor, explainNote, listSkipped } = await import('../../src/hermes/doctor.js');
  const { w, file } = exposedWorld();
  fs.chmodSync(file, 0o600);
  const h = holder(file);
  await h.ready;
  try {
    const { report } = runDoctor(w.home);
    t.is(report.counts.open_for_write, 1);
    // Named in the report, and listed by what `doctor --list open_for_write` runs.
    t.deepEqual(report.skipped.open_for_write, ['garden.md']);
    const listed = listSkipped(w.home, 'open_for_write');
    t.deepEqual('paths' in listed ? listed.paths : listed, ['garden.md']);
    const explained = explainNote(w.home, 'garden.md').report.checks.find((c) => !c.ok);
    t.is(explained?.reason, 'open_for_write');
    t.regex(explained?.remedy ?? '', /replace it/);
  } finally {
    await h.stop();
  }
});
