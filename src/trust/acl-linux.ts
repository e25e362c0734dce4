/**
 * Linux POSIX access ACLs as stored in the `system.posix_acl_access` extended attribute: a strict structural
 * parser and the write-grant rule of docs/TRUST.md. Pure functions, no filesystem access.
 *
 * Byte layout (little-endian on every architecture): u32 version (2), then N entries of
 * (u16 tag, u16 perm, u32 id). Structure follows the kernel's own validation (posix_acl_valid): tag order
 * USER_OBJ, USER*, GROUP_OBJ, GROUP*, [MASK], OTHER. The kernel does not sort or de-duplicate qualifier ids,
 * so neither do we assume it.
 */

/** ACL entry tags (linux/posix_acl.h). */
export const LINUX_ACL_TAG = Object.freeze({
  USER_OBJ: 0x01,
  USER: 0x02,
  GROUP_OBJ: 0x04,
  GROUP: 0x08,
  MASK: 0x10,
  OTHER: 0x20,
});

/** Qualifier of the entries that carry none (USER_OBJ, GROUP_OBJ, MASK, OTHER). */
export const LINUX_ACL_UNDEFINED_ID = 0xffffffff;

import { NO_WRITERS, type Writers } from './writers.js';

const ACL_VERSION = 2;
const HEADER_BYTES = 4;
const ENTRY_BYTES = 8;
const PERM_WRITE = 2;
const PERM_ALL = 7;

/** One decoded ACL entry. `id` is the uid (USER) or gid (GROUP), 0xFFFFFFFF for the unqualified tags. */
export interface LinuxAclEntry {
  tag: number;
  perm: number;
  id: number;
}

/** The bytes are not a structurally valid access ACL. Callers must refuse the object (reason `acl_unreadable`). */
export class AclParseError extends Error {
  override readonly name = 'AclParseError';
  constructor(readonly detail: string) {
    super(`invalid POSIX ACL: ${detail}`);
  }
}

/**
 * Order rank of each tag: entries must appear with non-decreasing rank, and the ranks 0, 2, 5 (USER_OBJ,
 * GROUP_OBJ, OTHER) exactly once, rank 4 (MASK) at most once.
 */
const TAG_RANK: ReadonlyMap<number, number> = new Map([
  [LINUX_ACL_TAG.USER_OBJ, 0],
  [LINUX_ACL_TAG.USER, 1],
  [LINUX_ACL_TAG.GROUP_OBJ, 2],
  [LINUX_ACL_TAG.GROUP, 3],
  [LINUX_ACL_TAG.MASK, 4],
  [LINUX_ACL_TAG.OTHER, 5],
]);

/**
 * Parses and strictly validates `system.posix_acl_access` bytes.
 *
 * @param bytes the raw attribute value (length 4 + 8·N)
 * @returns the entries in stored order
 * @throws AclParseError on any doubt: bad length, version other than 2, fewer than 3 entries, unknown tag,
 *   tags out of order, a missing or repeated USER_OBJ/GROUP_OBJ/OTHER, a repeated MASK, a MASK missing while
 *   USER/GROUP entries exist or present while none exist, permission bits outside rwx, or a qualifier on an unqualified tag.
 *   Unsorted or duplicate USER/GROUP ids are accepted, as the kernel accepts them.
 */
export function parseLinuxAcl(bytes: Uint8Array): LinuxAclEntry[] {
  const length = bytes.length;
  if (length < HEADER_BYTES || (length - HEADER_BYTES) % ENTRY_BYTES !== 0) throw new AclParseError('length');
  const view = new DataView(bytes.buffer, bytes.byteOffset, length);
  if (view.getUint32(0, true) !== ACL_VERSION) throw new AclParseError('version');
  const count = (length - HEADER_BYTES) / ENTRY_BYTES;
  if (count < 3) throw new AclParseError('too few entries');

  const entries: LinuxAclEntry[] = [];
  let lastRank = -1;
  let named = 0;
  let masks = 0;
  let groupObjs = 0;
  for (let i = 0; i < count; i++) {
    const at = HEADER_BYTES + i * ENTRY_BYTES;
    const tag = view.getUint16(at, true);
    const perm = view.getUint16(at + 2, true);
    const id = view.getUint32(at + 4, true);
    const rank = TAG_RANK.get(tag);
    if (rank === undefined) throw new AclParseError('unknown tag');
    if (rank < lastRank) throw new AclParseError('tag order');
    // USER_OBJ, GROUP_OBJ, MASK and OTHER may not repeat; USER and GROUP may.
    if (rank === lastRank && rank !== 1 && rank !== 3) throw new AclParseError('repeated tag');
    if ((perm & ~PERM_ALL) !== 0) throw new AclParseError('permission bits');
    const qualified = tag === LINUX_ACL_TAG.USER || tag === LINUX_ACL_TAG.GROUP;
    if (!qualified && id !== LINUX_ACL_UNDEFINED_ID) throw new AclParseError('qualifier on unqualified tag');
    if (qualified) named++;
    if (tag === LINUX_ACL_TAG.MASK) masks++;
    if (tag === LINUX_ACL_TAG.GROUP_OBJ) groupObjs++;
    if (i === 0 && tag !== LINUX_ACL_TAG.USER_OBJ) throw new AclParseError('missing USER_OBJ');
    lastRank = rank;
    entries.push({ tag, perm, id });
  }
  // Order plus "no repeats" already make USER_OBJ first and unique; GROUP_OBJ and OTHER must also be present.
  if (groupObjs !== 1) throw new AclParseError('missing GROUP_OBJ');
  if (entries[count - 1]?.tag !== LINUX_ACL_TAG.OTHER) throw new AclParseError('missing OTHER');
  if (named > 0 && masks === 0) throw new AclParseError('missing MASK');
  // Stricter than the kernel, which stores a MASK without named entries: no tool we know writes one, so it is
  // treated as a doubt (the object is refused as acl_unreadable, never trusted).
  if (named === 0 && masks > 0) throw new AclParseError('MASK without named entries');
  return entries;
}

/**
 * The write-grant rule for Linux (docs/TRUST.md §Named writers): true when any entry grants write
 * (w) to someone other than the owner, root, the running user, a named writer user or a named writer group.
 *
 * Excused: USER_OBJ (the owner, judged by the owner check); a USER entry whose id is `uid`, 0 or a writer uid; a
 * GROUP entry whose id is a writer gid; GROUP_OBJ and MASK only when the object's own group `ownerGid` is a writer
 * gid (the mask is what the group mode bits show, so this matches the mode check). Everything else with w refuses —
 * other named users, every other GROUP entry (even gid 0), OTHER — whatever the mask says: the mask can be widened
 * later by anyone who may change the ACL, so it never neutralises a grant. Without writers this is the rule for the
 * operator and root alone: only USER_OBJ and USER entries for `uid` or 0 may carry w.
 *
 * @param entries  output of `parseLinuxAcl`
 * @param uid      the running user's uid
 * @param writers  named writers (below the root only)
 * @param ownerGid the object's st_gid, or -1 when unknown
 */
export function linuxAclGrantsForeignWrite(
  entries: readonly LinuxAclEntry[],
  uid: number,
  writers: Writers = NO_WRITERS,
  ownerGid = -1,
): boolean {
  const groupExcused = ownerGid >= 0 && writers.gids.has(ownerGid);
  for (const e of entries) {
    if ((e.perm & PERM_WRITE) === 0) continue;
    switch (e.tag) {
      case LINUX_ACL_TAG.USER_OBJ:
        continue;
      case LINUX_ACL_TAG.USER:
        if (e.id === uid || e.id === 0 || writers.uids.has(e.id)) continue;
        return true;
      case LINUX_ACL_TAG.GROUP:
        if (writers.gids.has(e.id)) continue;
        return true;
      case LINUX_ACL_TAG.GROUP_OBJ:
      case LINUX_ACL_TAG.MASK:
        if (groupExcused) continue;
        return true;
      default:
        return true;
    }
  }
  return false;
}
