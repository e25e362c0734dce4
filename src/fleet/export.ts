/**
 * `export-fleet` end to end: trust `--out`, take the lock, read the whole source, then run the export's steps over
 * the read (src/fleet/export-run.ts: decide per card — invalid, expired, secret, unchanged, changed, new — record
 * the plan in the manifest, write, keep history, mirror removals within scope, and report; docs/EXPORT.md).
 *
 * Order matters for safety: the source is read completely before anything in `--out` changes, so a failed or
 * partial read (401, 404, 5xx, timeout) changes and deletes nothing. The manifest is saved twice: before the
 * writes (listing every path and temp file this run may create, so a run killed half-way leaves nothing the next
 * run does not recognise as its own) and after them (the final state).
 */
import path from 'node:path';
import { getNative } from '../../native/index.js';
import { getWriteNative } from '../../native/write-linux.js';
import { BridgeError } from '../errors.js';
import { openTrustedDir } from '../trust/path.js';
import { closeQuietly } from '../trust/walk.js';
import { NO_WRITERS, writersOf } from '../trust/writers.js';
import { ExportError } from './errors.js';
import { ExportRun } from './export-run.js';
import type { ExportOptions, ExportReport } from './export-types.js';
import { readJsonl } from './source-jsonl.js';
import { readQdrant } from './source-qdrant.js';
import type { SourceRead } from './source.js';
import { acquireLock, BlockedError, OutTree, type Manifest, type TreeModes } from './writer.js';

export type { ExportOptions, ExportReport, ExportSource, ExportSummary, InvalidRecord } from './export-types.js';

/** The gid `--group` names: a number as it is, else the group's id from the group database. */
function resolveGroup(group: string, wn: NonNullable<ReturnType<typeof getWriteNative>>): number {
  if (/^[0-9]+$/.test(group)) return Number(group);
  const gid = wn.groupId(group);
  if (gid === null) throw new ExportError(`--group: no group named ${group}`, 2);
  return gid;
}

/**
 * Run one export. Resolves with the report; operational failures (untrusted `--out`, lock held with `noWait`,
 * failed read, unusable manifest) throw ExportError with the exit code to use.
 */
export async function runExport(opts: ExportOptions): Promise<ExportReport> {
  const log = opts.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const env = opts.env ?? process.env;
  const now = opts.nowSeconds ?? Date.now() / 1000;
  const native = getNative();
  const wn = getWriteNative();
  if (native === null || wn === null) throw new ExportError('export-fleet is not supported on this platform');
  const gid = opts.group === null ? null : resolveGroup(opts.group, wn);
  // With --group, that group counts as a named writer group for --out and below (a team folder it may write).
  const writers = gid === null ? NO_WRITERS : writersOf([], [gid]);
  const modes: TreeModes =
    gid === null ? { dir: 0o700, file: 0o600, gid: null } : { dir: 0o750, file: 0o640, gid, writers };

  const out = path.resolve(opts.out);
  let outFd: number;
  try {
    outFd = openTrustedDir(out, 'out', native, undefined, writers);
  } catch (e) {
    if (e instanceof BridgeError) {
      throw new ExportError(
        `--out ${out} does not pass the trust rule (${e.reason}); it must be an existing directory owned by you or root, not writable by anyone else (with --group: except that group, as in a team folder), reached without symlinks`,
      );
    }
    throw e;
  }
  if (gid !== null) {
    // The export never changes --out itself; say so when the group could not reach the files through it.
    const st = native.fstat(outFd);
    const traversable = (st.mode & 0o001) !== 0 || (st.gid === gid && (st.mode & 0o010) !== 0);
    if (!traversable) {
      log(
        `export-fleet: warning: ${out} is not traversable by group ${opts.group} (mode ${(st.mode & 0o7777).toString(8)}, group ${st.gid}); members of that group cannot reach the files until you give it g+x and that group`,
      );
    }
  }
  let lockFd: number | null = null;
  const tree = new OutTree(native, wn, outFd, modes, opts.dryRun);
  try {
    try {
      lockFd = await acquireLock(native, wn, outFd, {
        noWait: opts.noWait,
        dryRun: opts.dryRun,
        onWait: () => log(`export-fleet: another export into ${out} is running; waiting for it to finish`),
      });
    } catch (e) {
      if (e instanceof Error && e.message === 'locked')
        throw new ExportError(`another export into ${out} is running (--no-wait given)`);
      if (e instanceof BlockedError) throw new ExportError(`${path.join(out, e.relPath)}: ${e.why}`);
      throw e;
    }
    let manifest: Manifest;
    try {
      manifest = tree.loadManifest();
    } catch (e) {
      throw new ExportError(
        `cannot use the manifest in ${out} (${e instanceof Error ? e.message : 'error'}); move it aside to start over`,
      );
    }
    // A run that was killed left these; the manifest says they are ours.
    for (const t of manifest.temps) tree.removeTemp(t);

    const read = await readSource(opts, env);
    if (opts.sourceName != null) read.key = `name:${opts.sourceName}`;
    return await new ExportRun(opts, tree, modes, manifest, read, now, log).run();
  } finally {
    tree.close();
    if (lockFd !== null) closeQuietly(native, lockFd);
    closeQuietly(native, outFd);
  }
}

async function readSource(opts: ExportOptions, env: NodeJS.ProcessEnv): Promise<SourceRead> {
  if (opts.source.kind === 'jsonl') return readJsonl(opts.source.file);
  return readQdrant(opts.source.settings, env, opts.domains, (_pages, points) => opts.progress?.('read', points, 0));
}
