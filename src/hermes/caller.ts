/**
 * Who is calling through Hermes, decided from what the shim read in Hermes's process (docs/HERMES.md §Who is
 * calling, §Cron and subagents). The shim reads each signal and sends it as Hermes gave it (a path as its text, a
 * value JSON cannot hold as `{"type": <name>}`); every rule that turns the signals into a caller record is here.
 *
 * Signals (request field `hermes`; a key the shim leaves out is a signal this Hermes does not offer):
 *
 *   {"plugin_host": <HERMES_PLUGIN_HOST_PROCESS or "">, "home": <get_hermes_home()>,
 *    "registered_home": <get_hermes_home() when register() ran; left out when it could not be read>,
 *    "override": <get_hermes_home_override()>, "multiplex": <is_multiplex_active()>,
 *    "scope_home": <current_secret_scope_home()>, "subagent": <is_delegated_child_process_context()>,
 *    "cron_flag": <session HERMES_CRON_SESSION>, "platform": <session HERMES_SESSION_PLATFORM>,
 *    "cron_execution": <ctx.current_cron_execution() is not None>,
 *    "parent_cron_execution": <the same in the parent's view of a delegated child>,
 *    "profile_name": <ctx.profile_name>, "home_profile": <profile_name_for_home(the override, else the home)>}
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Caller } from '../tools/types.js';

/** Longest home path accepted, in bytes (Linux PATH_MAX). */
export const MAX_HOME_BYTES = 4096;
/** Longest profile name accepted (logs only); the empty string means "no name". */
export const MAX_PROFILE_CHARS = 128;

/** A caller record, or the reason code the call is refused for (src/remedies.ts has each one's remedy). */
export type CallerDecision = { ok: true; caller: Caller } | { ok: false; reason: string };

/** A refusal while deciding (caught by `callerFromSignals`). */
class Refused extends Error {
  constructor(readonly reason: string) {
    super(reason);
  }
}

/** How Hermes reads the cron session flag: stripped, lower-cased text; some releases bind True or False. */
const CRON_FLAG: Readonly<Record<string, boolean>> = Object.freeze({
  '1': true,
  true: true,
  yes: true,
  on: true,
  '': false,
  '0': false,
  false: false,
  no: false,
  off: false,
});

/** A real boolean, or the signal is not one we understand: `context_signal_conflict` (fail closed). */
function strictBool(value: unknown): boolean {
  if (typeof value !== 'boolean') throw new Refused('context_signal_conflict');
  return value;
}

/**
 * A home as Hermes gave it → the normalised absolute path (`//a/./b/` → `/a/b`).
 *
 * @throws Refused `bad_home` (not a non-empty text without NUL, or over MAX_HOME_BYTES) or `home_relative`
 */
function homePath(value: unknown): string {
  if (typeof value !== 'string' || value === '' || value.includes('\0')) throw new Refused('bad_home');
  if (!value.startsWith('/')) throw new Refused('home_relative');
  const normal = path.posix.normalize(value);
  const home = normal.length > 1 && normal.endsWith('/') ? normal.slice(0, -1) : normal;
  if (Buffer.byteLength(home, 'utf8') > MAX_HOME_BYTES) throw new Refused('bad_home');
  return home;
}

/** `p` with every symbolic link resolved, as far as it exists (the rest as it is), like Python's realpath. */
function resolved(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    const parent = path.dirname(p);
    return parent === p ? p : path.join(resolved(parent), path.basename(p));
  }
}

/** `home` unless a component is a symbolic link (`home_symlink`): the worker never follows one, so say why. */
function realHome(home: string): string {
  if (resolved(home) !== home) throw new Refused('home_symlink');
  return home;
}

/** A home, or null for Hermes's "none" (None or the empty text). */
function optionalHome(value: unknown): string | null {
  return value === null || value === undefined || value === '' ? null : homePath(value);
}

/** A session value: None → "", text → stripped; anything else `context_signal_conflict`. */
function sessionValue(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value !== 'string') throw new Refused('context_signal_conflict');
  return value.trim();
}

/** `HERMES_CRON_SESSION` → cron or not; a value Hermes would not write refuses `context_signal_conflict`. */
function cronFlag(value: unknown): boolean {
  if (value === null || value === undefined || typeof value === 'boolean') return value === true;
  const key = sessionValue(value).toLowerCase();
  if (!Object.hasOwn(CRON_FLAG, key)) throw new Refused('context_signal_conflict');
  return CRON_FLAG[key]!;
}

/** An optional flag the shim computed itself: absent, or a boolean. */
function optionalFlag(value: unknown): boolean {
  return value === undefined ? false : strictBool(value);
}

/** The home of the call: the bound home in a multiplexed gateway, else Hermes's home as at registration. */
function homeOf(s: Record<string, unknown>, multiplex: boolean): string {
  if (multiplex) {
    // One gateway serves several profiles: only the home bound to this call says which one is asking.
    const override = optionalHome(s.override);
    if (override === null) throw new Refused('multiplex_unbound');
    if (Object.hasOwn(s, 'scope_home') && optionalHome(s.scope_home) !== override)
      throw new Refused('context_signal_conflict');
    return realHome(override);
  }
  optionalHome(s.override); // a malformed override is a malformed signal even when unused
  const home = realHome(homePath(s.home));
  if (!Object.hasOwn(s, 'registered_home')) throw new Refused('context_module_missing');
  if (realHome(homePath(s.registered_home)) !== home) throw new Refused('home_mismatch');
  return home;
}

/** For the worker's log only, never for a decision; "" when Hermes names none (or a name over 128 characters). */
function profileOf(s: Record<string, unknown>, multiplex: boolean): string {
  for (const name of multiplex ? [s.home_profile] : [s.profile_name, s.home_profile]) {
    if (typeof name === 'string' && name !== '') return name.length <= MAX_PROFILE_CHARS ? name : '';
  }
  return '';
}

/**
 * Decide the caller of one call from the shim's signals (see the module comment for their shape).
 *
 * Rules (docs/HERMES.md §Who is calling, §Cron and subagents): the plugin-host isolation process is refused; a
 * multiplexed gateway's home is the bound home (which must agree with the secret-scope home when Hermes has that
 * helper); otherwise the home must equal the home seen at registration. A relative home, a home through a symbolic
 * link, a signal of the wrong type or value refuse. The call is a subagent call when Hermes says so, and cron when
 * any cron signal says so (the session flag, the session platform "cron", a current cron execution, or for a
 * subagent its parent's).
 *
 * @returns the caller record, or the reason code of the refusal; never throws
 */
export function callerFromSignals(signals: Record<string, unknown>): CallerDecision {
  try {
    const host = signals.plugin_host;
    // Plugin-host isolation runs plugins in a separate process whose context describes the host, not the turn.
    if (host !== undefined && host !== '' && host !== '0') throw new Refused('plugin_host_process');
    const multiplex = strictBool(signals.multiplex);
    const home = homeOf(signals, multiplex);
    const subagent = strictBool(signals.subagent);
    const cron =
      cronFlag(signals.cron_flag) ||
      sessionValue(signals.platform).toLowerCase() === 'cron' ||
      optionalFlag(signals.cron_execution) ||
      (subagent && optionalFlag(signals.parent_cron_execution));
    const profile = profileOf(signals, multiplex);
    return { ok: true, caller: profile === '' ? { home, cron, subagent } : { home, cron, subagent, profile } };
  } catch (err) {
    return { ok: false, reason: err instanceof Refused ? err.reason : 'internal' };
  }
}

/**
 * Why the plugin refuses a home Hermes gave at registration (`hermes-api.json`'s `home`), or null when it would
 * serve it: `bad_home`, `home_relative`, `home_symlink`, or `context_module_missing` when the shim could not read it.
 */
export function homeProblemOf(raw: unknown): string | null {
  if (raw === undefined) return 'context_module_missing';
  try {
    realHome(homePath(raw));
    return null;
  } catch (err) {
    return err instanceof Refused ? err.reason : 'internal';
  }
}
