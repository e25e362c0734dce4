/**
 * The trail scans of the "audit" section of `npm run bench` (bench/audit.ts; docs/AUDIT.md §Asking the trail): how
 * fast `memory-bridge audit` and `audit verify` read a big trail. A home with N records (1,000,000: a year of a
 * busy profile; in 16 MiB files as the writer rotates them, chained as the writer chains them) is built once,
 * then verified and asked "who saw this note" and "what did this client see", each timed in process.
 */
import fs from 'node:fs';
import path from 'node:path';
import { auditName, GENESIS } from '../src/audit/files.js';
import { queryTrail, type AuditFilter } from '../src/audit/query.js';
import { verifyTrail } from '../src/audit/verify.js';
import { lineHash, recordLine } from '../src/audit/record.js';

const MAX_FILE_BYTES = 16_777_216;

/** A note version of the records' form (22 base64url characters), distinct per `i`. */
function versionOf(i: number): string {
  return `v${i.toString(36).padStart(21, '0')}`;
}

/**
 * A home under `parent` with `n` chained records of one day as `serve` writes them (two search hits with their
 * versions, ten clients, 1,000 note ids); returns the home.
 */
function buildTrail(parent: string, n: number): string {
  const tmp = fs.realpathSync(fs.mkdtempSync(path.join(parent, 'audit-trail-')));
  fs.chmodSync(tmp, 0o700);
  const home = path.join(tmp, 'home');
  const dir = path.join(home, 'plugin-data', 'memory-bridge', 'audit');
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  let prev = GENESIS;
  let seq = 1;
  let chunks: Buffer[] = [];
  let size = 0;
  const flush = (): void => {
    const file = path.join(dir, auditName('2026-06-01', seq));
    fs.writeFileSync(file, Buffer.concat(chunks), { mode: 0o600 });
    chunks = [];
    size = 0;
    seq++;
  };
  const t0 = Date.parse('2026-06-01T00:00:00Z');
  for (let i = 0; i < n; i++) {
    const record = {
      time: new Date(t0 + Math.floor((i * 86_000_000) / n)).toISOString(),
      'mcp.method.name': 'tools/call',
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': i % 3 === 0 ? 'memory_bridge_read' : 'memory_bridge_search',
      'memory_bridge.home': home,
      'memory_bridge.transport': 'http',
      'memory_bridge.run_kind': i % 5 === 0 ? 'cron' : 'interactive',
      'memory_bridge.outcome': 'ok',
      'mcp.server.operation.duration': 0.0042,
      'memory_bridge.client': `client-${i % 10}`,
      'mcp.protocol.version': '2025-11-25',
      'memory_bridge.notes': [
        { id: `projects/note-${i % 1000}.md`, version: versionOf(i) },
        { id: `decisions/d-${(i * 7) % 1000}.md`, version: versionOf(i + 1) },
      ],
      'memory_bridge.truncated': false,
      'memory_bridge.incomplete': false,
    };
    const line = recordLine(record, prev);
    prev = lineHash(line.subarray(0, line.length - 1));
    if (size + line.length > MAX_FILE_BYTES) flush();
    chunks.push(line);
    size += line.length;
  }
  if (chunks.length > 0) flush();
  return home;
}

/**
 * `fn()` timed by the wall clock and by this process's CPU time (user + system, every thread), in seconds; `fn` may
 * return a promise.
 */
async function timed<T>(fn: () => T | Promise<T>): Promise<{ value: T; s: number; cpuS: number }> {
  const cpu0 = process.cpuUsage();
  const t = process.hrtime.bigint();
  const value = await fn();
  const s = Number(process.hrtime.bigint() - t) / 1e9;
  const cpu = process.cpuUsage(cpu0);
  return { value, s, cpuS: (cpu.user + cpu.system) / 1e6 };
}

/** One timed operator command over the trail. */
export interface ScanRow {
  command: string;
  records: number;
  matched: number;
  /** Wall clock and CPU time, seconds; judged on the CPU time (other work on the machine moves it far less). */
  s: number;
  cpuS: number;
  pass: boolean;
}

/** What the trail scans measured. */
export interface ScanSection {
  records: number;
  mib: number;
  files: number;
  rows: ScanRow[];
}

/** The judged bound of every scan of a million records (issue: a year of a busy profile in ≤ 2 s). */
export const SCAN_TARGET_S = 2;

/**
 * Build a trail of `n` records under `parent`, then time `audit verify`, `audit --id` and `audit --client
 * --run-kind` on it (each after one untimed pass, so every figure reads from the page cache alike). The trail is
 * removed afterwards.
 */
export async function runAuditScans(parent: string, n: number, log: (msg: string) => void): Promise<ScanSection> {
  const built = await timed(() => buildTrail(parent, n));
  const home = built.value;
  const dir = path.join(home, 'plugin-data', 'memory-bridge', 'audit');
  try {
    const names = fs.readdirSync(dir);
    const bytes = names.reduce((sum, f) => sum + fs.statSync(path.join(dir, f)).size, 0);
    log(
      `audit: a trail of ${n} records, ${(bytes / 1048576).toFixed(0)} MiB in ${names.length} files, built in ${built.s.toFixed(1)} s`,
    );
    const rows: ScanRow[] = [];
    type Counted = { records: number; matched: number };
    const row = async (command: string, run: () => Counted | Promise<Counted>): Promise<void> => {
      await run();
      const { value, s, cpuS } = await timed(run);
      rows.push({ command, ...value, s, cpuS, pass: cpuS <= SCAN_TARGET_S });
      log(`audit: ${command}: ${value.matched} of ${value.records} in ${s.toFixed(2)} s (CPU ${cpuS.toFixed(2)} s)`);
    };
    const verify = (threads?: number) => async (): Promise<Counted> => {
      const r = await verifyTrail(home, threads === undefined ? {} : { threads });
      if (r.broken !== undefined)
        throw new Error(`audit bench: the built trail does not verify: ${JSON.stringify(r.broken)}`);
      return { records: r.records, matched: r.records };
    };
    await row('audit verify (SHA-256 of every record; threads as the machine allows)', verify());
    await row('audit verify on one thread', verify(0));
    const query = (filter: AuditFilter) => (): Counted => {
      let matched = 0;
      queryTrail(home, filter, () => matched++);
      return { records: n, matched };
    };
    await row('audit --id projects/note-7.md (who saw this note)', query({ id: 'projects/note-7.md' }));
    await row('audit --client client-5 --run-kind cron', query({ client: 'client-5', runKind: 'cron' }));
    return { records: n, mib: bytes / 1048576, files: names.length, rows };
  } finally {
    fs.rmSync(path.dirname(home), { recursive: true, force: true });
  }
}
