/**
 * One `memory-bridge doctor` run over a profile home (`DoctorRun`'s named steps, in order; a failed step ends the
 * run, later steps need what it checked):
 *  1. `platform`: the bindings for this platform and arch (checks.ts);
 *  2. `home`: an existing directory, absolute, no symbolic link on the way (checks.ts);
 *  3. `plugin` and `hermesApi`: the installed shim and what it found of the Hermes API (checks.ts; never ends the run);
 *  4. `policy`: the trusted read and strict parse, the parse problem or the first untrusted directory spelled out;
 *     then `view`: whether the profile's view is warm (view.ts; a warning at most, never ends the run);
 *  5. `root`: the root chain by the descriptor walk from `/`, with the root's writer rule in words (rules.ts);
 *  6. `tree`: a full scan with an empty index, so every candidate is opened and checked: counts, samples and remedies
 *     of what it skipped (list.ts), the change-notification and write-check lines, and what a cut left out (cut.ts);
 *  7. `index`: the view's persisted index, dry-loaded against that scan (persisted.ts; a warning at most).
 */
import path from 'node:path';
import { getNative } from '../../../native/index.js';
import type { Native } from '../../../native/types.js';
import type { ResolvedWriters } from '../../policy/accounts.js';
import { MAX_POLICY_BYTES, policyPath } from '../../policy/load.js';
import { scanLimitsOf } from '../../policy/scan-limits.js';
import type { Policy } from '../../policy/types.js';
import { hasLeaseCapability, writeCheckLine } from '../../trust/lease-reach.js';
import { openTrustedDir, readTrustedFile } from '../../trust/path.js';
import { runningUid } from '../../trust/rule.js';
import { scanTree } from '../../trust/scan.js';
import type { ScanResult } from '../../trust/types.js';
import { closeQuietly } from '../../trust/walk.js';
import { displayPath } from '../../text/operator.js';
import { notificationStatus } from '../../trust/view.js';
import { NO_WRITERS, type Writers } from '../../trust/writers.js';
import { firstUntrustedDir } from '../program-trust.js';
import { listCommand, SkipSamples } from '../skip-samples.js';
import { describeWriter, MCP_RUN_KIND_NOTE, pluginStatus, policyStatus } from '../status.js';
import { hermesApiCheck, homeCheck, platformCheck, pluginCheck } from './checks.js';
import { describeCut } from './cut.js';
import { viewCheck } from './view.js';
import { persistedIndexCheck } from './persisted.js';
import { namedLines } from './list.js';
import { DoctorReportBuilder, type DoctorResult } from './report.js';
import { reasonOf, remedyOf } from './remedy.js';
import { rootRuleLines, writerRuleCounts } from './rules.js';

/** What the policy step found, for the root and tree steps. */
interface LoadedPolicy {
  policy: Policy;
  writers: Writers;
  resolved: ResolvedWriters | undefined;
}

/** The steps of one doctor run (module comment); `run()` is the whole run. */
export class DoctorRun {
  private readonly report = new DoctorReportBuilder();
  private readonly native: Native | null = getNative();

  /**
   * @param home the profile home (absolute)
   * @param options.version this CLI's version, to compare with the installed shim's
   * @param options.relativeHome the relative HERMES_HOME the home was resolved from, when it was one (a failure)
   */
  constructor(
    private readonly home: string,
    private readonly options: { version?: string; relativeHome?: string },
  ) {}

  /** Every step in order, up to the first that fails and ends the run. */
  run(): DoctorResult {
    const { report, native, home, options } = this;
    report.add(platformCheck(native, report.details));
    if (!report.add(homeCheck(home, options.relativeHome, report.details))) return report.result();
    report.add(pluginCheck(home, options.version, report.details, native));
    const api = hermesApiCheck(pluginStatus(home), report.details);
    if (api !== undefined) report.add(api);
    const loaded = this.policyStep();
    const view = viewCheck(home, pluginStatus(home), loaded?.policy, report.details);
    if (view !== undefined) report.add(view);
    // Without bindings the policy cannot have loaded (its read is a trusted one), so native is set below.
    if (loaded === undefined || native === null) return report.result();
    const rootFd = this.rootStep(loaded, native);
    if (rootFd === undefined) return report.result();
    let scan: ScanResult | string;
    try {
      scan = this.treeStep(loaded, native, rootFd);
    } finally {
      closeQuietly(native, rootFd);
    }
    const index = persistedIndexCheck(home, loaded.policy, native, scan);
    report.add(index.check, index.lines);
    report.persistedIndex = index.report;
    return report.result();
  }

  /** Step 4: the policy loads; else why not (the parse problem, the first untrusted directory, the file itself). */
  private policyStep(): LoadedPolicy | undefined {
    const { home, native } = this;
    const { status, policy, writers: resolved } = policyStatus(home);
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
      this.report.add({ name: 'policy', ok: false, reason, remedy: remedyOf(reason) }, lines);
      return undefined;
    }
    const lines = [policyFile, `allow_cron: ${policy.allowCron}, allow_subagents: ${policy.allowSubagents}`];
    if (!(policy.allowCron && policy.allowSubagents)) lines.push(MCP_RUN_KIND_NOTE);
    if (resolved !== undefined && resolved.list.length > 0)
      lines.push(`writers (besides you and root): ${resolved.list.map(describeWriter).join(', ')}`);
    this.report.add({ name: 'policy', ok: true }, lines);
    return { policy, writers: resolved?.writers ?? NO_WRITERS, resolved };
  }

  /** Step 5: the root opens as a trusted directory (its descriptor, for the tree step); else the first culprit. */
  private rootStep({ policy, writers, resolved }: LoadedPolicy, native: Native): number | undefined {
    let rootFd: number;
    try {
      rootFd = openTrustedDir(policy.root, 'root', native, undefined, writers);
    } catch (err) {
      const reason = reasonOf(err);
      const lines = [policy.root];
      const culprit = firstUntrustedDir(policy.root, native, writers);
      if (culprit?.dir === policy.root) lines.push(...rootRuleLines(policy.root, native, writers, resolved));
      if (culprit !== undefined) lines.push(`first failing directory: ${culprit.dir} (${culprit.reason})`);
      this.report.add({ name: 'root', ok: false, reason, remedy: remedyOf(reason) }, lines);
      return undefined;
    }
    this.report.add({ name: 'root', ok: true }, [
      policy.root,
      ...rootRuleLines(policy.root, native, writers, resolved),
    ]);
    return rootFd;
  }

  /**
   * Step 6: the full scan of the tree below `rootFd` (not closed here), what it skipped and why, and any cut.
   *
   * @returns the scan (for the index step), or the reason code it stopped with
   */
  private treeStep({ policy, writers, resolved }: LoadedPolicy, native: Native, rootFd: number): ScanResult | string {
    const { report, home } = this;
    try {
      const samples = new SkipSamples();
      const scan = scanTree(
        rootFd,
        policy,
        { ...scanLimitsOf(policy), keepText: false, writers, onSkip: samples.onSkip },
        { has: () => false },
        native,
      );
      const counts: Record<string, number> = {};
      for (const [reason, n] of Object.entries(scan.skipped)) if (n !== undefined && n > 0) counts[reason] = n;
      report.counts = counts;
      report.skipped = samples.toJSON();
      const lines = [
        `${scan.notes.length} visible notes, ${scan.rawEntries} directory entries listed`,
        notificationStatus(native, rootFd, scan.notes.length),
      ];
      if (native.openForWriting !== undefined)
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
      if (scan.truncated) {
        const cut = describeCut(rootFd, policy, scan, native, writers);
        lines.push(cut.line);
        if ((scan.cut ?? 'max_depth') === 'max_depth') {
          if (cut.tooDeep !== undefined && cut.tooDeep.length > 0)
            lines.push(`  e.g. ${cut.tooDeep.map(displayPath).join(', ')}`);
          lines.push(`  the notes left out: ${listCommand(home, 'too_deep')}`);
        }
        report.add({ name: 'tree', ok: true, reason: 'incomplete', remedy: cut.remedy }, lines);
      } else if (scan.notes.length === 0)
        report.add({ name: 'tree', ok: true, reason: 'no_visible_notes', remedy: remedyOf('no_visible_notes') }, lines);
      else report.add({ name: 'tree', ok: true }, lines);
      return scan;
    } catch (err) {
      const reason = reasonOf(err);
      report.add({ name: 'tree', ok: false, reason, remedy: remedyOf(reason) }, [`the scan stopped: ${reason}`]);
      return reason;
    }
  }
}
