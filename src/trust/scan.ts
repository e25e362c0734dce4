/**
 * The tree scan below a trusted root (PRODUCT.md §5): depth first, entries of each directory in ascending byte
 * order of their raw names, every directory and note judged on its own open descriptor, with the per-call
 * budgets (candidates, bytes, depth, raw entries) and the `truncated` rules of the reference design.
 */
import { DT, NativeError, type DirEntry, type FileStat, type Native } from '../../native/types.js';
import { BridgeError, type Reason } from '../errors.js';
import { idWithinLimits, isNoteName, segmentReason } from './names.js';
import { closeQuietly, openFailureReason } from './path.js';
import {
  checkDirDescriptor,
  decodeNoteText,
  descriptorAclReason,
  identityKey,
  isDirectory,
  isSymlink,
  noteStatReason,
  placeOf,
  readSettled,
  requireNative,
  runningUid,
  type RootPlace,
} from './rule.js';
import {
  MAX_ID_SEGMENTS,
  RAW_ENTRY_CEILING,
  type KnownNotes,
  type NoteFilter,
  type ScanLimits,
  type ScannedNote,
  type ScanResult,
} from './types.js';

/** Names are decoded strictly, and a leading U+FEFF is kept so the decoded name re-encodes to the same bytes. */
const nameDecoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Decodes a raw directory entry name, or null when it is not valid UTF-8. ASCII names (the common case) skip
 * the decoder.
 */
export function decodeName(raw: Buffer): string | null {
  let ascii = true;
  for (let i = 0; i < raw.length; i++) {
    if (raw[i]! >= 0x80) {
      ascii = false;
      break;
    }
  }
  if (ascii) return raw.toString('latin1');
  try {
    return nameDecoder.decode(raw);
  } catch {
    return null;
  }
}

/** Directory entries sorted in ascending byte order of their raw names (in place). */
export function sortByName(entries: DirEntry[]): DirEntry[] {
  return entries.sort((a, b) => Buffer.compare(a.name, b.name));
}

/** d_type for a stat result, for entries the filesystem listed as DT_UNKNOWN. */
function typeOf(st: FileStat): number {
  if (isDirectory(st)) return DT.DIR;
  if (isSymlink(st)) return DT.LNK;
  return DT.REG;
}

/**
 * Scans the tree below `rootFd` and returns the notes that pass the policy filter and every trust check.
 *
 * Per directory entry, in byte order: undecodable name → skip `bad_name`; name rule (hidden, portable/unicode)
 * → skip; symlink → skip `symlink`. A directory the filter may not enter is skipped without being opened; one
 * whose notes would be deeper than `maxDepth` gets the depth look-ahead instead (names first; a file whose name
 * would be a candidate must also pass the trust rule); any other is opened and must be a trusted directory on the
 * root's device and mount (else skipped with its reason). A file must be a note name the filter allows (else
 * skipped, never opened or statted) and becomes a candidate: one statAt and the metadata checks; unless the index
 * knows it by identity (then it is never opened), it is opened and re-checked on its descriptor (fstat, ACL).
 * Only a candidate that passed those trust checks is charged: the `maxEntries`th+1 such note, or one whose size
 * would overflow `maxTotalBytes`, stops the scan (truncated, not included). So an untrusted note never moves a
 * budget or a flag (PRODUCT.md §6). A charged note is read exactly and validated (binary or invalid UTF-8 →
 * skipped, still charged, the same cold and warm).
 *
 * @param rootFd  open descriptor of the trusted root (not closed here)
 * @param filter  the policy's allow/enter decisions
 * @param limits  per-call budgets from the policy
 * @param known   identities whose verified text the index already holds
 * @param native  bindings (defaults to this platform's; tests pass a counting wrapper)
 * @returns notes in scan order, `truncated`, the raw entry count and skip counts by reason
 * @throws BridgeError('unavailable', 'entry_ceiling') when more than RAW_ENTRY_CEILING raw entries would be
 *   listed; BridgeError('unavailable', 'io_error') when the root itself cannot be stat'ed or listed.
 *   Every descriptor opened here is closed on every path.
 */
export function scanTree(
  rootFd: number,
  filter: NoteFilter,
  limits: ScanLimits,
  known: KnownNotes,
  native: Native = requireNative(),
): ScanResult {
  const uid = runningUid();
  let rootPlace: RootPlace;
  try {
    rootPlace = placeOf(native.fstat(rootFd));
  } catch (err) {
    if (err instanceof NativeError) throw new BridgeError('unavailable', 'io_error');
    throw err;
  }

  const notes: ScannedNote[] = [];
  const skipped: Partial<Record<string, number>> = {};
  let rawEntries = 0;
  let candidates = 0;
  let bytes = 0;
  let truncated = false;
  let stopped = false;

  const skip = (reason: Reason): void => {
    skipped[reason] = (skipped[reason] ?? 0) + 1;
  };

  /** Lists a directory against the remaining raw entry budget, sorted by name. */
  const list = (fd: number): DirEntry[] => {
    const listed = native.listDir(fd, RAW_ENTRY_CEILING - rawEntries);
    if (listed === 'too_many') throw new BridgeError('unavailable', 'entry_ceiling');
    rawEntries += listed.length;
    return sortByName(listed);
  };

  /** Opens a child directory and applies directory trust plus same-device; -1 (and a skip count) when refused. */
  const openChildDir = (parentFd: number, name: string, count: boolean): number => {
    let fd: number;
    try {
      fd = native.openDirAt(parentFd, name);
    } catch (err) {
      if (count) skip(openFailureReason(native, parentFd, name, err, true));
      return -1;
    }
    let reason: Reason | null;
    try {
      reason = checkDirDescriptor(native, fd, uid, rootPlace).reason;
    } catch (err) {
      if (!(err instanceof NativeError)) {
        closeQuietly(native, fd);
        throw err;
      }
      reason = 'io_error';
    }
    if (reason === null) return fd;
    closeQuietly(native, fd);
    if (count) skip(reason);
    return -1;
  };

  /** Entry type, resolving DT_UNKNOWN with a no-follow stat; null when that stat fails. */
  const entryType = (dirFd: number, entry: DirEntry, name: string): number | null => {
    if (entry.type !== DT.UNKNOWN) return entry.type;
    try {
      return typeOf(native.statAt(dirFd, name));
    } catch (err) {
      if (err instanceof NativeError) return null;
      throw err;
    }
  };

  /** True when a name below this point could be a candidate: note name, allowed, within the read id limits. */
  const wouldBeCandidate = (name: string, id: string, depth: number): boolean =>
    isNoteName(name) && filter.allowsNote(id) && idWithinLimits(id, depth);

  /**
   * True when the file `name` in `dirFd` passes the trust rule (owner, mode, link count, device and mount, ACL) on
   * its own descriptor. Size and content are not judged: the look-ahead asks whether a trusted note exists below
   * the depth limit, and an untrusted one must not set `truncated` (PRODUCT.md §6).
   */
  const trustedFileAt = (dirFd: number, name: string): boolean => {
    try {
      if (noteStatReason(native.statAt(dirFd, name), uid, rootPlace, Number.MAX_SAFE_INTEGER) !== null) return false;
      const fd = native.openFileAt(dirFd, name);
      try {
        const fst = native.fstat(fd);
        return (noteStatReason(fst, uid, rootPlace, Number.MAX_SAFE_INTEGER) ?? descriptorAclReason(native, fd, uid)) === null;
      } finally {
        closeQuietly(native, fd);
      }
    } catch (err) {
      if (err instanceof NativeError) return false;
      throw err;
    }
  };

  /**
   * Depth look-ahead below an open trusted directory at depth `dirDepth`: true as soon as a name that would be a
   * candidate exists below it through trusted same-device directories the filter may enter. Names decide first;
   * only a file whose name would be a candidate is statted and opened, to check that it passes the trust rule.
   */
  const lookBelow = (fd: number, prefix: string, dirDepth: number): boolean => {
    let entries: DirEntry[];
    try {
      entries = list(fd);
    } catch (err) {
      if (err instanceof NativeError) return false;
      throw err;
    }
    const depth = dirDepth + 1;
    for (const entry of entries) {
      const name = decodeName(entry.name);
      if (name === null || segmentReason(name, limits.names) !== null) continue;
      const id = prefix + name;
      const type = entryType(fd, entry, name);
      if (type === DT.DIR) {
        // Notes below would have more than 16 segments or 512 code points: the read tool could never accept them.
        if (depth >= MAX_ID_SEGMENTS || !idWithinLimits(id, depth) || !filter.mayEnter(id)) continue;
        const child = openChildDir(fd, name, false);
        if (child < 0) continue;
        let found: boolean;
        try {
          found = lookBelow(child, `${id}/`, depth);
        } finally {
          closeQuietly(native, child);
        }
        if (found) return true;
      } else if (type !== null && type !== DT.LNK && wouldBeCandidate(name, id, depth) && trustedFileAt(fd, name)) {
        return true;
      }
    }
    return false;
  };

  /**
   * A candidate note: one statAt and the metadata checks; a note the index does not know by identity is also opened
   * and re-checked on its descriptor (fstat, ACL). Only then is it charged against `maxEntries` and
   * `maxTotalBytes` (PRODUCT.md §6: an untrusted note never moves a budget or a flag), and the text read and
   * validated. A known note is returned without text and never opened.
   */
  const candidate = (dirFd: number, name: string, id: string): void => {
    let st: FileStat;
    try {
      st = native.statAt(dirFd, name);
    } catch (err) {
      if (!(err instanceof NativeError)) throw err;
      skip(err.errno === 2 ? 'missing' : 'io_error');
      return;
    }
    const metaReason = noteStatReason(st, uid, rootPlace, limits.maxFileBytes);
    if (metaReason !== null) {
      skip(metaReason);
      return;
    }
    const key = identityKey(st);
    /** Charge one trusted note; false (and the scan stops, truncated) when a budget is exhausted. */
    const charge = (size: number): boolean => {
      if (candidates >= limits.maxEntries || bytes + size > limits.maxTotalBytes) {
        truncated = true;
        stopped = true;
        return false;
      }
      candidates++;
      bytes += size;
      return true;
    };
    if (known.has(id, key)) {
      if (charge(st.size)) notes.push({ id, key, stat: st, text: undefined });
      return;
    }
    let fd: number;
    try {
      fd = native.openFileAt(dirFd, name);
    } catch (err) {
      skip(openFailureReason(native, dirFd, name, err, false));
      return;
    }
    try {
      // The descriptor is authoritative: judge what was opened, not what was statted a moment ago.
      const fst = native.fstat(fd);
      const reason = noteStatReason(fst, uid, rootPlace, limits.maxFileBytes) ?? descriptorAclReason(native, fd, uid);
      if (reason !== null) {
        skip(reason);
        return;
      }
      if (!charge(fst.size)) return;
      const raw = readSettled(native, dirFd, name, fd, fst);
      if (raw === null) {
        skip('io_error');
        return;
      }
      const decoded = decodeNoteText(raw);
      if ('reason' in decoded) {
        skip(decoded.reason);
        return;
      }
      notes.push({ id, key: identityKey(fst), stat: fst, text: decoded.text });
    } catch (err) {
      if (!(err instanceof NativeError)) throw err;
      skip('io_error');
    } finally {
      closeQuietly(native, fd);
    }
  };

  /** Scans one open trusted directory whose id has `dirDepth` segments (the root has 0). */
  const walk = (dirFd: number, prefix: string, dirDepth: number): void => {
    const entries = list(dirFd);
    const depth = dirDepth + 1; // depth of the entries listed here
    for (const entry of entries) {
      if (stopped) return;
      const name = decodeName(entry.name);
      if (name === null) {
        skip('bad_name');
        continue;
      }
      const nameReason = segmentReason(name, limits.names);
      if (nameReason !== null) {
        skip(nameReason);
        continue;
      }
      const id = prefix + name;
      let type = entry.type;
      if (type === DT.UNKNOWN) {
        // Stat only what could matter: a directory the filter may enter, or an allowed note name.
        if (!filter.mayEnter(id) && !(isNoteName(name) && filter.allowsNote(id))) {
          skip('denied');
          continue;
        }
        const resolved = entryType(dirFd, entry, name);
        if (resolved === null) {
          skip('missing');
          continue;
        }
        type = resolved;
      }
      if (type === DT.DIR) {
        enter(dirFd, name, id, depth);
      } else if (type === DT.LNK) {
        skip('symlink');
      } else if (!isNoteName(name)) {
        skip('not_markdown');
      } else if (!filter.allowsNote(id)) {
        skip('denied');
      } else if (!idWithinLimits(id, depth)) {
        skip('bad_name');
      } else {
        candidate(dirFd, name, id);
      }
    }
  };

  /** A directory entry at `depth` segments: skip, look ahead, or open, check and recurse. */
  const enter = (parentFd: number, name: string, id: string, depth: number): void => {
    if (!filter.mayEnter(id)) {
      skip('denied');
      return;
    }
    if (depth >= limits.maxDepth) {
      // Its notes would be deeper than max_depth. Once truncated is set, looking further cannot change anything.
      if (truncated) return;
      const fd = openChildDir(parentFd, name, true);
      if (fd < 0) return;
      try {
        if (lookBelow(fd, `${id}/`, depth)) truncated = true;
      } finally {
        closeQuietly(native, fd);
      }
      return;
    }
    const fd = openChildDir(parentFd, name, true);
    if (fd < 0) return;
    try {
      walk(fd, `${id}/`, depth);
    } catch (err) {
      if (!(err instanceof NativeError)) throw err;
      skip('io_error');
    } finally {
      closeQuietly(native, fd);
    }
  };

  try {
    walk(rootFd, '', 0);
  } catch (err) {
    if (err instanceof NativeError) throw new BridgeError('unavailable', 'io_error');
    throw err;
  }
  return { notes, truncated, rawEntries, skipped };
}
