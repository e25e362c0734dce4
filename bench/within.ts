/**
 * The "within" section of `npm run bench` (docs/DESIGN.md "Narrowing a search"): what a search narrowed by
 * `within` costs against the same warm search without it, and what one home's `within` calls do to another home's
 * next call in the same process (as in `serve` or the Hermes worker, which hold every home's view in one cache).
 * Measured in process through `runSearch` and the process's `IndexCache` (the code `serve`, `mcp` and the worker
 * run), over a generated corpus and a second home with the same root. Each call is timed by the wall clock and by
 * the process's CPU time (user + system, every thread: the stat thread's share counts); the targets are judged on
 * the CPU time, which a machine shared with other work disturbs far less than the wall clock (both are reported).
 * Targets:
 * - a warm `within` call (the same list again) ≤ 2 × the warm call without `within`;
 * - a `within` call with a list never sent before (plain, matching nothing, or crafted: 8 patterns of 64 brace
 *   alternatives each) ≤ 2 × that warm call;
 * - the other home's call right after 12 distinct lists of the first home ≤ 2 × its own warm call, and no view
 *   besides the two homes' is ever held.
 */
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { IndexCache, DEFAULT_MAX_INDEX_BYTES, DEFAULT_MAX_INDEXES } from '../src/tools/search.js';
import type { Caller } from '../src/tools/types.js';
import { QUERIES, seedFor } from './config.js';
import { generateCorpus, type Corpus, type Vocabulary } from './corpus.js';
import { median } from './stats.js';
import { type Sample, timedSearch } from './timed-search.js';

const timed = (args: Record<string, unknown>, caller: Caller, cache: IndexCache): Sample =>
  timedSearch(args, caller, cache, 'within');

/** Notes of the corpus, rounds of every measurement (each round alternates the order of the kinds). */
const NOTES = 2000;
const ROUNDS = 31;
/** Distinct lists the first home sends before each timed call of the other home. */
const CHURN = 12;

/** One judged figure: medians of wall and CPU time against those of the base call; judged on CPU time. */
export interface WithinRow {
  name: string;
  ms: number;
  cpuMs: number;
  baseMs: number;
  baseCpuMs: number;
  /** cpuMs ÷ baseCpuMs (judged), and the same of the wall clock. */
  ratio: number;
  wallRatio: number;
  target: number;
  pass: boolean;
}

export interface WithinSection {
  notes: number;
  bytes: number;
  /** Median warm search (wall, CPU) of the first home without `within`, and of the other home. */
  warmMs: number;
  warmCpuMs: number;
  otherWarmMs: number;
  otherWarmCpuMs: number;
  rows: WithinRow[];
  /** Most views the cache held during the section (2: one per home). */
  maxViews: number;
}

/** A crafted list of 8 patterns with 64 brace alternatives each, made distinct by `tag`. */
function crafted(tag: string): string[] {
  return Array.from({ length: 8 }, (_, k) => `{a,b,c,d}{e,f,g,h}{i,j,k,l}${tag}${k}/**/*[a-z]*[a-z]*[a-z]*q.md`);
}

/** A second profile home over the corpus's root, with the corpus's own policy. */
function otherHome(c: Corpus, parent: string): Caller {
  const home = path.join(parent, `home-${c.notes}-other`);
  const dir = path.join(home, 'plugin-data', 'memory-bridge');
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  for (const d of [home, path.join(home, 'plugin-data'), dir]) fs.chmodSync(d, 0o700);
  const policy = fs.readFileSync(path.join(c.home, 'plugin-data', 'memory-bridge', 'policy.json'));
  fs.writeFileSync(path.join(dir, 'policy.json'), policy, { mode: 0o600 });
  return { home, cron: false, subagent: false };
}

function row(name: string, samples: Sample[], base: Sample[]): WithinRow {
  const ms = median(samples.map((x) => x.ms));
  const cpuMs = median(samples.map((x) => x.cpuMs));
  const baseMs = median(base.map((x) => x.ms));
  const baseCpuMs = median(base.map((x) => x.cpuMs));
  const ratio = cpuMs / baseCpuMs;
  return { name, ms, cpuMs, baseMs, baseCpuMs, ratio, wallRatio: ms / baseMs, target: 2, pass: ratio <= 2 };
}

/**
 * Generate the corpus under `parent`, warm both homes' views, then time in rounds (see the module comment).
 */
export async function runWithin(parent: string, vocab: Vocabulary, log: (msg: string) => void): Promise<WithinSection> {
  const corpus = generateCorpus(parent, NOTES, vocab, seedFor(NOTES) + 7);
  const me: Caller = { home: corpus.home, cron: false, subagent: false };
  const other = otherHome(corpus, parent);
  // Two top-level folders the lists narrow to.
  const folders = [...new Set(corpus.ids.filter((id) => id.includes('/')).map((id) => id.split('/')[0]!))].sort();
  const narrow = [`${folders[0]}/**`, `${folders[Math.floor(folders.length / 2)]}/**`];
  log(`within: ${NOTES} notes, narrowing to ${narrow.join(' ')}`);
  // Listings are kept for reuse only once their directories are older than the racy margin (3 s).
  await sleep(3500);
  const cache = new IndexCache(DEFAULT_MAX_INDEXES, DEFAULT_MAX_INDEX_BYTES, undefined, undefined, true, true);
  let maxViews = 0;
  const run = (args: Record<string, unknown>, caller: Caller): Sample => {
    const sample = timed(args, caller, cache);
    maxViews = Math.max(maxViews, cache.size);
    return sample;
  };
  for (const caller of [me, other]) {
    run({ query: QUERIES[0] }, caller);
    await new Promise((resolve) => setImmediate(resolve)); // the deferred build
    run({ query: QUERIES[0] }, caller);
  }
  const warm: Sample[] = [];
  const otherWarm: Sample[] = [];
  const same: Sample[] = [];
  const fresh: Sample[] = [];
  const nothing: Sample[] = [];
  const craftedFresh: Sample[] = [];
  const afterChurn: Sample[] = [];
  let serial = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const query = QUERIES[round % QUERIES.length]!;
    const kinds: (() => void)[] = [
      () => warm.push(run({ query }, me)),
      () => otherWarm.push(run({ query }, other)),
      () => same.push(run({ query, within: narrow }, me)),
      () => fresh.push(run({ query, within: [narrow[0]!, `${folders[0]}/x${serial++}/**`] }, me)),
      () => nothing.push(run({ query, within: [`nowhere-${serial++}/**`] }, me)),
      () => craftedFresh.push(run({ query, within: crafted(`r${serial++}`) }, me)),
      () => {
        for (let i = 0; i < CHURN; i++) run({ query, within: [`churn-${serial++}/**`] }, me);
        afterChurn.push(run({ query }, other));
      },
    ];
    if (round % 2 === 1) kinds.reverse();
    for (const kind of kinds) kind();
  }
  const rows = [
    row('within, the same list again', same, warm),
    row('within, a new list each call', fresh, warm),
    row('within, a new list matching nothing each call', nothing, warm),
    row('within, a new crafted list each call (8 × 64 alternatives)', craftedFresh, warm),
    row(`other home, right after ${CHURN} new lists of this home (÷ its own warm call)`, afterChurn, otherWarm),
  ];
  return {
    notes: NOTES,
    bytes: corpus.totalBytes,
    warmMs: median(warm.map((x) => x.ms)),
    warmCpuMs: median(warm.map((x) => x.cpuMs)),
    otherWarmMs: median(otherWarm.map((x) => x.ms)),
    otherWarmCpuMs: median(otherWarm.map((x) => x.cpuMs)),
    rows,
    maxViews,
  };
}

export function renderWithin(w: WithinSection): string {
  const f = (x: number): string => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));
  const lines = [
    `Within (${w.notes.toLocaleString('en-US')} generated notes, ${(w.bytes / 1e6).toFixed(1)} MB, in process, two homes over one root; warm search without within: median ${f(w.warmMs)} ms wall, ${f(w.warmCpuMs)} ms CPU; the other home's ${f(w.otherWarmMs)} ms wall, ${f(w.otherWarmCpuMs)} ms CPU):`,
    '',
    '| call | median ms wall | median ms CPU | ÷ warm, wall | ÷ warm, CPU (≤ 2) | verdict |',
    '|---|---:|---:|---:|---:|---|',
  ];
  for (const r of w.rows)
    lines.push(
      `| ${r.name} | ${f(r.ms)} | ${f(r.cpuMs)} | ${f(r.wallRatio)} | ${f(r.ratio)} | ${r.pass ? 'pass' : 'FAIL'} |`,
    );
  lines.push(
    `| views held at most (target 2, one per home) | ${w.maxViews} | | | | ${w.maxViews <= 2 ? 'pass' : 'FAIL'} |`,
  );
  return lines.join('\n');
}
