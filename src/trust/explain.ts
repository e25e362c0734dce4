/**
 * The owner, group, others and ACL parts of the trust rule in words, for `doctor` (operator output only): which
 * part admitted an object and, when one refused it, which. The verdict is the rule's own (`ownerModeReason` via
 * `noteStatReason`/`dirStatReason`, and `aclReason`); this module only names the part that decided
 * (docs/TRUST.md §Named writers).
 */
import type { AclRead, FileStat } from '../../native/types.js';
import type { Reason } from '../errors.js';
import { LINUX_ACL_TAG, parseLinuxAcl } from './acl-linux.js';
import { aclReason } from './rule.js';
import type { Writers } from './writers.js';

const S_IWGRP = 0o020;
const S_IWOTH = 0o002;
const PERM_WRITE = 2;

/** Names for ids in the text (the writers' names from `status`); ids without one are shown as numbers. */
export interface IdNames {
  user(uid: number): string | undefined;
  group(gid: number): string | undefined;
}

const NO_NAMES: IdNames = { user: () => undefined, group: () => undefined };

function who(kind: 'uid' | 'gid', id: number, names: IdNames): string {
  const name = kind === 'uid' ? names.user(id) : names.group(id);
  return name === undefined ? `${kind} ${id}` : `${kind} ${id} (${name})`;
}

/**
 * The rule's parts for one object, in order: owner, group write, others' write, ACL.
 *
 * @param st      fstat of the object's descriptor
 * @param acl     its ACL as read from that descriptor
 * @param uid     running uid
 * @param writers this call's named writers (NO_WRITERS where they do not apply)
 * @returns `parts`: one phrase per part, e.g. "owner uid 1001 (bob) is a named writer user"; `refused`: the reason
 *   code of the first part that refused, or null
 */
export function describeTrust(
  st: FileStat,
  acl: AclRead,
  uid: number,
  writers: Writers,
  names: IdNames = NO_NAMES,
): { parts: string[]; refused: Reason | null } {
  const parts: string[] = [];
  let refused: Reason | null = null;
  const owner = who('uid', st.uid, names);
  if (st.uid === 0) parts.push('owner root');
  else if (st.uid === uid) parts.push(`owner ${owner}: you`);
  else if (writers.uids.has(st.uid)) parts.push(`owner ${owner} is a named writer user`);
  else {
    parts.push(`owner ${owner} is not root, you or a named writer user (writers.users)`);
    refused = 'untrusted_owner';
  }
  const group = who('gid', st.gid, names);
  if ((st.mode & S_IWGRP) === 0) parts.push('not writable by its group');
  else if (writers.gids.has(st.gid)) parts.push(`writable by its group ${group}, a named writer group`);
  else {
    parts.push(`writable by its group ${group}, which is not a named writer group (writers.groups)`);
    refused ??= 'group_writable';
  }
  if ((st.mode & S_IWOTH) === 0) parts.push('not writable by others');
  else {
    parts.push('writable by others: never trusted');
    refused ??= 'world_writable';
  }
  const aclVerdict = aclReason(acl, uid, writers, st.gid);
  parts.push(aclPhrase(acl, aclVerdict, uid, writers, st.gid, names));
  refused ??= aclVerdict;
  return { parts, refused };
}

/** The ACL part in words: none, unreadable, or each write entry and whether it is excused. */
function aclPhrase(
  acl: AclRead,
  verdict: Reason | null,
  uid: number,
  writers: Writers,
  ownerGid: number,
  names: IdNames,
): string {
  if (acl.kind === 'none') return 'no ACL';
  if (acl.kind === 'error' || verdict === 'acl_unreadable') return 'ACL unreadable: refused';
  if (acl.kind === 'darwin')
    return verdict === null ? 'ACL: every write entry is excused' : 'ACL: an entry lets someone else write';
  const said: string[] = [];
  for (const e of parseLinuxAcl(acl.bytes)) {
    if ((e.perm & PERM_WRITE) === 0) continue;
    switch (e.tag) {
      case LINUX_ACL_TAG.USER:
        if (e.id === 0 || e.id === uid) said.push(`user ${who('uid', e.id, names)} (root or you)`);
        else if (writers.uids.has(e.id)) said.push(`user ${who('uid', e.id, names)} (named writer user)`);
        else said.push(`user ${who('uid', e.id, names)}: NOT a named writer`);
        break;
      case LINUX_ACL_TAG.GROUP:
        if (writers.gids.has(e.id)) said.push(`group ${who('gid', e.id, names)} (named writer group)`);
        else said.push(`group ${who('gid', e.id, names)}: NOT a named writer group`);
        break;
      case LINUX_ACL_TAG.GROUP_OBJ:
      case LINUX_ACL_TAG.MASK: {
        const label = e.tag === LINUX_ACL_TAG.MASK ? 'mask' : 'owning group';
        said.push(`${label}${writers.gids.has(ownerGid) ? ' (its group is a named writer group)' : ': NOT excused'}`);
        break;
      }
      case LINUX_ACL_TAG.OTHER:
        said.push('others: never');
        break;
      default:
        break;
    }
  }
  const head = verdict === null ? 'ACL write entries all excused' : 'ACL refused';
  return said.length === 0 ? 'ACL without write entries' : `${head}: ${said.join(', ')}`;
}
