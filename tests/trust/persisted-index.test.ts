/**
 * The persisted index's file and its load (src/search/persisted.ts, src/tools/persisted-index.ts; docs/DESIGN.md
 * §The persisted index), on real files with real modes and owners: built from the profile's own scan, written 0600,
 * holding no note text; refused with its reason code when corrupt, truncated, swapped, chmodded, linked or foreign;
 * entries revalidated against a fresh scan's identities (a changed, removed or newly denied note never matched).
 * Runs as root and again as uid 65534 (scripts/test.js).
 */
import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { getNative } from '../../native/index.js';
import { replaceFile } from '../../src/atomic-write.js';
import { scanLimitsOf } from '../../src/policy/scan-limits.js';
import { decodePersisted, revalidate, type PersistedIndex } from '../../src/search/persisted.js';
import { parseCaller } from '../../src/tools/caller.js';
import {
  buildPersistedIndex,
  loadPersistedIndex,
  persistedIndexPath,
  type PersistedLoad,
} from '../../src/tools/persisted-index.js';
import { policyAndRoot } from '../../src/tools/start.js';
import { createBridge } from '../../src/tools/bridge.js';
import type { LogEvent } from '../../src/tools/types.js';
import { scanTree } from '../../src/trust/scan.js';
import type { ScannedNote } from '../../src/trust/types.js';
import { FOREIGN_GID, FOREIGN_UID, isRoot, makeHome, makeTempDir, removeTree, writeNote } from '../helpers/fixtures.js';
import { loadPolicy } from '../../src/policy/load.js';

const native = getNative();
const made: string[] = [];
test.after.always(() => {
  for (const dir of made) removeTree(dir);
});

/** A home whose policy allows `allow` below a root of `count` notes; the persisted index is not written yet. */
function world(count = 40, allow: string[] = ['**']): { tmp: string; root: string; home: string } {
  const tmp = makeTempDir('mb-persist-');
  made.push(tmp);
  const root = path.join(tmp, 'memory');
  fs.mkdirSync(root, { mode: 0o700 });
  for (let i = 0; i < count; i++)
    writeNote(
      root,
      `${i % 2 === 0 ? 'even' : 'odd'}/note-${i}.md`,
      `# Zebra Crossing ${i}\n\nthe quick brown fox ${i}\n`,
    );
  const { home } = makeHome(tmp, { version: 1, root, allow });
  return { tmp, root, home };
}

/** Build and write the persisted index of `home` as `memory-bridge index` does (racy margin off: notes are new). */
function writeIndex(home: string): void {
  const build = buildPersistedIndex(home, native!, { racyMarginMs: 0 });
  replaceFile(persistedIndexPath(home), build.bytes, 0o600);
}

/** This call's scan of `home` (policy, writers and trust rule as a search's), every note read. */
function scanOf(home: string): ScannedNote[] {
  const { policy, writers, rootFd } = policyAndRoot(
    parseCaller({ home, cron: false, subagent: false }),
    native!,
    () => undefined,
  );
  try {
    return scanTree(
      rootFd,
      policy,
      { ...scanLimitsOf(policy), writers, racyMarginMs: 0 },
      { has: () => false },
      native!,
    ).notes;
  } finally {
    native!.close(rootFd);
  }
}

function load(home: string): PersistedLoad {
  return loadPersistedIndex(home, loadPolicy(home), native!);
}

function loaded(t: { fail(msg: string): void }, result: PersistedLoad): PersistedIndex {
  if (result.state !== 'loaded') {
    t.fail(`not loaded: ${JSON.stringify(result)}`);
    throw new Error('not loaded');
  }
  return result.index;
}

const linux = native !== null && process.platform === 'linux';

test.serial('built from the profile scan, written 0600, holding ids and terms but no note text', (t) => {
  if (!linux) return t.pass();
  const { home } = world(40, ['even/**']);
  writeIndex(home);
  const file = persistedIndexPath(home);
  t.is(fs.statSync(file).mode & 0o777, 0o600);
  const index = loaded(t, load(home));
  t.is(index.count, 20, 'only the notes the policy allows');
  t.true(index.ids.every((id) => id.startsWith('even/')));
  t.true(index.terms.includes('zebra') && index.terms.includes('crossing'));
  const bytes = fs.readFileSync(file);
  // Terms are there one by one; no title, line or sentence of a note is.
  t.false(bytes.includes('Zebra Crossing'), 'no title');
  t.false(bytes.includes('zebra crossing'), 'no folded title');
  t.false(bytes.includes('quick brown'), 'no body text');
  t.false(bytes.includes('odd/'), 'no id the policy does not allow');
});

test.serial('every entry of an unchanged tree revalidates against a fresh scan', (t) => {
  if (!linux) return t.pass();
  const { home } = world(30);
  writeIndex(home);
  const index = loaded(t, load(home));
  const check = revalidate(index, scanOf(home));
  t.deepEqual([check.revalidated, check.rebuilt, check.unused], [30, 0, 0]);
});

test.serial('a changed, replaced, removed or newly denied note is never matched; a new note is rebuilt', (t) => {
  if (!linux) return t.pass();
  const { root, home, tmp } = world(30);
  writeIndex(home);
  // Same size, new bytes: mtime and ctime move.
  fs.writeFileSync(path.join(root, 'even/note-2.md'), '# Zebra Crossing 2\n\nthe quick brown cat 2\n');
  // Replaced by another file with the same bytes: a new inode.
  const bytes = fs.readFileSync(path.join(root, 'odd/note-3.md'));
  fs.rmSync(path.join(root, 'odd/note-3.md'));
  writeNote(root, 'odd/note-3.md', bytes);
  // chmod moves ctime and mode.
  fs.chmodSync(path.join(root, 'even/note-4.md'), 0o400);
  fs.rmSync(path.join(root, 'odd/note-5.md'));
  writeNote(root, 'odd/new.md', 'a new note\n');
  const notes = scanOf(home);
  const check = revalidate(loaded(t, load(home)), notes);
  const stale = notes.filter((_, pos) => check.entryOf[pos] === -1).map((n) => n.id);
  t.deepEqual(stale.sort(), ['even/note-2.md', 'even/note-4.md', 'odd/new.md', 'odd/note-3.md']);
  t.deepEqual([check.revalidated, check.rebuilt, check.unused], [26, 4, 4]);
  // A narrower policy: the odd notes' entries are still in the file but never stand for anything.
  makeHome(tmp, { version: 1, root, allow: ['even/**'] });
  const narrowed = revalidate(loaded(t, load(home)), scanOf(home));
  t.is(narrowed.revalidated, 13);
  t.is(narrowed.unused, 30 - 13);
});

/** Each way of spoiling the file, and the reason code its load must give. */
const SPOILERS: readonly {
  name: string;
  reason: string;
  detail?: string;
  rootOnly?: boolean;
  spoil(file: string, other: string): void;
}[] = [
  {
    name: 'one byte flipped',
    reason: 'index_corrupt',
    spoil(file) {
      const b = fs.readFileSync(file);
      b[b.length >> 1] = b[b.length >> 1]! ^ 0x40;
      fs.writeFileSync(file, b);
    },
  },
  {
    name: 'truncated',
    reason: 'index_truncated',
    spoil(file) {
      fs.truncateSync(file, Math.floor(fs.statSync(file).size * 0.6));
    },
  },
  {
    name: 'another version',
    reason: 'index_version',
    spoil(file) {
      const b = fs.readFileSync(file);
      b.writeUInt32LE(99, 8);
      fs.writeFileSync(file, b);
    },
  },
  {
    name: "swapped for another home's file",
    reason: 'index_foreign',
    spoil(file, other) {
      fs.copyFileSync(persistedIndexPath(other), file);
    },
  },
  {
    name: 'chmod 0640 (readable by the group)',
    reason: 'index_readable',
    spoil(file) {
      fs.chmodSync(file, 0o640);
    },
  },
  {
    name: 'chmod 0620 (writable by the group)',
    reason: 'index_untrusted',
    detail: 'group_writable',
    spoil(file) {
      fs.chmodSync(file, 0o620);
    },
  },
  {
    name: 'a symlink to a good file',
    reason: 'index_untrusted',
    detail: 'symlink',
    spoil(file, other) {
      fs.rmSync(file);
      fs.symlinkSync(persistedIndexPath(other), file);
    },
  },
  {
    name: 'a second hard link',
    reason: 'index_untrusted',
    detail: 'hard_link',
    spoil(file) {
      fs.linkSync(file, `${file}.link`);
    },
  },
  {
    name: 'owned by someone else',
    reason: 'index_untrusted',
    detail: 'untrusted_owner',
    rootOnly: true,
    spoil(file) {
      fs.chownSync(file, FOREIGN_UID, FOREIGN_GID);
    },
  },
];

for (const spoiler of SPOILERS) {
  test.serial(`refused with ${spoiler.reason}: ${spoiler.name}`, (t) => {
    if (!linux || (spoiler.rootOnly === true && !isRoot)) return t.pass();
    const { home } = world(12);
    const other = world(12);
    writeIndex(home);
    writeIndex(other.home);
    t.is(load(home).state, 'loaded');
    spoiler.spoil(persistedIndexPath(home), other.home);
    const result = load(home);
    t.like(result, {
      state: 'refused',
      reason: spoiler.reason,
      ...(spoiler.detail === undefined ? {} : { detail: spoiler.detail }),
    });
    // Written again by the command, it loads again.
    fs.rmSync(persistedIndexPath(home), { force: true });
    writeIndex(home);
    t.is(load(home).state, 'loaded');
  });
}

test.serial('absent is not a refusal; every prefix of a good file is refused, never thrown', (t) => {
  if (!linux) return t.pass();
  const { home } = world(6);
  t.deepEqual(load(home), { state: 'absent' });
  writeIndex(home);
  const bytes = fs.readFileSync(persistedIndexPath(home));
  for (let n = 0; n < bytes.length; n += Math.max(1, Math.floor(bytes.length / 200))) {
    const result = decodePersisted(bytes.subarray(0, n));
    t.true('refused' in result, `prefix of ${n} bytes`);
  }
});

/** A first search through a fresh bridge, its answer and the operator events it logged. */
function firstSearch(home: string, args: Record<string, unknown>, off = false) {
  const events: LogEvent[] = [];
  if (off) process.env.MEMORY_BRIDGE_PERSISTED_INDEX = '0';
  try {
    const answer = createBridge({ racyMarginMs: 0, log: (e) => events.push(e) }).search(args, {
      home,
      cron: false,
      subagent: false,
    });
    return { answer: JSON.stringify(answer), reasons: events.map((e) => e.reason) };
  } finally {
    delete process.env.MEMORY_BRIDGE_PERSISTED_INDEX;
  }
}

for (const spoiler of SPOILERS) {
  test.serial(`through the bridge, ${spoiler.name}: logged as ${spoiler.reason}, the answer still right`, (t) => {
    if (!linux || (spoiler.rootOnly === true && !isRoot)) return t.pass();
    const { home } = world(12);
    const other = world(12);
    writeIndex(home);
    writeIndex(other.home);
    const args = { query: 'zebra fox', limit: 5 };
    const without = firstSearch(home, args, true);
    t.deepEqual(firstSearch(home, args), { answer: without.answer, reasons: [] }, 'used, nothing to say');
    spoiler.spoil(persistedIndexPath(home), other.home);
    const refused = firstSearch(home, args);
    t.is(refused.answer, without.answer);
    t.deepEqual(refused.reasons, [spoiler.reason]);
  });
}

test.serial('a view that stays empty is offered the file once, not read and refused again on every call', (t) => {
  if (!linux) return t.pass();
  const { root, home } = world(12);
  writeIndex(home);
  for (const name of fs.readdirSync(root)) fs.rmSync(path.join(root, name), { recursive: true });
  const file = persistedIndexPath(home);
  const b = fs.readFileSync(file);
  b[b.length >> 1] = b[b.length >> 1]! ^ 0x40;
  fs.writeFileSync(file, b);
  const events: LogEvent[] = [];
  const bridge = createBridge({ racyMarginMs: 0, log: (e) => events.push(e) });
  const caller = { home, cron: false, subagent: false };
  const answers = [1, 2, 3].map(() => JSON.stringify(bridge.search({ query: 'zebra fox', limit: 5 }, caller)));
  t.is(new Set(answers).size, 1);
  t.deepEqual(
    events.filter((e) => e.reason.startsWith('index_')).map((e) => e.reason),
    ['index_corrupt'],
  );
  const fresh: LogEvent[] = [];
  createBridge({ racyMarginMs: 0, log: (e) => fresh.push(e) }).search({ query: 'zebra fox', limit: 5 }, caller);
  t.true(
    fresh.some((e) => e.reason === 'index_corrupt'),
    'a new view is offered the file again',
  );
});
