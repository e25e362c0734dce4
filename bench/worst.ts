/**
 * The "worst cases" section of `npm run bench`: corpora built to make search do more than a bounded multiple of
 * a normal search's work (docs/DESIGN.md, "Bounded query cost"), each about as large as one normal corpus, and
 * the figures that judge them:
 * - every search on a worst-case corpus ≤ 10 × the median warm search of the normal corpus of the same size;
 * - the cold first search (spawn to the first result) on a worst-case corpus ≤ 3 × the normal cold first search.
 *
 * Corpora (11 notes of about 225 KB each, 2.5 MB, unless said otherwise):
 * - order numbers: lines `order 2024MMNNNN shipped` (ten-digit ids sharing the prefix `2024`);
 * - shared-prefix terms: one long run of distinct terms sharing a two-letter prefix;
 * - numbers: runs of consecutive decimal numbers (every short prefix expands to thousands of terms);
 * - log lines: timestamped service log lines with request ids, paths and durations;
 * - hashes: changelog lines with commit hashes and pull-request numbers;
 * - combining marks: notes whose body holds one letter followed by 60,000 + 60,000 combining marks in
 *   descending combining class (the input that makes Unicode normalisation quadratic).
 * Each corpus is searched with natural queries and crafted ones (short prefixes, ids, typos of ids).
 */
import fs from 'node:fs';
import path from 'node:path';
import { QUERIES, seedFor } from './config.js';
import { generateCorpus, mkdirOwner, type Vocabulary, writeHome, writeOwner } from './corpus.js';
import { connect, disconnect, timeCall, toolPayload, type McpSession } from './processes.js';
import { median, pushTo } from './stats.js';
import { buildLineTrees, type LineReads, measureLineReads, renderLineReads } from './worst-lines.js';

/** Notes and size of one worst-case corpus. */
const NOTES = 11;
const NOTE_BYTES = 225_000;
/** Notes of the normal corpus of about the same size (generated notes average about 1.95 KB). */
const NORMAL_NOTES = 1300;
/** Warm repetitions of every query; cold starts of the normal corpus. */
const WARM_REPS = 3;
const NORMAL_COLD = 5;

interface WorstCorpus {
  name: string;
  /** Note texts (ids are `n<i>.md`). */
  notes: string[];
  queries: string[];
}

/** Lines produced by `line(i)` until about NOTE_BYTES. */
function fill(head: string, line: (i: number) => string): string {
  const parts = [head];
  let bytes = head.length;
  for (let i = 0; bytes < NOTE_BYTES; i++) {
    const l = line(i);
    parts.push(l);
    bytes += Buffer.byteLength(l) + 1;
  }
  return parts.join('\n');
}

function corpora(): WorstCorpus[] {
  const notes = (f: (n: number) => string): string[] => Array.from({ length: NOTES }, (_, n) => f(n));
  const two = (x: number): string => String(x).padStart(2, '0');
  return [
    {
      name: 'order numbers',
      notes: notes((n) =>
        fill(`# Orders of month ${n + 1}\n`, (i) => `order 2024${two(n + 1)}${String(i).padStart(4, '0')} shipped`),
      ),
      queries: ['which orders shipped in 2024', '2024', 'order 2024030042', '2024030042', 'shipped 20240'],
    },
    {
      name: 'shared-prefix terms',
      notes: notes((n) =>
        fill(`# Prefix run ${n}\n`, (i) => {
          const k = n * 40_000 + i * 8;
          return Array.from({ length: 8 }, (_, j) => `zq${(k + j).toString(36).padStart(6, '0')}`).join(' ');
        }),
      ),
      queries: ['z', 'zq', 'zq0', 'zq00a1', 'zq00a1b2', 'zq00a1bx'],
    },
    {
      name: 'numbers',
      notes: notes((n) =>
        fill(`# Numbers ${n}\n`, (i) => {
          const k = n * 30_000 + i * 10;
          return Array.from({ length: 10 }, (_, j) => String(k + j)).join(' ');
        }),
      ),
      queries: ['1', '12', '123', '12345', '123456', 'numbers 99'],
    },
    {
      name: 'log lines',
      notes: notes((n) =>
        fill(`# Service log ${n}\n`, (i) => {
          const id = ((n * 1_000_003 + i * 7919) >>> 0).toString(16).padStart(8, '0');
          return `2026-11-${two((i % 28) + 1)}T${two(i % 24)}:${two(i % 60)}:${two((i * 7) % 60)}.${String(i % 1000).padStart(3, '0')}Z INFO worker-${i % 32} request ${id} served path=/api/v1/items/${i * 13} in ${i % 97} ms`;
        }),
      ),
      queries: ['request served', 'worker', '9f3a', 'api items', 'error timeout', '2026'],
    },
    {
      name: 'hashes',
      notes: notes((n) =>
        fill(`# Changelog ${n}\n`, (i) => {
          const h = ((n * 2_654_435_761 + i * 40_503) >>> 0).toString(16).padStart(8, '0');
          const pr = 10_000 + n * 5_000 + i;
          return `* [\`${h}ab\`](https://example.org/commit/${h}${h}${h}${h}${h}) - fs: fix stream handling (Someone) [#${pr}](https://example.org/pull/${pr})`;
        }),
      ),
      queries: ['fix', 'a', 'ab', '1234', '12345', 'stream handling'],
    },
    {
      name: 'combining marks',
      notes: notes((n) => `# Marks ${n}\nmarks note e${'\u0301'.repeat(60_000)}${'\u0316'.repeat(60_000)} end\n`),
      queries: ['marks', 'note end', 'e\u0301\u0316', 'é'],
    },
  ];
}

/** The limits of every worst-case home built here (the same as the normal corpora's but for the total). */
const WORST_LIMITS = { max_entries: 10000, max_total_bytes: 67108864, max_depth: 16 };

/** Write a worst-case corpus and its home. */
function writeCorpus(parent: string, slug: string, c: WorstCorpus): { root: string; home: string; bytes: number } {
  const root = path.join(parent, `worst-${slug}`);
  mkdirOwner(root);
  let bytes = 0;
  c.notes.forEach((text, i) => {
    writeOwner(path.join(root, `n${i}.md`), text);
    bytes += Buffer.byteLength(text);
  });
  const home = writeHome(path.join(parent, `home-worst-${slug}`), fs.realpathSync(root), WORST_LIMITS);
  return { root: fs.realpathSync(root), home, bytes };
}

/** One corpus's figures. */
export interface WorstResult {
  name: string;
  bytes: number;
  /** Spawn → first result, one fresh process per query; the worst of them. */
  coldWorstMs: number;
  coldWorstQuery: string;
  /** Per query: median over WARM_REPS warm searches. */
  warmPerQuery: Record<string, number>;
  /** The slowest query's median, and the slowest single sample. */
  warmWorstMs: number;
  warmWorstQuery: string;
  warmMaxSampleMs: number;
}

export interface WorstSection {
  normal: { notes: number; bytes: number; coldMs: number; warmMs: number };
  corpora: WorstResult[];
  /** Every long-line note and card read, judged against an ordinary file of its size (bench/worst-lines.ts). */
  lineReads: LineReads;
  /** Ratios judged: worst warm ÷ normal warm median (≤ 10), worst cold ÷ normal cold (≤ 3). */
  verdicts: { name: string; warmRatio: number; coldRatio: number; pass: boolean }[];
}

async function search(s: McpSession, query: string): Promise<number> {
  const { ms, result } = await timeCall(s, 'memory_bridge_search', { query });
  const p = toolPayload(result);
  if (p.ok !== true) throw new Error(`search refused: ${JSON.stringify(p)}\n${s.stderr().slice(-2000)}`);
  return ms;
}

async function coldSearch(args: (home: string) => string[], home: string, query: string): Promise<number> {
  const t0 = performance.now();
  const s = await connect(process.execPath, args(home));
  try {
    await search(s, query);
    return performance.now() - t0;
  } finally {
    await disconnect(s);
  }
}

async function warmSearches(
  args: (home: string) => string[],
  home: string,
  queries: readonly string[],
): Promise<{ perQuery: Record<string, number>; max: number }> {
  const s = await connect(process.execPath, args(home));
  try {
    await search(s, queries[0]!); // first call (cold) and
    await search(s, queries[0]!); // one warm-up call
    const samples: Record<string, number[]> = {};
    let max = 0;
    for (let rep = 0; rep < WARM_REPS; rep++) {
      for (const q of queries) {
        const ms = await search(s, q);
        pushTo(samples, q, ms);
        max = Math.max(max, ms);
      }
    }
    const perQuery = Object.fromEntries(
      Object.entries(samples).map(([q, xs]) => [q, Math.round(median(xs) * 100) / 100]),
    );
    return { perQuery, max };
  } finally {
    await disconnect(s);
  }
}

/**
 * Build the worst-case corpora and a normal corpus of the same size under `parent` (owner-only), let them age
 * past the scan's racy margin, and measure. `args(home)` is the node argument list that starts our MCP server.
 */
export async function runWorstCases(
  parent: string,
  vocab: Vocabulary,
  args: (home: string) => string[],
  log: (msg: string) => void,
): Promise<WorstSection> {
  const normal = generateCorpus(parent, NORMAL_NOTES, vocab, seedFor(NORMAL_NOTES));
  const lines = buildLineTrees(parent, log);
  const list: { c: { name: string; queries: string[] }; home: string; bytes: number }[] = [
    ...corpora().map((c, i) => ({ c, ...writeCorpus(parent, String(i), c) })),
    ...lines.corpora.map((c) => ({ c, home: c.home, bytes: c.bytes })),
  ];
  log(
    `worst cases: ${list.length} corpora of ${NOTES} notes (${(list[0]!.bytes / 1e6).toFixed(1)} MB each), normal corpus of ${NORMAL_NOTES} notes (${(normal.totalBytes / 1e6).toFixed(1)} MB)`,
  );
  // Notes changed within the racy margin (3 s) are re-read by every call: let the trees age first.
  await new Promise((resolve) => setTimeout(resolve, 3100));

  const normalCold: number[] = [];
  for (let i = 0; i < NORMAL_COLD; i++) normalCold.push(await coldSearch(args, normal.home, QUERIES[i]!));
  const normalWarm = await warmSearches(args, normal.home, QUERIES);
  const normalWarmMs = median(Object.values(normalWarm.perQuery));
  const normalColdMs = median(normalCold);
  log(`worst cases: normal corpus warm median ${normalWarmMs.toFixed(2)} ms, cold ${normalColdMs.toFixed(0)} ms`);
  const readIds = Array.from({ length: 20 }, (_, i) => normal.ids[Math.floor(((i + 0.5) * normal.ids.length) / 20)]!);
  const lineReads = await measureLineReads(args, lines.reads, normal.home, readIds);
  log(
    `worst cases: long-line reads: normal read ${lineReads.normalReadMs.toFixed(2)} ms, slowest ${Math.max(...lineReads.reads.map((r) => r.ms)).toFixed(1)} ms, worst ÷ same size ${Math.max(...lineReads.reads.map((r) => r.sameSizeRatio)).toFixed(2)}`,
  );

  const results: WorstResult[] = [];
  for (const { c, home, bytes } of list) {
    let coldWorstMs = 0;
    let coldWorstQuery = '';
    for (const q of c.queries) {
      const ms = await coldSearch(args, home, q);
      if (ms > coldWorstMs) [coldWorstMs, coldWorstQuery] = [ms, q];
    }
    const warm = await warmSearches(args, home, c.queries);
    let warmWorstMs = 0;
    let warmWorstQuery = '';
    for (const [q, ms] of Object.entries(warm.perQuery)) if (ms > warmWorstMs) [warmWorstMs, warmWorstQuery] = [ms, q];
    log(
      `worst cases: ${c.name}: warm worst ${warmWorstMs.toFixed(1)} ms (${JSON.stringify(warmWorstQuery)}), cold worst ${coldWorstMs.toFixed(0)} ms`,
    );
    results.push({
      name: c.name,
      bytes,
      coldWorstMs: Math.round(coldWorstMs),
      coldWorstQuery,
      warmPerQuery: warm.perQuery,
      warmWorstMs,
      warmWorstQuery,
      warmMaxSampleMs: Math.round(warm.max * 100) / 100,
    });
  }
  const verdicts = results.map((r) => {
    const warmRatio = Math.round((r.warmWorstMs / normalWarmMs) * 100) / 100;
    const coldRatio = Math.round((r.coldWorstMs / normalColdMs) * 100) / 100;
    return { name: r.name, warmRatio, coldRatio, pass: warmRatio <= 10 && coldRatio <= 3 };
  });
  return {
    normal: { notes: NORMAL_NOTES, bytes: normal.totalBytes, coldMs: Math.round(normalColdMs), warmMs: normalWarmMs },
    corpora: results,
    lineReads,
    verdicts,
  };
}

/** The section's Markdown table. */
export function renderWorst(w: WorstSection): string {
  const f = (x: number): string => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));
  const lines = [
    `Worst cases (each ÷ the normal corpus of ${w.normal.notes.toLocaleString('en-US')} generated notes, ${(w.normal.bytes / 1e6).toFixed(1)} MB: warm median ${f(w.normal.warmMs)} ms, cold first search ${w.normal.coldMs} ms):`,
    '',
    '| corpus | MB | slowest query (warm median of 3) | warm ms | max warm sample ms | ÷ normal warm (≤ 10) | slowest cold query | cold ms | ÷ normal cold (≤ 3) | verdict |',
    '|---|---:|---|---:|---:|---:|---|---:|---:|---|',
  ];
  w.corpora.forEach((r, i) => {
    const v = w.verdicts[i]!;
    lines.push(
      `| ${r.name} | ${(r.bytes / 1e6).toFixed(1)} | \`${JSON.stringify(r.warmWorstQuery).slice(1, -1)}\` | ${f(r.warmWorstMs)} | ${f(r.warmMaxSampleMs)} | ${v.warmRatio.toFixed(2)} | \`${JSON.stringify(r.coldWorstQuery).slice(1, -1)}\` | ${r.coldWorstMs} | ${v.coldRatio.toFixed(2)} | ${v.pass ? 'PASS' : 'MISS'} |`,
    );
  });
  return `${lines.join('\n')}\n\n${renderLineReads(w.lineReads)}`;
}
