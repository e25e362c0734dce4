/**
 * The "coldstart" section of `npm run bench` (issue 24; docs/DESIGN.md "The first search of a view"): what a fresh
 * `memory-bridge mcp` process costs until it is warm, against tobi/qmd's MCP server (its index already built) on the
 * same tree in the same run, alternated. Per fresh process, on each side:
 * - spawn → first search answer (wall clock) and the server's CPU time (every thread) until that answer;
 * - the next calls one after another, as a host sends them: calls 2–21 (each call's own latency), then
 *   WARM_CALLS more varied calls, whose median is the process's steady warm p50;
 * - RSS after those calls (for qmd: the server and its child processes) and the peak RSS (VmHWM) at the first answer;
 * - ours only: the next call after a policy edit that narrows the allowed notes (one more deny pattern), and after
 *   the edit is undone (widening back), each followed by one more call.
 * Ours runs twice: without a persisted index, and with one (`memory-bridge index --home H` run once before those
 * processes, timed, and the file removed after them, so the other side never sees it).
 * Targets (issue 24 point 1), all ratios of figures of this run: first answer ≤ 1.0 × qmd's; every call 2–21 ≤ 2 ×
 * the steady warm p50 (the worst of them, median over processes) and their mean ≤ 1.5 ×; CPU until
 * the first answer ≤ 2 × qmd's; the call after a narrowing or widening policy edit ≤ 3 × the warm p50; RSS after
 * warm-up ≤ 1.2 × qmd's and ≤ 250 MB; peak during the first call ≤ 600 MB.
 *
 * Standalone: `node dist/bench/coldstart.js --root R --home H [--runs N] [--qmd-state DIR | --no-qmd] [--out FILE]`
 * (DIR keeps qmd's index between runs: at 100,000 notes it takes minutes to build).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { QUERIES, serverMain, shebangNodeOptions } from './config.js';
import { connect, cpuMsOf, disconnect, type McpSession, rssOf, toolPayload } from './processes.js';
import { qmdAbsence, qmdConnect, qmdIndex, qmdSearch, type QmdTree } from './qmd-mcp.js';
import { median } from './stats.js';

/** Calls after the first 20 whose median is a process's steady warm p50 ("after a hundred or more varied calls"). */
const WARM_CALLS = 120;
/** Calls whose latencies are kept one by one: the first answer and the 20 calls after it. */
const FIRST_CALLS = 21;
/** Results per search on both sides (memory-bridge's default answer). */
const RESULTS = 5;

/**
 * The varied queries of a fresh process after its first call: the bench's single words, two-word queries, short
 * prefixes and typos, so the warm p50 is not that of one repeated query.
 */
export const COLD_QUERIES: readonly string[] = Object.freeze([
  ...QUERIES,
  'vault sync',
  'plugin settings',
  'graph view',
  'temp',
  'pub',
  'workspce',
  'bookmark canvas',
  'hotkey',
  'propertes',
  'core plugins',
]);

/** One fresh process of one side. */
export interface FreshRun {
  /** Spawn → first search answer, ms. */
  firstMs: number;
  /** Server CPU (user + system, every thread) until the first answer, ms (null off Linux). */
  firstCpuMs: number | null;
  /** Latencies of calls 1–21 (index 0: the first call's own round trip, without the spawn). */
  callsMs: number[];
  /** Median of the WARM_CALLS calls after the first 20. */
  warmP50: number;
  /** RSS after the warm calls (server and its children), MB = 10^6 bytes. */
  rssAfterWarmMB: number | null;
  /** VmHWM of the server right after the first answer, MB. */
  peakFirstMB: number | null;
  /** Ours only: the call right after a narrowing edit, the one after it, after widening back, and the one after. */
  policyEdit?: { narrowMs: number; narrowNextMs: number; widenMs: number; widenNextMs: number };
}

export interface ColdstartSection {
  notes: number;
  runs: number;
  ours: FreshRun[];
  /** Ours with a persisted index written by `memory-bridge index` before these processes (null: not measured). */
  persisted: FreshRun[] | null;
  /** The `index` command's build: wall ms and the file's size in bytes (null: not measured or it failed). */
  persistedBuild: { ms: number; bytes: number } | null;
  qmd: FreshRun[] | null;
  /** Why qmd was not measured, when it was not. */
  qmdWhy: string | null;
  qmdIndexMs: number | null;
  targets: { name: string; ratio: number | null; limit: number; pass: boolean | null }[];
  /** The same targets for the processes with the persisted index (null: not measured). */
  persistedTargets: { name: string; ratio: number | null; limit: number; pass: boolean | null }[] | null;
}

const mb = (mib: number | null): number | null => (mib === null ? null : Math.round(mib * 1.048576 * 10) / 10);

/** VmRSS of `pid` and every process below it, MiB (Linux /proc), or null. */
function treeRssMiB(pid: number): number | null {
  const own = rssOf(pid).rssMiB;
  if (own === null) return null;
  let sum = own;
  const children = new Map<number, number[]>();
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(name)]);
    } catch {
      /* gone */
    }
  }
  const todo = [...(children.get(pid) ?? [])];
  while (todo.length > 0) {
    const p = todo.pop()!;
    sum += rssOf(p).rssMiB ?? 0;
    todo.push(...(children.get(p) ?? []));
  }
  return sum;
}

/** The policy file of a bench home. */
function policyFile(home: string): string {
  return path.join(home, 'plugin-data', 'memory-bridge', 'policy.json');
}

/** Rewrite the policy in place (same file, owner-only), as an operator's editor would. */
function writePolicy(home: string, policy: unknown): void {
  fs.writeFileSync(policyFile(home), `${JSON.stringify(policy, null, 2)}\n`, { mode: 0o600 });
}

/** A top folder of `root` to deny in the narrowing edit (the first in name order), as a pattern. */
function denyPatternOf(root: string): string {
  const dirs = fs
    .readdirSync(root, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort();
  return dirs.length === 0 ? 'none/**' : `${dirs[0]}/**`;
}

type Searcher = (s: McpSession, query: string) => Promise<number>;

/** Longest wait for one call (a first call at 100,000 notes on a loaded machine takes well over the SDK's 60 s). */
const CALL_TIMEOUT_MS = 600_000;

async function oursSearch(s: McpSession, query: string): Promise<number> {
  const t0 = performance.now();
  const result = await s.client.callTool({ name: 'memory_bridge_search', arguments: { query } }, undefined, {
    timeout: CALL_TIMEOUT_MS,
  });
  const ms = performance.now() - t0;
  const p = toolPayload(result);
  if (p.ok !== true) throw new Error(`search refused: ${JSON.stringify(p)}\n${s.stderr().slice(-2000)}`);
  return ms;
}

/** One fresh process: spawn, the first 20 calls, the warm calls, RSS, and (ours) the policy edits. */
async function freshRun(
  spawn: () => Promise<McpSession>,
  search: Searcher,
  first: string,
  edit: { home: string; deny: string } | null,
): Promise<FreshRun> {
  const t0 = performance.now();
  const s = await spawn();
  try {
    const callsMs = [await search(s, first)];
    const firstMs = performance.now() - t0;
    const firstCpuMs = cpuMsOf(s.pid);
    const peakFirstMB = mb(rssOf(s.pid).hwmMiB);
    for (let i = 1; i < FIRST_CALLS; i++) callsMs.push(await search(s, COLD_QUERIES[i % COLD_QUERIES.length]!));
    const warm: number[] = [];
    for (let i = 0; i < WARM_CALLS; i++) warm.push(await search(s, COLD_QUERIES[(i * 7 + 3) % COLD_QUERIES.length]!));
    const rssAfterWarmMB = mb(treeRssMiB(s.pid));
    const run: FreshRun = { firstMs, firstCpuMs, callsMs, warmP50: median(warm), rssAfterWarmMB, peakFirstMB };
    if (edit !== null) {
      const original = JSON.parse(fs.readFileSync(policyFile(edit.home), 'utf8')) as Record<string, unknown>;
      try {
        writePolicy(edit.home, { ...original, deny: [edit.deny] });
        const narrowMs = await search(s, 'vault');
        const narrowNextMs = await search(s, 'sync');
        writePolicy(edit.home, original);
        const widenMs = await search(s, 'vault');
        const widenNextMs = await search(s, 'sync');
        run.policyEdit = { narrowMs, narrowNextMs, widenMs, widenNextMs };
      } finally {
        writePolicy(edit.home, original);
      }
    }
    return run;
  } finally {
    await disconnect(s);
  }
}

/** Mean latency of the 20 calls after the first answer (calls 2–21). */
const meanAfterFirst = (r: FreshRun): number => {
  const later = r.callsMs.slice(1);
  return later.reduce((a, b) => a + b, 0) / later.length;
};

const ratio = (a: number | null | undefined, b: number | null | undefined): number | null =>
  a == null || b == null || b <= 0 ? null : Math.round((a / b) * 1000) / 1000;

const medianOf = (runs: FreshRun[], f: (r: FreshRun) => number | null): number | null => {
  const xs = runs.map(f).filter((x): x is number => x !== null);
  return xs.length === 0 ? null : median(xs);
};

/** The targets from the runs of one size. */
export function targetsOf(ours: FreshRun[], qmd: FreshRun[] | null): ColdstartSection['targets'] {
  const t = (name: string, r: number | null, limit: number): ColdstartSection['targets'][number] => ({
    name,
    ratio: r,
    limit,
    pass: r === null ? null : r <= limit,
  });
  const perRun = (f: (r: FreshRun) => number | null) => medianOf(ours, f);
  return [
    t(
      'spawn → first answer ÷ qmd’s',
      ratio(
        perRun((r) => r.firstMs),
        qmd && medianOf(qmd, (r) => r.firstMs),
      ),
      1,
    ),
    t(
      'worst of calls 2–21 ÷ steady warm p50',
      perRun((r) => ratio(Math.max(...r.callsMs.slice(1)), r.warmP50)),
      2,
    ),
    t(
      'mean of calls 2–21 ÷ steady warm p50',
      perRun((r) => ratio(meanAfterFirst(r), r.warmP50)),
      1.5,
    ),
    t(
      'server CPU until the first answer ÷ qmd’s',
      ratio(
        perRun((r) => r.firstCpuMs),
        qmd && medianOf(qmd, (r) => r.firstCpuMs),
      ),
      2,
    ),
    t(
      'call after a narrowing policy edit ÷ steady warm p50',
      perRun((r) => ratio(r.policyEdit?.narrowMs, r.warmP50)),
      3,
    ),
    t(
      'call after widening it back ÷ steady warm p50',
      perRun((r) => ratio(r.policyEdit?.widenMs, r.warmP50)),
      3,
    ),
    t(
      'RSS after warm-up ÷ qmd’s (server and children)',
      ratio(
        perRun((r) => r.rssAfterWarmMB),
        qmd && medianOf(qmd, (r) => r.rssAfterWarmMB),
      ),
      1.2,
    ),
    t(
      'RSS after warm-up ÷ 250 MB',
      ratio(
        perRun((r) => r.rssAfterWarmMB),
        250,
      ),
      1,
    ),
    t(
      'peak RSS at the first answer ÷ 600 MB',
      ratio(
        perRun((r) => r.peakFirstMB),
        600,
      ),
      1,
    ),
  ];
}

/** The persisted index file of a bench home (what `memory-bridge index` writes; docs/CLI.md). */
function persistedFile(home: string): string {
  return path.join(home, 'plugin-data', 'memory-bridge', 'search-index.mbi');
}

/**
 * Write the persisted index of `home` with the product's own command, as an operator's timer would: wall ms and the
 * file's bytes, or null (and why, logged) when the command failed.
 */
function buildPersisted(home: string, log: (msg: string) => void): { ms: number; bytes: number } | null {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [serverMain, 'index', '--home', home, '--quiet', '--json'], {
    encoding: 'utf8',
    maxBuffer: 1 << 20,
  });
  const ms = performance.now() - t0;
  if (r.status !== 0) {
    log(`coldstart: memory-bridge index failed (exit ${r.status}): ${(r.stderr ?? '').slice(0, 300)}`);
    return null;
  }
  return { ms: Math.round(ms), bytes: fs.statSync(persistedFile(home)).size };
}

/**
 * Measure `runs` fresh processes of each side on the tree `root` served by `home` (alternating which side starts).
 * qmd's index lives in `qmdState` (reused when it already indexed this root: `qmd-root.txt` there names it); null
 * measures memory-bridge alone.
 */
export async function runColdstart(
  notes: number,
  root: string,
  home: string,
  ourArgs: (home: string) => string[],
  runs: number,
  qmdState: string | null,
  log: (msg: string) => void,
): Promise<ColdstartSection> {
  const qmdWhy = qmdState === null ? 'not asked for' : qmdAbsence();
  let tree: QmdTree | null = null;
  let qmdIndexMs: number | null = null;
  if (qmdWhy === null && qmdState !== null) {
    const marker = path.join(qmdState, 'qmd-root.txt');
    if (fs.existsSync(marker) && fs.readFileSync(marker, 'utf8') === root) {
      tree = { scratch: qmdState, indexMs: Number.NaN, indexed: null };
      log(`coldstart ${notes}: reusing qmd's index in ${qmdState}`);
    } else {
      log(`coldstart ${notes}: qmd indexes the tree (minutes at 100,000 notes)`);
      tree = qmdIndex(root, qmdState);
      qmdIndexMs = Math.round(tree.indexMs);
      fs.writeFileSync(marker, root, { mode: 0o600 });
    }
  }
  const deny = denyPatternOf(root);
  const ours: FreshRun[] = [];
  const qmd: FreshRun[] = [];
  // A file left by an earlier run would make "without" a "with": start without one.
  fs.rmSync(persistedFile(home), { force: true });
  // One fresh process of ours with query i, into `into` (without the persisted index, or with it).
  const runOurs = async (i: number, into: FreshRun[] = ours): Promise<void> => {
    into.push(
      await freshRun(() => connect(process.execPath, ourArgs(home)), oursSearch, QUERIES[i % QUERIES.length]!, {
        home,
        deny,
      }),
    );
  };
  const runQmd = async (i: number): Promise<void> => {
    if (tree === null) return;
    const t = tree;
    qmd.push(
      await freshRun(
        () => qmdConnect(t),
        async (s, q) => (await qmdSearch(s, q, RESULTS)).ms,
        QUERIES[i % QUERIES.length]!,
        null,
      ),
    );
  };
  for (let i = 0; i < runs; i++) {
    log(`coldstart ${notes}: fresh process ${i + 1} of ${runs} on each side`);
    if (i % 2 === 0) {
      await runOurs(i);
      await runQmd(i);
    } else {
      await runQmd(i);
      await runOurs(i);
    }
  }
  // Ours again, each process finding the persisted index the operator's command wrote (the first answer's side of
  // issue 24: the file must stand in for the build).
  log(`coldstart ${notes}: memory-bridge index --home (the persisted index), then ${runs} fresh processes with it`);
  const persistedBuild = buildPersisted(home, log);
  let persisted: FreshRun[] | null = null;
  if (persistedBuild !== null) {
    persisted = [];
    try {
      for (let i = 0; i < runs; i++) await runOurs(i, persisted);
    } finally {
      fs.rmSync(persistedFile(home), { force: true });
    }
  }
  const measured = tree === null ? null : qmd;
  return {
    notes,
    runs,
    ours,
    persisted,
    persistedBuild,
    qmd: measured,
    qmdWhy,
    qmdIndexMs,
    targets: targetsOf(ours, measured),
    persistedTargets: persisted === null ? null : targetsOf(persisted, measured),
  };
}

function fmt(x: number | null | undefined): string {
  if (x == null || !Number.isFinite(x)) return '—';
  return x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2);
}

/** The section's tables (Markdown). */
export function renderColdstart(sections: ColdstartSection[]): string {
  const lines = [
    'Fresh process (issue 24): spawn → first answer, the next calls one after another, then 120 varied calls whose',
    'median is the steady warm p50; medians over the fresh processes of each side, alternated in one run.',
    '',
    '| notes | side | spawn→first ms | CPU to first ms | call 2 ms | worst of 2–21 ms | mean 2–21 ms | warm p50 ms | narrow edit ms | widen edit ms | RSS after warm-up MB | peak at first MB |',
    '|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const s of sections) {
    for (const [side, runs] of [
      ['memory-bridge', s.ours],
      ['memory-bridge, persisted index', s.persisted],
      ['qmd', s.qmd],
    ] as const) {
      if (runs === null || runs.length === 0) continue;
      const m = (f: (r: FreshRun) => number | null | undefined) => medianOf(runs, (r) => f(r) ?? null);
      lines.push(
        `| ${s.notes.toLocaleString('en-US')} | ${side} | ${fmt(m((r) => r.firstMs))} | ${fmt(m((r) => r.firstCpuMs))} | ` +
          `${fmt(m((r) => r.callsMs[1]))} | ${fmt(m((r) => Math.max(...r.callsMs.slice(1))))} | ` +
          `${fmt(m(meanAfterFirst))} | ${fmt(m((r) => r.warmP50))} | ` +
          `${fmt(m((r) => r.policyEdit?.narrowMs))} | ${fmt(m((r) => r.policyEdit?.widenMs))} | ` +
          `${fmt(m((r) => r.rssAfterWarmMB))} | ${fmt(m((r) => r.peakFirstMB))} |`,
      );
    }
  }
  for (const s of sections) {
    lines.push(
      '',
      `${s.notes.toLocaleString('en-US')} notes, ${s.runs} fresh process${s.runs === 1 ? '' : 'es'} per side` +
        (s.qmd === null ? ` (qmd not measured: ${s.qmdWhy ?? 'skipped'})` : '') +
        (s.qmdIndexMs !== null ? `; qmd built its index in ${fmt(s.qmdIndexMs)} ms before the run` : '') +
        (s.persistedBuild !== null
          ? `; \`memory-bridge index\` wrote the persisted index (${fmt(s.persistedBuild.bytes / 1e6)} MB) in ${fmt(s.persistedBuild.ms)} ms`
          : '') +
        ':',
      '',
      '| target | without a persisted index | with it | limit | verdict without / with |',
      '|---|---:|---:|---:|---|',
    );
    const verdict = (t: ColdstartSection['targets'][number] | undefined): string =>
      t === undefined || t.pass === null ? 'SKIP' : t.pass ? 'PASS' : 'MISS';
    const num = (t: ColdstartSection['targets'][number] | undefined): string =>
      t === undefined || t.ratio === null ? '—' : t.ratio.toFixed(3);
    s.targets.forEach((t, i) => {
      const p = s.persistedTargets?.[i];
      lines.push(`| ${t.name} | ${num(t)} | ${num(p)} | ≤ ${t.limit} | ${verdict(t)} / ${verdict(p)} |`);
    });
  }
  return lines.join('\n');
}

/** Standalone entry (see the module comment). */
async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      root: { type: 'string' },
      home: { type: 'string' },
      runs: { type: 'string', default: '3' },
      'qmd-state': { type: 'string' },
      'no-qmd': { type: 'boolean', default: false },
      out: { type: 'string' },
    },
  });
  if (values.root === undefined || values.home === undefined) throw new Error('--root R --home H');
  const root = fs.realpathSync(values.root);
  const home = fs.realpathSync(values.home);
  const notes = Number(/(\d+)$/.exec(root)?.[1] ?? 0);
  const state = path.resolve(values['qmd-state'] ?? path.join(path.dirname(root), `qmd-coldstart-${notes}`));
  const section = await runColdstart(
    notes,
    root,
    home,
    (h) => [...shebangNodeOptions(), serverMain, 'mcp', '--home', h, '--run-kind', 'interactive'],
    Number(values.runs),
    values['no-qmd'] ? null : state,
    (m) => process.stderr.write(`[coldstart] ${m}\n`),
  );
  const text = renderColdstart([section]);
  process.stdout.write(`${text}\n`);
  if (values.out !== undefined) fs.writeFileSync(values.out, `${JSON.stringify(section, null, 2)}\n`);
}

if (process.argv[1] !== undefined && import.meta.url === `file://${process.argv[1]}`) {
  main().catch((err: unknown) => {
    process.stderr.write(`[coldstart] failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  });
}
