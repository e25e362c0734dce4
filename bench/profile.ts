/**
 * Where the server's time goes. Generates one benchmark corpus (same seed as bench/main.ts), runs the memory-bridge
 * MCP server under `node --cpu-prof`, drives one phase through the real stdio client, and summarises the V8 CPU
 * profile: self time and inclusive time per function (ms and share of busy time).
 *
 *   node dist/bench/profile.js --notes 10000 --phase warm --calls 60
 *   node dist/bench/profile.js --summarise FILE.cpuprofile      (summarise an existing profile)
 *
 * Phases: cold (spawn and first search, whole-process profile), warm (`calls` searches after the first search and
 * one warm-up), read (`calls` reads after the same warm-up), changed (`calls` × append to one note, then search).
 * Warm, read and changed profile only their calls (bench/sampler.ts, started and stopped by SIGUSR2).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { QUERIES, seedFor, serverMain, vocabularySource } from './config.js';
import { generateCorpus, loadVocabulary } from './corpus.js';
import { connect, disconnect, timeCall, toolPayload } from './processes.js';
import { median } from './stats.js';

const here = path.dirname(fileURLToPath(import.meta.url));

/** Resolve once `file` exists (polling every 20 ms, up to 30 s). */
async function waitFor(file: string): Promise<void> {
  for (let waited = 0; !fs.existsSync(file); waited += 20) {
    if (waited > 30000) throw new Error(`timed out waiting for ${path.basename(file)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await new Promise((resolve) => setTimeout(resolve, 50)); // let the writer finish
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** One row of the summary: a function (name, file, line) with self and inclusive milliseconds. */
export interface ProfileRow {
  fn: string;
  selfMs: number;
  totalMs: number;
}

function keyOf(n: ProfileNode): string {
  const f = n.callFrame;
  const name = f.functionName || '(anonymous)';
  if (!f.url) return name;
  let file = f.url.replace(/^file:\/\//, '');
  const nm = file.lastIndexOf('node_modules/');
  if (nm >= 0) file = file.slice(nm + 'node_modules/'.length);
  else if (file.includes('/dist/')) file = file.slice(file.indexOf('/dist/') + 1);
  return `${name} ${file}:${f.lineNumber + 1}`;
}

/**
 * Aggregate a V8 `.cpuprofile`: self time per function, and inclusive time counted once per sample per function
 * (recursion does not double count). `(idle)` is reported separately and excluded from the busy total.
 */
export function summariseProfile(p: CpuProfile): { busyMs: number; idleMs: number; rows: ProfileRow[] } {
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const n of p.nodes) byId.set(n.id, n);
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<string, number>();
  const total = new Map<string, number>();
  let busy = 0;
  let idle = 0;
  for (let i = 0; i < p.samples.length; i++) {
    const dt = (p.timeDeltas[i + 1] ?? p.timeDeltas[i] ?? 0) / 1000;
    const node = byId.get(p.samples[i]!);
    if (!node) continue;
    const k = keyOf(node);
    if (k === '(idle)') {
      idle += dt;
      continue;
    }
    busy += dt;
    self.set(k, (self.get(k) ?? 0) + dt);
    const seen = new Set<string>();
    for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
      const kk = keyOf(byId.get(id)!);
      if (seen.has(kk)) continue;
      seen.add(kk);
      total.set(kk, (total.get(kk) ?? 0) + dt);
    }
  }
  const rows = [...total.entries()].map(([fn, t]) => ({ fn, selfMs: self.get(fn) ?? 0, totalMs: t }));
  return { busyMs: busy, idleMs: idle, rows };
}

function printSummary(file: string, top: number): void {
  const p = JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile;
  const { busyMs, idleMs, rows } = summariseProfile(p);
  const pct = (x: number): string => `${((100 * x) / busyMs).toFixed(1).padStart(5)}%`;
  const line = (r: ProfileRow, v: number): string => `${v.toFixed(1).padStart(9)} ms ${pct(v)}  ${r.fn}`;
  process.stdout.write(`profile ${path.basename(file)}: busy ${busyMs.toFixed(0)} ms, idle ${idleMs.toFixed(0)} ms\n`);
  process.stdout.write(`\n-- top ${top} by self time --\n`);
  for (const r of [...rows].sort((a, b) => b.selfMs - a.selfMs).slice(0, top))
    process.stdout.write(`${line(r, r.selfMs)}\n`);
  process.stdout.write(`\n-- top ${top} project functions (dist/) by inclusive time --\n`);
  for (const r of rows
    .filter((x) => x.fn.includes('dist/'))
    .sort((a, b) => b.totalMs - a.totalMs)
    .slice(0, top)) {
    process.stdout.write(`${line(r, r.totalMs)}   (self ${r.selfMs.toFixed(1)} ms)\n`);
  }
}

/**
 * Memory of a server holding the index of `home`: snapshots (see bench/sampler.ts) before any search, after the
 * first search, after
 * one warm-up call, and after 24 more searches, each before and after a full GC. Printed and kept as JSON lines.
 */
async function memoryReport(home: string, file: string): Promise<void> {
  const s = await connect(
    process.execPath,
    [
      '--expose-gc',
      '--import',
      pathToFileURL(path.join(here, 'sampler.js')).href,
      serverMain,
      'mcp',
      '--home',
      home,
      '--run-kind',
      'interactive',
    ],
    {
      MB_BENCH_MEMORY: file,
    },
  );
  const lines = (): number =>
    fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).length : 0;
  const snap = async (label: string): Promise<void> => {
    const n = lines();
    process.kill(s.pid, 'SIGUSR2');
    for (let waited = 0; lines() === n; waited += 20) {
      if (waited > 30000) throw new Error('no memory snapshot');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const last = JSON.parse(fs.readFileSync(file, 'utf8').trim().split('\n').pop()!) as {
      before: unknown;
      afterFullGc: unknown;
    };
    process.stdout.write(
      `${label}:\n  before GC ${JSON.stringify(last.before)}\n  after GC  ${JSON.stringify(last.afterFullGc)}\n`,
    );
  };
  try {
    const search = async (q: string): Promise<void> => {
      const p = toolPayload((await timeCall(s, 'memory_bridge_search', { query: q })).result);
      if (p.ok !== true) throw new Error(`search refused: ${JSON.stringify(p)}`);
    };
    await snap('before any search (process baseline)');
    await search(QUERIES[0]!);
    await snap('after the first search');
    await search('notes');
    await snap('after one warm-up call');
    for (let i = 0; i < 24; i++) await search(QUERIES[i % QUERIES.length]!);
    await snap('after 24 more searches');
  } finally {
    await disconnect(s);
  }
}

async function run(): Promise<void> {
  const { values } = parseArgs({
    options: {
      notes: { type: 'string', default: '10000' },
      phase: { type: 'string', default: 'warm' },
      calls: { type: 'string', default: '60' },
      top: { type: 'string', default: '30' },
      out: { type: 'string' },
      summarise: { type: 'string' },
      interval: { type: 'string', default: '200' },
    },
  });
  const top = Number(values.top);
  if (values.summarise) {
    printSummary(values.summarise, top);
    return;
  }
  const notes = Number(values.notes);
  const calls = Number(values.calls);
  const phase = values.phase!;
  if (!['cold', 'warm', 'read', 'changed', 'memory'].includes(phase))
    throw new Error('--phase: cold | warm | read | changed | memory');
  const outDir = path.resolve(values.out ?? fs.mkdtempSync(path.join(os.tmpdir(), 'mb-prof-')));
  fs.mkdirSync(outDir, { recursive: true });
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mb-bench-'));
  fs.chmodSync(tmp, 0o700);
  try {
    const corpus = generateCorpus(fs.realpathSync(tmp), notes, loadVocabulary(vocabularySource), seedFor(notes));
    // Let the corpus age past the racy margin (3 s, trust/scan.ts): notes changed less than that before a call are
    // verified and re-indexed again by the next call, which would put a full re-index into the first warm calls.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 3100);
    // Whole-process profile for the cold phase; for the other phases the preloaded sampler profiles only the
    // calls after the warm-up (SIGUSR2 starts and stops it), so index building does not pollute the picture.
    const profileFile = path.join(outDir, `${phase}-${notes}-${Date.now()}.cpuprofile`);
    if (phase === 'memory') {
      await memoryReport(corpus.home, path.join(outDir, `memory-${notes}-${Date.now()}.jsonl`));
      return;
    }
    const args =
      phase === 'cold'
        ? [
            '--cpu-prof',
            '--cpu-prof-dir',
            outDir,
            // No --cpu-prof-name: every thread writes a profile of its own (CPU.<date>.<time>.<pid>.<tid>.<n>), and a
            // fixed name would let the stat thread's overwrite the main thread's. The main thread's (tid 0) is kept.
            '--cpu-prof-interval',
            values.interval!,
          ]
        : ['--import', pathToFileURL(path.join(here, 'sampler.js')).href];
    const s = await connect(
      process.execPath,
      [...args, serverMain, 'mcp', '--home', corpus.home, '--run-kind', 'interactive'],
      {
        MB_BENCH_PROFILE: profileFile,
        MB_BENCH_PROFILE_INTERVAL: values.interval!,
      },
    );
    const times: number[] = [];
    const call = async (name: string, a: Record<string, unknown>): Promise<number> => {
      const { ms, result } = await timeCall(s, name, a);
      const p = toolPayload(result);
      if (p.ok !== true) throw new Error(`${name} refused: ${JSON.stringify(p)}`);
      return ms;
    };
    try {
      const first = await call('memory_bridge_search', { query: QUERIES[0]! });
      process.stdout.write(`first search: ${first.toFixed(1)} ms\n`);
      if (phase !== 'cold') {
        await call('memory_bridge_search', { query: 'notes' });
        process.kill(s.pid, 'SIGUSR2');
        await waitFor(`${profileFile}.started`);
        for (let i = 0; i < calls; i++) {
          if (phase === 'warm') times.push(await call('memory_bridge_search', { query: QUERIES[i % QUERIES.length]! }));
          else if (phase === 'read')
            times.push(await call('memory_bridge_read', { id: corpus.ids[(i * 7919) % corpus.ids.length]! }));
          else {
            fs.appendFileSync(path.join(corpus.root, corpus.ids[(i * 7919) % corpus.ids.length]!), `\nEdited ${i}.\n`);
            times.push(await call('memory_bridge_search', { query: QUERIES[i % QUERIES.length]! }));
          }
        }
        process.kill(s.pid, 'SIGUSR2');
        await waitFor(profileFile);
        process.stdout.write(`${phase}: ${calls} calls, p50 ${median(times).toFixed(2)} ms\n`);
      }
    } finally {
      await disconnect(s);
    }
    if (phase === 'cold') {
      const main = fs.readdirSync(outDir).find((f) => /^CPU\.\d+\.\d+\.\d+\.0\.\d+\.cpuprofile$/.test(f));
      if (main !== undefined) fs.renameSync(path.join(outDir, main), profileFile);
    }
    if (!fs.existsSync(profileFile)) throw new Error('the server wrote no .cpuprofile (did it exit on end of stdin?)');
    const newest = profileFile;
    process.stdout.write(`profile written to ${newest}\n`);
    printSummary(newest, top);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

run().catch((err: unknown) => {
  process.stderr.write(`[profile] failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
