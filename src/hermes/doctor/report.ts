/**
 * The shape of a doctor report (`doctor --json`) and its text form: the checks in order, the detail lines printed
 * under each, and the tree scan's skip counts and samples. `DoctorReportBuilder` collects them as the checks run.
 */
import type { PersistedIndexReport } from '../../tools/persisted-report.js';

/** One doctor check (the `--json` shape). `reason` on an ok check is a warning. */
export interface DoctorCheck {
  name: string;
  ok: boolean;
  reason?: string;
  remedy?: string;
}

/**
 * The `--json` output: `ok`, the checks, skip counts by reason code from the tree scan, the first few skipped
 * root-relative paths of each counted reason (`SAMPLES_PER_REASON`; `doctor --list REASON` gives all), and, when the
 * run got as far as the `index` check, the view's persisted index as `status --json` gives it.
 */
export interface DoctorReport {
  ok: boolean;
  checks: DoctorCheck[];
  counts: Record<string, number>;
  skipped: Record<string, string[]>;
  persistedIndex?: PersistedIndexReport;
}

/** A report plus the human-readable details (paths, numbers) the text output prints under each check. */
export interface DoctorResult {
  report: DoctorReport;
  details: Map<string, string[]>;
}

/** The checks, details, counts and samples of one doctor run as they are found; `result()` is the report. */
export class DoctorReportBuilder {
  readonly checks: DoctorCheck[] = [];
  readonly details = new Map<string, string[]>();
  counts: Record<string, number> = {};
  skipped: Record<string, string[]> = {};
  persistedIndex: PersistedIndexReport | undefined;

  /** Adds `check` (in order) and, when given, its detail lines; returns `check.ok`. */
  add(check: DoctorCheck, details?: string[]): boolean {
    this.checks.push(check);
    if (details !== undefined) this.details.set(check.name, details);
    return check.ok;
  }

  /** The report so far: `ok` is true exactly when every check passed (warnings pass). */
  result(): DoctorResult {
    const { checks, counts, skipped, details, persistedIndex } = this;
    const report: DoctorReport = { ok: checks.every((c) => c.ok), checks, counts, skipped };
    if (persistedIndex !== undefined) report.persistedIndex = persistedIndex;
    return { report, details };
  }
}

/** Human-readable doctor output: one line per check, details indented, remedies after a dash. */
export function formatDoctor(
  result: DoctorResult,
  header: string[],
  footer = {
    ok: 'Result: tool calls for this profile can be served.',
    fail: 'Result: tool calls for this profile would be unavailable (see FAIL above).',
  },
): string {
  const lines = [...header];
  for (const check of result.report.checks) {
    const mark = check.ok ? (check.reason === undefined ? 'ok  ' : 'warn') : 'FAIL';
    lines.push(`[${mark}] ${check.name}${check.reason === undefined ? '' : `: ${check.reason}`}`);
    for (const d of result.details.get(check.name) ?? []) lines.push(`       ${d}`);
    if (check.remedy !== undefined) lines.push(`       → ${check.remedy}`);
  }
  lines.push(result.report.ok ? footer.ok : footer.fail);
  return lines.join('\n');
}
