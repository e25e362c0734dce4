/**
 * Is the worker program the shim starts trusted the way notes are? (docs/HERMES.md, "Worker program trust")
 *
 * Everything Node would load for `<node> <cli> worker` must be owned by root or the running user, with no group or
 * world write bit and no ACL entry letting anyone else write: the node binary and the CLI (symbolic links followed
 * to their targets), every directory above them from `/`, the package's `package.json`, and every file and
 * directory under the package's `dist/` and under each `node_modules` directory Node may search from the package
 * (its own and `<A>/node_modules` for every directory A above it: Node's lookup of bare specifiers). The shim
 * applies the same rule with mode bits before it starts a worker; `doctor` uses this module, which adds ACLs and
 * names every failing path (up to a bound).
 */
import fs from 'node:fs';
import path from 'node:path';
import { type FileStat, type Native, NativeError } from '../../native/types.js';
import { BridgeError } from '../errors.js';
import { openTrustedDir } from '../trust/path.js';
import { closeQuietly, walkDirs } from '../trust/walk.js';
import { NO_WRITERS, type Writers } from '../trust/writers.js';
import { descriptorAclReason, isDirectory, isRegularFile, isSymlink, runningUid } from '../trust/rule.js';

/** One object that fails the rule: its absolute path and the reason code (src/errors.ts and doctor's REMEDIES). */
export interface ProgramProblem {
  path: string;
  reason: string;
}

/** Most problems reported by name; the walk goes on counting after that. */
export const MAX_NAMED_PROBLEMS = 5;
/** Most entries listed from one directory. */
const MAX_DIR_ENTRIES = 1_000_000;

/** Suffix of the CLI inside its package; the part before it is the package root. */
const CLI_IN_PACKAGE = '/dist/src/cli/main.js';

/**
 * The reason code of a failed check on one object. Anything but a refusal or a failed system call on that object
 * (descriptor exhaustion, a bug) is thrown on: it says nothing about the object and must not read as a verdict.
 */
function reasonOf(err: unknown): string {
  if (err instanceof BridgeError) return err.reason;
  if (err instanceof NativeError) return err.code === 'ENOENT' ? 'missing' : 'io_error';
  throw err;
}

/**
 * The first directory on `absPath` (from `/` down) that fails the trust walk, for pointing at the culprit.
 * A sticky temp directory is only reported when it is the last component (it is accepted as an ancestor).
 * `writers` (the memory root's named writers) apply to `absPath` itself only, never to the directories above it.
 */
export function firstUntrustedDir(
  absPath: string,
  native: Native,
  writers: Writers = NO_WRITERS,
): { dir: string; reason: string } | undefined {
  const segments = absPath === '/' ? [] : absPath.slice(1).split('/');
  for (let i = 0; i <= segments.length; i++) {
    const dir = `/${segments.slice(0, i).join('/')}`;
    try {
      const own = i === segments.length ? writers : NO_WRITERS;
      closeQuietly(native, openTrustedDir(dir, 'root', native, undefined, own));
    } catch (err) {
      const reason = reasonOf(err);
      if (reason === 'sticky_tmp' && i < segments.length) continue;
      return { dir, reason };
    }
  }
  return undefined;
}

/** Owner, mode and ACL of one open descriptor (not the type): the reason, or null when trusted. */
function descriptorProblem(native: Native, fd: number, st: FileStat, uid: number): string | null {
  if (st.uid !== 0 && st.uid !== uid) return 'untrusted_owner';
  const acl = descriptorAclReason(native, fd, uid);
  if (acl !== null) return acl;
  if ((st.mode & 0o020) !== 0) return 'group_writable';
  if ((st.mode & 0o002) !== 0) return 'world_writable';
  return null;
}

/**
 * The problem with one program file: its directory must pass the trust walk from `/` (`openTrustedDir`), and the
 * file, opened without following links, must be a regular file passing the owner, mode and ACL rule (hard links
 * are allowed: binaries have them). A symbolic link is judged by its directory and then by its resolved target.
 */
export function programFileProblem(file: string, native: Native, depth = 0): ProgramProblem | undefined {
  const dir = path.posix.dirname(file);
  let dirFd: number;
  try {
    dirFd = openTrustedDir(dir, 'root', native);
  } catch (err) {
    const culprit = firstUntrustedDir(dir, native);
    return culprit === undefined ? { path: dir, reason: reasonOf(err) } : { path: culprit.dir, reason: culprit.reason };
  }
  try {
    const name = path.posix.basename(file);
    const st = native.statAt(dirFd, name);
    if (isSymlink(st)) {
      if (depth > 8) return { path: file, reason: 'symlink' };
      let target: string;
      try {
        target = fs.realpathSync(file);
      } catch {
        return { path: file, reason: 'missing' };
      }
      return programFileProblem(target, native, depth + 1);
    }
    if (!isRegularFile(st)) return { path: file, reason: 'not_regular' };
    const fd = native.openFileAt(dirFd, name);
    try {
      const fst = native.fstat(fd);
      if (!isRegularFile(fst)) return { path: file, reason: 'not_regular' };
      const reason = descriptorProblem(native, fd, fst, runningUid());
      return reason === null ? undefined : { path: file, reason };
    } finally {
      closeQuietly(native, fd);
    }
  } catch (err) {
    return { path: file, reason: reasonOf(err) };
  } finally {
    closeQuietly(native, dirFd);
  }
}

/**
 * The package directory of `cli` and the trees whose whole content Node may load for the worker: `<package>/dist`,
 * `<package>/node_modules` and `<A>/node_modules` for every directory A above the package, where they exist. A CLI
 * outside the `dist/src/cli/main.js` layout has no package.
 */
export function packageTrees(cli: string): { pkg: string; trees: string[] } | undefined {
  if (!cli.endsWith(CLI_IN_PACKAGE)) return undefined;
  const pkg = cli.slice(0, -CLI_IN_PACKAGE.length) || '/';
  const trees = [path.posix.join(pkg, 'dist')];
  let dir = pkg;
  for (;;) {
    if (path.posix.basename(dir) !== 'node_modules') {
      const candidate = path.posix.join(dir, 'node_modules');
      let exists = true;
      try {
        fs.lstatSync(candidate);
      } catch {
        exists = false;
      }
      if (exists) trees.push(candidate);
    }
    const parent = path.posix.dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return { pkg, trees };
}

/** Collects problems (the first MAX_NAMED_PROBLEMS by path, all of them counted). */
class Problems {
  readonly named: ProgramProblem[] = [];
  count = 0;
  add(problem: ProgramProblem): void {
    this.count++;
    if (this.named.length < MAX_NAMED_PROBLEMS) this.named.push(problem);
  }
}

const nameDecoder = new TextDecoder('utf-8', { fatal: true });

/**
 * Walk one tree below the open, already judged directory `fd` at `absPath`: every subdirectory is opened without
 * following links and judged on its descriptor (owner, mode, ACL); every regular file is opened and judged the same
 * way; a symbolic link is judged by its target (`programFileProblem` for a file, a walk from `/` for a directory).
 * Directories are visited once (device and inode), so link cycles end.
 */
function walkTree(
  native: Native,
  fd: number,
  absPath: string,
  uid: number,
  seen: Set<string>,
  problems: Problems,
): void {
  const listed = native.listDir(fd, MAX_DIR_ENTRIES);
  if (listed === 'too_many') {
    problems.add({ path: absPath, reason: 'entry_ceiling' });
    return;
  }
  for (const entry of listed) {
    let name: string;
    try {
      name = nameDecoder.decode(entry.name);
    } catch {
      continue; // Nothing imports a name that is not UTF-8.
    }
    const child = absPath === '/' ? `/${name}` : `${absPath}/${name}`;
    try {
      const st = native.statAt(fd, name);
      if (isSymlink(st)) {
        linkProblem(native, child, uid, seen, problems);
      } else if (isDirectory(st)) {
        const key = `${st.dev}:${st.ino}`;
        if (seen.has(key)) continue;
        seen.add(key);
        // The shared descriptor walk (docs/TRUST.md §Walk): opened no-follow from its judged parent, then judged.
        const end = walkDirs(native, fd, [name], { uid });
        if (!end.ok) problems.add({ path: child, reason: end.reason });
        else {
          try {
            walkTree(native, end.fd, child, uid, seen, problems);
          } finally {
            closeQuietly(native, end.fd);
          }
        }
      } else if (isRegularFile(st)) {
        const fileFd = native.openFileAt(fd, name);
        try {
          const reason = descriptorProblem(native, fileFd, native.fstat(fileFd), uid);
          if (reason !== null) problems.add({ path: child, reason });
        } finally {
          closeQuietly(native, fileFd);
        }
      }
      // A FIFO, socket or device is nothing Node loads as code: not judged.
    } catch (err) {
      problems.add({ path: child, reason: reasonOf(err) });
    }
  }
}

/** A symbolic link inside a tree: judge its target (a dangling link loads nothing). */
function linkProblem(native: Native, link: string, uid: number, seen: Set<string>, problems: Problems): void {
  let target: string;
  try {
    target = fs.realpathSync(link);
  } catch {
    return;
  }
  let st: fs.Stats;
  try {
    st = fs.statSync(target);
  } catch {
    return;
  }
  if (st.isDirectory()) {
    walkTop(native, target, uid, seen, problems);
  } else {
    const problem = programFileProblem(target, native);
    if (problem !== undefined) problems.add(problem);
  }
}

/** Judge a tree's top directory from `/` (links above it followed to the real path), then walk it. */
function walkTop(native: Native, top: string, uid: number, seen: Set<string>, problems: Problems): void {
  let real: string;
  try {
    real = fs.realpathSync(top);
  } catch {
    return;
  }
  let fd: number;
  try {
    fd = openTrustedDir(real, 'root', native);
  } catch (err) {
    const culprit = firstUntrustedDir(real, native);
    problems.add(
      culprit === undefined ? { path: real, reason: reasonOf(err) } : { path: culprit.dir, reason: culprit.reason },
    );
    return;
  }
  try {
    const st = native.fstat(fd);
    const key = `${st.dev}:${st.ino}`;
    if (seen.has(key)) return;
    seen.add(key);
    walkTree(native, fd, real, uid, seen, problems);
  } finally {
    closeQuietly(native, fd);
  }
}

/**
 * Every problem with the program the shim starts (`node cli worker`), in this order: the node binary, the CLI,
 * the package's package.json, then the package trees (see `packageTrees`).
 *
 * @param node absolute node binary recorded at install
 * @param cli  absolute CLI recorded at install
 * @returns the first MAX_NAMED_PROBLEMS problems and how many there were in all (0: the program is trusted)
 */
export function workerProgramProblems(
  node: string,
  cli: string,
  native: Native,
): { named: ProgramProblem[]; count: number } {
  const problems = new Problems();
  for (const file of [node, cli]) {
    const problem = programFileProblem(file, native);
    if (problem !== undefined) problems.add(problem);
  }
  const pkg = packageTrees(cli);
  if (pkg !== undefined) {
    const manifest = path.posix.join(pkg.pkg, 'package.json');
    if (fs.existsSync(manifest)) {
      const problem = programFileProblem(manifest, native);
      if (problem !== undefined) problems.add(problem);
    }
    const uid = runningUid();
    const seen = new Set<string>();
    for (const tree of pkg.trees) walkTop(native, tree, uid, seen, problems);
  }
  return { named: problems.named, count: problems.count };
}
