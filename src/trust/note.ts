/**
 * Read-by-id resolution for the read tool (docs/TRUST.md): policy and syntax refusals before any filesystem
 * call, then a component-by-component walk from the root descriptor where each component must appear byte for
 * byte in its parent's listing before it is opened, and every descriptor passes the trust rule.
 */
import { NativeError, type FileStat, type Native } from '../../native/types.js';
import { BridgeError, type Reason } from '../errors.js';
import { isNoteName, segmentReason } from './names.js';
import {
  fileDescriptorReason,
  decodeNoteText,
  identityKey,
  noteStatReason,
  placeOf,
  readSettled,
  regularFileAtReason,
  requireNative,
  runningUid,
} from './rule.js';
import { readNames } from './view.js';
import { NO_WRITERS } from './writers.js';
import { closeQuietly, openFailureReason, walkDirs } from './walk.js';
import { rawCeilingOf, type IdentityKey, type NoteFilter, type ScanLimits } from './types.js';

function deny(reason: Reason): never {
  throw new BridgeError('not_found_or_denied', reason);
}

/**
 * Resolves `id` below the root and returns the note's verified text.
 *
 * Before any filesystem call: more segments than `maxDepth` → `too_deep`; a segment failing the name rule →
 * `hidden`/`bad_name`; a last segment that is not a note name → `not_markdown`; `!filter.allowsNote(id)` or a
 * parent directory the filter may not enter → `denied`. Then, per component: the parent is listed (raw entries
 * count toward RAW_ENTRY_CEILING) and must hold an entry whose raw bytes equal the segment's UTF-8 bytes
 * (`missing` otherwise — a case-folding or normalising filesystem cannot alias another name); directories are
 * opened no-follow and must be trusted on the root's device and mount; the note must be a regular file by a
 * no-follow stat (a device node, FIFO or socket is never opened), is then opened no-follow and must pass the
 * metadata checks (`max_file_bytes`), the ACL check and content validation on its descriptor, and is read with
 * `readSettled` (nothing about the file or its name changed between the checks and the read).
 *
 * @param rootFd open descriptor of the trusted root (not closed here)
 * @param id     an id that already passed `validateId`
 * @returns the note's text
 * @throws BridgeError('not_found_or_denied', reason) for every refusal; BridgeError('unavailable',
 *   'entry_ceiling') when the listings exceed the raw entry ceiling. Every descriptor opened here is closed.
 */
export function readNoteById(
  rootFd: number,
  id: string,
  filter: NoteFilter,
  limits: ScanLimits,
  native: Native = requireNative(),
): string {
  return readVerifiedNote(rootFd, id, filter, limits, native).text;
}

/**
 * `readNoteById`, also giving the identity key (`identityKey`: device, inode, size, mtime, ctime) of the very
 * descriptor the text was read from, as checked before and after the read by `readSettled`.
 *
 * @throws as `readNoteById`
 */
export function readVerifiedNote(
  rootFd: number,
  id: string,
  filter: NoteFilter,
  limits: ScanLimits,
  native: Native = requireNative(),
): { text: string; key: IdentityKey } {
  const segments = id.split('/');
  if (segments.length > limits.maxDepth) deny('too_deep');
  for (const segment of segments) {
    const reason = segmentReason(segment, limits.names);
    if (reason !== null) deny(reason);
  }
  const last = segments[segments.length - 1]!;
  if (!isNoteName(last)) deny('not_markdown');
  if (!filter.allowsNote(id)) deny('denied');
  let dirId = '';
  for (let i = 0; i < segments.length - 1; i++) {
    dirId = i === 0 ? segments[0]! : `${dirId}/${segments[i]!}`;
    if (!filter.mayEnter(dirId)) deny('denied');
  }

  const uid = runningUid();
  const writers = limits.writers ?? NO_WRITERS;
  let rawEntries = 0;
  const rawCeiling = rawCeilingOf(limits);
  let rootStat: FileStat | undefined;
  /**
   * Requires an entry named exactly `segment` (byte comparison) in the directory `fd`, judged by the fstat `st`
   * (undefined: the root's), answered from the directory's kept names while it is unchanged (`readNames`).
   */
  const requireEntry = (fd: number, segment: string, _i: number, st: FileStat | undefined): void => {
    const dirStat = st ?? rootStat;
    const name = Buffer.from(segment, 'utf8');
    const max = rawCeiling - rawEntries;
    const seen =
      dirStat === undefined ? native.findEntry(fd, name, max) : readNames.find(native, fd, dirStat, name, max);
    if (seen === 'too_many') throw new BridgeError('unavailable', 'entry_ceiling');
    rawEntries += seen.count;
    if (!seen.found) deny('missing');
  };

  let dirFd = rootFd;
  try {
    rootStat = native.fstat(rootFd);
    const rootPlace = placeOf(rootStat);
    const end = walkDirs(native, rootFd, segments.slice(0, -1), {
      uid,
      place: rootPlace,
      beforeOpen: requireEntry,
      writers,
    });
    if (!end.ok) deny(end.reason);
    dirFd = end.fd;
    requireEntry(dirFd, last, segments.length - 1, end.stat);
    const kind = regularFileAtReason(native, dirFd, last);
    if (kind !== null) deny(kind);
    let fd: number;
    try {
      fd = native.openFileAt(dirFd, last);
    } catch (err) {
      deny(openFailureReason(native, dirFd, last, err, false));
    }
    try {
      const st = native.fstat(fd);
      const reason =
        noteStatReason(st, uid, rootPlace, limits.maxFileBytes, writers) ??
        fileDescriptorReason(native, fd, uid, writers, st.gid);
      if (reason !== null) deny(reason);
      const bytes = readSettled(native, dirFd, last, fd, st);
      if (bytes === null) deny('io_error');
      const decoded = decodeNoteText(bytes);
      if ('reason' in decoded) deny(decoded.reason);
      return { text: decoded.text, key: identityKey(st) };
    } finally {
      closeQuietly(native, fd);
    }
  } catch (err) {
    if (err instanceof NativeError) deny('io_error');
    throw err;
  } finally {
    if (dirFd !== rootFd) closeQuietly(native, dirFd);
  }
}
