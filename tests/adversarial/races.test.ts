/**
 * Races (issue item 4): while a second process swaps a directory for a symlink to outside, a note for a hard link
 * to an outside file, a trusted note for an untrusted one, a note's mode and content, or the root itself for a
 * symlink, 10,000 in-process reads and searches (plus a few hundred over MCP) must return zero bytes from outside
 * the allowed, trusted set: no response ever carries a marker planted only in outside or untrusted content.
 * MB_SOAK=1 runs twenty times as many calls (see README.md).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { mkdirs, writeNote } from '../helpers/fixtures.js';
import { connectMcp } from './mcp-client.js';
import { ALL_MARKS, MARK, makeArena, planted, type Arena } from './support.js';

const SOAK = process.env.MB_SOAK === '1';
const CALLS = SOAK ? 200_000 : 10_000;
const SWAPPER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'swapper.js');
const SAFE = '# Safe\n\nlantern safe words only\n';

const arenas: Arena[] = [];
test.after.always(() => arenas.forEach((a) => a.cleanup()));

function arena(): Arena {
  const a = makeArena({ deny: ['private/**'] });
  arenas.push(a);
  writeNote(a.root, 'swap/inner.md', SAFE);
  writeNote(a.outside, 'inner.md', planted(MARK.outside));
  for (const id of ['hl.md', 'flip.md', 'cw.md', 'plain.md']) writeNote(a.root, id, SAFE);
  writeNote(a.root, 'private/denied.md', planted(MARK.denied));
  mkdirs(a.root, 'sub');
  return a;
}

/** Start the swapper and resolve once it has done one full round. */
function startSwapper(a: Arena, kinds: string[]): Promise<ChildProcess> {
  const cfg = { root: a.root, outside: a.outside, kinds, safe: SAFE, untrusted: planted(MARK.untrusted) };
  const child = spawn(process.execPath, [SWAPPER, JSON.stringify(cfg)], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`swapper exited early (${code})`)));
    child.stdout!.once('data', () => resolve(child));
  });
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.removeAllListeners('exit');
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

interface Tally {
  calls: number;
  ok: number;
  refused: number;
  leaks: string[];
}

function check(tally: Tally, text: string, what: string): void {
  tally.calls++;
  const lower = text.toLowerCase();
  for (const m of ALL_MARKS) if (lower.includes(m) && tally.leaks.length < 5) tally.leaks.push(`${what}: ${text.slice(0, 200)}`);
  if (text.startsWith('{"ok":true')) tally.ok++;
  else tally.refused++;
}

const READS = ['swap/inner.md', 'hl.md', 'flip.md', 'cw.md', 'plain.md', 'private/denied.md', 'sub/../hl.md'];
const QUERIES = ['lantern', MARK.outside, MARK.untrusted, `lantern ${MARK.untrusted} ${MARK.outside}`, 'safe'];

/** `calls` in-process calls: 2 reads for each search, cycling through the ids and queries. */
function hammer(a: Arena, calls: number, tally: Tally): void {
  for (let i = 0; i < calls; i++) {
    if (i % 3 === 2) {
      const q = QUERIES[i % QUERIES.length]!;
      check(tally, JSON.stringify(a.search(q, 10)), `search ${q}`);
    } else {
      const id = READS[i % READS.length]!;
      check(tally, JSON.stringify(a.read(id)), `read ${id}`);
    }
  }
}

test.serial(`races › ${CALLS} calls under directory, hard-link, trust-flip and chmod swaps return no outside or untrusted byte`, async (t) => {
  t.timeout(SOAK ? 3_600_000 : 240_000);
  const a = arena();
  const child = await startSwapper(a, ['dir', 'hardlink', 'flip', 'chmod']);
  const tally: Tally = { calls: 0, ok: 0, refused: 0, leaks: [] };
  try {
    // In slices, so the event loop can notice the child and the MCP session between them.
    const slice = 1000;
    for (let done = 0; done < CALLS; done += slice) {
      hammer(a, Math.min(slice, CALLS - done), tally);
      await new Promise((r) => setImmediate(r));
    }
    const s = await connectMcp(a.home);
    try {
      for (let i = 0; i < (SOAK ? 5000 : 300); i++) {
        const read = i % 2 === 0;
        const r = await s.call(read ? 'memory_bridge_read' : 'memory_bridge_search', read ? { id: READS[i % READS.length] } : { query: QUERIES[i % QUERIES.length], limit: 10 });
        check(tally, r.text, `mcp ${i}`);
      }
    } finally {
      await s.close();
    }
  } finally {
    await stop(child);
  }
  t.deepEqual(tally.leaks, [], `leaks in ${tally.calls} calls`);
  t.true(tally.ok > 0, 'some calls succeeded while the swaps ran');
  t.true(tally.refused > 0, 'some calls were refused: the swaps were visible');
  t.log(`${tally.calls} calls: ${tally.ok} ok, ${tally.refused} refused`);
});

test.serial('races › calls while the root itself is swapped for a symlink to outside return no outside byte', async (t) => {
  t.timeout(SOAK ? 3_600_000 : 120_000);
  const a = arena();
  const child = await startSwapper(a, ['root']);
  const tally: Tally = { calls: 0, ok: 0, refused: 0, leaks: [] };
  try {
    const calls = SOAK ? 50_000 : 2_000;
    for (let done = 0; done < calls; done += 500) {
      hammer(a, 500, tally);
      await new Promise((r) => setImmediate(r));
    }
  } finally {
    await stop(child);
  }
  t.deepEqual(tally.leaks, []);
  t.true(tally.refused > 0);
  t.log(`${tally.calls} calls: ${tally.ok} ok, ${tally.refused} refused`);
});
