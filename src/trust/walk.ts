/**
 * The one descriptor walk (docs/TRUST.md §Walk): resolve a list of directory names from a directory
 * descriptor that was already judged, one component at a time, opening each with openat(O_NOFOLLOW|O_DIRECTORY)
 * relative to its judged parent and judging the new descriptor (fstat, owner and mode, device and mount, ACL)
 * before going further. Never a multi-component path string, never realpath: a symlink, a non-directory or an
 * untrusted directory anywhere on the way stops the walk with its reason. Built like Go's `os.Root` (`doInRoot`):
 * every caller that descends (the trusted path walk from `/`, the read tool's id walk, the scan's descent into a
 * subdirectory, the export's walk inside `--out`) goes through `walkDirs`, so the rule cannot drift between them.
 */
import { NativeError, type FileStat, type Native } from '../../native/types.js';
import type { Reason } from '../errors.js';
import { checkDirDescriptor, isSymlink, type RootPlace } from './rule.js';
import { NO_WRITERS, type Writers } from './writers.js';

/**
 * Maps a failed openat of one component to a reason: ELOOP means the component is a symlink (O_NOFOLLOW); ENOENT
 * `missing`; ENXIO on a file open is a socket (O_NONBLOCK) → `not_regular`; ENOTDIR on a directory open means a
 * symlink or a non-directory, told apart with a no-follow stat; anything else `io_error`.
 *
 * @param err the error the open threw
 * @throws `err` itself when it is not a `NativeError`: a `ResourceExhaustedError` (EMFILE, ENFILE, ENOMEM) says
 *   nothing about the component and must end the call as `unavailable` (docs/DESIGN.md "Running out of
 *   descriptors"), never become a skip or a refusal of this one entry
 */
export function openFailureReason(native: Native, dirfd: number, name: string, err: unknown, wantDir: boolean): Reason {
  if (!(err instanceof NativeError)) throw err;
  const code = err.code;
  if (code === 'ELOOP') return 'symlink';
  if (code === 'ENOENT') return 'missing';
  if (code === 'ENXIO' && !wantDir) return 'not_regular';
  if (code === 'ENOTDIR' && wantDir) {
    try {
      return isSymlink(native.statAt(dirfd, name)) ? 'symlink' : 'not_directory';
    } catch (statErr) {
      if (!(statErr instanceof NativeError)) throw statErr;
      return 'io_error';
    }
  }
  return 'io_error';
}

/** Closes a descriptor on a cleanup path, where a close error must not hide the error being handled. */
export function closeQuietly(native: Native, fd: number): void {
  try {
    native.close(fd);
  } catch {
    // Nothing to recover: the descriptor is released or was never valid.
  }
}

/** How `walkDirs` judges and what it does around each step. Only `uid` is required. */
export interface DirWalk {
  /** Running uid: a directory must be owned by it or by root. */
  uid: number;
  /** Below a memory root (or `--out`): every directory must be on this device and mount (`other_device`). */
  place?: RootPlace;
  /**
   * Named writers (docs/TRUST.md §Named writers) for the directories this walk judges: every one, or with
   * `writersLastOnly` only the last component (the memory root at the end of its walk from `/`, whose ancestors keep
   * the rule without writers). Default none.
   */
  writers?: Writers | undefined;
  writersLastOnly?: boolean;
  /**
   * Absolute path of the start descriptor, for a walk from `/`: the sticky-temp exception (docs/TRUST.md
   * §Directories) then applies to intermediate directories at exactly /tmp, /var/tmp and their /private forms.
   */
  absolute?: string;
  /**
   * Before names[i] is opened in `parentFd` (the read tool requires the name in the parent's listing; may throw).
   * `parentStat`: the fstat the walk judged `parentFd` by (undefined for `startFd`, which the caller judged).
   */
  beforeOpen?(parentFd: number, name: string, i: number, parentStat: FileStat | undefined): void;
  /**
   * names[i] does not exist (ENOENT): true after creating it, and the open is tried once more (the export's
   * missing directories); false or absent: the walk stops with `missing`.
   */
  create?(parentFd: number, name: string, i: number, rel: string): boolean;
  /** Before the descriptor of names[i] is judged (the export sets mode and group of a directory it created). */
  prepare?(fd: number, i: number, rel: string, created: boolean): void;
  /**
   * After names[i] passed: true when the caller takes the descriptor over (a memo or cache of judged directories),
   * so the walk does not close it when it moves on or fails. The last descriptor is always handed back.
   */
  keep?(fd: number, i: number, rel: string): boolean;
}

/**
 * Where a walk ended: the last directory's descriptor and fstat, or the first refusal — the component index,
 * whether its open failed (`open`) or its descriptor failed the rule (`judge`), and the reason.
 */
export type WalkEnd =
  | { ok: true; fd: number; stat: FileStat | undefined }
  | { ok: false; at: number; stage: 'open' | 'judge'; reason: Reason };

/**
 * Resolves `names` below the judged directory `startFd`, one component at a time (see the module comment).
 *
 * Per component: `beforeOpen`; openat no-follow as a directory (ENOENT with `create` returning true: once more);
 * `prepare`; `checkDirDescriptor` (directory, owner root or `uid`, no group/world write unless the sticky-temp
 * exception applies, `place` when given, no ACL write grant); then the parent is closed unless it is `startFd` or
 * was kept. On a refusal every descriptor the walk still owns is closed. `startFd` is never closed.
 *
 * @param names components, each one name (no `/`, not `.` or `..`: the binding refuses them, `io_error`)
 * @returns `{ ok: true, fd }` with the descriptor of the last component (the caller owns it unless `keep` took
 *   it), or `startFd` itself (and `stat` undefined) when `names` is empty; else the refusal
 * @throws NativeError when an fstat or a close fails (callers treat it as `io_error`); whatever the hooks throw
 */
export function walkDirs(native: Native, startFd: number, names: readonly string[], walk: DirWalk): WalkEnd {
  let fd = startFd;
  let owned = false;
  let rel = '';
  let stat: FileStat | undefined;
  try {
    for (let i = 0; i < names.length; i++) {
      const name = names[i]!;
      rel = i === 0 ? name : `${rel}/${name}`;
      walk.beforeOpen?.(fd, name, i, stat);
      let child: number;
      let created = false;
      try {
        child = native.openDirAt(fd, name);
      } catch (err) {
        const reason = openFailureReason(native, fd, name, err, true);
        if (reason !== 'missing' || walk.create?.(fd, name, i, rel) !== true)
          return { ok: false, at: i, stage: 'open', reason };
        created = true;
        try {
          child = native.openDirAt(fd, name);
        } catch (again) {
          return { ok: false, at: i, stage: 'open', reason: openFailureReason(native, fd, name, again, true) };
        }
      }
      if (owned) native.close(fd);
      fd = child;
      owned = true;
      walk.prepare?.(fd, i, rel, created);
      const sticky =
        walk.absolute === undefined
          ? undefined
          : { path: walk.absolute === '/' ? `/${rel}` : `${walk.absolute}/${rel}`, intermediate: i < names.length - 1 };
      const writers = walk.writersLastOnly === true && i < names.length - 1 ? NO_WRITERS : walk.writers;
      const checked = checkDirDescriptor(native, fd, walk.uid, walk.place, sticky, writers);
      if (checked.reason !== null) return { ok: false, at: i, stage: 'judge', reason: checked.reason };
      stat = checked.stat;
      if (i < names.length - 1 && walk.keep?.(fd, i, rel) === true) owned = false;
    }
    const end: WalkEnd = { ok: true, fd, stat };
    owned = false;
    return end;
  } finally {
    if (owned) closeQuietly(native, fd);
  }
}
