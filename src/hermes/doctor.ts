/**
 * `memory-bridge doctor`: probe one profile home the way a tool call would, and tell the operator what is wrong
 * and how to fix it (docs/HERMES.md). Read-only: it opens and reads, never writes, and never changes a mode.
 *
 * This is the face of src/hermes/doctor/, one concern a module:
 *  - `run.ts`: `DoctorRun`, the named steps of `runDoctor` (platform, home, plugin and Hermes API, policy, root, tree);
 *  - `checks.ts`: the checks before the policy (bindings, home, the installed shim, the Hermes API report);
 *  - `explain.ts`: `doctor --explain ID`, why one note is or is not visible;
 *  - `list.ts`: the skipped objects by reason (`doctor --list REASON`, the sample lines);
 *  - `cut.ts`: what a scan cut by a budget left out, and which limit to raise;
 *  - `rules.ts`: the writer rule in words (root, each directory, the note; counts per named writer);
 *  - `remedy.ts`: what to do about each reason, with named writers and limits at their ceiling;
 *  - `report.ts`: the report's shape (`--json`) and its text form.
 * The report's `ok` is false exactly when some check failed, i.e. when tool calls would be `unavailable` or the
 * shim could not start its worker. Operator output: paths are fine here; tool output never carries them.
 */
import { DoctorRun } from './doctor/run.js';
import type { DoctorResult } from './doctor/report.js';

export { describeCut } from './doctor/cut.js';
export { explainNote } from './doctor/explain.js';
export { LISTABLE_REASONS, listSkipped, TREE_REASONS } from './doctor/list.js';
export { type DoctorCheck, type DoctorReport, type DoctorResult, formatDoctor } from './doctor/report.js';

/**
 * Run every check for `home` (absolute), in the order of src/hermes/doctor/run.ts.
 *
 * @param options.version this CLI's version, to compare with the installed shim's
 * @param options.relativeHome the relative HERMES_HOME the home was resolved from, when it was one (a failure)
 */
export function runDoctor(home: string, options: { version?: string; relativeHome?: string } = {}): DoctorResult {
  return new DoctorRun(home, options).run();
}
