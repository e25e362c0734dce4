/**
 * Doctor's checks before the policy: the platform bindings, the home, the installed shim and what the shim found
 * of the Hermes API. Each returns its check and sets its detail lines; src/hermes/doctor/run.ts runs them in order.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Native } from '../../../native/types.js';
import { MAX_NAMED_PROBLEMS, workerProgramProblems } from '../program-trust.js';
import { hermesApiLines, type PluginStatus, pluginStatus } from '../status.js';
import type { DoctorCheck } from './report.js';
import { remedyOf } from './remedy.js';

/** The platform bindings: none is a failure (tool calls are `unavailable`), an unverified platform a warning. */
export function platformCheck(native: Native | null, details: Map<string, string[]>): DoctorCheck {
  if (native === null) {
    details.set('platform', [`${process.platform} ${process.arch}: no bindings`]);
    return { name: 'platform', ok: false, reason: 'unsupported_platform', remedy: remedyOf('unsupported_platform') };
  }
  if (!native.verified) {
    details.set('platform', [`${native.platform} ${native.arch}: unverified platform`]);
    return { name: 'platform', ok: true, reason: 'unverified_platform', remedy: remedyOf('unverified_platform') };
  }
  details.set('platform', [`${native.platform} ${native.arch}`]);
  return { name: 'platform', ok: true };
}

/** Checks of the installed shim: present, ours, unchanged, and its worker command still there and trusted. */
export function pluginCheck(
  home: string,
  expectedVersion: string | undefined,
  details: Map<string, string[]>,
  native: Native | null,
): DoctorCheck {
  const p = pluginStatus(home);
  const failed = (reason: string): DoctorCheck => ({ name: 'plugin', ok: false, reason, remedy: remedyOf(reason) });
  if (p.state === 'absent') {
    details.set('plugin', [`not installed in ${p.dir}`]);
    return { name: 'plugin', ok: true, reason: 'not_installed', remedy: remedyOf('not_installed') };
  }
  if (p.state === 'foreign') {
    details.set('plugin', [`${p.dir} is a different plugin (it ${p.why})`]);
    return failed('foreign_plugin');
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
    return failed('worker_paths_missing');
  }
  try {
    const st = fs.lstatSync(path.join(p.dir, 'install.json'));
    const uid = process.getuid?.() ?? -1;
    if (!st.isFile() || (st.uid !== uid && st.uid !== 0) || (st.mode & 0o022) !== 0)
      return failed('install_record_untrusted');
  } catch {
    return failed('install_record_untrusted');
  }
  if (native !== null) {
    const problems = workerProgramProblems(p.node, p.cli, native);
    if (problems.count > 0) {
      for (const problem of problems.named)
        lines.push(`not trusted: ${problem.path} (${problem.reason}: ${remedyOf(problem.reason)})`);
      if (problems.count > MAX_NAMED_PROBLEMS)
        lines.push(`… and ${problems.count - MAX_NAMED_PROBLEMS} more objects Node would load that fail the same rule`);
      return failed('worker_program_untrusted');
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
 * The home as the plugin will see it: an existing directory (else `no_home`), an absolute path (a relative HERMES_HOME is `home_relative`) with no symbolic
 * link on the way (`home_symlink`: the worker walks the home from `/` without following links; realpath(3) says
 * where it really is).
 */
export function homeCheck(home: string, relativeHome: string | undefined, details: Map<string, string[]>): DoctorCheck {
  let isDirectory = false;
  try {
    isDirectory = fs.statSync(home).isDirectory();
  } catch {
    isDirectory = false;
  }
  if (!isDirectory) {
    details.set('home', [home]);
    return { name: 'home', ok: false, reason: 'no_home', remedy: remedyOf('no_home') };
  }
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
export function hermesApiCheck(plugin: PluginStatus, details: Map<string, string[]>): DoctorCheck | undefined {
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
