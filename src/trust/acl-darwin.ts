/**
 * The write-grant rule of docs/TRUST.md over macOS extended ACL entries (decoded by native/darwin.ts from
 * acl_get_fd_np / acl_get_entry / acl_get_tag_type / acl_get_permset_mask_np / mbr_uuid_to_id). Pure.
 *
 * unverified: the entries it judges come from bindings written from documented facts; the rule itself is
 * platform-independent and tested here.
 */
import type { DarwinAclEntry } from '../../native/types.js';
import { NO_WRITERS, type Writers } from './writers.js';

/** acl_tag_t values of extended entries (<sys/acl.h>). */
export const DARWIN_ACL_TAG = Object.freeze({ ALLOW: 1, DENY: 2 });

/**
 * Write-class permission bits (<sys/acl.h>): WRITE_DATA/ADD_FILE 0x4, DELETE 0x10, APPEND_DATA/ADD_SUBDIRECTORY
 * 0x20, DELETE_CHILD 0x40, WRITE_ATTRIBUTES 0x100, WRITE_EXTATTRIBUTES 0x400, WRITE_SECURITY 0x1000,
 * CHANGE_OWNER 0x2000.
 */
export const DARWIN_WRITE_CLASS = 0x4n | 0x10n | 0x20n | 0x40n | 0x100n | 0x400n | 0x1000n | 0x2000n;

/**
 * True when the ACL must refuse the object: an allow entry grants a write-class bit to anyone but the running
 * user, root (uid 0), a named writer user or a named writer group; an entry has a tag other than allow/deny; or an
 * entry's qualifier could not be resolved to a uid/gid. Deny entries never excuse an allow (evaluation order is
 * irrelevant here: any allow that could apply is treated as applying). Other group qualifiers are never excused,
 * not even gid 0.
 *
 * @param entries decoded extended entries in ACL order
 * @param uid the running user's uid
 * @param writers named writers (below the root only; docs/TRUST.md §Named writers)
 */
export function darwinAclGrantsForeignWrite(
  entries: readonly DarwinAclEntry[],
  uid: number,
  writers: Writers = NO_WRITERS,
): boolean {
  for (const e of entries) {
    if (e.tag !== DARWIN_ACL_TAG.ALLOW && e.tag !== DARWIN_ACL_TAG.DENY) return true;
    // An entry we could not decode fully is a doubt, and doubts refuse (even on a deny entry).
    if (e.idType === null || e.id === null) return true;
    if (e.tag === DARWIN_ACL_TAG.DENY) continue;
    if ((e.perms & DARWIN_WRITE_CLASS) === 0n) continue;
    if (e.idType === 'uid' && (e.id === uid || e.id === 0 || writers.uids.has(e.id))) continue;
    if (e.idType === 'gid' && writers.gids.has(e.id)) continue;
    return true;
  }
  return false;
}
