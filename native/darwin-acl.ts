/**
 * Extended ACLs on macOS (docs/PLATFORM.md, docs/TRUST.md §ACLs): the entries of a descriptor's `ACL_TYPE_EXTENDED`
 * ACL, each decoded to its tag, permission mask and qualifier (a uid or gid through the membership API), for the
 * write-grant rule of src/trust/acl-darwin.ts.
 *
 * unverified: written from documented facts (Apple's Libc headers and man pages), never run.
 */
import type { default as Koffi } from 'koffi';
import { DARWIN_ERRNO, darwinErrors } from './errno.js';
import type { AclRead, DarwinAclEntry } from './types.js';

const { ENOENT, EIO, EINVAL } = DARWIN_ERRNO;

// <sys/acl.h>
const ACL_TYPE_EXTENDED = 0x100;
const ACL_FIRST_ENTRY = 0;
const ACL_NEXT_ENTRY = -1;
// <membership.h>
const ID_TYPE_UID = 0;
const ID_TYPE_GID = 1;

/**
 * The `readAcl` of the macOS `Native` over `lib` (libSystem): `none` without an extended ACL, its entries, or the
 * errno that stopped the read (`EIO` for an entry that cannot be decoded).
 *
 * @throws NativeError (ResourceExhaustedError) when memory or descriptors run out; whatever koffi throws when a
 *   symbol cannot be loaded
 */
export function createDarwinAclReader(
  koffi: typeof Koffi,
  lib: ReturnType<(typeof Koffi)['load']>,
): (fd: number) => AclRead {
  const aclGetFd = lib.func('void *acl_get_fd_np(int, int)') as (fd: number, type: number) => bigint | null;
  const aclGetEntry = lib.func('int acl_get_entry(void *, int, _Out_ void **)') as (
    acl: bigint,
    entryId: number,
    out: [bigint | null],
  ) => number;
  const aclGetTagType = lib.func('int acl_get_tag_type(void *, _Out_ int *)') as (
    entry: bigint,
    out: [number | null],
  ) => number;
  const aclGetPermsetMask = lib.func('int acl_get_permset_mask_np(void *, _Out_ uint64_t *)') as (
    entry: bigint,
    out: [number | bigint | null],
  ) => number;
  const aclGetQualifier = lib.func('void *acl_get_qualifier(void *)') as (entry: bigint) => bigint | null;
  const aclFree = lib.func('int acl_free(void *)') as (p: bigint) => number;
  // mbr_uuid_to_id returns 0 or an errno value directly (not through errno).
  const mbrUuidToId = lib.func('int mbr_uuid_to_id(void *, _Out_ uint32_t *, _Out_ int *)') as (
    uuid: bigint,
    id: [number | null],
    type: [number | null],
  ) => number;

  /** Decodes one extended ACL entry; an unresolvable qualifier yields idType/id null (the rule refuses it). */
  function decodeEntry(entry: bigint): DarwinAclEntry | null {
    const tagOut: [number | null] = [null];
    if (aclGetTagType(entry, tagOut) !== 0 || tagOut[0] === null) return null;
    const maskOut: [number | bigint | null] = [null];
    if (aclGetPermsetMask(entry, maskOut) !== 0 || maskOut[0] === null) return null;
    const decoded: DarwinAclEntry = { tag: tagOut[0], perms: BigInt(maskOut[0]), idType: null, id: null };
    const qualifier = aclGetQualifier(entry);
    if (qualifier === null) return decoded;
    try {
      const idOut: [number | null] = [null];
      const typeOut: [number | null] = [null];
      if (mbrUuidToId(qualifier, idOut, typeOut) === 0 && idOut[0] !== null) {
        if (typeOut[0] === ID_TYPE_UID) decoded.idType = 'uid';
        else if (typeOut[0] === ID_TYPE_GID) decoded.idType = 'gid';
        if (decoded.idType !== null) decoded.id = idOut[0];
      }
    } finally {
      aclFree(qualifier);
    }
    return decoded;
  }

  return (fd: number): AclRead => {
    const acl = aclGetFd(fd, ACL_TYPE_EXTENDED);
    if (acl === null) {
      const errno = koffi.errno();
      if (darwinErrors.exhausted(errno)) throw darwinErrors.fail('acl_get_fd_np', errno);
      return errno === ENOENT ? { kind: 'none' } : { kind: 'error', errno };
    }
    try {
      const entries: DarwinAclEntry[] = [];
      for (let entryId = ACL_FIRST_ENTRY; ; entryId = ACL_NEXT_ENTRY) {
        const entryOut: [bigint | null] = [null];
        if (aclGetEntry(acl, entryId, entryOut) !== 0) {
          const errno = koffi.errno();
          // Past the last entry Apple's libc answers -1/EINVAL (libacl on Linux answers 0 instead).
          if (errno === EINVAL) return { kind: 'darwin', entries };
          return { kind: 'error', errno };
        }
        if (entryOut[0] === null) return { kind: 'error', errno: EIO };
        const decoded = decodeEntry(entryOut[0]);
        if (decoded === null) return { kind: 'error', errno: EIO };
        entries.push(decoded);
      }
    } finally {
      aclFree(acl);
    }
  };
}
