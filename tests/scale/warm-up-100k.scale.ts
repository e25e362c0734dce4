/**
 * The warm first call at scale (docs/HERMES.md, "Warm first call"): on the generated vault of 100,000 notes
 * (tests/scale/vault.ts), a worker given the shim's `warm_up` request builds the view once; a search sent while
 * the build runs (once the worker has recorded that it started) waits for it and is answered from the built view,
 * with every note in view searched (not truncated, not incomplete) and no note read a second time (note opens are
 * counted on the real binding over the whole exchange: exactly one per note); the record says warm with 100,000
 * notes; a later call answers the same. Timings are logged, never judged here (the targets are in
 * `npm run bench -- --sections warmup`).
 *
 * The worker runs in this process (runWorker over streams, the real bridge), so opens can be counted; the racy
 * margin is 0 because the tree was written moments ago and the count is exact only when no note is due for a
 * re-check (BridgeOptions.racyMarginMs). The runner (scripts/test.js) runs this file in the scale step. Alone:
 * `npm run build && npx ava dist/tests/scale/warm-up-100k.scale.js`.
 */
import { PassThrough } from 'node:stream';
import test from 'ava';
import type { ViewState } from '../../src/hermes/view-state.js';
import { runWorker } from '../../src/hermes/worker.js';
import { createBridge } from '../../src/tools/bridge.js';
import { statPool } from '../../src/trust/warm/stat-pool.js';
import type { ParsedJson } from '../helpers/fixtures.js';
import { buildTree, NOTES, scaleWorld, stopwatch, treeIds, unmountTree } from './vault.js';
import fs from 'node:fs';

const ids = treeIds();
const LANTERNS = [ids[7]!, ids[NOTES / 2]!, ids[NOTES - 2]!];

/** Resolves when `check()` holds, polling every 10 ms (conditions, never counts of calls). */
async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 10));
}

test('warm-up at 100,000 notes › one build; the search sent during it is answered from it, reading no note again', async (t) => {
  t.timeout(600_000);
  const world = scaleWorld(t);
  if (world === undefined) return;
  const { native, w, mounted } = world;
  const lap = stopwatch();
  const { openFileAt } = native;
  try {
    buildTree(w.root, ids, new Map(LANTERNS.map((id) => [id, '# Festival\n\nThe lantern parade starts at dusk.\n'])));
    t.log(`tree of ${NOTES} notes built in ${lap()}${mounted ? ' (tmpfs)' : ''}`);

    let opens = 0;
    native.openFileAt = (dirfd: number, name: string) => {
      if (name.endsWith('.md')) opens++;
      return openFileAt.call(native, dirfd, name);
    };
    const input = new PassThrough();
    const output = new PassThrough();
    const replies: ParsedJson[] = [];
    let rest = '';
    output.on('data', (chunk: Buffer) => {
      const lines = (rest + chunk.toString('utf8')).split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) replies.push(JSON.parse(line));
    });
    const records: ViewState[] = [];
    const served = runWorker({
      input,
      output,
      bridge: createBridge({ log: () => undefined, racyMarginMs: 0 }),
      log: (line) => t.log(`worker: ${line}`),
      recordViewState: (_home, state) => records.push(state),
    });
    const send = (id: string, tool: string, args: unknown): void => {
      input.write(`${JSON.stringify({ v: 1, id, tool, args, caller: { ...w.caller, profile: 'p' } })}\n`);
    };

    send('warm', 'warm_up', {});
    await until(() => records.length > 0);
    t.is(records[0]!.state, 'building');
    send('first', 'memory_bridge_search', { query: 'lantern parade', limit: 5 });
    await until(() => replies.length === 2);
    t.log(`warm-up and the search sent during it answered in ${lap()}`);
    t.deepEqual(
      replies.map((r) => r.id),
      ['warm', 'first'],
    );
    t.deepEqual(replies[0]!.result.ok, true);
    t.is(replies[0]!.result.notes, NOTES);
    t.log(`the worker's build took ${replies[0]!.result.ms} ms`);
    const first = replies[1]!.result;
    t.is(first.ok, true, JSON.stringify(first));
    t.deepEqual(first.results.map((h: ParsedJson) => h.id).sort(), [...LANTERNS].sort());
    t.false(first.truncated);
    t.false('incomplete' in first);
    t.is(opens, NOTES, 'each note read once: by the warm-up, not again by the call that waited for it');
    t.is(records.length, 2);
    t.is(records[1]!.state, 'warm');
    t.is(records[1]!.notes, NOTES);

    send('second', 'memory_bridge_search', { query: 'lantern parade', limit: 5 });
    await until(() => replies.length === 3);
    t.log(`a later search answered in ${lap()}`);
    t.deepEqual(replies[2]!.result.results, first.results);
    t.is(opens, NOTES, 'and no note read again by the next call either');
    input.end();
    await served;
  } finally {
    native.openFileAt = openFileAt;
    // The stat thread may still hold a duplicate of one directory for a moment (src/trust/warm/stat-pool.ts, "Bounds").
    statPool().settleDeferred(10_000);
    if (mounted) unmountTree(w.root);
    fs.rmSync(w.tmp, { recursive: true, force: true });
  }
});
