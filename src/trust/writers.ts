/**
 * Named writers (docs/TRUST.md §Named writers): the users and groups, besides root and the running
 * user, whose writes the operator trusts below the memory root. The policy names them; `src/policy/accounts.ts`
 * resolves the names to ids on every call; the trust rule (`rule.ts`) receives the ids as a `Writers` value. The
 * policy file, its directory chain and the root's ancestors never receive one: they keep the rule without writers.
 */

/** The resolved writers of one call. Frozen; compare calls by `tag`. */
export interface Writers {
  /** Owners, besides root and the running user, whose objects below the root pass the owner check. */
  readonly uids: ReadonlySet<number>;
  /** Groups whose write permission (group bits, ACL entry, owning-group entry, mask) is excused below the root. */
  readonly gids: ReadonlySet<number>;
  /**
   * A canonical text of the ids: '' when there are none, else `u<uid,...>g<gid,...>` with ascending ids. Anything
   * kept between calls whose validity depends on the trust rule (identity keys of verified notes, memoized
   * listings) is keyed by it, so a policy edit that removes a writer takes effect on the next call.
   */
  readonly tag: string;
}

/** No named writers: the trust rule is exactly the rule for the operator and root alone. */
export const NO_WRITERS: Writers = Object.freeze({
  uids: new Set<number>() as ReadonlySet<number>,
  gids: new Set<number>() as ReadonlySet<number>,
  tag: '',
});

/**
 * The `Writers` for these ids (duplicates collapse; order does not matter).
 *
 * @param uids user ids (integers 0 to 2^32 - 2)
 * @param gids group ids (integers 0 to 2^32 - 2)
 * @returns NO_WRITERS when both are empty, else a frozen value with its `tag`
 * @throws RangeError on an id outside that range (callers validate first)
 */
export function writersOf(uids: Iterable<number>, gids: Iterable<number>): Writers {
  const u = [...new Set(uids)].sort((a, b) => a - b);
  const g = [...new Set(gids)].sort((a, b) => a - b);
  for (const id of [...u, ...g]) {
    if (!Number.isInteger(id) || id < 0 || id > MAX_ID) throw new RangeError('writer id out of range');
  }
  if (u.length === 0 && g.length === 0) return NO_WRITERS;
  return Object.freeze({ uids: new Set(u), gids: new Set(g), tag: `u${u.join(',')}g${g.join(',')}` });
}

/** Largest valid uid or gid: (uid_t)-1 is the "no change" value of chown(2), never an owner. */
export const MAX_ID = 0xfffffffe;
