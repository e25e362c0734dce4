/**
 * The "recall" section of `npm run bench` (docs/HERMES.md §Recall): what Hermes recall adds to a turn, against a
 * warm memory_bridge_search of the same words, over a generated corpus whose policy turns recall on. Both go
 * through one bridge in process (`createBridge`: the worker's own code; the pipe to the shim costs a tool call the
 * same), recall as the worker answers `hermes_recall` (`runRecall`: policy read, the search ranked in the index,
 * min_score, max_chars, the frame). Timed by wall clock and by the process's CPU time (judged on CPU time, as
 * bench/filters.ts). Target: recall ≤ 1.2 × the warm search.
 */
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { runRecall } from '../src/hermes/recall.js';
import { createBridge } from '../src/tools/bridge.js';
import type { Caller } from '../src/tools/types.js';
import { QUERIES, seedFor } from './config.js';
import { generateCorpus, type Vocabulary } from './corpus.js';
import { median } from './stats.js';
import type { Sample } from './timed-search.js';

/** Rounds of each measurement (each round alternates which kind runs first). */
const ROUNDS = 31;
/** The judged bound: recall CPU time ÷ warm search CPU time. */
const TARGET = 1.2;

export interface RecallSection {
  notes: number;
  bytes: number;
  warmMs: number;
  warmCpuMs: number;
  recallMs: number;
  recallCpuMs: number;
  ratio: number;
  wallRatio: number;
  /** Rounds whose recall gave text (a query matching nothing recalls nothing). */
  recalled: number;
  pass: boolean;
}

function timed(run: () => unknown): Sample {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  run();
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  return { ms, cpuMs: (cpu.user + cpu.system) / 1000 };
}

/** Generate the corpus of `notes` under `parent`, turn recall on in its policy, warm its view, then time both. */
export async function runRecallBench(
  parent: string,
  notes: number,
  vocab: Vocabulary,
  log: (msg: string) => void,
): Promise<RecallSection> {
  const corpus = generateCorpus(parent, notes, vocab, seedFor(notes) + 13);
  const policyFile = path.join(corpus.home, 'plugin-data', 'memory-bridge', 'policy.json');
  const policy = JSON.parse(fs.readFileSync(policyFile, 'utf8')) as Record<string, unknown>;
  fs.writeFileSync(policyFile, `${JSON.stringify({ ...policy, recall: { enabled: true, max_notes: 3 } }, null, 2)}\n`);
  const me: Caller = { home: corpus.home, cron: false, subagent: false };
  log(`recall: ${notes} notes, recall on`);
  await sleep(3500); // listings are reused only once older than the racy margin
  const bridge = createBridge({ log: () => undefined });
  const search = (query: string) => {
    const r = bridge.search({ query, limit: 3 }, me);
    if (!r.ok) throw new Error('recall bench: a search was refused');
  };
  let recalled = 0;
  const recall = (query: string) => {
    if (runRecall(bridge, { message: `What do my notes say about ${query}?` }, me).context !== null) recalled++;
  };
  search(QUERIES[0]!);
  await new Promise((resolve) => setImmediate(resolve));
  search(QUERIES[0]!);
  recall(QUERIES[0]!);
  recalled = 0;
  const warm: Sample[] = [];
  const recalls: Sample[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    // The same words for both: the message adds "What do my notes say about …?", which the tokenizer keeps too.
    const query = `What do my notes say about ${QUERIES[round % QUERIES.length]!}?`;
    const kinds: [Sample[], () => void][] = [
      [warm, () => search(query)],
      [recalls, () => recall(QUERIES[round % QUERIES.length]!)],
    ];
    if (round % 2 === 1) kinds.reverse();
    for (const [into, run] of kinds) into.push(timed(run));
  }
  const warmMs = median(warm.map((s) => s.ms));
  const warmCpuMs = median(warm.map((s) => s.cpuMs));
  const recallMs = median(recalls.map((s) => s.ms));
  const recallCpuMs = median(recalls.map((s) => s.cpuMs));
  const ratio = recallCpuMs / warmCpuMs;
  return {
    notes,
    bytes: corpus.totalBytes,
    warmMs,
    warmCpuMs,
    recallMs,
    recallCpuMs,
    ratio,
    wallRatio: recallMs / warmMs,
    recalled,
    pass: ratio <= TARGET,
  };
}

export function renderRecall(s: RecallSection): string {
  const f = (x: number): string => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));
  return [
    `Recall (${s.notes.toLocaleString('en-US')} generated notes, ${(s.bytes / 1e6).toFixed(1)} MB, in process, ${ROUNDS} rounds; recall gave text in ${s.recalled} of them):`,
    '',
    `| call | median ms wall | median ms CPU | ÷ warm, wall | ÷ warm, CPU (≤ ${TARGET}) | verdict |`,
    '|---|---:|---:|---:|---:|---|',
    `| warm memory_bridge_search of the message | ${f(s.warmMs)} | ${f(s.warmCpuMs)} | 1.00 | 1.00 | |`,
    `| hermes_recall of the same message | ${f(s.recallMs)} | ${f(s.recallCpuMs)} | ${f(s.wallRatio)} | ${f(s.ratio)} | ${s.pass ? 'pass' : 'FAIL'} |`,
  ].join('\n');
}
