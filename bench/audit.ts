/**
 * The "audit" section of `npm run bench` (docs/AUDIT.md): what the audit trail costs a search, and how fast the
 * operator commands read a big trail.
 *
 * - Cost: two `memory-bridge mcp` servers over one generated corpus of 10,000 notes, started as hosts start them,
 *   one for a home whose policy turns the trail on and one for a home with the same policy and the trail off. They
 *   are called in alternating order, round after round, with the same queries, so both see the same machine.
 *   Judged: warm search p50 with audit on ≤ 1.15 × with audit off, and RSS after the rounds within 5 % of the other
 *   server's. The CPU time of each server over the rounds is reported too (from /proc).
 * - Scans: bench/audit-scan.ts (a million records; each command ≤ 2 s of CPU time, the wall clock reported too).
 */
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type ScanSection, runAuditScans, SCAN_TARGET_S } from './audit-scan.js';
import { QUERIES, seedFor } from './config.js';
import { generateCorpus, type Corpus, type Vocabulary } from './corpus.js';
import { connect, cpuMsOf, disconnect, type McpSession, rssOf, timeCall, toolPayload } from './processes.js';
import { median } from './stats.js';

/** Notes of the corpus the cost is stated on. */
const NOTES = 10_000;
/** Records of the trail the scans are stated on. */
const SCAN_RECORDS = 1_000_000;
/** Judged bounds: search p50 on ÷ off, RSS on ÷ off. */
const P50_TARGET = 1.15;
const RSS_TARGET = 1.05;

export interface CostSide {
  p50Ms: number;
  /** Server CPU time per call over the rounds (ms; /proc ticks of 10 ms summed over every call). */
  cpuMsPerCall: number | null;
  rssMiB: number | null;
}

export interface AuditSection {
  notes: number;
  calls: number;
  on: CostSide;
  off: CostSide;
  p50Ratio: number;
  rssRatio: number | null;
  /** Records the audit-on server wrote during the section (one per call). */
  records: number;
  scans: ScanSection;
}

/** A second home over the corpus's root with the corpus's policy and the trail turned on. */
function auditedHome(c: Corpus, parent: string): string {
  const home = path.join(parent, 'home-audited');
  const dir = path.join(home, 'plugin-data', 'memory-bridge');
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  for (const d of [home, path.join(home, 'plugin-data'), dir]) fs.chmodSync(d, 0o700);
  const policy = JSON.parse(fs.readFileSync(path.join(c.home, 'plugin-data', 'memory-bridge', 'policy.json'), 'utf8'));
  fs.writeFileSync(path.join(dir, 'policy.json'), JSON.stringify({ ...policy, audit: { enabled: true } }), {
    mode: 0o600,
  });
  return fs.realpathSync(home);
}

async function timedSearch(s: McpSession, query: string): Promise<number> {
  const { ms, result } = await timeCall(s, 'memory_bridge_search', { query });
  if (toolPayload(result).ok !== true) throw new Error(`audit bench: a search was refused\n${s.stderr().slice(-2000)}`);
  return ms;
}

/** Lines of every file of `home`'s audit directory. */
function recordsOf(home: string): number {
  const dir = path.join(home, 'plugin-data', 'memory-bridge', 'audit');
  let n = 0;
  for (const f of fs.readdirSync(dir)) n += fs.readFileSync(path.join(dir, f), 'latin1').split('\n').length - 1;
  return n;
}

/**
 * Run the section in a folder of its own under `parent` (removed afterwards). `serverArgs(home)` are the node
 * arguments that start `memory-bridge mcp` for a home as hosts do.
 */
export async function runAudit(
  parent: string,
  vocab: Vocabulary,
  serverArgs: (home: string) => string[],
  quick: boolean,
  log: (msg: string) => void,
): Promise<AuditSection> {
  const own = fs.mkdtempSync(path.join(parent, 'audit-'));
  fs.chmodSync(own, 0o700);
  try {
    const corpus = generateCorpus(own, NOTES, vocab, seedFor(NOTES) + 27);
    const audited = auditedHome(corpus, own);
    log(`audit: ${NOTES} notes; one server with the trail on, one with it off`);
    await sleep(3500); // listings are reused only once older than the racy margin
    const off = await connect(process.execPath, serverArgs(corpus.home));
    const on = await connect(process.execPath, serverArgs(audited));
    try {
      for (const s of [off, on]) for (let i = 0; i < 2; i++) await timedSearch(s, QUERIES[i]!);
      const rounds = quick ? 12 : 100;
      const samples = { on: [] as number[], off: [] as number[] };
      const cpu0 = { on: cpuMsOf(on.pid), off: cpuMsOf(off.pid) };
      for (let r = 0; r < rounds; r++) {
        const query = QUERIES[r % QUERIES.length]!;
        const order: Array<['on' | 'off', McpSession]> = [
          ['off', off],
          ['on', on],
        ];
        if (r % 2 === 1) order.reverse();
        for (const [side, s] of order) samples[side].push(await timedSearch(s, query));
      }
      const side = (k: 'on' | 'off', s: McpSession): CostSide => {
        const c0 = cpu0[k];
        const c1 = cpuMsOf(s.pid);
        return {
          p50Ms: median(samples[k]),
          cpuMsPerCall: c0 === null || c1 === null ? null : (c1 - c0) / rounds,
          rssMiB: rssOf(s.pid).rssMiB,
        };
      };
      const sides = { on: side('on', on), off: side('off', off) };
      const records = recordsOf(audited);
      if (records !== rounds + 2) throw new Error(`audit bench: ${records} records for ${rounds + 2} calls`);
      log(`audit: search p50 ${sides.on.p50Ms.toFixed(1)} ms on, ${sides.off.p50Ms.toFixed(1)} ms off`);
      const rssRatio =
        sides.on.rssMiB === null || sides.off.rssMiB === null ? null : sides.on.rssMiB / sides.off.rssMiB;
      return {
        notes: NOTES,
        calls: rounds,
        ...sides,
        p50Ratio: sides.on.p50Ms / sides.off.p50Ms,
        rssRatio,
        records,
        scans: await runAuditScans(own, SCAN_RECORDS, log),
      };
    } finally {
      await disconnect(on).catch(() => undefined);
      await disconnect(off).catch(() => undefined);
    }
  } finally {
    fs.rmSync(own, { recursive: true, force: true });
  }
}

/** The section's tables (docs/BENCHMARKS.md). */
export function renderAudit(a: AuditSection): string {
  const f = (x: number | null): string =>
    x === null ? 'n/a' : x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2);
  const verdict = (pass: boolean): string => (pass ? 'pass' : 'FAIL');
  const lines = [
    `Audit trail cost (${a.notes.toLocaleString('en-US')} generated notes, two \`mcp\` servers called alternately, ${a.calls} warm searches each; one record per call written by the audited one: ${a.records}):`,
    '',
    '| server | search p50 ms | server CPU ms per call | RSS MB after the rounds |',
    '|---|---:|---:|---:|',
    `| audit off | ${f(a.off.p50Ms)} | ${f(a.off.cpuMsPerCall)} | ${f(a.off.rssMiB === null ? null : a.off.rssMiB * 1.048576)} |`,
    `| audit on | ${f(a.on.p50Ms)} | ${f(a.on.cpuMsPerCall)} | ${f(a.on.rssMiB === null ? null : a.on.rssMiB * 1.048576)} |`,
    '',
    '| target | measured | verdict |',
    '|---|---:|---|',
    `| search p50, on ÷ off ≤ ${P50_TARGET} | ${f(a.p50Ratio)} | ${verdict(a.p50Ratio <= P50_TARGET)} |`,
    `| RSS, on ÷ off ≤ ${RSS_TARGET} | ${f(a.rssRatio)} | ${a.rssRatio === null ? 'SKIP' : verdict(a.rssRatio <= RSS_TARGET)} |`,
    '',
    `Audit trail scans (${a.scans.records.toLocaleString('en-US')} chained records, ${a.scans.mib.toFixed(0)} MiB in ${a.scans.files} files, from the page cache):`,
    '',
    `| command | records | matched | seconds, wall | seconds, CPU (≤ ${SCAN_TARGET_S}) | verdict |`,
    '|---|---:|---:|---:|---:|---|',
    ...a.scans.rows.map(
      (r) =>
        `| \`${r.command}\` | ${r.records.toLocaleString('en-US')} | ${r.matched.toLocaleString('en-US')} | ${f(r.s)} | ${f(r.cpuS)} | ${verdict(r.pass)} |`,
    ),
  ];
  return lines.join('\n');
}
