/**
 * How fast `memory-bridge audit` and `audit verify` read a big trail (docs/AUDIT.md §Asking the trail): a home with
 * N records (default 1,000,000, in 16 MiB files as the writer rotates them, chained as the writer chains them) is
 * built once, then verified and asked "who saw this note" and "what did this client see", each timed.
 *
 * usage: node dist/bench/audit-scan.js [--records N] [--keep]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { auditName, GENESIS } from '../src/audit/files.js';
import { queryTrail } from '../src/audit/query.js';
import { verifyTrail } from '../src/audit/read.js';
import { lineHash, recordLine } from '../src/audit/record.js';

const MAX_FILE_BYTES = 16_777_216;

/** A home with `n` chained records of one day, ten clients and 1,000 note ids; returns the home. */
function buildTrail(n: number): string {
  const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mb-audit-bench-')));
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
      'memory_bridge.notes': [{ id: `projects/note-${i % 1000}.md` }, { id: `decisions/d-${(i * 7) % 1000}.md` }],
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

function timed<T>(fn: () => T): { value: T; s: number } {
  const t = process.hrtime.bigint();
  const value = fn();
  return { value, s: Number(process.hrtime.bigint() - t) / 1e9 };
}

const { values } = parseArgs({ options: { records: { type: 'string' }, keep: { type: 'boolean' } } });
const n = Number(values.records ?? 1_000_000);
const built = timed(() => buildTrail(n));
const home = built.value;
const dir = path.join(home, 'plugin-data', 'memory-bridge', 'audit');
const bytes = fs.readdirSync(dir).reduce((sum, f) => sum + fs.statSync(path.join(dir, f)).size, 0);
process.stdout.write(
  `trail: ${n} records, ${(bytes / 1048576).toFixed(0)} MiB in ${fs.readdirSync(dir).length} files\n`,
);
// One untimed pass so every run reads from the page cache alike.
verifyTrail(home);
const verify = timed(() => verifyTrail(home));
process.stdout.write(`audit verify: ${verify.value.records} records in ${verify.s.toFixed(2)} s\n`);
let hits = 0;
const byId = timed(() => queryTrail(home, { id: 'projects/note-7.md' }, () => hits++));
process.stdout.write(`audit --id: ${hits} matched, in ${byId.s.toFixed(2)} s\n`);
hits = 0;
const byClient = timed(() => queryTrail(home, { client: 'client-5', runKind: 'cron' }, () => hits++));
process.stdout.write(`audit --client --run-kind: ${hits} matched in ${byClient.s.toFixed(2)} s\n`);
if (values.keep !== true) fs.rmSync(path.dirname(home), { recursive: true, force: true });
