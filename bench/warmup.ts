/**
 * The "warmup" section of `npm run bench` (docs/HERMES.md §Warm first call): a fresh `memory-bridge worker`, started
 * the way the Hermes shim starts it (the CLI's launcher options in NODE_OPTIONS, an otherwise empty environment,
 * `/` as working directory), gets the shim's `warm_up` request as Hermes loads the plugin. Per fresh process, over
 * the worker's own pipe:
 * - the warm-up: spawn → its reply (wall clock), and the build time the worker reports;
 * - the first tool call once the warm-up has finished, then WARM_ROUNDS rounds of varied calls (every query of the
 *   coldstart section, the first call's among them): their median is the warm p50, and the median of the first
 *   call's own query among them is what the first call is judged against (queries differ in cost);
 * - for comparison, a session whose first call comes right away, during the build (spawn → answer, and the call's
 *   own wait), and one without a warm-up (spawn → the cold first answer).
 * Target (issue 28 point 8): the first call after the warm-up ≤ 2 × a warm call of the same query (medians over
 * processes).
 *
 * Standalone: `node dist/bench/warmup.js --home H [--runs N] [--out FILE]` on any profile home whose policy allows
 * the bench's queries (the notes counted from the warm-up's reply).
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { serverMain, shebangNodeOptions } from './config.js';
import { COLD_QUERIES } from './coldstart.js';
import { median } from './stats.js';

/** Rounds over COLD_QUERIES after the first call. */
const WARM_ROUNDS = 3;
/** The judged bound: first call after the warm-up ÷ a warm call of the same query. */
const TARGET = 2;

/** One fresh worker's figures, ms. */
export interface WarmupRun {
  /** Spawn → the warm-up's reply. */
  warmUpMs: number;
  /** The build as the worker timed it. */
  buildMs: number;
  /** The first search after the warm-up's reply: send → answer. */
  firstMs: number;
  /** Median of the warm calls after it, and of those of the first call's query. */
  warmP50: number;
  warmSameMs: number;
  /** A search sent right after the warm-up request: spawn → its answer, and send → answer. */
  duringSpawnMs: number;
  duringCallMs: number;
  /** No warm-up: spawn → the first search's answer. */
  coldSpawnMs: number;
}

export interface WarmupSection {
  notes: number;
  runs: WarmupRun[];
  ratio: number;
  pass: boolean;
}

/** A worker child and its reply lines, one at a time. */
class WorkerPipe {
  readonly child: ChildProcessWithoutNullStreams;
  readonly started = performance.now();
  private rest = '';
  private readonly lines: string[] = [];
  private wake: (() => void) | null = null;
  private next = 0;

  constructor(private readonly home: string) {
    this.child = spawn(process.execPath, [serverMain, 'worker'], {
      cwd: '/',
      env: { NODE_OPTIONS: shebangNodeOptions().join(' ') },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.child.stderr.resume();
    this.child.stdout.setEncoding('utf8');
    this.child.stdout.on('data', (chunk: string) => {
      const parts = (this.rest + chunk).split('\n');
      this.rest = parts.pop() ?? '';
      this.lines.push(...parts);
      this.wake?.();
    });
  }

  /** Write one request; its id. */
  send(tool: string, args: unknown): string {
    const id = `r${this.next++}`;
    const caller = { home: this.home, profile: 'bench', cron: false, subagent: false };
    this.child.stdin.write(`${JSON.stringify({ v: 1, id, tool, args, caller })}\n`);
    return id;
  }

  /** The next reply (replies come in request order). */
  async reply(): Promise<{ id: string; result: Record<string, unknown> }> {
    while (this.lines.length === 0) {
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
      this.wake = null;
    }
    return JSON.parse(this.lines.shift()!) as { id: string; result: Record<string, unknown> };
  }

  /** Send a search and wait for its answer; send → answer, ms. */
  async search(query: string): Promise<number> {
    const t0 = performance.now();
    this.send('memory_bridge_search', { query });
    const r = await this.reply();
    if (r.result.ok !== true) throw new Error(`warmup bench: a search was refused: ${JSON.stringify(r.result)}`);
    return performance.now() - t0;
  }

  async close(): Promise<void> {
    this.child.stdin.end();
    await new Promise((resolve) => this.child.once('close', resolve));
  }
}

/** One fresh worker: the warm-up, the first call after it, the warm calls. */
async function afterWarmUp(
  home: string,
): Promise<Pick<WarmupRun, 'warmUpMs' | 'buildMs' | 'firstMs' | 'warmP50' | 'warmSameMs'>> {
  const w = new WorkerPipe(home);
  try {
    w.send('warm_up', {});
    const warm = await w.reply();
    if (warm.result.ok !== true) throw new Error('warmup bench: the warm-up was refused');
    const warmUpMs = performance.now() - w.started;
    const firstMs = await w.search(COLD_QUERIES[0]!);
    const calls: number[] = [];
    const same: number[] = [];
    for (let round = 0; round < WARM_ROUNDS; round++)
      for (const [i, query] of COLD_QUERIES.entries()) {
        const ms = await w.search(query);
        calls.push(ms);
        if (i === 0) same.push(ms);
      }
    return { warmUpMs, buildMs: warm.result.ms as number, firstMs, warmP50: median(calls), warmSameMs: median(same) };
  } finally {
    await w.close();
  }
}

/** A first call sent right after the warm-up request (it waits in the worker for the build). */
async function duringWarmUp(home: string): Promise<{ duringSpawnMs: number; duringCallMs: number }> {
  const w = new WorkerPipe(home);
  try {
    w.send('warm_up', {});
    const t0 = performance.now();
    w.send('memory_bridge_search', { query: COLD_QUERIES[0]! });
    await w.reply();
    const r = await w.reply();
    if (r.result.ok !== true) throw new Error('warmup bench: the search during the warm-up was refused');
    const now = performance.now();
    return { duringSpawnMs: now - w.started, duringCallMs: now - t0 };
  } finally {
    await w.close();
  }
}

/** No warm-up: spawn → the first search's answer. */
async function withoutWarmUp(home: string): Promise<number> {
  const w = new WorkerPipe(home);
  try {
    await w.search(COLD_QUERIES[0]!);
    return performance.now() - w.started;
  } finally {
    await w.close();
  }
}

/**
 * `runs` fresh workers of each kind over the corpus at `home` (its notes older than the racy margin, so the warm
 * calls are the steady ones), alternating the kinds.
 */
export async function runWarmup(
  notes: number,
  home: string,
  runs: number,
  log: (msg: string) => void,
): Promise<WarmupSection> {
  const all: WarmupRun[] = [];
  for (let i = 0; i < runs; i++) {
    const after = await afterWarmUp(home);
    const during = await duringWarmUp(home);
    const coldSpawnMs = await withoutWarmUp(home);
    const run = { ...after, ...during, coldSpawnMs };
    log(
      `warmup ${notes}: run ${i + 1}/${runs}: warm-up ${(run.warmUpMs / 1000).toFixed(2)} s (build ${run.buildMs} ms), first call after it ${run.firstMs.toFixed(0)} ms, warm ${run.warmSameMs.toFixed(0)} ms (same query), warm p50 ${run.warmP50.toFixed(0)} ms; a call during it answered ${(run.duringSpawnMs / 1000).toFixed(2)} s after spawn; without warm-up ${(coldSpawnMs / 1000).toFixed(2)} s`,
    );
    all.push(run);
  }
  const ratio = median(all.map((r) => r.firstMs)) / median(all.map((r) => r.warmSameMs));
  return { notes, runs: all, ratio, pass: ratio <= TARGET };
}

export function renderWarmup(sections: WarmupSection[]): string {
  const s = (ms: number): string => (ms / 1000).toFixed(2);
  const lines = [
    `Warm first call (a fresh \`memory-bridge worker\` per run, started as the Hermes shim starts it; medians over runs; target: first call after the warm-up ≤ ${TARGET} × a warm call of the same query):`,
    '',
    '| notes | runs | warm-up, spawn → built (s) | build in the worker (s) | first call after it (ms) | warm, same query (ms) | ÷ warm (≤ 2) | verdict | warm p50, all queries (ms) | call during the warm-up: spawn → answer (s) | its own wait (s) | no warm-up: spawn → first answer (s) |',
    '|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|',
  ];
  for (const x of sections) {
    const m = (f: (r: WarmupRun) => number): number => median(x.runs.map(f));
    lines.push(
      `| ${x.notes.toLocaleString('en-US')} | ${x.runs.length} | ${s(m((r) => r.warmUpMs))} | ${s(m((r) => r.buildMs))} | ${m((r) => r.firstMs).toFixed(0)} | ${m((r) => r.warmSameMs).toFixed(0)} | ${x.ratio.toFixed(2)} | ${x.pass ? 'pass' : 'FAIL'} | ${m((r) => r.warmP50).toFixed(0)} | ${s(m((r) => r.duringSpawnMs))} | ${s(m((r) => r.duringCallMs))} | ${s(m((r) => r.coldSpawnMs))} |`,
    );
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { home: { type: 'string' }, runs: { type: 'string', default: '3' }, out: { type: 'string' } },
  });
  if (values.home === undefined) throw new Error('--home H');
  const home = fs.realpathSync(values.home);
  const probe = new WorkerPipe(home);
  probe.send('warm_up', {});
  const notes = Number((await probe.reply()).result.notes ?? 0);
  await probe.close();
  const section = await runWarmup(notes, home, Number(values.runs), (m) => process.stderr.write(`[warmup] ${m}\n`));
  process.stdout.write(`${renderWarmup([section])}\n`);
  if (values.out !== undefined) fs.writeFileSync(values.out, `${JSON.stringify(section, null, 2)}\n`);
}

if (process.argv[1] !== undefined && import.meta.url === `file://${process.argv[1]}`) {
  main().catch((err: unknown) => {
    process.stderr.write(`[warmup] failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  });
}
