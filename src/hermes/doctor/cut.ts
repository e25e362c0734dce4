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
import { SAMPLES_PER_REASON } from '../skip-samples.js';
import { reasonOf } from './remedy.js';

/** describeCut's answer: `tooDeep`, the first ids below max_depth (depth cuts only), and how many there are. */
export interface CutReport {
  line: string;
  remedy: string;
  tooDeep?: string[];
  tooDeepCount?: number;
}

/**
 * What a cut scan left out, for the operator: a second scan of the same tree with the budgets lifted (entries and
 * bytes unbounded, depth at the id limit of 16 segments; the raw entry ceiling still applies) counts the visible
 * notes, texts dropped as they pass; its depth look-ahead also counts (and names) the notes below the id limit. For
 * a depth cut the first SAMPLES_PER_REASON of the notes below max_depth are named (`tooDeep`). The remedy names the limit that cut the scan and the value that would cover
 * the vault, and never advises raising a limit already at its ceiling (docs/POLICY.md §Limits).
 *
 * @param rootFd open trusted root (not closed here)
 * @param scan   the policy-limited scan, `truncated` with its `cut`
 * @returns one detail line, the remedy and, for a depth cut, the first notes left out and their count
 */
export function describeCut(
  rootFd: number,
  policy: Policy,
  scan: ScanResult,
  native: Native,
  writers: Writers = NO_WRITERS,
): CutReport {
  const which = scan.cut ?? 'max_depth';
  const row = LIMIT_TABLE.find((r) => r.key === which)!;
  const now = policy.limits[which];
  const narrow = 'narrow "allow" (or add "deny" patterns) so fewer notes match, or split the notes across profiles';
  const atCeiling = `${which} is already at its ceiling (${row.ceiling}): ${narrow}`;
  let full: ScanResult;
  // Below the 16-segment id limit no max_depth reaches: the full scan's look-ahead names those notes (onDeep).
  const belowIdLimit: string[] = [];
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
        onDeep: (id: string) => belowIdLimit.push(id),
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
  const visible = full.notes.length + belowIdLimit.length;
  const leftOut = Math.max(0, visible - scan.notes.length);
  const line =
    `the scan was cut by ${which}: ${leftOut} of ${visible} visible notes were left out ` +
    '(searches answer "incomplete": true)';
  const tooDeep: string[] = [];
  if (which === 'max_depth') {
    for (const n of full.notes) if (n.id.split('/').length > now) tooDeep.push(n.id);
    tooDeep.push(...belowIdLimit);
  }
  const named = { tooDeep: tooDeep.slice(0, SAMPLES_PER_REASON), tooDeepCount: tooDeep.length };
  let needed = 0;
  if (which === 'max_entries') needed = full.notes.length;
  else if (which === 'max_total_bytes') for (const n of full.notes) needed += n.stat.size;
  else for (const id of tooDeep) needed = Math.max(needed, id.split('/').length);
  if (which === 'max_depth' && needed > row.ceiling)
    return {
      line,
      ...named,
      remedy:
        `move the notes below ${row.ceiling} segments up (no max_depth reaches them)` +
        (now < row.ceiling ? `, and raise limits.max_depth to ${row.ceiling} (now ${now}) for the rest` : ''),
    };
  if (now >= row.ceiling) return { line, ...named, remedy: atCeiling };
  if (needed > row.ceiling)
    return {
      line,
      ...named,
      remedy: `raise limits.${which} to its ceiling ${row.ceiling} (now ${now}); even that leaves notes out: ${narrow}`,
    };
  return {
    line,
    ...named,
    remedy: `raise limits.${which} to at least ${Math.max(needed, now + 1)} (now ${now}, ceiling ${row.ceiling}), or ${narrow}`,
  };
}
