/**
 * Install and uninstall the Hermes plugin directory `<home>/plugins/memory-bridge/` (docs/HERMES.md §Install).
 *
 * The directory holds `plugin.yaml`, `__init__.py` and `tools.json` (copied from the package's `plugin/`) and
 * `install.json`:
 *
 *   {"marker": "memory-bridge-plugin", "version": "<package version>", "node": "<absolute node binary>",
 *    "cli": "<absolute dist/src/cli/main.js>", "files": {"plugin.yaml": "<sha256>", "__init__.py": "<sha256>"},
 *    "timeout_seconds"?: <number>}
 *
 * `timeout_seconds` (only when `install --timeout` gave one) is the shim's per-call timeout; the environment
 * variable MEMORY_BRIDGE_TIMEOUT overrides it, and the shim clamps either to [MIN_TIMEOUT_SECONDS,
 * MAX_TIMEOUT_SECONDS].
 *
 * `install.json` is how the shim finds the worker without PATH, and its marker (together with `name:
 * memory-bridge` in plugin.yaml) is how we recognise our own directory. A directory without both is someone
 * else's and is never touched, with or without `--force`. Directories are 0700 and files 0600. The new directory
 * is built beside the target and renamed into place, so Hermes never sees a half-written plugin.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { syncDirectory, writeNewFile } from '../atomic-write.js';
import { API_REPORT_FILE } from './api-report.js';
import { PLUGIN_NAME, pluginDirOf } from './home.js';
import { VIEW_STATE_FILE } from './view-state.js';

/** The `marker` value in install.json (the shim checks the same string). */
export const INSTALL_MARKER = 'memory-bridge-plugin';
/** Files copied from the package's plugin/ directory. */
export const PLUGIN_FILES = ['plugin.yaml', '__init__.py', 'tools.json'] as const;
/**
 * Entries Python, Hermes, the shim or the worker add to a plugin directory on their own (not local changes): the
 * bytecode cache, the shim's report of the Hermes API it found (see api-report.ts) and the worker's record of its
 * warm-up (view-state.ts), with their temporary names while they are written.
 */
const TOLERATED_ENTRIES = new Set(['__pycache__', API_REPORT_FILE, VIEW_STATE_FILE]);
const isToleratedEntry = (name: string): boolean =>
  TOLERATED_ENTRIES.has(name) || name.startsWith(`.${API_REPORT_FILE}.`) || name.startsWith(`.${VIEW_STATE_FILE}.`);
const RECORD_FILE = 'install.json';
const MAX_RECORD_BYTES = 64 * 1024;

/** Bounds of the shim's per-call timeout in seconds (the shim's own constants are the same). */
export const MIN_TIMEOUT_SECONDS = 0.5;
export const MAX_TIMEOUT_SECONDS = 600;

/** What install.json says. */
export interface InstallRecord {
  marker: typeof INSTALL_MARKER;
  version: string;
  node: string;
  cli: string;
  files: Record<string, string>;
  timeout_seconds?: number;
}

/** Where the files to install come from. */
export interface InstallSource {
  /** The package's plugin/ directory (holds plugin.yaml and __init__.py). */
  pluginSourceDir: string;
  /** Absolute node binary the shim will start (normally process.execPath). */
  node: string;
  /** Absolute path of dist/src/cli/main.js. */
  cli: string;
  /** Package version (must equal plugin.yaml's version). */
  version: string;
  /** Per-call timeout for the shim, seconds, within [MIN_TIMEOUT_SECONDS, MAX_TIMEOUT_SECONDS]; omitted → shim default. */
  timeoutSeconds?: number;
}

/** The state of `<home>/plugins/memory-bridge`. */
export type PluginDirState =
  | { kind: 'absent' }
  | { kind: 'foreign'; why: string }
  | { kind: 'ours'; record: InstallRecord; modified: string[] };

/** An install or uninstall that must not proceed; `message` is for the operator (paths allowed). */
export class InstallError extends Error {
  override readonly name = 'InstallError';
  constructor(
    readonly reason: 'foreign_plugin' | 'modified_plugin' | 'no_home' | 'bad_source' | 'io_error' | 'unsafe_path',
    message: string,
  ) {
    super(message);
  }
}

function sha256(bytes: Buffer): string {
  return crypto.createHash('sha256').update(bytes).digest('hex');
}

/** The `name:` value of a plugin.yaml (top-level scalar), or undefined. Enough YAML for our own manifests. */
export function manifestName(text: string): string | undefined {
  for (const line of text.split(/\r?\n/)) {
    const m = /^name:\s*(.*?)\s*$/.exec(line);
    if (m === null) continue;
    let value = m[1]!.replace(/\s+#.*$/, '');
    if (/^(["']).*\1$/.test(value)) value = value.slice(1, -1);
    return value;
  }
  return undefined;
}

/** The `version:` value of a plugin.yaml, or undefined. */
export function manifestVersion(text: string): string | undefined {
  const m = /^version:\s*["']?([^"'\s#]+)["']?\s*(?:#.*)?$/m.exec(text);
  return m?.[1];
}

function readSmall(file: string, limit: number): Buffer | undefined {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile() || st.size > limit) return undefined;
    return fs.readFileSync(fd);
  } catch {
    return undefined;
  } finally {
    fs.closeSync(fd);
  }
}

/** Parse install.json bytes; undefined unless it carries our marker and well-formed fields. */
export function parseInstallRecord(bytes: Buffer): InstallRecord | undefined {
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const r = value as Record<string, unknown>;
  if (r.marker !== INSTALL_MARKER) return undefined;
  if (typeof r.version !== 'string' || typeof r.node !== 'string' || typeof r.cli !== 'string') return undefined;
  const files = r.files;
  if (typeof files !== 'object' || files === null) return undefined;
  const hashes: Record<string, string> = {};
  for (const [k, v] of Object.entries(files)) {
    if (typeof v !== 'string') return undefined;
    hashes[k] = v;
  }
  const record: InstallRecord = { marker: INSTALL_MARKER, version: r.version, node: r.node, cli: r.cli, files: hashes };
  if (typeof r.timeout_seconds === 'number') record.timeout_seconds = r.timeout_seconds;
  return record;
}

/**
 * Look at `<home>/plugins/memory-bridge` without changing anything.
 * Ours = a real directory (not a symlink) whose plugin.yaml says `name: memory-bridge` and whose install.json
 * carries our marker. `modified` lists what differs from the recorded install (edited files, extra entries).
 */
export function inspectPluginDir(dir: string): PluginDirState {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'absent' };
    return { kind: 'foreign', why: 'cannot be inspected' };
  }
  if (st.isSymbolicLink()) return { kind: 'foreign', why: 'is a symbolic link' };
  if (!st.isDirectory()) return { kind: 'foreign', why: 'is not a directory' };
  const manifest = readSmall(path.join(dir, 'plugin.yaml'), MAX_RECORD_BYTES);
  if (manifest === undefined) return { kind: 'foreign', why: 'has no readable plugin.yaml' };
  const name = manifestName(manifest.toString('utf8'));
  if (name !== PLUGIN_NAME) return { kind: 'foreign', why: `has a plugin.yaml naming ${JSON.stringify(name ?? '')}` };
  const recordBytes = readSmall(path.join(dir, RECORD_FILE), MAX_RECORD_BYTES);
  const record = recordBytes === undefined ? undefined : parseInstallRecord(recordBytes);
  if (record === undefined) return { kind: 'foreign', why: 'has no memory-bridge install record (install.json)' };

  const modified: string[] = [];
  for (const file of PLUGIN_FILES) {
    const bytes = readSmall(path.join(dir, file), 16 * 1024 * 1024);
    if (bytes === undefined || sha256(bytes) !== record.files[file]) modified.push(file);
  }
  for (const entry of fs.readdirSync(dir)) {
    if (entry === RECORD_FILE || (PLUGIN_FILES as readonly string[]).includes(entry) || isToleratedEntry(entry))
      continue;
    modified.push(entry);
  }
  return { kind: 'ours', record, modified };
}

/** One file the install writes. */
export interface PlannedFile {
  name: string;
  bytes: Buffer;
  mode: number;
}

/** What `install` would do. */
export interface InstallPlan {
  home: string;
  target: string;
  /** create: nothing there; replace: our own older or different install; unchanged: already identical. */
  action: 'create' | 'replace' | 'unchanged';
  files: PlannedFile[];
  record: InstallRecord;
  /** Present when replacing: what differed from the recorded install (forced). */
  replacedChanges: string[];
  /** Things the operator should fix that do not stop the install (a home others can write). */
  warnings: string[];
}

/**
 * Refuse a `<home>/plugins` that is anything but a real directory (or absent): a symbolic link there would make
 * install write, or uninstall delete, somewhere outside the home. The home itself may be reached through links
 * (Hermes resolves it the same way); nothing below it may be one. lstat(2), so links are seen, not followed.
 *
 * @throws InstallError `unsafe_path`
 */
export function checkPluginsDir(home: string): void {
  const pluginsDir = path.dirname(pluginDirOf(home));
  let st: fs.Stats;
  try {
    st = fs.lstatSync(pluginsDir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw new InstallError(
      'io_error',
      `${pluginsDir} cannot be inspected (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  if (st.isSymbolicLink()) {
    throw new InstallError(
      'unsafe_path',
      `${pluginsDir} is a symbolic link; memory-bridge never installs or uninstalls through one. Replace it with a real directory (mkdir -m 700) holding the plugins.`,
    );
  }
  if (!st.isDirectory()) throw new InstallError('unsafe_path', `${pluginsDir} is not a directory`);
}

/** Warnings about the home itself: group- or world-writable homes let others swap the plugin directory. */
function homeWarnings(home: string, st: fs.Stats): string[] {
  if ((st.mode & 0o022) === 0) return [];
  return [
    `the Hermes home ${home} is writable by group or others (mode 0${(st.mode & 0o7777).toString(8)}), so they could replace the plugin Hermes loads: chmod go-w ${home}`,
  ];
}

/** Build the three files from the package. */
function buildFiles(source: InstallSource): { files: PlannedFile[]; record: InstallRecord } {
  for (const p of [source.node, source.cli, source.pluginSourceDir]) {
    if (!path.isAbsolute(p)) throw new InstallError('bad_source', `not an absolute path: ${p}`);
  }
  if (!fs.existsSync(source.cli)) {
    throw new InstallError(
      'bad_source',
      `the CLI ${source.cli} does not exist (build the package first: npm run build)`,
    );
  }
  const files: PlannedFile[] = [];
  const hashes: Record<string, string> = {};
  for (const name of PLUGIN_FILES) {
    const bytes = readSmall(path.join(source.pluginSourceDir, name), 16 * 1024 * 1024);
    if (bytes === undefined) throw new InstallError('bad_source', `missing ${path.join(source.pluginSourceDir, name)}`);
    files.push({ name, bytes, mode: 0o600 });
    hashes[name] = sha256(bytes);
  }
  const manifest = files[0]!.bytes.toString('utf8');
  if (manifestName(manifest) !== PLUGIN_NAME || manifestVersion(manifest) !== source.version) {
    throw new InstallError('bad_source', `plugin.yaml must name ${PLUGIN_NAME} at version ${source.version}`);
  }
  const record: InstallRecord = {
    marker: INSTALL_MARKER,
    version: source.version,
    node: source.node,
    cli: source.cli,
    files: hashes,
  };
  if (source.timeoutSeconds !== undefined) {
    const t = source.timeoutSeconds;
    if (!Number.isFinite(t) || t < MIN_TIMEOUT_SECONDS || t > MAX_TIMEOUT_SECONDS) {
      throw new InstallError(
        'bad_source',
        `the timeout must be between ${MIN_TIMEOUT_SECONDS} and ${MAX_TIMEOUT_SECONDS} seconds`,
      );
    }
    record.timeout_seconds = t;
  }
  files.push({ name: RECORD_FILE, bytes: Buffer.from(`${JSON.stringify(record, null, 2)}\n`, 'utf8'), mode: 0o600 });
  return { files, record };
}

/**
 * When `dir` is a copy of exactly this package's plugin files without an install record (what `hermes plugins
 * install memory-bridge` leaves from the plugin catalog, docs/HERMES.md §Plugin catalog): a real directory whose
 * plugin.yaml and __init__.py are byte for byte the ones `files` would install and that holds no install.json. Then
 * the entries besides those (and the tolerated ones) are returned, else undefined. Such a directory holds nothing
 * but our own code, so `install` may replace it with a full install.
 */
function catalogCopyExtras(dir: string, files: PlannedFile[]): string[] | undefined {
  try {
    if (!fs.lstatSync(dir).isDirectory() || fs.existsSync(path.join(dir, RECORD_FILE))) return undefined;
    for (const f of files) {
      if (f.name === RECORD_FILE) continue;
      const bytes = readSmall(path.join(dir, f.name), 16 * 1024 * 1024);
      if (bytes === undefined || !bytes.equals(f.bytes)) return undefined;
    }
    return fs
      .readdirSync(dir)
      .filter((e) => !(PLUGIN_FILES as readonly string[]).includes(e) && !isToleratedEntry(e))
      .sort();
  } catch {
    return undefined;
  }
}

function sameAsInstalled(dir: string, files: PlannedFile[]): boolean {
  try {
    if ((fs.lstatSync(dir).mode & 0o7777) !== 0o700) return false;
    for (const f of files) {
      const p = path.join(dir, f.name);
      const st = fs.lstatSync(p);
      if (!st.isFile() || (st.mode & 0o7777) !== f.mode) return false;
      if (!fs.readFileSync(p).equals(f.bytes)) return false;
    }
    return true;
  } catch {
    return false;
  }
}

/**
 * Decide what installing into `home` means, without writing anything.
 *
 * @throws InstallError `no_home` when the home is not an existing directory, `foreign_plugin` when the target is
 *   not ours (never overridable), `modified_plugin` when our own install has local changes and `force` is false,
 *   `bad_source` when the package is incomplete
 */
export function planInstall(home: string, source: InstallSource, options: { force?: boolean } = {}): InstallPlan {
  let homeStat: fs.Stats;
  try {
    homeStat = fs.statSync(home);
  } catch {
    throw new InstallError('no_home', `the Hermes home ${home} does not exist (run Hermes once, or pass --home)`);
  }
  if (!homeStat.isDirectory()) throw new InstallError('no_home', `the Hermes home ${home} is not a directory`);
  checkPluginsDir(home);
  const warnings = homeWarnings(home, homeStat);
  const target = pluginDirOf(home);
  const { files, record } = buildFiles(source);
  const state = inspectPluginDir(target);
  const copy = state.kind === 'foreign' ? catalogCopyExtras(target, files) : undefined;
  if (copy !== undefined) {
    if (copy.length > 0 && options.force !== true) {
      throw new InstallError(
        'modified_plugin',
        `${target} is a copy of this memory-bridge plugin without install.json (as Hermes's plugin catalog installs it) with other entries (${copy.join(', ')}); rerun with --force to replace it.`,
      );
    }
    return { home, target, action: 'replace', files, record, replacedChanges: copy, warnings };
  }
  if (state.kind === 'foreign') {
    throw new InstallError(
      'foreign_plugin',
      `${target} belongs to a different plugin (it ${state.why}); it was left untouched. Remove or rename it yourself if it is not needed.`,
    );
  }
  if (state.kind === 'absent') return { home, target, action: 'create', files, record, replacedChanges: [], warnings };
  if (sameAsInstalled(target, files) && state.modified.length === 0) {
    return { home, target, action: 'unchanged', files, record, replacedChanges: [], warnings };
  }
  if (state.modified.length > 0 && options.force !== true) {
    throw new InstallError(
      'modified_plugin',
      `${target} is a memory-bridge install with local changes (${state.modified.join(', ')}); rerun with --force to replace it.`,
    );
  }
  return { home, target, action: 'replace', files, record, replacedChanges: state.modified, warnings };
}

/** A fresh, unused name beside the target (hidden, so it is never mistaken for a plugin). */
function sideName(target: string, tag: string): string {
  return path.join(
    path.dirname(target),
    `.${PLUGIN_NAME}.${tag}-${process.pid}-${crypto.randomBytes(6).toString('hex')}`,
  );
}

/**
 * Carry out a plan made by `planInstall`. `unchanged` writes nothing. The new directory is assembled beside the
 * target and renamed into place; a replaced install is first renamed aside, then removed.
 */
export function applyInstall(plan: InstallPlan): void {
  if (plan.action === 'unchanged') return;
  const pluginsDir = path.dirname(plan.target);
  checkPluginsDir(plan.home); // again: it may have changed since the plan was made
  if (!fs.existsSync(pluginsDir)) {
    fs.mkdirSync(pluginsDir, { mode: 0o700 });
    fs.chmodSync(pluginsDir, 0o700);
  }
  const staging = sideName(plan.target, 'new');
  fs.mkdirSync(staging, { mode: 0o700 });
  try {
    fs.chmodSync(staging, 0o700);
    for (const f of plan.files) writeNewFile(path.join(staging, f.name), f.bytes, f.mode);
    syncDirectory(staging, 'ignore');
    if (plan.action === 'create') {
      fs.renameSync(staging, plan.target);
    } else {
      // Check again right before replacing: the directory must still be ours.
      if (inspectPluginDir(plan.target).kind !== 'ours' && catalogCopyExtras(plan.target, plan.files) === undefined) {
        throw new InstallError('foreign_plugin', `${plan.target} changed while installing; it was left untouched`);
      }
      const old = sideName(plan.target, 'old');
      fs.renameSync(plan.target, old);
      try {
        fs.renameSync(staging, plan.target);
      } catch (err) {
        fs.renameSync(old, plan.target);
        throw err;
      }
      fs.rmSync(old, { recursive: true, force: true });
    }
    syncDirectory(pluginsDir, 'ignore');
  } catch (err) {
    fs.rmSync(staging, { recursive: true, force: true });
    throw err;
  }
}

/** What `uninstall` found and did. */
export interface UninstallOutcome {
  target: string;
  removed: boolean;
  /** Local changes that were removed with it. */
  modified: string[];
}

/**
 * Remove `<home>/plugins/memory-bridge` when it is ours; do nothing when it is absent.
 *
 * @throws InstallError `foreign_plugin` when the directory is not ours (it is left untouched), `unsafe_path` when
 *   `<home>/plugins` is a symbolic link or not a directory
 */
export function uninstall(home: string, options: { dryRun?: boolean } = {}): UninstallOutcome {
  checkPluginsDir(home);
  const target = pluginDirOf(home);
  const state = inspectPluginDir(target);
  if (state.kind === 'absent') return { target, removed: false, modified: [] };
  if (state.kind === 'foreign') {
    throw new InstallError(
      'foreign_plugin',
      `${target} belongs to a different plugin (it ${state.why}); it was left untouched.`,
    );
  }
  if (options.dryRun !== true) {
    const old = sideName(target, 'old');
    fs.renameSync(target, old);
    fs.rmSync(old, { recursive: true, force: true });
  }
  return { target, removed: true, modified: state.modified };
}
