/**
 * In-process timing of one warm search, phase by phase, on a benchmark corpus: policy load, trusted walk to the
 * root, tree scan (list + stat + policy match + identity check), index sync, and ranking with snippets. Same
 * modules and order as `runSearch` (src/tools/search.ts), called directly so no MCP or JSON cost is included.
 *
 *   node dist/bench/phases.js --notes 10000 --calls 60 [--corpora DIR] [--warm-only]
 *
 * `--corpora DIR` reuses (or generates once into DIR) the corpus `npm run bench -- --corpora DIR` uses;
 * `--warm-only` skips the changed-note block (and leaves the reused corpus as it was).
 *
 * Also times the cold first pass (scan that reads every note + sync that indexes it) and one changed note.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { getNative } from '../native/index.js';
import { loadPolicy } from '../src/policy/load.js';
import { NoteIndex } from '../src/search/index.js';
import { scanLimitsOf } from '../src/policy/scan-limits.js';
import { openTrustedDir } from '../src/trust/path.js';
import { scanTree } from '../src/trust/scan.js';
import { CallerView } from '../src/trust/view.js';
import { statPool } from '../src/trust/warm/stat-pool.js';
import { QUERIES, seedFor, vocabularySource } from './config.js';
import { generateCorpus, loadVocabulary, reusedCorpus } from './corpus.js';
import { median } from './stats.js';

interface Phases {
  policy: number;
  root: number;
  scan: number;
  sync: number;
  search: number;
  total: number;
}

function once(home: string, index: NoteIndex, memo: CallerView, query: string): Phases {
  const native = getNative();
  if (native === null) throw new Error('no native bindings on this platform');
  const t0 = performance.now();
  const policy = loadPolicy(home);
  const t1 = performance.now();
  const rootFd = openTrustedDir(policy.root, 'root', native);
  const t2 = performance.now();
  try {
    const scan = scanTree(rootFd, policy, scanLimitsOf(policy), index, native, {
      view: memo,
      statThread: statPool(),
      watch: process.env.MEMORY_BRIDGE_WATCH !== '0',
    });
    const t3 = performance.now();
    index.sync(scan.notes);
    const t4 = performance.now();
    index.search(query, policy.limits.default_results, policy.limits);
    const t5 = performance.now();
    return { policy: t1 - t0, root: t2 - t1, scan: t3 - t2, sync: t4 - t3, search: t5 - t4, total: t5 - t0 };
  } finally {
    native.close(rootFd);
  }
}

function show(label: string, runs: Phases[]): void {
  const keys: (keyof Phases)[] = ['policy', 'root', 'scan', 'sync', 'search', 'total'];
  const cells = keys.map((k) => `${k} ${median(runs.map((r) => r[k])).toFixed(2)}`);
  process.stdout.write(`${label.padEnd(22)} (median of ${runs.length}, ms): ${cells.join('  ')}\n`);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      notes: { type: 'string', default: '10000' },
      calls: { type: 'string', default: '60' },
      corpora: { type: 'string' },
      'warm-only': { type: 'boolean', default: false },
    },
  });
  const notes = Number(values.notes);
  const calls = Number(values.calls);
  const reuse = values.corpora ? path.resolve(values.corpora) : null;
  if (reuse !== null) fs.mkdirSync(reuse, { recursive: true, mode: 0o700 });
  const tmp = reuse ?? fs.mkdtempSync(path.join(os.tmpdir(), 'mb-bench-'));
  fs.chmodSync(tmp, 0o700);
  try {
    const vocab = loadVocabulary(vocabularySource);
    const corpus =
      reuse === null
        ? generateCorpus(fs.realpathSync(tmp), notes, vocab, seedFor(notes))
        : reusedCorpus(fs.realpathSync(tmp), notes, vocab, seedFor(notes));
    // Let the corpus age past the racy margin (3 s, trust/scan.ts): notes changed less than that before a call are
    // verified and re-indexed again by the next call, which would put a full re-index into the first warm calls.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 3100);
    const index = new NoteIndex();
    const memo = new CallerView();
    show('cold first search', [once(corpus.home, index, memo, QUERIES[0]!)]);
    // The stat thread starts on the next turn of the event loop after a large scan (src/trust/warm/stat-pool.ts); let it
    // start, as it does in the server between calls, so warm scans here use it too.
    await new Promise((resolve) => setImmediate(resolve));
    await statPool().whenReady(5000);
    once(corpus.home, index, memo, 'notes');
    const warm: Phases[] = [];
    for (let i = 0; i < calls; i++) warm.push(once(corpus.home, index, memo, QUERIES[i % QUERIES.length]!));
    show('warm search', warm);
    const perQuery = QUERIES.map(
      (q) => `${q} ${median(warm.filter((_, i) => QUERIES[i % QUERIES.length] === q).map((r) => r.search)).toFixed(1)}`,
    );
    process.stdout.write(`  search phase by query (ms): ${perQuery.join(', ')}\n`);
    if (values['warm-only']) return;
    const changed: Phases[] = [];
    for (let i = 0; i < Math.min(calls, 30); i++) {
      fs.appendFileSync(path.join(corpus.root, corpus.ids[(i * 7919) % corpus.ids.length]!), `\nEdited ${i}.\n`);
      changed.push(once(corpus.home, index, memo, QUERIES[i % QUERIES.length]!));
    }
    show('after one changed note', changed);
  } finally {
    if (reuse === null) fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`[phases] failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
