/**
 * `doctor --explain ID`: why one note is or is not visible to this profile, one check per rule a read applies.
 */
import path from 'node:path';
import { getNative } from '../../../native/index.js';
import { PatternSet } from '../../policy/glob.js';
import { scanLimitsOf } from '../../policy/scan-limits.js';
import type { Policy } from '../../policy/types.js';
import { isNoteName, segmentReason, validateId } from '../../trust/names.js';
import { readNoteById } from '../../trust/note.js';
import { openTrustedDir } from '../../trust/path.js';
import { closeQuietly } from '../../trust/walk.js';
import { NO_WRITERS } from '../../trust/writers.js';
import { policyStatus } from '../status.js';
import type { DoctorCheck, DoctorResult } from './report.js';
import { reasonOf, remedyOf } from './remedy.js';
import { pathRuleLines } from './rules.js';

/**
 * Why one note is or is not visible to this profile (`doctor --explain ID`). Each step is a check; the report's
 * `ok` is true when a read of `id` would succeed. Steps: id syntax, policy, depth, name rule, allow and deny
 * patterns (naming the ones that match), directories the policy may enter, then the trusted read itself.
 */
export function explainNote(home: string, id: string): DoctorResult {
  const details = new Map<string, string[]>();
  const checks: DoctorCheck[] = [];
  const finish = (): DoctorResult => ({
    report: { ok: checks.every((c) => c.ok), checks, counts: {}, skipped: {} },
    details,
  });
  const fail = (name: string, reason: string, remedy = remedyOf(reason)): DoctorResult => {
    checks.push({ name, ok: false, reason, remedy });
    return finish();
  };

  try {
    validateId(id);
    checks.push({ name: 'id', ok: true });
  } catch {
    details.set('id', [
      'ids are root-relative paths: no leading "/", no "." or ".." or empty segments, no "\\" or control characters, at most 512 characters and 16 segments',
    ]);
    return fail('id', 'bad_id', 'write the id exactly as memory_bridge_search returns it');
  }

  const { status, policy, writers: resolved } = policyStatus(home);
  const writers = resolved?.writers ?? NO_WRITERS;
  if (!status.loads || policy === undefined) {
    const reason = status.loads ? 'internal' : status.reason;
    if (!status.loads && status.detail !== undefined) details.set('policy', [`problem: ${status.detail}`]);
    return fail('policy', reason);
  }
  checks.push({ name: 'policy', ok: true });

  const segments = id.split('/');
  details.set('depth', [`${segments.length} segments; max_depth ${policy.limits.max_depth}`]);
  if (segments.length > policy.limits.max_depth)
    return fail('depth', 'too_deep', remedyOf('too_deep', false, policy.limits));
  checks.push({ name: 'depth', ok: true });

  for (const segment of segments) {
    const reason = segmentReason(segment, policy.names);
    if (reason !== null) {
      details.set('names', [`segment ${JSON.stringify(segment)} fails the ${policy.names} rule`]);
      return fail('names', reason);
    }
  }
  if (!isNoteName(segments[segments.length - 1]!)) return fail('names', 'not_markdown');
  checks.push({ name: 'names', ok: true });

  const matching = (list: readonly string[]): string[] => list.filter((p) => PatternSet.compile([p]).matches(id));
  const allowHits = matching(policy.allow);
  const denyHits = matching(policy.deny);
  details.set('allow', [
    allowHits.length === 0
      ? 'no allow pattern matches'
      : `matched by ${allowHits.map((p) => JSON.stringify(p)).join(', ')}`,
  ]);
  if (allowHits.length === 0) {
    return fail(
      'allow',
      'denied',
      `no allow pattern matches ${JSON.stringify(id)}: add one (a pattern without wildcards matches exactly one id; use "dir/**" for a directory)`,
    );
  }
  checks.push({ name: 'allow', ok: true });
  details.set('deny', [
    denyHits.length === 0
      ? 'no deny pattern matches'
      : `matched by ${denyHits.map((p) => JSON.stringify(p)).join(', ')}`,
  ]);
  if (denyHits.length > 0) {
    return fail(
      'deny',
      'denied',
      `deny always wins: remove or narrow ${denyHits.map((p) => JSON.stringify(p)).join(', ')} to make it visible`,
    );
  }
  checks.push({ name: 'deny', ok: true });
  for (let i = 1; i < segments.length; i++) {
    const dirId = segments.slice(0, i).join('/');
    if (!policy.mayEnter(dirId)) {
      details.set('enter', [`the policy never enters ${JSON.stringify(dirId)}`]);
      return fail('enter', 'denied');
    }
  }
  checks.push({ name: 'enter', ok: true });

  const native = getNative();
  if (native === null) return fail('trust', 'unsupported_platform');
  let rootFd: number;
  try {
    rootFd = openTrustedDir(policy.root, 'root', native, undefined, writers);
  } catch (err) {
    details.set('trust', [
      `the root ${policy.root} is not trusted`,
      ...pathRuleLines(policy.root, id, native, writers, resolved),
    ]);
    return fail('trust', reasonOf(err), remedyOf(reasonOf(err), writers !== NO_WRITERS));
  }
  try {
    readNoteById(rootFd, id, policy as Policy, { ...scanLimitsOf(policy), writers }, native);
    details.set('trust', [
      `${path.join(policy.root, id)} passes every check: visible`,
      ...pathRuleLines(policy.root, id, native, writers, resolved),
    ]);
    checks.push({ name: 'trust', ok: true });
  } catch (err) {
    details.set('trust', [
      `${path.join(policy.root, id)} is refused`,
      ...pathRuleLines(policy.root, id, native, writers, resolved),
    ]);
    return fail('trust', reasonOf(err), remedyOf(reasonOf(err), writers !== NO_WRITERS, policy.limits));
  } finally {
    closeQuietly(native, rootFd);
  }
  return finish();
}
