/**
 * What doctor tells the operator to do about a reason: the shared remedies of src/remedies.ts, refined where the
 * profile says more: with named writers the owner, group and ACL refusals say how the writers apply
 * (docs/TRUST.md §Team memory), and a limit already at its ceiling is never advised to be raised
 * (docs/POLICY.md §Limits).
 */
import type { Limits } from '../../policy/types.js';
import { LIMIT_TABLE } from '../../policy/schema.js';
import { bridgeErrorOf } from '../../trust/refusal.js';
import { remedyOf as baseRemedy } from '../../remedies.js';

/**
 * What to do about `reason` (a reason code).
 *
 * @param withWriters the policy names writers: the owner, group and ACL remedies name them
 * @param limits the policy's limits: a reason whose remedy raises a limit already at its ceiling says what else
 */
export function remedyOf(reason: string, withWriters = false, limits?: Readonly<Limits>): string {
  if (withWriters && reason in WRITER_REMEDIES) return WRITER_REMEDIES[reason]!;
  if (limits !== undefined && reason in AT_CEILING) {
    const [key, remedy] = AT_CEILING[reason]!;
    const row = LIMIT_TABLE.find((r) => r.key === key)!;
    if (limits[key] >= row.ceiling) return `${key} is already at its ceiling (${row.ceiling}): ${remedy}`;
  }
  return baseRemedy(reason);
}

/** Reasons whose usual remedy raises a limit, with what to do instead once that limit is at its ceiling. */
const AT_CEILING: Readonly<Record<string, readonly [keyof Limits, string]>> = Object.freeze({
  too_large: ['max_file_bytes', 'split the note into smaller ones'],
  too_deep: ['max_depth', 'move the note up the tree'],
});

/** Remedies for the owner, group and ACL parts when the policy names writers (docs/TRUST.md §Team memory). */
const WRITER_REMEDIES: Readonly<Record<string, string>> = Object.freeze({
  untrusted_owner:
    'its owner is not root, you or a named writer user: chown it to one of them, or name the owner in writers.users if you trust every note they write',
  group_writable:
    'writable by a group that is not a named writer group (with an ACL, the group bits show its mask): chmod g-w, chgrp it to a writer group (a setgid team directory does this), or name the group in writers.groups',
  acl_write:
    'an ACL entry lets someone who is not root, you or a named writer write it: remove that entry (setfacl -x …), or name them in writers',
});

/** The reason code a thrown value stands for (`internal` when it is no refusal). */
export function reasonOf(err: unknown): string {
  return bridgeErrorOf(err)?.reason ?? 'internal';
}
