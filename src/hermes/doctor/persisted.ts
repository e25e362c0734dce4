/**
 * Doctor's `index` check, after the tree step: the view's persisted index (src/tools/persisted-report.ts, docs/DESIGN.md
 * §The persisted index), dry-loaded against the tree step's own scan. Never a failure: without a usable file a first
 * call reads and indexes every note. A warning when there is none (`index_missing`), when the load refuses it (its
 * `index_*` reason), or when some visible notes would be indexed again from their text (`index_stale`).
 */
import type { Native } from '../../../native/types.js';
import type { Policy } from '../../policy/types.js';
import { persistedIndexLines, reportPersistedIndex, type PersistedIndexReport } from '../../tools/persisted-report.js';
import type { ScanResult } from '../../trust/types.js';
import type { DoctorCheck } from './report.js';

/**
 * @param scan the tree step's full scan, or the reason code that step stopped with (then no dry load is made)
 * @returns the check, its detail lines and the report for `doctor --json`'s `persistedIndex`
 */
export function persistedIndexCheck(
  home: string,
  policy: Policy,
  native: Native,
  scan: ScanResult | string,
): { check: DoctorCheck; lines: string[]; report: PersistedIndexReport } {
  const report = reportPersistedIndex(
    home,
    policy,
    native,
    typeof scan === 'string' ? { skipDryLoad: `the tree scan stopped: ${scan}` } : { scan },
  );
  let reason: string | undefined;
  if (report.state === 'absent') reason = 'index_missing';
  else if (report.state === 'refused') reason = report.reason!;
  else if ((report.dryLoad?.rebuilt ?? 0) > 0) reason = 'index_stale';
  const check: DoctorCheck =
    reason === undefined || report.remedy === null
      ? { name: 'index', ok: true }
      : { name: 'index', ok: true, reason, remedy: report.remedy };
  // A warned check prints its remedy on its own line: the detail lines do not say it again.
  const lines = persistedIndexLines(report, check.remedy !== undefined);
  return { check, lines, report };
}
