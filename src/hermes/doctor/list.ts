/**
 * The skipped objects by reason: the reasons `doctor --list` names, the sample lines under a "skipped N × reason"
 * line, and `listSkipped`, the full list of one reason (`doctor --list REASON`) from the scan tool calls run.
 */
import { getNative } from '../../../native/index.js';
import type { Reason } from '../../errors.js';
import { scanLimitsOf } from '../../policy/scan-limits.js';
import { REASON_CODES } from '../../remedies.js';
import { displayPath, shellWord } from '../../text/operator.js';
import { openTrustedDir } from '../../trust/path.js';
import { scanTree } from '../../trust/scan.js';
import type { ScanResult } from '../../trust/types.js';
import { closeQuietly } from '../../trust/walk.js';
import { NO_WRITERS } from '../../trust/writers.js';
import { listCommand } from '../skip-samples.js';
import { policyStatus } from '../status.js';
import { reasonOf, remedyOf } from './remedy.js';

/**
 * The lines under one "skipped N × reason" line: up to `SAMPLES_PER_REASON` of the skipped paths (root-relative,
 * shown with `displayPath`) and, when there are more, the `--list` command that prints them all.
 */
export function namedLines(paths: readonly string[], count: number, home: string, reason: string): string[] {
  if (paths.length === 0) return [];
  const lines = [`  e.g. ${paths.map(displayPath).join(', ')}`];
  if (count > paths.length) lines.push(`  all ${count}: ${listCommand(home, reason)}`);
  return lines;
}

/**
 * Reasons the tree scan skips objects for, in the order `doctor --list`'s help names them. `--list` accepts every
 * reason code (`REASON_CODES`): the scan counts objects only under a `Reason`, so whatever doctor counts, `--list`
 * takes; this list is the ones a tree of notes commonly shows.
 */
export const TREE_REASONS: readonly Reason[] = Object.freeze([
  'acl_unreadable',
  'acl_write',
  'bad_name',
  'binary',
  'denied',
  'group_writable',
  'hard_link',
  'hidden',
  'invalid_utf8',
  'io_error',
  'missing',
  'not_directory',
  'not_markdown',
  'not_regular',
  'open_for_write',
  'other_device',
  'symlink',
  'too_large',
  'untrusted_owner',
  'world_writable',
] satisfies Reason[]);

/** What `doctor --list REASON` accepts: every reason code (src/remedies.ts `REASON_CODES`). */
export const LISTABLE_REASONS: readonly string[] = REASON_CODES;

/**
 * The paths below the root that the tree scan skipped for `reason` (`doctor --list REASON`), in scan order,
 * root-relative. The scan is the one tool calls run (policy, name rule, trust checks), with an operator-only hook
 * that names each skipped object (ScanLimits.onSkip). A scan that stops at a budget lists what it saw until then.
 * `too_deep` lists the visible notes below `limits.max_depth`, those below the 16-segment id limit included (which
 * no `max_depth` reaches): the depth look-ahead of the same scan names each one (ScanLimits.onDeep), so the notes
 * doctor's "cut by max_depth" line counts can be named.
 *
 * @returns `paths`, the root, the remedy of the reason and `cut`, the limit that cut the listing scan (absent when
 *   nothing did); or `problem` (a sentence saying what to run instead) when the policy does not load or the root
 *   cannot be opened
 */
export function listSkipped(
  home: string,
  reason: string,
): { paths: string[]; root: string; remedy: string; cut?: ScanResult['cut'] } | { problem: string } {
  const doctor = `memory-bridge doctor --home ${shellWord(home)}`;
  const native = getNative();
  if (native === null) return { problem: `no platform bindings here: run \`${doctor}\` for details` };
  const { status, policy, writers: resolved } = policyStatus(home);
  if (!status.loads || policy === undefined)
    return { problem: `the policy does not load: run \`${doctor}\` to see why` };
  // The same writers as runDoctor's scan, so the listing and the counts agree.
  const writers = resolved?.writers ?? NO_WRITERS;
  let rootFd: number;
  try {
    rootFd = openTrustedDir(policy.root, 'root', native, undefined, writers);
  } catch {
    return { problem: `the root cannot be opened as a trusted directory: run \`${doctor}\` to see why` };
  }
  const paths: string[] = [];
  try {
    const tooDeep = reason === 'too_deep';
    const limits = {
      ...scanLimitsOf(policy),
      keepText: false,
      writers,
      onSkip: (r: string, p: string) => r === reason && paths.push(p),
      ...(tooDeep ? { onDeep: (id: string) => paths.push(id) } : {}),
    };
    const scan = scanTree(rootFd, policy, limits, { has: () => false }, native);
    // The depth cut is what too_deep lists, whole; only a budget can leave that listing short.
    const cut = scan.truncated ? (scan.cut ?? 'max_depth') : undefined;
    return {
      paths,
      root: policy.root,
      remedy: remedyOf(reason, writers !== NO_WRITERS, policy.limits),
      ...(cut !== undefined && !(tooDeep && cut === 'max_depth') ? { cut } : {}),
    };
  } catch (err) {
    return { problem: `the scan stopped (${reasonOf(err)}): run \`${doctor}\` for the remedy` };
  } finally {
    closeQuietly(native, rootFd);
  }
}
