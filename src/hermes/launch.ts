/**
 * The worker's launch gate (docs/HERMES.md §Worker program trust): `node <package>/dist/src/hermes/launch.js <cli>
 * worker` judges everything Node could load for the worker before any of it is loaded, then runs the CLI.
 *
 * The shim checks this file itself (and the node binary, the CLI, the package's `package.json` and every directory
 * above them) before it starts it; this file imports nothing but Node's built-in modules, so nothing it runs is
 * unchecked. It then walks the package's `dist/` and every `node_modules` directory Node may search from the
 * package (its own and `<A>/node_modules` for every directory A above it): every directory and regular file must be
 * owned by root or the running user with no group or world write bit; a symbolic link is judged by its target (with
 * the target's directories), a directory reached twice is walked once, so link cycles end. Mode bits only, as the
 * shim's own checks; `memory-bridge doctor` adds ACLs (src/hermes/program-trust.ts).
 *
 * The package's `package.json` (Node reads its "type") is judged the same way. Verdicts: trusted → the CLI runs with `process.argv` as `node <cli> worker` would have it. Untrusted → one line
 * `memory-bridge worker program refused: <reason>` on stderr (a reason code, never a path) and exit status
 * UNTRUSTED_EXIT, which the shim reports as `worker_program_untrusted`. `--check <cli>` prints the verdict as JSON
 * (`{"ok": true}` or `{"ok": false, "why", "path"}`) and runs nothing (tests and doctor-style checks).
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

/** Exit status of an untrusted program (EX_CONFIG of sysexits.h). */
export const UNTRUSTED_EXIT = 78;
/** Most directory entries one judgement visits (a generous bound on an operator-installed package tree). */
export const MAX_PROGRAM_ENTRIES = 1_000_000;
/** The CLI's place inside its package; the part before it is the package directory. */
const CLI_IN_PACKAGE = `${path.sep}${['dist', 'src', 'cli', 'main.js'].join(path.sep)}`;

/** One object that fails the rule. */
export class Untrusted extends Error {
  constructor(
    readonly where: string,
    readonly why: string,
  ) {
    super(why);
  }
}

const S_IWGRP = 0o020;
const S_IWOTH = 0o002;
const S_ISVTX = 0o1000;

/** Owner root or `uid`, no group or world write bit; the reason code otherwise. */
function modeProblem(st: fs.Stats, uid: number): string | null {
  if (st.uid !== uid && st.uid !== 0) return 'untrusted_owner';
  if (st.mode & S_IWGRP) return 'group_writable';
  if (st.mode & S_IWOTH) return 'world_writable';
  return null;
}

/**
 * Each directory from `dir` up to `/` (lstat, no link followed) passes `modeProblem`, except that a root-owned
 * sticky directory above the first level (such as /tmp) may be group or world writable.
 */
export function checkDirectoryChain(dir: string, uid: number): void {
  let first = true;
  for (;;) {
    const st = fs.lstatSync(dir);
    if (!st.isDirectory()) throw new Untrusted(dir, 'not_directory');
    const problem = modeProblem(st, uid);
    const sticky = st.uid === 0 && (st.mode & S_ISVTX) !== 0;
    if (problem !== null && !(problem !== 'untrusted_owner' && sticky && !first)) throw new Untrusted(dir, problem);
    const parent = path.dirname(dir);
    if (parent === dir) return;
    dir = parent;
    first = false;
  }
}

/** The package directory of `cli` and the trees Node may load from for it (only those that exist). */
export function packageTrees(cli: string): { pkg: string | null; trees: string[] } {
  if (!cli.endsWith(CLI_IN_PACKAGE)) return { pkg: null, trees: [] };
  const pkg = cli.slice(0, -CLI_IN_PACKAGE.length) || path.sep;
  const trees = [path.join(pkg, 'dist')];
  for (let dir = pkg; ; dir = path.dirname(dir)) {
    if (path.basename(dir) !== 'node_modules') {
      const candidate = path.join(dir, 'node_modules');
      if (fs.existsSync(candidate) || isLink(candidate)) trees.push(candidate);
    }
    if (path.dirname(dir) === dir) break;
  }
  return { pkg, trees };
}

function isLink(p: string): boolean {
  try {
    return fs.lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
}

/** One judgement: the directories seen (by device and inode) and the entries counted. */
class TreeWalk {
  private readonly seen = new Set<string>();
  private entries = 0;

  constructor(private readonly uid: number) {}

  tree(top: string): void {
    const st = fs.lstatSync(top);
    if (st.isSymbolicLink()) {
      this.link(top);
      return;
    }
    checkDirectoryChain(top, this.uid);
    this.directory(top, st);
  }

  private directory(start: string, startStat: fs.Stats): void {
    const stack: [string, fs.Stats][] = [[start, startStat]];
    while (stack.length > 0) {
      const [dir, st] = stack.pop()!;
      const key = `${st.dev}:${st.ino}`;
      if (this.seen.has(key)) continue;
      this.seen.add(key);
      if (!st.isDirectory()) throw new Untrusted(dir, 'not_directory');
      const problem = modeProblem(st, this.uid);
      if (problem !== null) throw new Untrusted(dir, problem);
      const names = fs.readdirSync(dir);
      this.entries += names.length;
      if (this.entries > MAX_PROGRAM_ENTRIES) throw new Untrusted(dir, 'too_many_entries');
      for (const name of names) {
        const entry = path.join(dir, name);
        const est = fs.lstatSync(entry);
        if (est.isSymbolicLink()) this.link(entry);
        else if (est.isDirectory()) stack.push([entry, est]);
        else if (est.isFile()) {
          const bad = modeProblem(est, this.uid);
          if (bad !== null) throw new Untrusted(entry, bad);
        }
        // A FIFO, socket or device is nothing Node would load as code: not judged.
      }
    }
  }

  /** One file Node reads (the package's package.json), a link judged by its target. */
  file(at: string): void {
    const target = fs.realpathSync(at);
    checkDirectoryChain(path.dirname(target), this.uid);
    const st = fs.statSync(target);
    if (!st.isFile()) throw new Untrusted(target, 'not_regular');
    const bad = modeProblem(st, this.uid);
    if (bad !== null) throw new Untrusted(target, bad);
  }

  /** A symbolic link inside a tree: judge what it points to (a dangling link loads nothing). */
  private link(at: string): void {
    let target: string;
    try {
      target = fs.realpathSync(at);
    } catch {
      return;
    }
    const st = fs.lstatSync(target);
    checkDirectoryChain(path.dirname(target), this.uid);
    if (st.isDirectory()) this.directory(target, st);
    else if (st.isFile()) {
      const bad = modeProblem(st, this.uid);
      if (bad !== null) throw new Untrusted(target, bad);
    }
  }
}

/**
 * Judge the package trees of `cli` for the running user (`uid`, default the effective uid).
 *
 * @throws Untrusted for the first object that fails the rule; a failed system call (the tree changing under the
 *   walk, a permission error) is thrown as it is, and the gate treats it as untrusted too
 */
export function judgeProgram(cli: string, uid = process.geteuid?.() ?? 0): void {
  const walk = new TreeWalk(uid);
  const { pkg, trees } = packageTrees(cli);
  const manifest = pkg === null ? null : path.join(pkg, 'package.json');
  if (manifest !== null && (fs.existsSync(manifest) || isLink(manifest))) walk.file(manifest);
  for (const top of trees) walk.tree(top);
}

/** `launch.js <cli> worker` or `launch.js --check <cli>` (see the module comment). */
async function main(argv: readonly string[]): Promise<void> {
  const check = argv[0] === '--check';
  const cli = check ? argv[1] : argv[0];
  if (cli === undefined || !path.isAbsolute(cli)) {
    process.stderr.write('memory-bridge worker program refused: bad_arguments\n');
    process.exit(UNTRUSTED_EXIT);
  }
  let verdict: { ok: true } | { ok: false; why: string; path: string } = { ok: true };
  try {
    judgeProgram(cli);
  } catch (err) {
    verdict =
      err instanceof Untrusted
        ? { ok: false, why: err.why, path: err.where }
        : { ok: false, why: 'unreadable', path: cli };
  }
  if (check) {
    process.stdout.write(`${JSON.stringify(verdict)}\n`);
    return;
  }
  if (!verdict.ok) {
    process.stderr.write(`memory-bridge worker program refused: ${verdict.why}\n`);
    process.exit(UNTRUSTED_EXIT);
  }
  process.argv = [process.argv[0]!, cli, ...argv.slice(1)];
  await import(pathToFileURL(cli).href);
}

// Run as the program (never when a test imports the module for `judgeProgram`).
if (process.argv[1] !== undefined && pathToFileURL(process.argv[1]).href === import.meta.url) {
  await main(process.argv.slice(2));
}
