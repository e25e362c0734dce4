/**
 * Where a Hermes profile keeps things, for the operator commands (install, uninstall, status, doctor).
 *
 * The target home is chosen the way Hermes chooses its own (docs/CLI.md; hermes-agent `hermes_constants`):
 * `--home DIR`, else `HERMES_HOME`, else the platform default `~/.hermes` (with Hermes's optional
 * `HERMES_DATA_DIR_SUFFIX` appended). Operator output may show these paths; tool output never does.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** The plugin's directory name under `<home>/plugins/` and its name in plugin.yaml. */
export const PLUGIN_NAME = 'memory-bridge';

export interface ResolvedHome {
  /** Absolute profile home. */
  home: string;
  /** Which rule chose it. */
  source: '--home' | 'HERMES_HOME' | 'default';
  /** Things the operator should know about the choice (one sentence each). */
  notes: string[];
  /** The HERMES_HOME value when it was relative (the plugin refuses such a home: `home_relative`). */
  relative?: string;
}

/**
 * Resolve the profile home for an operator command.
 *
 * @param flag     the `--home` value, when given (resolved against the working directory)
 * @param env      environment to read `HERMES_HOME` / `HERMES_DATA_DIR_SUFFIX` from
 * @param userHome the user's home directory (default `os.homedir()`)
 */
export function resolveHermesHome(
  flag: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
  userHome: string = os.homedir(),
): ResolvedHome {
  const notes: string[] = [];
  if (flag !== undefined && flag !== '') return { home: path.resolve(flag), source: '--home', notes };
  const fromEnv = env.HERMES_HOME?.trim();
  if (fromEnv !== undefined && fromEnv !== '') {
    if (!path.isAbsolute(fromEnv)) {
      notes.push(
        `HERMES_HOME is relative (${fromEnv}); Hermes would read it against its own working directory, and the plugin refuses a relative home. Set an absolute HERMES_HOME or pass --home.`,
      );
      return { home: path.resolve(fromEnv), source: 'HERMES_HOME', notes, relative: fromEnv };
    }
    return { home: path.resolve(fromEnv), source: 'HERMES_HOME', notes };
  }
  const suffix = env.HERMES_DATA_DIR_SUFFIX ?? '';
  const safeSuffix = /^[A-Za-z0-9._-]*$/.test(suffix) ? suffix : '';
  if (safeSuffix !== suffix) notes.push('HERMES_DATA_DIR_SUFFIX contains unexpected characters; ignored.');
  const home = path.join(userHome, `.hermes${safeSuffix}`);
  const active = activeProfile(home);
  if (active !== undefined && active !== 'default') {
    notes.push(
      `The sticky active Hermes profile is "${active}", but HERMES_HOME is unset, so this targets the default profile. For "${active}" pass --home ${path.join(home, 'profiles', active)}.`,
    );
  }
  return { home, source: 'default', notes };
}

/** The name in `<home>/active_profile` (Hermes's sticky profile), when present and plain. */
function activeProfile(home: string): string | undefined {
  try {
    const text = fs.readFileSync(path.join(home, 'active_profile'), 'utf8').trim();
    return /^[A-Za-z0-9._-]{1,64}$/.test(text) ? text : undefined;
  } catch {
    return undefined;
  }
}

/** `<home>/plugins/memory-bridge`: where Hermes discovers the plugin. */
export function pluginDirOf(home: string): string {
  return path.join(home, 'plugins', PLUGIN_NAME);
}

/** `<home>/plugin-data/memory-bridge`: where the policy lives (docs/POLICY.md). */
export function pluginDataDirOf(home: string): string {
  return path.join(home, 'plugin-data', PLUGIN_NAME);
}
