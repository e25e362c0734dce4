/**
 * `memory-bridge status`: the effective configuration of one profile home (docs/HERMES.md, docs/CLI.md).
 *
 * Reads the install record, the shim's and the worker's reports in the plugin directory, the policy (through the
 * same trusted read every tool call uses) and the view's persisted index (its trusted load); no writes. It walks the
 * notes only to dry-load a persisted index that loads (src/tools/persisted-report.ts: one stat per unchanged note),
 * and otherwise never probes the root: `doctor` does the probing.
 */
import { getNative } from '../../native/index.js';
import { remedyOf } from '../remedies.js';
import { bridgeErrorOf } from '../trust/refusal.js';
import { WritersError, type ResolvedWriter, type ResolvedWriters } from '../policy/accounts.js';
import { explainPolicyError, loadPolicyAndWriters, MAX_POLICY_BYTES, policyPath } from '../policy/load.js';
import { LIMIT_TABLE } from '../policy/schema.js';
import type { Limits, Policy } from '../policy/types.js';
import { readTrustedFile } from '../trust/path.js';
import { persistedIndexLines, reportPersistedIndex, type PersistedIndexReport } from '../tools/persisted-report.js';
import { type ApiReportState, formatApiReport, readApiReport } from './api-report.js';
import { pluginDirOf } from './home.js';
import { inspectPluginDir } from './install.js';
import { readViewState, viewWarmth, type ViewWarmth } from './view-state.js';

/** One limit as it applies: value, default, ceiling and whether the policy set it. */
export interface LimitStatus {
  key: keyof Limits;
  value: number;
  default: number;
  ceiling: number;
  unit: string;
  /** True when the policy file does not set this key (the default applies). */
  isDefault: boolean;
}

export type PluginStatus =
  | { state: 'absent'; dir: string }
  | { state: 'foreign'; dir: string; why: string }
  | {
      state: 'ours';
      dir: string;
      version: string;
      node: string;
      cli: string;
      modified: string[];
      /** What the shim found of the Hermes API when Hermes last loaded it (docs/HERMES.md, "Hermes API probe"). */
      hermesApi: ApiReportState;
    };

export type PolicyStatus =
  | {
      loads: true;
      root: string;
      names: Policy['names'];
      allow: string[];
      deny: string[];
      allowCron: boolean;
      allowSubagents: boolean;
      limits: LimitStatus[];
      /** Named writers resolved now: each entry as written, its uid or gid, and its name when it has one. */
      writers: ResolvedWriter[];
    }
  | { loads: false; reason: string; detail?: string };

/** Which run kinds this policy serves (docs/POLICY.md). */
export interface RunKindRule {
  interactive: true;
  cron: boolean;
  subagent: boolean;
  /** A call that is both cron and subagent, or MCP mode without --run-kind: needs both opt-ins. */
  cronSubagentOrUnknown: boolean;
}

export interface StatusReport {
  home: string;
  policyPath: string;
  plugin: PluginStatus;
  policy: PolicyStatus;
  /** Present when the policy loads. */
  runKinds?: RunKindRule;
  /** Present when the plugin is ours: whether the profile's view is warm (view-state.ts). */
  view?: ViewWarmth;
  /** Present when the policy loads (it names the view) and the platform has bindings: the view's persisted index. */
  persistedIndex?: PersistedIndexReport;
}

/** The state of the plugin directory, for status and doctor. */
export function pluginStatus(home: string): PluginStatus {
  const dir = pluginDirOf(home);
  const state = inspectPluginDir(dir);
  if (state.kind === 'absent') return { state: 'absent', dir };
  if (state.kind === 'foreign') return { state: 'foreign', dir, why: state.why };
  const { version, node, cli } = state.record;
  return { state: 'ours', dir, version, node, cli, modified: state.modified, hermesApi: readApiReport(dir) };
}

/**
 * Why a policy did not load, with the operator detail `explainPolicyError` gives for an invalid one.
 * The bytes are read through the trusted path again (only reached when that read itself succeeded).
 */
export function policyFailure(home: string, err: unknown): { reason: string; detail?: string } {
  if (err instanceof WritersError) return { reason: err.reason, detail: err.detail };
  const refusal = bridgeErrorOf(err);
  if (refusal === undefined) return { reason: 'internal' };
  if (refusal.reason !== 'policy_invalid') return { reason: refusal.reason };
  try {
    return { reason: refusal.reason, detail: explainPolicyError(readTrustedFile(policyPath(home), MAX_POLICY_BYTES)) };
  } catch {
    return { reason: refusal.reason };
  }
}

/** The `limits` keys the policy file sets explicitly (its bytes are already known to be valid). */
function explicitLimitKeys(home: string): Set<string> {
  try {
    const doc = JSON.parse(readTrustedFile(policyPath(home), MAX_POLICY_BYTES).toString('utf8')) as { limits?: object };
    return new Set(Object.keys(doc.limits ?? {}));
  } catch {
    return new Set();
  }
}

/** Load the policy and describe it; never throws for policy problems. */
export function policyStatus(home: string): { status: PolicyStatus; policy?: Policy; writers?: ResolvedWriters } {
  let policy: Policy;
  let writers: ResolvedWriters;
  try {
    ({ policy, writers } = loadPolicyAndWriters(home));
  } catch (err) {
    return { status: { loads: false, ...policyFailure(home, err) } };
  }
  const explicit = explicitLimitKeys(home);
  const limits: LimitStatus[] = LIMIT_TABLE.map((spec) => ({
    key: spec.key,
    value: policy.limits[spec.key],
    default: spec.default,
    ceiling: spec.ceiling,
    unit: spec.unit,
    isDefault: !explicit.has(spec.key),
  }));
  return {
    policy,
    writers,
    status: {
      loads: true,
      root: policy.root,
      names: policy.names,
      allow: [...policy.allow],
      deny: [...policy.deny],
      allowCron: policy.allowCron,
      allowSubagents: policy.allowSubagents,
      limits,
      writers: writers.list,
    },
  };
}

/**
 * Said wherever the run-kind rule is shown and calls of kind `unknown` are refused: an MCP host cannot tell a cron
 * job or subagent from a person, so `memory-bridge mcp` without `--run-kind` is kind `unknown` (docs/POLICY.md).
 */
export const MCP_RUN_KIND_NOTE =
  'MCP hosts need --run-kind interactive or both opt-ins: memory-bridge mcp without --run-kind is run kind "unknown", refused unless allow_cron and allow_subagents are both true';

/** The run-kind rule of docs/POLICY.md for a policy. */
export function runKindRule(policy: Pick<Policy, 'allowCron' | 'allowSubagents'>): RunKindRule {
  return {
    interactive: true,
    cron: policy.allowCron,
    subagent: policy.allowSubagents,
    cronSubagentOrUnknown: policy.allowCron && policy.allowSubagents,
  };
}

/**
 * Collect the status of `home` (absolute). No side effects; the tree is walked only for the dry load of a persisted
 * index that loads (module comment).
 */
export function collectStatus(home: string): StatusReport {
  const { status, policy, writers } = policyStatus(home);
  const report: StatusReport = { home, policyPath: policyPath(home), plugin: pluginStatus(home), policy: status };
  if (policy !== undefined) report.runKinds = runKindRule(policy);
  if (report.plugin.state === 'ours') report.view = viewWarmth(home, readViewState(report.plugin.dir), policy);
  const native = getNative();
  if (policy !== undefined && native !== null)
    report.persistedIndex = reportPersistedIndex(home, policy, native, { writers: writers?.writers });
  return report;
}

/** "user alice (uid 1001)", "group 3000 (gid 3000, no name)", as `status` lists a resolved writer. */
export function describeWriter(w: ResolvedWriter): string {
  const idKind = w.kind === 'user' ? 'uid' : 'gid';
  const label = typeof w.entry === 'string' ? w.entry : String(w.entry);
  const named = typeof w.entry === 'number' ? (w.name === undefined ? ', no name' : `, ${w.name}`) : '';
  return `${w.kind} ${label} (${idKind} ${w.id}${named})`;
}

const allowed = (yes: boolean): string => (yes ? 'allowed' : 'refused');

/** Operator lines for the shim's Hermes API report (status and doctor). */
export function hermesApiLines(api: ApiReportState): string[] {
  if (api.state === 'absent')
    return ['not yet seen: Hermes has not loaded the plugin since it was installed (enable it, then start Hermes)'];
  if (api.state === 'unreadable')
    return ['its report (hermes-api.json) is unreadable: start Hermes again to rewrite it'];
  return formatApiReport(api.report);
}

/** Human-readable status (operator output: paths are shown). */
export function formatStatus(report: StatusReport, homeSource?: string): string {
  const lines: string[] = [];
  lines.push(`Hermes home:   ${report.home}${homeSource === undefined ? '' : ` (from ${homeSource})`}`);
  const p = report.plugin;
  if (p.state === 'absent') lines.push(`Plugin:        not installed (${p.dir})`);
  else if (p.state === 'foreign') lines.push(`Plugin:        ${p.dir} is a different plugin (it ${p.why})`);
  else {
    lines.push(`Plugin:        memory-bridge ${p.version} in ${p.dir}`);
    lines.push(`  worker:      ${p.node} ${p.cli} worker`);
    if (p.modified.length > 0) lines.push(`  local changes: ${p.modified.join(', ')}`);
    lines.push(...hermesApiLines(p.hermesApi).map((l, i) => (i === 0 ? `Hermes API:    ${l}` : `  ${l}`)));
    if (report.view !== undefined) lines.push(`View:          ${report.view.line}`);
  }
  lines.push(`Policy:        ${report.policyPath}`);
  const pol = report.policy;
  if (!pol.loads) {
    lines.push(`  loads:       no (${pol.reason}${pol.detail === undefined ? '' : `: ${pol.detail}`})`);
    lines.push('  Every tool call for this profile answers "unavailable" until the policy loads.');
    lines.push(`  → ${remedyOf(pol.reason)}`);
    return lines.join('\n');
  }
  lines.push('  loads:       yes');
  lines.push(`Root:          ${pol.root}`);
  lines.push(`Names rule:    ${pol.names}`);
  lines.push(`Allow:         ${pol.allow.join(', ')}`);
  lines.push(`Deny:          ${pol.deny.length === 0 ? '(none)' : pol.deny.join(', ')}`);
  lines.push(`Writers:       ${pol.writers.length === 0 ? '(none: only you and root)' : 'you, root, and'}`);
  for (const w of pol.writers) lines.push(`  ${describeWriter(w)}`);
  const rk = report.runKinds!;
  lines.push('Run kinds:');
  lines.push(`  interactive                    ${allowed(true)}`);
  lines.push(`  cron                           ${allowed(rk.cron)} (allow_cron: ${pol.allowCron})`);
  lines.push(`  subagent                       ${allowed(rk.subagent)} (allow_subagents: ${pol.allowSubagents})`);
  lines.push(`  cron subagent, or unknown      ${allowed(rk.cronSubagentOrUnknown)} (needs both)`);
  if (!rk.cronSubagentOrUnknown) lines.push(`  ${MCP_RUN_KIND_NOTE}`);
  lines.push('Limits:');
  const width = Math.max(...pol.limits.map((l) => l.key.length));
  for (const l of pol.limits) {
    const origin = l.isDefault ? 'default' : `set; default ${l.default}`;
    lines.push(
      `  ${l.key.padEnd(width)}  ${String(l.value).padStart(10)} ${l.unit.padEnd(10)} (${origin}, ceiling ${l.ceiling})`,
    );
  }
  if (report.persistedIndex !== undefined)
    lines.push(
      ...persistedIndexLines(report.persistedIndex).map((l, i) => (i === 0 ? `Persisted index: ${l}` : `  ${l}`)),
    );
  return lines.join('\n');
}
