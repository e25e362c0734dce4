/**
 * `memory-bridge doctor`: probe one profile home the way a tool call would, and tell the operator what is wrong
 * and how to fix it (docs/HERMES.md). Read-only: it opens and reads, never writes, and never changes a mode.
 *
 * Checks, in order: platform bindings; the home (absolute, no symbolic link on the way); the installed shim (its
 * recorded node and CLI still exist, its record is trusted, and everything Node would load for the worker passes the
 * trust rule, ACLs included: see program-trust.ts); what the shim found of the Hermes API when Hermes last loaded it
 * (api-report.ts); the policy (trusted read + strict parse, with the parse problem spelled out); the root chain
 * (descriptor walk from `/`); the tree (a full scan with an empty index, so every candidate is opened and checked).
 * The report's `ok` is false exactly when some check failed, i.e. when tool calls would be `unavailable` or the
 * shim could not start its worker. Operator output: paths are fine here; tool output never carries them.
 */
import fs from 'node:fs';
import path from 'node:path';
import { getNative } from '../../native/index.js';
import type { Reason } from '../errors.js';
import { bridgeErrorOf } from '../trust/refusal.js';
import { PatternSet } from '../policy/glob.js';
import { MAX_POLICY_BYTES, policyPath } from '../policy/load.js';
import type { Limits, Policy } from '../policy/types.js';
import { scanLimitsOf } from '../policy/scan-limits.js';
import { isNoteName, segmentReason, validateId } from '../trust/names.js';
import { readNoteById } from '../trust/note.js';
import { openTrustedDir, readTrustedFile } from '../trust/path.js';
import { closeQuietly } from '../trust/walk.js';
import { scanTree } from '../trust/scan.js';
import { notificationStatus } from '../trust/watch.js';
import { hasLeaseCapability, writeCheckLine } from '../trust/lease-reach.js';
import { describeTrust, type IdNames } from '../trust/explain.js';
import { isRegularFile, runningUid } from '../trust/rule.js';
import { NO_WRITERS, type Writers } from '../trust/writers.js';
import type { ResolvedWriters } from '../policy/accounts.js';
import { MAX_ID_SEGMENTS, type ScanResult } from '../trust/types.js';
import { LIMIT_TABLE } from '../policy/schema.js';
import { remedyOf as baseRemedy, REASON_CODES } from '../remedies.js';
import type { Native } from '../../native/types.js';
import { displayPath, shellWord } from '../text/operator.js';
import { listCommand, SkipSamples } from './skip-samples.js';
import { firstUntrustedDir, MAX_NAMED_PROBLEMS, workerProgramProblems } from './program-trust.js';
import {
  describeWriter,
  hermesApiLines,
  MCP_RUN_KIND_NOTE,
  pluginStatus,
  policyStatus,
  type PluginStatus,
} from './status.js';

/** One doctor check (the `--json` shape). `reason` on an ok check is a warning. */
export interface DoctorCheck {
  name: string;
  ok: boolean;
  reason?: string;
  remedy?: string;
}

/**
 * The `--json` output: `ok`, the checks, skip counts by reason code from the tree scan, and the first few skipped
 * root-relative paths of each counted reason (`SAMPLES_PER_REASON`; `doctor --list REASON` gives all).
 */
export interface DoctorReport {
  ok: boolean;
  checks: DoctorCheck[];
  counts: Record<string, number>;
  skipped: Record<string, string[]>;
}

/** A report plus the human-readable details (paths, numbers) the text output prints under each check. */
export interface DoctorResult {
  report: DoctorReport;
  details: Map<string, string[]>;
}

/** What to do about a reason; with named writers in the policy, owner, group and ACL refusals say how they apply. */
function remedyOf(reason: string, withWriters = false, limits?: Readonly<Limits>): string {
  if (withWriters && reason in WRITER_REMEDIES) return WRITER_REMEDIES[reason]!;
  // Never advise raising a limit that is already at its ceiling.
  if (limits !== undefined && reason in AT_CEILING) {
    const [key, remedy] = AT_CEILING[reason]!;
    const row = LIMIT_TABLE.find((r) => r.key === key)!;
    if (limits[key] >= row.ceiling) return `${key} is already at its ceiling (${row.ceiling}): ${remedy}`;
  }
  return baseRemedy(reason);
}

/** Reasons whose usual remedy raises a limit, with what to do instead once that limit is at its ceiling. */
const AT_CEILING: Readonly<Record<string, readonly [keyof Limits, string]>> = Object.freeze({
  too_large: ['max_file_bytes', 'split the note into smaller ones'],
  too_deep: ['max_depth', 'move the note up the tree'],
});

/** Remedies for the owner, group and ACL parts when the policy names writers (docs/TRUST.md §Team memory). */
const WRITER_REMEDIES: Readonly<Record<string, string>> = Object.freeze({
  untrusted_owner:
    'its owner is not root, you or a named writer user: chown it to one of them, or name the owner in writers.users if you trust every note they write',
  group_writable:
    'writable by a group that is not a named writer group (with an ACL, the group bits show its mask): chmod g-w, chgrp it to a writer group (a setgid team directory does this), or name the group in writers.groups',
  acl_write:
    'an ACL entry lets someone who is not root, you or a named writer write it: remove that entry (setfacl -x …), or name them in writers',
});

/** Names for the writers' ids (from the resolved list), for the writer-rule lines. */
function namesOf(resolved: ResolvedWriters | undefined): IdNames {
  const users = new Map<number, string>();
  const groups = new Map<number, string>();
  for (const w of resolved?.list ?? [])
    if (w.name !== undefined) (w.kind === 'user' ? users : groups).set(w.id, w.name);
  return { user: (id) => users.get(id), group: (id) => groups.get(id) };
}

/**
 * Opens `absPath` one component at a time from `/` with no-follow opens and no judgement (doctor only, to describe
 * an object the trusted walk refused), runs `fn` on it and closes it; undefined when it cannot be opened.
 */
function withUnjudgedDir<T>(absPath: string, native: Native, fn: (fd: number) => T): T | undefined {
  let fd = -1;
  try {
    fd = native.openRoot();
    for (const name of absPath.slice(1).split('/')) {
      const next = native.openDirAt(fd, name);
      closeQuietly(native, fd);
      fd = next;
    }
    return fn(fd);
  } catch {
    return undefined;
  } finally {
    if (fd >= 0) closeQuietly(native, fd);
  }
}

/** The root directory's writer rule in words (owner, group, others, ACL) for the root check's details. */
function rootRuleLines(root: string, native: Native, writers: Writers, resolved?: ResolvedWriters): string[] {
  const line = withUnjudgedDir(root, native, (fd) => {
    const { parts } = describeTrust(native.fstat(fd), native.readAcl(fd), runningUid(), writers, namesOf(resolved));
    return `the root: ${parts.join('; ')}`;
  });
  return line === undefined ? [] : [line];
}

/**
 * The writer rule of every object from the root down to the note `id` (root, each directory, the note), one line
 * each: what admitted it and, for the first refused part, what refused it. Objects are opened without judgement
 * (no-follow; a note only when a no-follow stat shows a regular file) and only described.
 */
function pathRuleLines(
  root: string,
  id: string,
  native: Native,
  writers: Writers,
  resolved?: ResolvedWriters,
): string[] {
  const names = namesOf(resolved);
  const uid = runningUid();
  const segments = id.split('/');
  const lines: string[] = [];
  const say = (label: string, fd: number): void => {
    const { parts, refused } = describeTrust(native.fstat(fd), native.readAcl(fd), uid, writers, names);
    lines.push(`${label}: ${refused === null ? 'admitted' : `REFUSED (${refused})`}: ${parts.join('; ')}`);
  };
  withUnjudgedDir(root, native, (rootFd) => {
    say('the root', rootFd);
    let dirFd = rootFd;
    try {
      for (let i = 0; i < segments.length - 1; i++) {
        const next = native.openDirAt(dirFd, segments[i]!);
        if (dirFd !== rootFd) closeQuietly(native, dirFd);
        dirFd = next;
        say(segments.slice(0, i + 1).join('/'), dirFd);
      }
      const last = segments[segments.length - 1]!;
      if (!isRegularFile(native.statAt(dirFd, last))) return;
      const fd = native.openFileAt(dirFd, last);
      try {
        say(id, fd);
      } finally {
        closeQuietly(native, fd);
      }
    } catch {
      // Missing or unopenable: the trusted read above already gave the reason.
    } finally {
      if (dirFd !== rootFd) closeQuietly(native, dirFd);
    }
  });
  return lines;
}

/** With named writers: how many visible notes each writer rule admitted (owner a writer user, group write). */
function writerRuleCounts(
  notes: readonly { stat: { uid: number; gid: number; mode: number } }[],
  writers: Writers,
  resolved?: ResolvedWriters,
): string[] {
  if (writers === NO_WRITERS) return [];
  const names = namesOf(resolved);
  const byOwner = new Map<number, number>();
  const byGroup = new Map<number, number>();
  const me = runningUid();
  for (const { stat } of notes) {
    if (stat.uid !== 0 && stat.uid !== me && writers.uids.has(stat.uid))
      byOwner.set(stat.uid, (byOwner.get(stat.uid) ?? 0) + 1);
    if ((stat.mode & 0o020) !== 0 && writers.gids.has(stat.gid))
      byGroup.set(stat.gid, (byGroup.get(stat.gid) ?? 0) + 1);
  }
  const lines: string[] = [];
  for (const [uid, n] of byOwner)
    lines.push(`admitted ${n} × owner uid ${uid}${label(names.user(uid))}: a named writer user`);
  for (const [gid, n] of byGroup)
    lines.push(`admitted ${n} × writable by group gid ${gid}${label(names.group(gid))}: a named writer group`);
  if (lines.length === 0)
    lines.push("no visible note needed a writer rule (all are yours or root's and not group-writable)");
  return lines;
}

const label = (name: string | undefined): string => (name === undefined ? '' : ` (${name})`);

function reasonOf(err: unknown): string {
  return bridgeErrorOf(err)?.reason ?? 'internal';
}

/** Checks of the installed shim: present, ours, unchanged, and its worker command still there and trusted. */
function pluginChecks(
  home: string,
  expectedVersion: string | undefined,
  details: Map<string, string[]>,
  native: Native | null,
): DoctorCheck {
  const p = pluginStatus(home);
  if (p.state === 'absent') {
    details.set('plugin', [`not installed in ${p.dir}`]);
    return { name: 'plugin', ok: true, reason: 'not_installed', remedy: remedyOf('not_installed') };
  }
  if (p.state === 'foreign') {
    details.set('plugin', [`${p.dir} is a different plugin (it ${p.why})`]);
    return { name: 'plugin', ok: false, reason: 'foreign_plugin', remedy: remedyOf('foreign_plugin') };
  }
  const lines = [`memory-bridge ${p.version} in ${p.dir}`, `worker: ${p.node} ${p.cli} worker`];
  details.set('plugin', lines);
  const missing: string[] = [];
  for (const file of [p.node, p.cli]) {
    try {
      if (!path.isAbsolute(file) || !fs.statSync(file).isFile()) missing.push(file);
      else if (file === p.node) fs.accessSync(file, fs.constants.X_OK);
    } catch {
      missing.push(file);
    }
  }
  if (missing.length > 0) {
    lines.push(`missing or not runnable: ${missing.join(', ')}`);
    return { name: 'plugin', ok: false, reason: 'worker_paths_missing', remedy: remedyOf('worker_paths_missing') };
  }
  try {
    const st = fs.lstatSync(path.join(p.dir, 'install.json'));
    const uid = process.getuid?.() ?? -1;
    if (!st.isFile() || (st.uid !== uid && st.uid !== 0) || (st.mode & 0o022) !== 0) {
      return {
        name: 'plugin',
        ok: false,
        reason: 'install_record_untrusted',
        remedy: remedyOf('install_record_untrusted'),
      };
    }
  } catch {
    return {
      name: 'plugin',
      ok: false,
      reason: 'install_record_untrusted',
      remedy: remedyOf('install_record_untrusted'),
    };
  }
  if (native !== null) {
    const problems = workerProgramProblems(p.node, p.cli, native);
    if (problems.count > 0) {
      for (const problem of problems.named)
        lines.push(`not trusted: ${problem.path} (${problem.reason}: ${remedyOf(problem.reason)})`);
      if (problems.count > MAX_NAMED_PROBLEMS)
        lines.push(`… and ${problems.count - MAX_NAMED_PROBLEMS} more objects Node would load that fail the same rule`);
      return {
        name: 'plugin',
        ok: false,
        reason: 'worker_program_untrusted',
        remedy: remedyOf('worker_program_untrusted'),
      };
    }
  }
  if (p.modified.length > 0) {
    lines.push(`local changes: ${p.modified.join(', ')}`);
    return { name: 'plugin', ok: true, reason: 'modified_plugin', remedy: remedyOf('modified_plugin') };
  }
  if (expectedVersion !== undefined && p.version !== expectedVersion) {
    lines.push(`this CLI is ${expectedVersion}`);
    return { name: 'plugin', ok: true, reason: 'version_mismatch', remedy: remedyOf('version_mismatch') };
  }
  return { name: 'plugin', ok: true };
}

/**
 * The home as the plugin will see it: an absolute path (a relative HERMES_HOME is `home_relative`) with no symbolic
 * link on the way (`home_symlink`: the worker walks the home from `/` without following links; realpath(3) says
 * where it really is).
 */
function homeCheck(home: string, relativeHome: string | undefined, details: Map<string, string[]>): DoctorCheck {
  if (relativeHome !== undefined) {
    details.set('home', [`HERMES_HOME=${relativeHome} is relative (read here as ${home})`]);
    return { name: 'home', ok: false, reason: 'home_relative', remedy: remedyOf('home_relative') };
  }
  let real: string;
  try {
    real = fs.realpathSync(home);
  } catch {
    details.set('home', [home]);
    return { name: 'home', ok: false, reason: 'no_home', remedy: remedyOf('no_home') };
  }
  if (real !== home) {
    details.set('home', [`${home} is reached through a symbolic link; the real path is ${real}`]);
    return { name: 'home', ok: false, reason: 'home_symlink', remedy: remedyOf('home_symlink') };
  }
  details.set('home', [home]);
  return { name: 'home', ok: true };
}

/**
 * What the shim found of the Hermes API when Hermes last loaded it (api-report.ts): nothing yet is a warning;
 * a missing part (nothing registered) or a home problem seen at registration is a failure.
 */
function hermesApiCheck(plugin: PluginStatus, details: Map<string, string[]>): DoctorCheck | undefined {
  if (plugin.state !== 'ours') return undefined;
  const api = plugin.hermesApi;
  details.set('hermes_api', hermesApiLines(api));
  if (api.state !== 'found')
    return { name: 'hermes_api', ok: true, reason: 'hermes_api_unknown', remedy: remedyOf('hermes_api_unknown') };
  if (!api.report.registered)
    return { name: 'hermes_api', ok: false, reason: 'hermes_api_missing', remedy: remedyOf('hermes_api_missing') };
  const homeProblem = api.report.homeProblem;
  if (homeProblem !== null) {
    details.get('hermes_api')!.push(`at registration Hermes gave a home the plugin refuses (${homeProblem})`);
    return { name: 'hermes_api', ok: false, reason: homeProblem, remedy: remedyOf(homeProblem) };
  }
  return { name: 'hermes_api', ok: true };
}

/**
 * Run every check for `home` (absolute).
 *
 * @param options.version this CLI's version, to compare with the installed shim's
 * @param options.relativeHome the relative HERMES_HOME the home was resolved from, when it was one (a failure)
 */
export function runDoctor(home: string, options: { version?: string; relativeHome?: string } = {}): DoctorResult {
  const details = new Map<string, string[]>();
  const checks: DoctorCheck[] = [];
  const counts: Record<string, number> = {};
  let skipped: Record<string, string[]> = {};
  const finish = (): DoctorResult => ({
    report: { ok: checks.every((c) => c.ok), checks, counts, skipped },
    details,
  });

  const native = getNative();
  if (native === null) {
    checks.push({
      name: 'platform',
      ok: false,
      reason: 'unsupported_platform',
      remedy: remedyOf('unsupported_platform'),
    });
    details.set('platform', [`${process.platform} ${process.arch}: no bindings`]);
  } else if (!native.verified) {
    checks.push({ name: 'platform', ok: true, reason: 'unverified_platform', remedy: remedyOf('unverified_platform') });
    details.set('platform', [`${native.platform} ${native.arch}: unverified platform`]);
  } else {
    checks.push({ name: 'platform', ok: true });
    details.set('platform', [`${native.platform} ${native.arch}`]);
  }

  let homeOk = false;
  try {
    homeOk = fs.statSync(home).isDirectory();
  } catch {
    homeOk = false;
  }
  if (!homeOk) {
    checks.push({ name: 'home', ok: false, reason: 'no_home', remedy: remedyOf('no_home') });
    details.set('home', [home]);
    return finish();
  }
  const homeProblem = homeCheck(home, options.relativeHome, details);
  checks.push(homeProblem);
  if (!homeProblem.ok) return finish();
  const plugin = pluginChecks(home, options.version, details, native);
  checks.push(plugin);
  const api = hermesApiCheck(pluginStatus(home), details);
  if (api !== undefined) checks.push(api);

  const { status, policy, writers: resolved } = policyStatus(home);
  const writers = resolved?.writers ?? NO_WRITERS;
  const policyFile = policyPath(home);
  if (!status.loads || policy === undefined) {
    const reason = status.loads ? 'internal' : status.reason;
    const lines = [policyFile];
    if (!status.loads && status.detail !== undefined) lines.push(`problem: ${status.detail}`);
    if (native !== null && (reason === 'policy_untrusted' || reason === 'policy_missing')) {
      const culprit = firstUntrustedDir(path.posix.dirname(policyFile), native);
      if (culprit !== undefined)
        lines.push(`first failing directory: ${culprit.dir} (${culprit.reason}: ${remedyOf(culprit.reason)})`);
      else if (reason === 'policy_untrusted') {
        try {
          readTrustedFile(policyFile, MAX_POLICY_BYTES, native);
        } catch (err) {
          const fileReason = reasonOf(err);
          lines.push(`the file itself: ${fileReason}: ${remedyOf(fileReason)}`);
        }
      }
    }
    details.set('policy', lines);
    checks.push({ name: 'policy', ok: false, reason, remedy: remedyOf(reason) });
    return finish();
  }
  const policyLines = [policyFile, `allow_cron: ${policy.allowCron}, allow_subagents: ${policy.allowSubagents}`];
  if (!(policy.allowCron && policy.allowSubagents)) policyLines.push(MCP_RUN_KIND_NOTE);
  if (resolved !== undefined && resolved.list.length > 0)
    policyLines.push(`writers (besides you and root): ${resolved.list.map(describeWriter).join(', ')}`);
  details.set('policy', policyLines);
  checks.push({ name: 'policy', ok: true });

  let rootFd: number;
  try {
    rootFd = openTrustedDir(policy.root, 'root', native!, undefined, writers);
  } catch (err) {
    const reason = reasonOf(err);
    const lines = [policy.root];
    if (native !== null) {
      const culprit = firstUntrustedDir(policy.root, native, writers);
      if (culprit?.dir === policy.root) lines.push(...rootRuleLines(policy.root, native, writers, resolved));
      if (culprit !== undefined) lines.push(`first failing directory: ${culprit.dir} (${culprit.reason})`);
    }
    details.set('root', lines);
    checks.push({ name: 'root', ok: false, reason, remedy: remedyOf(reason) });
    return finish();
  }
  try {
    details.set('root', [policy.root, ...rootRuleLines(policy.root, native!, writers, resolved)]);
    checks.push({ name: 'root', ok: true });
    try {
      const samples = new SkipSamples();
      const scan = scanTree(
        rootFd,
        policy,
        { ...scanLimitsOf(policy), keepText: false, writers, onSkip: samples.onSkip },
        { has: () => false },
        native!,
      );
      for (const [reason, n] of Object.entries(scan.skipped)) if (n !== undefined && n > 0) counts[reason] = n;
      skipped = samples.toJSON();
      const lines = [
        `${scan.notes.length} visible notes, ${scan.rawEntries} directory entries listed`,
        notificationStatus(native!, rootFd, scan.notes.length),
      ];
      if (native!.openForWriting !== undefined)
        lines.push(
          writeCheckLine(
            scan.notes.map((n) => n.stat.uid),
            runningUid(),
            hasLeaseCapability(),
          ),
        );
      lines.push(...writerRuleCounts(scan.notes, writers, resolved));
      for (const [reason, n] of Object.entries(counts).sort()) {
        lines.push(`skipped ${n} × ${reason}: ${remedyOf(reason, writers !== NO_WRITERS, policy.limits)}`);
        lines.push(...namedLines(samples.of(reason), n, home, reason));
      }
      details.set('tree', lines);
      if (scan.truncated) {
        const cut = describeCut(rootFd, policy, scan, native!, writers);
        lines.push(cut.line);
        checks.push({ name: 'tree', ok: true, reason: 'incomplete', remedy: cut.remedy });
      } else if (scan.notes.length === 0)
        checks.push({ name: 'tree', ok: true, reason: 'no_visible_notes', remedy: remedyOf('no_visible_notes') });
      else checks.push({ name: 'tree', ok: true });
    } catch (err) {
      const reason = reasonOf(err);
      details.set('tree', [`the scan stopped: ${reason}`]);
      checks.push({ name: 'tree', ok: false, reason, remedy: remedyOf(reason) });
    }
  } finally {
    closeQuietly(native!, rootFd);
  }
  return finish();
}

/**
 * The lines under one "skipped N × reason" line: up to `SAMPLES_PER_REASON` of the skipped paths (root-relative,
 * shown with `displayPath`) and, when there are more, the `--list` command that prints them all.
 */
function namedLines(paths: readonly string[], count: number, home: string, reason: string): string[] {
  if (paths.length === 0) return [];
  const lines = [`  e.g. ${paths.map(displayPath).join(', ')}`];
  if (count > paths.length) lines.push(`  all ${count}: ${listCommand(home, reason)}`);
  return lines;
}

/**
 * Reasons the tree scan skips objects for, in the order `doctor --list`'s help names them. `--list` accepts every
 * reason code (`REASON_CODES`): the scan counts objects only under a `Reason`, so whatever doctor counts, `--list`
 * takes; this list is the ones a tree of notes commonly shows.
 */
export const TREE_REASONS: readonly Reason[] = Object.freeze([
  'acl_unreadable',
  'acl_write',
  'bad_name',
  'binary',
  'denied',
  'group_writable',
  'hard_link',
  'hidden',
  'invalid_utf8',
  'io_error',
  'missing',
  'not_directory',
  'not_markdown',
  'not_regular',
  'open_for_write',
  'other_device',
  'symlink',
  'too_large',
  'untrusted_owner',
  'world_writable',
] satisfies Reason[]);

/** What `doctor --list REASON` accepts: every reason code (src/remedies.ts `REASON_CODES`). */
export const LISTABLE_REASONS: readonly string[] = REASON_CODES;

/**
 * The paths below the root that the tree scan skipped for `reason` (`doctor --list REASON`), in scan order,
 * root-relative. The scan is the one tool calls run (policy, name rule, trust checks), with an operator-only hook
 * that names each skipped object (ScanLimits.onSkip). A scan that stops at a budget lists what it saw until then.
 *
 * @returns `paths`, the root, the remedy of the reason; or `problem` (a sentence saying what to run instead) when
 *   the policy does not load or the root cannot be opened
 */
export function listSkipped(
  home: string,
  reason: string,
): { paths: string[]; root: string; remedy: string; truncated: boolean } | { problem: string } {
  const doctor = `memory-bridge doctor --home ${shellWord(home)}`;
  const native = getNative();
  if (native === null) return { problem: `no platform bindings here: run \`${doctor}\` for details` };
  const { status, policy, writers: resolved } = policyStatus(home);
  if (!status.loads || policy === undefined)
    return { problem: `the policy does not load: run \`${doctor}\` to see why` };
  // The same writers as runDoctor's scan, so the listing and the counts agree.
  const writers = resolved?.writers ?? NO_WRITERS;
  let rootFd: number;
  try {
    rootFd = openTrustedDir(policy.root, 'root', native, undefined, writers);
  } catch {
    return { problem: `the root cannot be opened as a trusted directory: run \`${doctor}\` to see why` };
  }
  const paths: string[] = [];
  try {
    const limits = {
      ...scanLimitsOf(policy),
      keepText: false,
      writers,
      onSkip: (r: string, p: string) => r === reason && paths.push(p),
    };
    const scan = scanTree(rootFd, policy, limits, { has: () => false }, native);
    return {
      paths,
      root: policy.root,
      remedy: remedyOf(reason, writers !== NO_WRITERS, policy.limits),
      truncated: scan.truncated,
    };
  } catch (err) {
    return { problem: `the scan stopped (${reasonOf(err)}): run \`${doctor}\` for the remedy` };
  } finally {
    closeQuietly(native, rootFd);
  }
}

/**
 * What a cut scan left out, for the operator: a second scan of the same tree with the budgets lifted (entries and
 * bytes unbounded, depth at the id limit of 16 segments; the raw entry ceiling still applies) counts the visible
 * notes, texts dropped as they pass. The remedy names the limit that cut the scan and the value that would cover
 * the vault, and never advises raising a limit already at its ceiling (docs/POLICY.md §Limits).
 *
 * @param rootFd open trusted root (not closed here)
 * @param scan   the policy-limited scan, `truncated` with its `cut`
 * @returns one detail line and the remedy
 */
export function describeCut(
  rootFd: number,
  policy: Policy,
  scan: ScanResult,
  native: Native,
  writers: Writers = NO_WRITERS,
): { line: string; remedy: string } {
  const which = scan.cut ?? 'max_depth';
  const row = LIMIT_TABLE.find((r) => r.key === which)!;
  const now = policy.limits[which];
  const narrow = 'narrow "allow" (or add "deny" patterns) so fewer notes match, or split the notes across profiles';
  const atCeiling = `${which} is already at its ceiling (${row.ceiling}): ${narrow}`;
  let full: ScanResult;
  try {
    full = scanTree(
      rootFd,
      policy,
      {
        ...scanLimitsOf(policy),
        maxEntries: Number.MAX_SAFE_INTEGER,
        maxTotalBytes: Number.MAX_SAFE_INTEGER,
        maxDepth: MAX_ID_SEGMENTS,
        keepText: false,
        writers,
      },
      { has: () => false },
      native,
    );
  } catch (err) {
    const line = `the scan was cut by ${which}; counting the notes it left out failed (${reasonOf(err)})`;
    return {
      line,
      remedy: now >= row.ceiling ? atCeiling : `raise limits.${which} (ceiling ${row.ceiling}), or ${narrow}`,
    };
  }
  const leftOut = Math.max(0, full.notes.length - scan.notes.length);
  const line =
    `the scan was cut by ${which}: ${leftOut} of ${full.notes.length} visible notes were left out ` +
    '(searches answer "incomplete": true)';
  let needed = 0;
  if (which === 'max_entries') needed = full.notes.length;
  else if (which === 'max_total_bytes') for (const n of full.notes) needed += n.stat.size;
  else for (const n of full.notes) needed = Math.max(needed, n.id.split('/').length);
  if (now >= row.ceiling) return { line, remedy: atCeiling };
  if (needed > row.ceiling)
    return {
      line,
      remedy: `raise limits.${which} to its ceiling ${row.ceiling} (now ${now}); even that leaves notes out: ${narrow}`,
    };
  return {
    line,
    remedy: `raise limits.${which} to at least ${Math.max(needed, now + 1)} (now ${now}, ceiling ${row.ceiling}), or ${narrow}`,
  };
}

/**
 * Why one note is or is not visible to this profile (`doctor --explain ID`). Each step is a check; the report's
 * `ok` is true when a read of `id` would succeed. Steps: id syntax, policy, depth, name rule, allow and deny
 * patterns (naming the ones that match), directories the policy may enter, then the trusted read itself.
 */
export function explainNote(home: string, id: string): DoctorResult {
  const details = new Map<string, string[]>();
  const checks: DoctorCheck[] = [];
  const finish = (): DoctorResult => ({
    report: { ok: checks.every((c) => c.ok), checks, counts: {}, skipped: {} },
    details,
  });
  const fail = (name: string, reason: string, remedy = remedyOf(reason)): DoctorResult => {
    checks.push({ name, ok: false, reason, remedy });
    return finish();
  };

  try {
    validateId(id);
    checks.push({ name: 'id', ok: true });
  } catch {
    details.set('id', [
      'ids are root-relative paths: no leading "/", no "." or ".." or empty segments, no "\\" or control characters, at most 512 characters and 16 segments',
    ]);
    return fail('id', 'bad_id', 'write the id exactly as memory_bridge_search returns it');
  }

  const { status, policy, writers: resolved } = policyStatus(home);
  const writers = resolved?.writers ?? NO_WRITERS;
  if (!status.loads || policy === undefined) {
    const reason = status.loads ? 'internal' : status.reason;
    if (!status.loads && status.detail !== undefined) details.set('policy', [`problem: ${status.detail}`]);
    return fail('policy', reason);
  }
  checks.push({ name: 'policy', ok: true });

  const segments = id.split('/');
  details.set('depth', [`${segments.length} segments; max_depth ${policy.limits.max_depth}`]);
  if (segments.length > policy.limits.max_depth)
    return fail('depth', 'too_deep', remedyOf('too_deep', false, policy.limits));
  checks.push({ name: 'depth', ok: true });

  for (const segment of segments) {
    const reason = segmentReason(segment, policy.names);
    if (reason !== null) {
      details.set('names', [`segment ${JSON.stringify(segment)} fails the ${policy.names} rule`]);
      return fail('names', reason);
    }
  }
  if (!isNoteName(segments[segments.length - 1]!)) return fail('names', 'not_markdown');
  checks.push({ name: 'names', ok: true });

  const matching = (list: readonly string[]): string[] => list.filter((p) => PatternSet.compile([p]).matches(id));
  const allowHits = matching(policy.allow);
  const denyHits = matching(policy.deny);
  details.set('allow', [
    allowHits.length === 0
      ? 'no allow pattern matches'
      : `matched by ${allowHits.map((p) => JSON.stringify(p)).join(', ')}`,
  ]);
  if (allowHits.length === 0) {
    return fail(
      'allow',
      'denied',
      `no allow pattern matches ${JSON.stringify(id)}: add one (a pattern without wildcards matches exactly one id; use "dir/**" for a directory)`,
    );
  }
  checks.push({ name: 'allow', ok: true });
  details.set('deny', [
    denyHits.length === 0
      ? 'no deny pattern matches'
      : `matched by ${denyHits.map((p) => JSON.stringify(p)).join(', ')}`,
  ]);
  if (denyHits.length > 0) {
    return fail(
      'deny',
      'denied',
      `deny always wins: remove or narrow ${denyHits.map((p) => JSON.stringify(p)).join(', ')} to make it visible`,
    );
  }
  checks.push({ name: 'deny', ok: true });
  for (let i = 1; i < segments.length; i++) {
    const dirId = segments.slice(0, i).join('/');
    if (!policy.mayEnter(dirId)) {
      details.set('enter', [`the policy never enters ${JSON.stringify(dirId)}`]);
      return fail('enter', 'denied');
    }
  }
  checks.push({ name: 'enter', ok: true });

  const native = getNative();
  if (native === null) return fail('trust', 'unsupported_platform');
  let rootFd: number;
  try {
    rootFd = openTrustedDir(policy.root, 'root', native, undefined, writers);
  } catch (err) {
    details.set('trust', [
      `the root ${policy.root} is not trusted`,
      ...pathRuleLines(policy.root, id, native, writers, resolved),
    ]);
    return fail('trust', reasonOf(err), remedyOf(reasonOf(err), writers !== NO_WRITERS));
  }
  try {
    readNoteById(rootFd, id, policy as Policy, { ...scanLimitsOf(policy), writers }, native);
    details.set('trust', [
      `${path.join(policy.root, id)} passes every check: visible`,
      ...pathRuleLines(policy.root, id, native, writers, resolved),
    ]);
    checks.push({ name: 'trust', ok: true });
  } catch (err) {
    details.set('trust', [
      `${path.join(policy.root, id)} is refused`,
      ...pathRuleLines(policy.root, id, native, writers, resolved),
    ]);
    return fail('trust', reasonOf(err), remedyOf(reasonOf(err), writers !== NO_WRITERS, policy.limits));
  } finally {
    closeQuietly(native, rootFd);
  }
  return finish();
}

/** Human-readable doctor output: one line per check, details indented, remedies after a dash. */
export function formatDoctor(
  result: DoctorResult,
  header: string[],
  footer = {
    ok: 'Result: tool calls for this profile can be served.',
    fail: 'Result: tool calls for this profile would be unavailable (see FAIL above).',
  },
): string {
  const lines = [...header];
  for (const check of result.report.checks) {
    const mark = check.ok ? (check.reason === undefined ? 'ok  ' : 'warn') : 'FAIL';
    lines.push(`[${mark}] ${check.name}${check.reason === undefined ? '' : `: ${check.reason}`}`);
    for (const d of result.details.get(check.name) ?? []) lines.push(`       ${d}`);
    if (check.remedy !== undefined) lines.push(`       → ${check.remedy}`);
  }
  lines.push(result.report.ok ? footer.ok : footer.fail);
  return lines.join('\n');
}
