/**
 * Where a benchmark run is written for readers: its tables between the `<!-- bench:begin -->` and
 * `<!-- bench:end -->` markers of docs/BENCHMARKS.md (or the file `--doc` names), and one summary line between the
 * `<!-- bench:summary:begin -->` and `<!-- bench:summary:end -->` markers of README.md. Figures are the run's own;
 * nothing here measures.
 */
import fs from 'node:fs';

/** The markers of the tables (docs/BENCHMARKS.md §Latest results). */
export const TABLE_MARKERS = ['<!-- bench:begin -->', '<!-- bench:end -->'] as const;
/** The markers of the README's one-line summary (README.md §Benchmarks). */
export const SUMMARY_MARKERS = ['<!-- bench:summary:begin -->', '<!-- bench:summary:end -->'] as const;

/** The figures of one run the summary line names (milliseconds, MB = 10^6 bytes; null when not measured). */
export interface RunSummary {
  started: Date;
  cores: number;
  /** [notes, warm search p50 ms, rg p50 ms or null] for the sizes named: 10,000 and, when run, 100,000. */
  warm: Array<[number, number, number | null]>;
  /** Read p50 ms and RSS after warm-up in MB at the first size of `warm`. */
  readP50: number | null;
  rssMB: number | null;
  /** Targets met and judged (SKIP not counted). */
  met: number;
  judged: number;
}

/**
 * Replace the text between two markers of a Markdown file with `body` (a line break after the first marker and
 * before the second). Throws when the file lacks the markers in that order, naming the file.
 */
export function writeBetweenMarkers(file: string, markers: readonly [string, string], body: string): void {
  const text = fs.readFileSync(file, 'utf8');
  const [begin, end] = markers;
  const a = text.indexOf(begin);
  const b = text.indexOf(end);
  if (a < 0 || b < a) throw new Error(`${file}: markers ${begin} … ${end} not found`);
  fs.writeFileSync(file, `${text.slice(0, a + begin.length)}\n${body}\n${text.slice(b)}`);
}

/** "YYYY-MM-DD HH:MM UTC" of a date. */
export function stampOf(date: Date): string {
  return `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/**
 * The README's summary line, e.g. "2026-12-01 22:25 UTC on 2 cores: warm search p50 7.73 ms at 10,000 notes
 * and 54.1 ms at 100,000 (ripgrep 60.6 and 542 ms), read p50 0.56 ms, RSS 140 MB at 10,000 notes; 13 of 16
 * targets met." `fmt` is the tables' number format, so the line repeats figures of the tables exactly.
 */
export function summaryLine(s: RunSummary, fmt: (x: number | null) => string): string {
  const first = s.warm[0];
  if (first === undefined) return `${stampOf(s.started)} on ${s.cores} cores: no sized corpus was measured.`;
  const sizes = s.warm.map(([n], i) => (i === 0 ? `${n.toLocaleString('en-US')} notes` : n.toLocaleString('en-US')));
  const ours = s.warm.map(([, p50]) => `${fmt(p50)} ms`);
  const rg = s.warm.map(([, , r]) => r);
  const pairs = ours.map((o, i) => `${o} at ${sizes[i]}`).join(' and ');
  const rgPart = rg.every((r) => r !== null) ? ` (ripgrep ${rg.map((r) => fmt(r)).join(' and ')} ms)` : '';
  return (
    `${stampOf(s.started)} on ${s.cores} cores: warm search p50 ${pairs}${rgPart}, read p50 ${fmt(s.readP50)} ms, ` +
    `RSS ${fmt(s.rssMB)} MB at ${first[0].toLocaleString('en-US')} notes; ${s.met} of ${s.judged} targets met.`
  );
}
