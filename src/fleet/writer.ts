/**
 * The export's hands inside `--out`: descriptor-relative directory walks, atomic file replacement, the manifest of
 * files the exporter wrote, and the run lock (docs/EXPORT.md §Writing safely, §Manifest and lock).
 *
 * Rules this module keeps:
 * - Nothing below `--out` is reached through a path string. Each directory is opened with
 *   openat(O_NOFOLLOW|O_DIRECTORY) from its already-checked parent and judged on its descriptor with the same rule
 *   as a memory root's subdirectories (src/trust/rule.ts `checkDirDescriptor`), so a symlinked or foreign directory
 *   stops the walk instead of redirecting it.
 * - A file is replaced only by renameat of a temp file written in the same directory. Temp names start with a dot
 *   and do not end in `.md`, so the reader (which skips hidden and non-Markdown names) never sees a partial note,
 *   even after SIGKILL; rename(2) replaces the visible name atomically.
 * - An existing object is overwritten or removed only when the manifest lists it and it is a regular file owned by
 *   the running user with one link. Symlinks, directories, other owners' files and unlisted files are left alone.
 * - Mode and group are set only on directories the export created itself (the manifest records them with their
 *   inode); a directory the operator made keeps its mode and group, and is used only when it passes the trust rule.
 */
import fs from 'node:fs';
import { randomBytes } from 'node:crypto';
import { NativeError, type FileStat, type Native } from '../../native/types.js';
import type { WriteNative } from '../../native/write-linux.js';
import { isRegularFile, onRootPlace, placeOf, readExactly, type RootPlace } from '../trust/rule.js';
import { closeQuietly, walkDirs } from '../trust/walk.js';
import type { Writers } from '../trust/writers.js';
import { isPortableName } from './layout.js';

const LOCK_EX = 2;
const LOCK_NB = 4;

/** Hidden name of the manifest in `--out`. */
export const MANIFEST_NAME = '.memory-bridge-manifest.json';
/** Hidden name of the manifest's temp file (fixed: the lock makes the exporter its only writer). */
export const MANIFEST_TEMP = '.memory-bridge-manifest.json.tmp';
/** Hidden name of the lock file in `--out`. */
export const LOCK_NAME = '.memory-bridge-export.lock';
/** Largest file the exporter reads back (its own notes and manifest). */
export const MAX_READBACK_BYTES = 256 * 1024 * 1024;

const TEMP_RE = /^\.mb-tmp-[0-9a-f]{16}$/;

/** A fresh temp name: hidden, no `.md` suffix, 64 random bits. */
export function tempName(): string {
  return `.mb-tmp-${randomBytes(8).toString('hex')}`;
}

/** A place in the tree the export may not touch: a symlink, a foreign or unlisted file, an untrusted directory. */
export class BlockedError extends Error {
  override readonly name = 'BlockedError';
  constructor(
    readonly relPath: string,
    readonly why: string,
  ) {
    super(`${relPath}: ${why}`);
  }
}

/** Modes and group for what the export creates: 0700/0600 by default, 0750/0640 with `--group`. */
export interface TreeModes {
  dir: number;
  file: number;
  /** Group id to give every created object, or null to keep the creator's group. */
  gid: number | null;
  /**
   * Whose writes the directories below `--out` may carry besides root and the exporter: with `--group`, that group
   * as a named writer group, so a team folder (group-writable by that group) is usable exactly as a memory policy
   * naming the group would trust it (docs/TRUST.md §Named writers). None otherwise.
   */
  writers?: Writers;
}

/** One file the exporter wrote, as the manifest records it. */
export interface ManifestEntry {
  /** Source key (see SourceRead.key): mirror removal only touches entries of the run's own source. */
  source: string;
  /** The card's domain as written in its front matter (after redaction): the `--domain` scope test. */
  domain: string;
  /** Normalised point id. */
  point: string;
  kind: 'current' | 'history';
}

/**
 * The manifest: every file the exporter wrote and still owns, the directories it created, plus temp files of a run
 * that did not finish.
 */
export interface Manifest {
  version: 1;
  files: Record<string, ManifestEntry>;
  /**
   * Directories the export created: relative path → identity (`<inode>-<birth time ns>`, or the inode alone where the
   * filesystem reports no birth time, so a directory replaced under a reused inode number is not mistaken for
   * ours), or `""` for one a run
   * planned to create but may not have (it was killed first). Manifests of earlier versions have none, so their
   * directories are treated as the operator's (mode and group left alone).
   */
  dirs: Record<string, string>;
  temps: string[];
}

/** An empty manifest (a fresh `--out`). */
export function emptyManifest(): Manifest {
  return { version: 1, files: {}, dirs: {}, temps: [] };
}

/** True for a root-relative path the exporter could have written: 3 or 4 portable segments, a `.md` file. */
function plausibleFile(rel: string): boolean {
  const segs = rel.split('/');
  return (
    (segs.length === 3 || (segs.length === 4 && segs[2] === 'history')) &&
    segs.every(isPortableName) &&
    rel.endsWith('.md')
  );
}

/** True for a directory the exporter could have made: 1–3 portable segments, the third only `history`. */
function plausibleDir(rel: string): boolean {
  const segs = rel.split('/');
  return (
    segs.length >= 1 && segs.length <= 3 && (segs.length < 3 || segs[2] === 'history') && segs.every(isPortableName)
  );
}

/** True for a temp path the exporter could have made: 0–3 portable directories, then a temp name. */
function plausibleTemp(rel: string): boolean {
  const segs = rel.split('/');
  const last = segs.pop() ?? '';
  return segs.length <= 3 && segs.every(isPortableName) && TEMP_RE.test(last);
}

/**
 * Parse manifest bytes. Entries whose path could not have come from the exporter are dropped (so a damaged
 * manifest can never point removal outside the layout). Throws Error when the JSON is not a manifest at all.
 */
export function parseManifest(bytes: Buffer): Manifest {
  const raw = JSON.parse(bytes.toString('utf8')) as unknown;
  if (typeof raw !== 'object' || raw === null || (raw as { version?: unknown }).version !== 1)
    throw new Error('not a manifest');
  const r = raw as { files?: unknown; temps?: unknown };
  const m = emptyManifest();
  if (typeof r.files === 'object' && r.files !== null) {
    for (const [rel, e] of Object.entries(r.files as Record<string, unknown>)) {
      const v = e as Partial<ManifestEntry> | null;
      if (!plausibleFile(rel) || v === null || typeof v !== 'object') continue;
      if (typeof v.source !== 'string' || typeof v.domain !== 'string' || typeof v.point !== 'string') continue;
      if (v.kind !== 'current' && v.kind !== 'history') continue;
      m.files[rel] = { source: v.source, domain: v.domain, point: v.point, kind: v.kind };
    }
  }
  const d = (raw as { dirs?: unknown }).dirs;
  if (typeof d === 'object' && d !== null && !Array.isArray(d)) {
    for (const [rel, ino] of Object.entries(d as Record<string, unknown>)) {
      if (plausibleDir(rel) && typeof ino === 'string' && /^(?:[0-9]{1,20}(?:-[0-9]{1,25})?)?$/.test(ino))
        m.dirs[rel] = ino;
    }
  }
  if (Array.isArray(r.temps)) m.temps = r.temps.filter((t): t is string => typeof t === 'string' && plausibleTemp(t));
  return m;
}

/** Identity of an open directory for Manifest.dirs: inode plus birth time (statx) where the filesystem has one. */
function dirIdentity(fd: number): string {
  const st = fs.fstatSync(fd, { bigint: true });
  return st.birthtimeNs > 0n ? `${st.ino}-${st.birthtimeNs}` : `${st.ino}`;
}

/** What is at a name: nothing, or a stat taken without following a symlink. */
export type Presence = { kind: 'absent' } | { kind: 'present'; stat: FileStat };

/**
 * One `--out` tree, opened and trusted by the caller (`openTrustedDir(out, 'out')`). Holds directory descriptors
 * by relative path; {@link close} releases them all. In dry-run mode nothing is created, written or removed.
 */
export class OutTree {
  private readonly dirs = new Map<string, number>();
  private readonly touched = new Set<number>();
  /** Directories the export created (see Manifest.dirs): relative path → inode, `""` while not yet confirmed. */
  private readonly ownDirs = new Map<string, string>();
  /** Directories this run planned to create (their `""` entries are never adopted when found already there). */
  private readonly plannedNow = new Set<string>();
  readonly uid: number;
  /** Device and mount of `--out`: the reader refuses notes on another filesystem or bind mount, so we never write there. */
  private readonly place: RootPlace;

  constructor(
    private readonly native: Native,
    private readonly wn: WriteNative,
    readonly outFd: number,
    private readonly modes: TreeModes,
    readonly dryRun: boolean,
  ) {
    this.uid = process.geteuid?.() ?? 0;
    this.place = placeOf(native.fstat(outFd));
    this.dirs.set('', outFd);
  }

  /** Stat `name` in `dirFd` without following a symlink. */
  presence(dirFd: number, name: string): Presence {
    try {
      return { kind: 'present', stat: this.native.statAt(dirFd, name) };
    } catch (e) {
      if (e instanceof NativeError && e.code === 'ENOENT') return { kind: 'absent' };
      throw e;
    }
  }

  /**
   * True when `st` is something the exporter may replace or remove: a regular file of ours with one link, on
   * `--out`'s own device and mount (a file bind-mounted into the tree is someone else's object).
   */
  isOwnFile(st: FileStat): boolean {
    return isRegularFile(st) && st.uid === this.uid && st.nlink === 1 && onRootPlace(st, this.place);
  }

  /**
   * Open the directory `segs` below `--out`, one component at a time (O_NOFOLLOW), creating missing ones when
   * `create` (mode and group from {@link TreeModes}). Every directory must pass the trust rule on its descriptor.
   * Returns null when a directory is missing and not created (lookups and dry runs).
   * @throws BlockedError for a symlink, a non-directory, or an untrusted directory on the way
   */
  openDir(segs: readonly string[], create: boolean): number | null {
    // Continue below the deepest directory of `segs` this tree already opened and judged.
    let start = 0;
    let fd = this.outFd;
    let base = '';
    for (let i = 0; i < segs.length; i++) {
      const rel = i === 0 ? segs[0]! : `${base}/${segs[i]!}`;
      const known = this.dirs.get(rel);
      if (known === undefined) break;
      fd = known;
      base = rel;
      start = i + 1;
    }
    if (start === segs.length) return fd;
    const relOf = (rel: string): string => (base === '' ? rel : `${base}/${rel}`);
    let made = '';
    const end = walkDirs(this.native, fd, segs.slice(start), {
      uid: this.uid,
      place: this.place,
      writers: this.modes.writers,
      create: (parentFd, name, _i, rel) => {
        if (!create || this.dryRun) return false;
        try {
          this.wn.mkdirAt(parentFd, name, 0o700);
          made = relOf(rel);
        } catch (err) {
          if (!(err instanceof NativeError) || err.code !== 'EEXIST') throw err;
        }
        return true;
      },
      prepare: (childFd, _i, rel) => {
        const path = relOf(rel);
        if (this.claimDir(path, childFd, made === path)) this.fixMode(childFd, this.modes.dir);
      },
      keep: (childFd, _i, rel) => {
        this.dirs.set(relOf(rel), childFd);
        return true;
      },
    });
    if (!end.ok) {
      const at = relOf(segs.slice(start, start + end.at + 1).join('/'));
      if (end.stage === 'judge') throw new BlockedError(at, `untrusted directory (${end.reason})`);
      if (end.reason === 'missing' && (!create || this.dryRun)) return null;
      throw new BlockedError(at, 'not a plain directory (symlink or other object)');
    }
    this.dirs.set(relOf(segs.slice(start).join('/')), end.fd);
    return end.fd;
  }

  /**
   * Decide whether the directory open on `fd` at `rel` is one the export created, updating the record: true when
   * it was just made (`made`, mkdirat succeeded), or the manifest lists it with this inode, or lists it as planned
   * by an earlier run that was killed before confirming it. A recorded inode that no longer matches (the operator
   * replaced the directory) drops the record.
   */
  private claimDir(rel: string, fd: number, made: boolean): boolean {
    const ino = dirIdentity(fd);
    const rec = this.ownDirs.get(rel);
    if (made || rec === ino || (rec === '' && !this.plannedNow.has(rel))) {
      this.ownDirs.set(rel, ino);
      return true;
    }
    this.ownDirs.delete(rel);
    return false;
  }

  /**
   * Record that this run is about to create the missing directories on the way to `segs` (saved in the phase-1
   * manifest as `""`, so a directory made just before a SIGKILL is still known as ours at the next run). Existing
   * directories are not recorded. Never throws: a blocked path fails later, at the write.
   */
  planDirs(segs: readonly string[]): void {
    for (let i = 1; i <= segs.length; i++) {
      const rel = segs.slice(0, i).join('/');
      if (this.dirs.has(rel) || this.ownDirs.get(rel) === '') continue;
      let fd: number | null;
      try {
        fd = this.openDir(segs.slice(0, i), false);
      } catch {
        return;
      }
      if (fd !== null) continue;
      for (let j = i; j <= segs.length; j++) {
        const missing = segs.slice(0, j).join('/');
        if (!this.ownDirs.has(missing)) {
          this.ownDirs.set(missing, '');
          this.plannedNow.add(missing);
        }
      }
      return;
    }
  }

  /**
   * The directory record for the manifest. `final` drops planned entries this run never created (blocked or
   * raced), so only confirmed inodes and a killed run's plan survive.
   */
  dirRecord(final: boolean): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [rel, ino] of this.ownDirs) if (!(final && ino === '')) out[rel] = ino;
    return out;
  }

  /** Give an object of ours the configured mode and group (no-op for others' objects and in dry runs). */
  private fixMode(fd: number, mode: number): void {
    if (this.dryRun) return;
    const st = this.native.fstat(fd);
    if (st.uid !== this.uid) return;
    if (this.modes.gid !== null && st.gid !== this.modes.gid) fs.fchownSync(fd, -1, this.modes.gid);
    if ((st.mode & 0o7777) !== mode) fs.fchmodSync(fd, mode);
  }

  /**
   * Read a file of ours (checked again on the open descriptor: same inode as `st`, still ours).
   * @throws BlockedError when it changed identity or is too large
   */
  readOwn(dirFd: number, name: string, st: FileStat, rel: string): Buffer {
    if (st.size > MAX_READBACK_BYTES) throw new BlockedError(rel, 'too large to compare');
    const fd = this.native.openFileAt(dirFd, name);
    try {
      const now = this.native.fstat(fd);
      if (now.ino !== st.ino || now.dev !== st.dev || !this.isOwnFile(now))
        throw new BlockedError(rel, 'changed while being read');
      const bytes = readExactly(this.native, fd, now.size);
      if (bytes === null) throw new BlockedError(rel, 'changed while being read');
      return bytes;
    } finally {
      closeQuietly(this.native, fd);
    }
  }

  /** Bring an existing file of ours to the configured mode and group (used for unchanged notes). */
  fixFileMode(dirFd: number, name: string): void {
    if (this.dryRun) return;
    const fd = this.native.openFileAt(dirFd, name);
    try {
      this.fixMode(fd, this.modes.file);
    } finally {
      closeQuietly(this.native, fd);
    }
  }

  /**
   * Write `bytes` to `name` in `dirFd` atomically: create `temp` exclusively (O_EXCL|O_NOFOLLOW), set group and
   * mode, write, close, then renameat over `name`. The temp file is unlinked on any failure before the rename.
   * The caller has already decided that `name` is absent or a file of ours.
   *
   * No fsync per file: atomicity against a killed process needs none (the page cache is shared), and one fsync per
   * card costs milliseconds each on ext4. Durability against power loss comes from {@link syncAll} (one syncfs)
   * before the final manifest is saved.
   */
  writeAtomic(dirFd: number, name: string, temp: string, bytes: Buffer): void {
    if (this.dryRun) return;
    const fd = this.wn.createExclusive(dirFd, temp, 0o600);
    let renamed = false;
    try {
      try {
        this.fixMode(fd, this.modes.file);
        let off = 0;
        while (off < bytes.length) off += fs.writeSync(fd, bytes, off, bytes.length - off);
      } finally {
        closeQuietly(this.native, fd);
      }
      this.wn.renameAt(dirFd, temp, dirFd, name);
      renamed = true;
      this.touched.add(dirFd);
    } finally {
      if (!renamed) {
        try {
          this.wn.unlinkAt(dirFd, temp);
        } catch {
          // best effort: the manifest lists the temp, so the next run removes it
        }
      }
    }
  }

  /** Remove a file of ours: statAt again right before unlinkat; anything else there is left alone. */
  removeOwn(dirFd: number, name: string, rel: string): 'removed' | 'absent' {
    const p = this.presence(dirFd, name);
    if (p.kind === 'absent') return 'absent';
    if (!this.isOwnFile(p.stat)) throw new BlockedError(rel, 'not a file the export wrote');
    if (this.dryRun) return 'removed';
    this.wn.unlinkAt(dirFd, name);
    this.touched.add(dirFd);
    return 'removed';
  }

  /** Remove a leftover temp file of an earlier run (only our own regular files with a temp name). */
  removeTemp(rel: string): void {
    if (this.dryRun) return;
    const segs = rel.split('/');
    const name = segs.pop()!;
    if (!TEMP_RE.test(name)) return;
    let dirFd: number | null;
    try {
      dirFd = this.openDir(segs, false);
    } catch {
      return;
    }
    if (dirFd === null) return;
    const p = this.presence(dirFd, name);
    if (p.kind === 'present' && this.isOwnFile(p.stat)) this.wn.unlinkAt(dirFd, name);
  }

  /** Read the manifest; an absent one is empty. @throws Error when it exists but is not ours or not a manifest */
  loadManifest(): Manifest {
    const p = this.presence(this.outFd, MANIFEST_NAME);
    if (p.kind === 'absent') return emptyManifest();
    if (!this.isOwnFile(p.stat)) throw new Error(`${MANIFEST_NAME} is not a regular file owned by this user`);
    const m = parseManifest(this.readOwn(this.outFd, MANIFEST_NAME, p.stat, MANIFEST_NAME));
    for (const [rel, ino] of Object.entries(m.dirs)) this.ownDirs.set(rel, ino);
    return m;
  }

  /** Replace the manifest atomically (mode 0600: only the exporter needs it). */
  saveManifest(m: Manifest): void {
    if (this.dryRun) return;
    const t = this.presence(this.outFd, MANIFEST_TEMP);
    if (t.kind === 'present') {
      if (!this.isOwnFile(t.stat)) throw new BlockedError(MANIFEST_TEMP, 'not a file the export wrote');
      this.wn.unlinkAt(this.outFd, MANIFEST_TEMP);
    }
    const sorted: Manifest = { version: 1, files: {}, dirs: {}, temps: [...m.temps].sort() };
    for (const k of Object.keys(m.files).sort()) sorted.files[k] = m.files[k]!;
    for (const k of Object.keys(m.dirs).sort()) sorted.dirs[k] = m.dirs[k]!;
    const bytes = Buffer.from(`${JSON.stringify(sorted, null, 1)}\n`, 'utf8');
    const fd = this.wn.createExclusive(this.outFd, MANIFEST_TEMP, 0o600);
    try {
      fs.fchmodSync(fd, 0o600);
      let off = 0;
      while (off < bytes.length) off += fs.writeSync(fd, bytes, off, bytes.length - off);
      fs.fsyncSync(fd);
    } finally {
      closeQuietly(this.native, fd);
    }
    this.wn.renameAt(this.outFd, MANIFEST_TEMP, this.outFd, MANIFEST_NAME);
    fs.fsyncSync(this.outFd);
  }

  /**
   * Make every write, rename and unlink of this run durable with one syncfs on `--out`'s filesystem (when anything
   * changed). Called before the final manifest is saved, so the manifest never lists a file the disk lost.
   */
  async syncAll(): Promise<void> {
    if (this.dryRun || this.touched.size === 0) return;
    try {
      await this.wn.syncFs(this.outFd);
    } catch {
      // a failed syncfs loses durability against power loss, not consistency against a killed process
    }
    this.touched.clear();
  }

  /** Close every directory descriptor except `--out` itself (the caller owns that one). */
  close(): void {
    for (const [rel, fd] of this.dirs) if (rel !== '') closeQuietly(this.native, fd);
    this.dirs.clear();
  }
}

/**
 * Take the run lock: an exclusive flock on `LOCK_NAME` in `--out` (created 0600 if missing; it must be a regular
 * file of ours). Polls with LOCK_NB so the event loop keeps running while waiting; `onWait` is called once when
 * another export holds it. With `noWait` a held lock throws at once.
 *
 * @returns the lock descriptor, or null in a dry run where no lock file exists yet
 * @throws Error('locked') with `noWait`; BlockedError when the lock name is not a file of ours
 */
export async function acquireLock(
  native: Native,
  wn: WriteNative,
  outFd: number,
  opts: { noWait: boolean; dryRun: boolean; onWait: () => void },
): Promise<number | null> {
  const uid = process.geteuid?.() ?? 0;
  let fd: number;
  if (opts.dryRun) {
    try {
      fd = native.openFileAt(outFd, LOCK_NAME);
    } catch (e) {
      if (e instanceof NativeError && e.code === 'ENOENT') return null;
      throw new BlockedError(LOCK_NAME, 'not a file the export wrote');
    }
  } else {
    try {
      fd = wn.openOrCreate(outFd, LOCK_NAME, 0o600);
    } catch {
      throw new BlockedError(LOCK_NAME, 'not a file the export wrote');
    }
  }
  try {
    const st = native.fstat(fd);
    if (!isRegularFile(st) || st.uid !== uid) throw new BlockedError(LOCK_NAME, 'not a file the export wrote');
    let waited = false;
    for (;;) {
      try {
        native.flock(fd, LOCK_EX | LOCK_NB);
        return fd;
      } catch (e) {
        if (!(e instanceof NativeError) || e.code !== 'EWOULDBLOCK') throw e;
      }
      if (opts.noWait) throw new Error('locked');
      if (!waited) {
        waited = true;
        opts.onWait();
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  } catch (e) {
    closeQuietly(native, fd);
    throw e;
  }
}
