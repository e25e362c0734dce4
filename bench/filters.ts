/**
 * The "filters" section of `npm run bench` (docs/TOOLS.md §Filters, docs/DESIGN.md "Narrowing a search"): what a
 * warm search with `tags`, `modified_after`/`modified_before`, `sort: "modified"`, or no query at all costs against
 * the same warm search without them, over a generated corpus whose notes get inline tags and spread modification
 * times. Measured in process through `runSearch` and one `IndexCache`, timed by wall clock and by the process's CPU
 * time (judged on CPU time, as bench/within.ts). Target: every filtered call ≤ 1.5 × the warm call without filters.
 * Also reported: the process's RSS and heap after the warm-up (the index keeps each note's tags and mtime).
 */
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_MAX_INDEX_BYTES, DEFAULT_MAX_INDEXES, IndexCache } from '../src/tools/search.js';
import type { Caller } from '../src/tools/types.js';
import { QUERIES, seedFor } from './config.js';
import { generateCorpus, type Vocabulary } from './corpus.js';
import { median } from './stats.js';
import { type Sample, timedSearch } from './timed-search.js';

const timed = (args: Record<string, unknown>, caller: Caller, cache: IndexCache): Sample =>
  timedSearch(args, caller, cache, 'filters');

/** Rounds of every measurement (each round alternates the order of the kinds). */
const ROUNDS = 21;
/** The judged bound: filtered CPU time ÷ warm CPU time. */
const TARGET = 1.5;
/** The tags given to notes: note i gets TAGS[i % 3] and, every 7th, `project/alpha`. */
const TAGS = ['pricing', 'decision', 'ops'];
/** The newest modification time given (notes are spread one hour apart before it). */
const NEWEST = Date.UTC(2026, 10, 30);

export interface FilterRow {
  name: string;
  ms: number;
  cpuMs: number;
  ratio: number;
  wallRatio: number;
  pass: boolean;
}

export interface FilterSection {
  notes: number;
  bytes: number;
  warmMs: number;
  warmCpuMs: number;
  /** process.memoryUsage() after the warm-up, in MB. */
  rssMb: number;
  heapMb: number;
  rows: FilterRow[];
}

/** Append the section's tags to every note and spread their modification times. */
function tagAndDate(root: string, ids: readonly string[]): void {
  ids.forEach((id, i) => {
    const file = path.join(root, id);
    const tags = [TAGS[i % TAGS.length], ...(i % 7 === 0 ? ['project/alpha'] : [])].map((t) => `#${t}`).join(' ');
    fs.appendFileSync(file, `\n${tags}\n`);
    const when = new Date(NEWEST - i * 3_600_000);
    fs.utimesSync(file, when, when);
  });
}

/** Generate the corpus of `notes` under `parent`, warm its view, then time every kind in rounds. */
export async function runFilters(
  parent: string,
  notes: number,
  vocab: Vocabulary,
  log: (msg: string) => void,
): Promise<FilterSection> {
  const corpus = generateCorpus(parent, notes, vocab, seedFor(notes) + 11);
  tagAndDate(corpus.root, corpus.ids);
  const me: Caller = { home: corpus.home, cron: false, subagent: false };
  log(`filters: ${notes} notes, tagged and dated`);
  await sleep(3500); // listings are reused only once older than the racy margin
  const cache = new IndexCache(DEFAULT_MAX_INDEXES, DEFAULT_MAX_INDEX_BYTES, undefined, undefined, true, true);
  timed({ query: QUERIES[0] }, me, cache);
  await new Promise((resolve) => setImmediate(resolve));
  timed({ query: QUERIES[0] }, me, cache);
  timed({ query: QUERIES[0], tags: ['pricing'] }, me, cache);
  const memory = process.memoryUsage();
  // The week before NEWEST: 168 notes.
  const week = new Date(NEWEST - 7 * 86_400_000).toISOString();
  const samples = new Map<string, Sample[]>();
  const add = (name: string, s: Sample) => samples.set(name, [...(samples.get(name) ?? []), s]);
  let serial = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const query = QUERIES[round % QUERIES.length]!;
    const kinds: [string, () => Record<string, unknown>][] = [
      ['warm, no filter', () => ({ query })],
      ['tags: one tag', () => ({ query, tags: ['pricing'] })],
      ['tags: two tags, one nested parent', () => ({ query, tags: ['pricing', 'project'] })],
      ['modified_after: the last week', () => ({ query, modified_after: week })],
      [
        'modified_after: a new instant each call',
        () => ({ query, modified_after: new Date(NEWEST - (serial++ % 500) * 3_600_000 - 1000).toISOString() }),
      ],
      ['tags + dates + within', () => ({ query, tags: ['ops'], modified_before: week, within: ['**'] })],
      ['sort: "modified"', () => ({ query, sort: 'modified' })],
      ['no query: tags, newest first', () => ({ tags: ['decision'] })],
      ['no query: the last week, newest first', () => ({ modified_after: week })],
    ];
    if (round % 2 === 1) kinds.reverse();
    for (const [name, args] of kinds) add(name, timed(args(), me, cache));
  }
  const warm = samples.get('warm, no filter')!;
  const warmMs = median(warm.map((s) => s.ms));
  const warmCpuMs = median(warm.map((s) => s.cpuMs));
  const rows: FilterRow[] = [];
  for (const [name, list] of samples) {
    if (name === 'warm, no filter') continue;
    const ms = median(list.map((s) => s.ms));
    const cpuMs = median(list.map((s) => s.cpuMs));
    rows.push({ name, ms, cpuMs, ratio: cpuMs / warmCpuMs, wallRatio: ms / warmMs, pass: cpuMs / warmCpuMs <= TARGET });
  }
  return {
    notes,
    bytes: corpus.totalBytes,
    warmMs,
    warmCpuMs,
    rssMb: memory.rss / 1e6,
    heapMb: memory.heapUsed / 1e6,
    rows,
  };
}

export function renderFilters(sections: readonly FilterSection[]): string {
  const f = (x: number): string => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));
  const lines: string[] = [];
  for (const s of sections) {
    lines.push(
      `Filters (${s.notes.toLocaleString('en-US')} generated notes, ${(s.bytes / 1e6).toFixed(1)} MB, tagged and dated, in process; warm search without filters: median ${f(s.warmMs)} ms wall, ${f(s.warmCpuMs)} ms CPU; after warm-up RSS ${f(s.rssMb)} MB, heap ${f(s.heapMb)} MB):`,
      '',
      `| call | median ms wall | median ms CPU | ÷ warm, wall | ÷ warm, CPU (≤ ${TARGET}) | verdict |`,
      '|---|---:|---:|---:|---:|---|',
    );
    for (const r of s.rows)
      lines.push(
        `| ${r.name} | ${f(r.ms)} | ${f(r.cpuMs)} | ${f(r.wallRatio)} | ${f(r.ratio)} | ${r.pass ? 'pass' : 'FAIL'} |`,
      );
    lines.push('');
  }
  return lines.join('\n').trimEnd();
}
