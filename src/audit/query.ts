/**
 * Asking the trail (docs/AUDIT.md §Asking the trail): the records of one home that match a filter, streamed oldest
 * first. Cheap tests on the raw line come first (the time is the record's first field; an id, a client or a run
 * kind must appear as its JSON text), and only a line that passes them is parsed, so a scan costs about one
 * substring search per filter and record.
 */
import { eachRecordChunk } from './read.js';

/** What to keep; every given field must match. Times are ISO 8601 (`2026-12-01` or `2026-12-01T22:00:00Z`). */
export interface AuditFilter {
  /** Records at or after this time. */
  since?: string;
  /** Records before this time. */
  until?: string;
  /** Records that released this note id. */
  id?: string;
  /** Records of this HTTP client name. */
  client?: string;
  /** Records of this run kind. */
  runKind?: string;
}

/** A time argument in the records' form (`toISOString`), or null when it is not a date. */
export function isoOf(text: string): string | null {
  if (!/^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})?)?$/.test(text)) return null;
  const ms = Date.parse(text.length === 10 ? `${text}T00:00:00Z` : text);
  return Number.isFinite(ms) ? new Date(ms).toISOString() : null;
}

/** A filter compiled to the raw-line tests described above. */
class LineTest {
  private readonly needles: Buffer[];

  constructor(private readonly f: AuditFilter) {
    const needles: string[] = [];
    if (f.id !== undefined) needles.push(`"id":${JSON.stringify(f.id)}`);
    if (f.client !== undefined) needles.push(`"memory_bridge.client":${JSON.stringify(f.client)}`);
    if (f.runKind !== undefined) needles.push(`"memory_bridge.run_kind":${JSON.stringify(f.runKind)}`);
    this.needles = needles.map((n) => Buffer.from(n, 'utf8'));
  }

  /** Whether a file of UTC day `day` can hold a matching record (all of a file's records are of its day). */
  day(day: string): boolean {
    if (this.f.since !== undefined && day < this.f.since.slice(0, 10)) return false;
    if (this.f.until !== undefined && day > this.f.until.slice(0, 10)) return false;
    return true;
  }

  /**
   * Calls `hit(line)` for every line of `chunk[start..end)` that may match: with an id, client or run kind, only
   * lines holding the first such needle (found by one search over the whole chunk); else every line.
   */
  candidates(chunk: Buffer, start: number, end: number, hit: (line: Buffer) => void): void {
    const needle = this.needles[0];
    if (needle === undefined) {
      for (let at = start; at < end; ) {
        const nl = chunk.indexOf(0x0a, at);
        hit(chunk.subarray(at, nl));
        at = nl + 1;
      }
      return;
    }
    for (let at = start; at < end; ) {
      const found = chunk.indexOf(needle, at);
      if (found < 0 || found >= end) return;
      const lineStart = found === 0 ? 0 : chunk.lastIndexOf(0x0a, found - 1) + 1;
      const nl = chunk.indexOf(0x0a, found);
      hit(chunk.subarray(Math.max(lineStart, start), nl));
      at = nl + 1;
    }
  }

  /** The record of `line` when it matches, else null. */
  match(line: Buffer): Record<string, unknown> | null {
    const time = line.toString('latin1', 9, 33);
    if (this.f.since !== undefined && time < this.f.since) return null;
    if (this.f.until !== undefined && time >= this.f.until) return null;
    for (const n of this.needles) if (line.indexOf(n) < 0) return null;
    let record: Record<string, unknown>;
    try {
      record = JSON.parse(line.toString('utf8')) as Record<string, unknown>;
    } catch {
      return null;
    }
    if (this.f.id !== undefined) {
      const notes = record['memory_bridge.notes'];
      if (!Array.isArray(notes) || !notes.some((n) => (n as { id?: unknown })?.id === this.f.id)) return null;
    }
    if (this.f.client !== undefined && record['memory_bridge.client'] !== this.f.client) return null;
    if (this.f.runKind !== undefined && record['memory_bridge.run_kind'] !== this.f.runKind) return null;
    return record;
  }
}

/**
 * Call `each(record, line)` for every record of `home` that matches `filter`, oldest first.
 *
 * @returns the audit directory's path and how many candidate records were looked at (the lines holding the first
 *   needle, or every record without one)
 * @throws what `readTrail` throws (a missing or untrusted audit directory)
 */
export function queryTrail(
  home: string,
  filter: AuditFilter,
  each: (record: Record<string, unknown>, line: Buffer) => void,
): { dir: string; scanned: number } {
  const test = new LineTest(filter);
  let scanned = 0;
  const { dir } = eachRecordChunk(
    home,
    (chunk, start, end) => {
      test.candidates(chunk, start, end, (line) => {
        scanned++;
        const record = test.match(line);
        if (record !== null) each(record, line);
      });
    },
    (f) => test.day(f.day),
  );
  return { dir, scanned };
}

/** One record as a line of text: time, tool, outcome (and reason), run kind, client, the ids released. */
export function formatRecord(r: Record<string, unknown>): string {
  const tool = String(r['gen_ai.tool.name'] ?? '?').replace(/^memory_bridge_/, '');
  const reason = r['error.type'] === undefined ? '' : `/${String(r['error.type'])}`;
  const notes = Array.isArray(r['memory_bridge.notes'])
    ? (r['memory_bridge.notes'] as { id?: unknown }[]).map((n) => String(n.id)).join(' ')
    : '';
  const client = r['memory_bridge.client'] === undefined ? '-' : String(r['memory_bridge.client']);
  return [r.time, tool, `${String(r['memory_bridge.outcome'])}${reason}`, r['memory_bridge.run_kind'], client, notes]
    .join(' ')
    .trimEnd();
}
