/**
 * What a scan cut by a budget left out, for doctor's tree check: a second scan with the budgets lifted counts the
 * notes, and the remedy names the limit and the value that would cover the vault (docs/POLICY.md §Limits).
 */
import type { Native } from '../../../native/types.js';
import { LIMIT_TABLE } from '../../policy/schema.js';
import { scanLimitsOf } from '../../policy/scan-limits.js';
import type { Policy } from '../../policy/types.js';
import { scanTree } from '../../trust/scan.js';
import { MAX_ID_SEGMENTS, type ScanResult } from '../../trust/types.js';
import { NO_WRITERS, type Writers } from '../../trust/writers.js';
import { reasonOf } from './remedy.js';

/**
 * What a cut scan left out, for the operator: a second scan of the same tree with the budgets lifted (entries and
 * bytes unbounded, depth at the id limit of 16 segments; the raw entry ceiling still applies) counts the visible
 * notes, texts dropped as they pass. The remedy names the limit that cut the scan and the value that would cover
 * the vault, and never advises raising a limit already at its ceiling (docs/POLICY.md §Limits).
 *
 * @param rootFd open trusted root (not closed here)
 * @param scan   the policy-limited scan, `truncated` with its `cut`
 * @returns one detail line and the remedy
 */
export function describeCut(
  rootFd: number,
  policy: Policy,
  scan: ScanResult,
  native: Native,
  writers: Writers = NO_WRITERS,
): { line: string; remedy: string } {
  const which = scan.cut ?? 'max_depth';
  const row = LIMIT_TABLE.find((r) => r.key === which)!;
  const now = policy.limits[which];
  const narrow = 'narrow "allow" (or add "deny" patterns) so fewer notes match, or split the notes across profiles';
  const atCeiling = `${which} is already at its ceiling (${row.ceiling}): ${narrow}`;
  let full: ScanResult;
  try {
    full = scanTree(
      rootFd,
      policy,
      {
        ...scanLimitsOf(policy),
        maxEntries: Number.MAX_SAFE_INTEGER,
        maxTotalBytes: Number.MAX_SAFE_INTEGER,
        maxDepth: MAX_ID_SEGMENTS,
        keepText: false,
        writers,
      },
      { has: () => false },
      native,
    );
  } catch (err) {
    const line = `the scan was cut by ${which}; counting the notes it left out failed (${reasonOf(err)})`;
    return {
      line,
      remedy: now >= row.ceiling ? atCeiling : `raise limits.${which} (ceiling ${row.ceiling}), or ${narrow}`,
    };
  }
  const leftOut = Math.max(0, full.notes.length - scan.notes.length);
  const line =
    `the scan was cut by ${which}: ${leftOut} of ${full.notes.length} visible notes were left out ` +
    '(searches answer "incomplete": true)';
  let needed = 0;
  if (which === 'max_entries') needed = full.notes.length;
  else if (which === 'max_total_bytes') for (const n of full.notes) needed += n.stat.size;
  else for (const n of full.notes) needed = Math.max(needed, n.id.split('/').length);
  if (now >= row.ceiling) return { line, remedy: atCeiling };
  if (needed > row.ceiling)
    return {
      line,
      remedy: `raise limits.${which} to its ceiling ${row.ceiling} (now ${now}); even that leaves notes out: ${narrow}`,
    };
  return {
    line,
    remedy: `raise limits.${which} to at least ${Math.max(needed, now + 1)} (now ${now}, ceiling ${row.ceiling}), or ${narrow}`,
  };
}
