/**
 * What `status` and `doctor` say about a profile view's persisted index (docs/DESIGN.md §The persisted index,
 * "What status and doctor show"; docs/CLI.md §status and §doctor): whether the file exists, whether the load's trust
 * rule accepts it (else its reason code and remedy), when it was built, how many entries it holds, the command that
 * refreshes it, and a **dry load**.
 *
 * Why a dry load: the process that serves tool calls (`mcp`, `serve`, `worker`) loads the file once per view, on
 * that view's first call, and keeps what it counted in its own memory; status and doctor are other processes and
 * cannot see it. Nothing records it on disk, because the tool path writes nothing beside the policy. So these
 * commands load the file themselves, with the same trust rule and checks (`loadPersistedIndex`), and revalidate its
 * entries against their own scan of the tree as it is now (`revalidate`, the rule a first call applies): an entry is
 * counted `revalidated` when its note's identity is unchanged, every other visible note is counted `rebuilt` (a
 * first call would index it again from its text), and entries no visible note matches are `unused`. They write
 * nothing and keep nothing; the counts are labelled as this command's own load, made now.
 *
 * The scan: doctor passes the full scan of its tree step (every note opened and read, as a first call reads it);
 * status, which otherwise never walks the notes, scans only when a trusted file was loaded, and opens only the notes
 * whose identity the file does not hold (the others are judged by their stat, as a warm call judges a note it
 * knows), so an unchanged tree costs one stat per note.
 */
import type { Native } from '../../native/types.js';
import { scanLimitsOf } from '../policy/scan-limits.js';
import type { Policy } from '../policy/types.js';
import { remedyOf } from '../remedies.js';
import { revalidate, type PersistedIndex } from '../search/persisted.js';
import { humanDuration, shellWord } from '../text/operator.js';
import { openTrustedDir } from '../trust/path.js';
import { bridgeErrorOf } from '../trust/refusal.js';
import { scanTree } from '../trust/scan.js';
import type { KnownNotes, ScanResult } from '../trust/types.js';
import { closeQuietly } from '../trust/walk.js';
import { NO_WRITERS, type Writers } from '../trust/writers.js';
import {
  loadPersistedIndex,
  persistedIndexOn,
  persistedIndexPath,
  refreshCommand,
  type PersistedRefusal,
} from './persisted-index.js';

/** What a dry load counted (docs/DESIGN.md §The persisted index): this command's own load, made now. */
export interface PersistedDryLoad {
  /** Always `dry`: counted by this command against the tree as it is now, not by the serving process. */
  kind: 'dry';
  /** Visible notes of the scan (what a first call would answer from). */
  notes: number;
  /** Notes whose entry revalidated against their identity: a first call would use the entry. */
  revalidated: number;
  /** Visible notes with no entry that revalidates (changed, new, or judged under other writers): indexed again. */
  rebuilt: number;
  /** Entries no visible note matched (the note changed, is gone, or is no longer visible): never used. */
  unused: number;
  /** The limit that cut the scan, or null. */
  cut: string | null;
}

/**
 * The `persistedIndex` object of `status --json` and `doctor --json` (every key always present; null when it does
 * not apply). `state`: `absent` (no file), `refused` (the load refused it: `reason`, `detail`, `remedy`; tool calls
 * ignore it), `trusted` (it loads: `builtAt`, `ageMs`, `age`, `entries`, `bytes`, and `dryLoad` unless
 * `dryLoadSkipped` says why not). `refresh` is the command that builds or refreshes it; `enabled` is false when
 * MEMORY_BRIDGE_PERSISTED_INDEX=0 in this command's environment.
 */
export interface PersistedIndexReport {
  file: string;
  state: 'absent' | 'refused' | 'trusted';
  reason: PersistedRefusal | null;
  /** For `index_untrusted`: the trust rule's own reason (`untrusted_owner`, `symlink`, …). */
  detail: string | null;
  remedy: string | null;
  /** When the command finished reading the notes (ISO-8601 UTC, from the file's header). */
  builtAt: string | null;
  ageMs: number | null;
  /** `ageMs` in words ("3 h 12 min"). */
  age: string | null;
  entries: number | null;
  bytes: number | null;
  dryLoad: PersistedDryLoad | null;
  /** Why a trusted file was not dry-loaded (the root or the scan was refused: its reason code). */
  dryLoadSkipped: string | null;
  refresh: string;
  enabled: boolean;
}

/** How `reportPersistedIndex` gets the scan it revalidates against. */
export interface PersistedReportOptions {
  /** The named writers of the policy (for the status scan's trust rule). */
  writers?: Writers | undefined;
  /** A full scan already made (doctor's tree step); without it, status's own scan (module comment). */
  scan?: ScanResult;
  /** Do not dry-load; the reason code is reported as `dryLoadSkipped` (doctor's tree step failed). */
  skipDryLoad?: string;
  now?: number;
}

/** `remedyOf(reason)` with the real home in place of `<home>`, quoted for a shell. */
export function remedyForHome(reason: string, home: string): string {
  return remedyOf(reason).replaceAll('<home>', shellWord(home));
}

/**
 * The persisted index of the view (`home`, `policy`) as status and doctor report it (module comment). Reads only:
 * the file through the trusted load, and (for a trusted file, unless given `scan` or `skipDryLoad`) the tree.
 *
 * @param home   absolute profile home
 * @param policy the loaded policy (its root and names rule name the view)
 * @throws ResourceExhaustedError from the load (out of descriptors or memory), which is no verdict on the file
 */
export function reportPersistedIndex(
  home: string,
  policy: Policy,
  native: Native,
  options: PersistedReportOptions = {},
): PersistedIndexReport {
  const report: PersistedIndexReport = {
    file: persistedIndexPath(home),
    state: 'absent',
    reason: null,
    detail: null,
    remedy: null,
    builtAt: null,
    ageMs: null,
    age: null,
    entries: null,
    bytes: null,
    dryLoad: null,
    dryLoadSkipped: null,
    refresh: refreshCommand(home),
    enabled: persistedIndexOn(),
  };
  const now = options.now ?? Date.now();
  const load = loadPersistedIndex(home, policy, native, now);
  if (load.state === 'absent') return { ...report, remedy: remedyForHome('index_missing', home) };
  if (load.state === 'refused')
    return {
      ...report,
      state: 'refused',
      reason: load.reason,
      detail: load.detail ?? null,
      remedy: remedyForHome(load.reason, home),
    };
  const { index } = load;
  const trusted: PersistedIndexReport = {
    ...report,
    state: 'trusted',
    builtAt: new Date(index.builtAtMs).toISOString(),
    ageMs: load.ageMs,
    age: humanDuration(load.ageMs),
    entries: index.count,
    bytes: load.bytes,
  };
  if (options.skipDryLoad !== undefined) return { ...trusted, dryLoadSkipped: options.skipDryLoad };
  let scan = options.scan;
  if (scan === undefined) {
    const own = scanAgainst(index, policy, options.writers ?? NO_WRITERS, native);
    if ('refused' in own) return { ...trusted, dryLoadSkipped: own.refused };
    scan = own;
  }
  const check = revalidate(index, scan.notes);
  trusted.dryLoad = {
    kind: 'dry',
    notes: scan.notes.length,
    revalidated: check.revalidated,
    rebuilt: check.rebuilt,
    unused: check.unused,
    cut: scan.cut ?? null,
  };
  if (check.rebuilt > 0) trusted.remedy = remedyForHome('index_stale', home);
  return trusted;
}

/**
 * Status's scan of the view's tree: the root through the trusted walk with the policy's writers, every note judged
 * by the trust rule, the ones `index` holds under the same identity not opened (module comment), text never kept.
 */
function scanAgainst(
  index: PersistedIndex,
  policy: Policy,
  writers: Writers,
  native: Native,
): ScanResult | { refused: string } {
  const keyOf = new Map<string, string>();
  for (let i = 0; i < index.count; i++) keyOf.set(index.ids[i]!, index.keys[i]!);
  const known: KnownNotes = { has: (id, key) => keyOf.get(id) === key };
  let rootFd: number;
  try {
    rootFd = openTrustedDir(policy.root, 'root', native, undefined, writers);
  } catch (err) {
    const refusal = bridgeErrorOf(err);
    if (refusal === undefined) throw err;
    return { refused: refusal.reason === 'missing' ? 'root_missing' : `root_untrusted root=${refusal.reason}` };
  }
  try {
    return scanTree(rootFd, policy, { ...scanLimitsOf(policy), keepText: false, writers }, known, native);
  } catch (err) {
    const refusal = bridgeErrorOf(err);
    if (refusal === undefined) throw err;
    return { refused: refusal.reason };
  } finally {
    closeQuietly(native, rootFd);
  }
}

/**
 * The operator lines for `report` (status prints them under "Persisted index:", doctor under its `index` check):
 * the file and its state, and then either the build command (absent), the reason and remedy (refused), or the build
 * time, age, entries and the dry load's counts (trusted), and always the command that refreshes it.
 * `remedyApart`: the caller prints the report's remedy on a line of its own (doctor's `→` line under a warned check),
 * so the lines leave out the build command (absent) and the remedy (refused) rather than say them twice.
 */
export function persistedIndexLines(report: PersistedIndexReport, remedyApart = false): string[] {
  const lines: string[] = [];
  const timer = `${report.refresh} (run it again, e.g. from a timer, to keep it fresh)`;
  if (report.state === 'absent') {
    lines.push(`none at ${report.file}`);
    if (!remedyApart) {
      lines.push('first calls read and index every note; build it with:');
      lines.push(`  ${timer}`);
    }
  } else if (report.state === 'refused') {
    const detail = report.detail === null ? '' : ` (${report.detail})`;
    lines.push(`${report.file}: refused, ${report.reason}${detail}: tool calls ignore it and index every note`);
    if (!remedyApart) lines.push(`what to do: ${report.remedy}`);
  } else {
    lines.push(`${report.file}: trusted (owner-only, checksum and view match)`);
    lines.push(`built ${report.builtAt} (${report.age} ago), ${report.entries} entries, ${report.bytes} bytes`);
    lines.push(...dryLoadLines(report));
    lines.push(`refresh: ${timer}`);
  }
  if (!report.enabled)
    lines.push('MEMORY_BRIDGE_PERSISTED_INDEX=0 here: calls started with it set ignore the file and index every note');
  return lines;
}

/** The dry load's lines of a trusted report (or why it was not made). */
function dryLoadLines(report: PersistedIndexReport): string[] {
  const dry = report.dryLoad;
  if (dry === null) return [`dry load: not made (${report.dryLoadSkipped ?? 'unknown'})`];
  const cut = dry.cut === null ? '' : `; the scan was cut by ${dry.cut}`;
  return [
    `dry load now (this command's own load against the tree as it is; the serving process loads it on a view's first call): ${dry.notes} visible notes, ${dry.revalidated} revalidated, ${dry.rebuilt} rebuilt (changed or new since the build), ${dry.unused} entries unused${cut}`,
  ];
}
