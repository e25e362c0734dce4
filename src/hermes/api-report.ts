/**
 * What the Hermes plugin shim found of the Hermes API when Hermes last loaded it (docs/HERMES.md, "Hermes API
 * probe"). The shim's `register()` writes `<home>/plugins/memory-bridge/hermes-api.json`; `status` and `doctor`
 * read it here and say which API the shim found, what is missing and which optional signals it uses.
 *
 * File shape (written by the shim, mode 0600, replaced atomically):
 *
 *   {"v": 2, "checked_at": "<ISO-8601 UTC>", "python": "3.x.y", "hermes_version": "<version>" | null,
 *    "register_tool": bool, "helpers": {"<module>.<helper>": bool}, "optional": {"<signal>": bool},
 *    "missing": ["<what>"], "registered": bool, "home": <get_hermes_home() as the shim read it>}
 *
 * `home` is left out when the shim could not read it. The shim only reports what it saw; whether the plugin
 * refuses that home is decided here, by the worker's own rule (src/hermes/caller.ts `homeProblemOf`). A version 1
 * report (an older shim) carries that verdict as `home_problem` instead.
 */
import { homeProblemOf } from './caller.js';
import { readPluginRecord } from './plugin-record.js';

/** The report's file name inside the plugin directory. */
export const API_REPORT_FILE = 'hermes-api.json';
/** Largest report read (the shim writes well under 2 KiB). */
const MAX_REPORT_BYTES = 64 * 1024;

/** The parsed report. */
export interface HermesApiReport {
  checkedAt: string;
  python: string;
  hermesVersion: string | null;
  registerTool: boolean;
  helpers: Record<string, boolean>;
  optional: Record<string, boolean>;
  missing: string[];
  registered: boolean;
  homeProblem: string | null;
}

/** `absent`: Hermes has not loaded the shim since it was installed; `unreadable`: present but not a report. */
export type ApiReportState =
  | { state: 'absent' }
  | { state: 'unreadable' }
  | { state: 'found'; report: HermesApiReport };

const isStringList = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');
const isFlagMap = (v: unknown): v is Record<string, boolean> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every((x) => typeof x === 'boolean');

/**
 * Read `<pluginDir>/hermes-api.json` (`readPluginRecord`: O_NOFOLLOW, regular file, at most 64 KiB) and check its
 * shape.
 *
 * @param pluginDir absolute `<home>/plugins/memory-bridge`
 * @returns the report, or why there is none; never throws
 */
export function readApiReport(pluginDir: string): ApiReportState {
  const read = readPluginRecord(pluginDir, API_REPORT_FILE, MAX_REPORT_BYTES);
  if (read.state !== 'found') return read;
  const r = read.fields;
  if (
    (r.v !== 1 && r.v !== 2) ||
    typeof r.checked_at !== 'string' ||
    typeof r.python !== 'string' ||
    !(typeof r.hermes_version === 'string' || r.hermes_version === null) ||
    typeof r.register_tool !== 'boolean' ||
    !isFlagMap(r.helpers) ||
    !isFlagMap(r.optional) ||
    !isStringList(r.missing) ||
    typeof r.registered !== 'boolean' ||
    !(typeof r.home_problem === 'string' || r.home_problem === null || r.home_problem === undefined)
  ) {
    return { state: 'unreadable' };
  }
  return {
    state: 'found',
    report: {
      checkedAt: r.checked_at,
      python: r.python,
      hermesVersion: r.hermes_version,
      registerTool: r.register_tool,
      helpers: r.helpers,
      optional: r.optional,
      missing: r.missing,
      registered: r.registered,
      homeProblem: r.v === 2 ? homeProblemOf(r.home) : typeof r.home_problem === 'string' ? r.home_problem : null,
    },
  };
}

const found = (yes: boolean | undefined): string => (yes === true ? 'found' : 'absent');

/** What each optional signal gives, said when it is absent. */
const OPTIONAL_LINES: ReadonlyArray<[string, string, string]> = [
  [
    'ctx.current_cron_execution',
    'current_cron_execution',
    'cron is then told by the session flag and session platform only',
  ],
  ['parent_cron_view', 'parent cron view', "a subagent's cron parent is then told by the session values only"],
  [
    'agent.secret_scope.current_secret_scope_home',
    'current_secret_scope_home',
    'a multiplexed call is then checked against the bound home alone',
  ],
  ['ctx.profile_name', 'profile_name', 'the worker log then names the profile from the home'],
];

/**
 * Operator lines describing a report: when and where it was found, `register_tool`, the context helpers, each
 * optional signal, and whether the tools were registered (with what is missing when not).
 */
export function formatApiReport(report: HermesApiReport): string[] {
  const lines = [
    `found when Hermes ${report.hermesVersion ?? '(version not reported)'} last loaded the shim (${report.checkedAt}, Python ${report.python})`,
    `register_tool: ${report.registerTool ? 'found' : 'missing or incompatible'}`,
  ];
  const absentHelpers = Object.entries(report.helpers)
    .filter(([, ok]) => !ok)
    .map(([name]) => name);
  lines.push(
    absentHelpers.length === 0
      ? `context helpers: all ${Object.keys(report.helpers).length} found`
      : `context helpers missing: ${absentHelpers.join(', ')}`,
  );
  for (const [key, label, without] of OPTIONAL_LINES) {
    const here = report.optional[key];
    lines.push(`${label}: ${found(here)}${here === true ? '' : ` (${without})`}`);
  }
  lines.push(
    report.registered
      ? 'tools registered: memory_bridge_search, memory_bridge_read'
      : `tools NOT registered; missing: ${report.missing.join('; ')}`,
  );
  return lines;
}
