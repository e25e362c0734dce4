/**
 * Who is calling and what kind of run it is (docs/POLICY.md). The caller record comes from the host (Hermes shim
 * or the MCP launch flags), never from tool arguments; it is still checked here because it crosses a process
 * boundary in plugin mode.
 */
import path from 'node:path';
import { BridgeError } from '../errors.js';
import type { Policy } from '../policy/types.js';
import type { Caller } from './types.js';

/** A caller record that passed `parseCaller`: a usable home and the two run-kind signals. */
export interface CheckedCaller {
  /** Absolute profile home (no NUL). */
  readonly home: string;
  readonly cron: boolean;
  readonly subagent: boolean;
}

/**
 * The caller record as it crossed the process boundary, checked once per call; everything after this reads the
 * typed result. The record is copied, so a hostile object (getters, proxies) is read exactly once per field.
 *
 * @returns home, cron and subagent (the profile name is for logs only: `profileOf`)
 * @throws BridgeError('unavailable', reason): `bad_caller` when the record is not `{home, cron, subagent}` with
 *   the right types, `no_home` when home is null, `bad_home` when it is empty, relative or holds a NUL byte
 */
export function parseCaller(caller: unknown): CheckedCaller {
  if (typeof caller !== 'object' || caller === null) throw new BridgeError('unavailable', 'bad_caller');
  const c = caller as Partial<Record<keyof Caller, unknown>>;
  const cron = c.cron;
  const subagent = c.subagent;
  if (typeof cron !== 'boolean' || typeof subagent !== 'boolean') throw new BridgeError('unavailable', 'bad_caller');
  const home = c.home;
  if (home === null) throw new BridgeError('unavailable', 'no_home');
  if (typeof home !== 'string') throw new BridgeError('unavailable', 'bad_caller');
  if (home === '' || !path.posix.isAbsolute(home) || home.includes('\0'))
    throw new BridgeError('unavailable', 'bad_home');
  return { home, cron, subagent };
}

/**
 * The run-kind rule of docs/POLICY.md: `cron` needs `allow_cron`, `subagent` needs `allow_subagents`, and a call
 * that is both (which is also how `unknown` — MCP mode — arrives) needs both. Interactive calls always pass.
 *
 * @throws BridgeError('unavailable', 'run_kind_refused' | 'cron_refused' | 'subagent_refused') — the first for a call
 *   that carries both signals (MCP mode's `unknown`), so the operator log says which rule refused it
 */
export function checkRunKind(
  caller: Pick<Caller, 'cron' | 'subagent'>,
  policy: Pick<Policy, 'allowCron' | 'allowSubagents'>,
): void {
  if (caller.cron && caller.subagent && !(policy.allowCron && policy.allowSubagents)) {
    throw new BridgeError('unavailable', 'run_kind_refused');
  }
  if (caller.cron && !policy.allowCron) throw new BridgeError('unavailable', 'cron_refused');
  if (caller.subagent && !policy.allowSubagents) throw new BridgeError('unavailable', 'subagent_refused');
}

/** The profile name for logs, when the host gave a string (never used for decisions). */
export function profileOf(caller: unknown): string | undefined {
  if (typeof caller !== 'object' || caller === null) return undefined;
  try {
    const p = (caller as { profile?: unknown }).profile;
    return typeof p === 'string' ? p : undefined;
  } catch {
    return undefined;
  }
}
