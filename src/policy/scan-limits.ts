/**
 * The trust layer's view of a policy's limits: the budgets one scan or read applies (docs/POLICY.md §Limits,
 * docs/TRUST.md §Budgets). The policy decides them; the trust layer only sees `ScanLimits`.
 */
import type { ScanLimits } from '../trust/types.js';
import type { Policy } from './types.js';

/**
 * The scan budgets of `policy`: its name rule, `max_entries`, `max_depth` (segments), `max_total_bytes` and
 * `max_file_bytes` (bytes). Callers add the per-process settings (`racyMarginMs`, `rawEntryCeiling`, `keepText`).
 */
export function scanLimitsOf(policy: Policy): ScanLimits {
  return {
    names: policy.names,
    maxEntries: policy.limits.max_entries,
    maxDepth: policy.limits.max_depth,
    maxTotalBytes: policy.limits.max_total_bytes,
    maxFileBytes: policy.limits.max_file_bytes,
  };
}
