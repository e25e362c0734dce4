/**
 * Whether a profile's view is warm (docs/HERMES.md, "Warm first call"): the worker records each warm-up in
 * `<home>/plugins/memory-bridge/view.json`, and `status` and `doctor` read it here.
 *
 * File shape (written by the worker, mode 0600, replaced atomically):
 *
 *   {"v": 1, "pid": <worker pid>, "state": "building" | "warm" | "refused", "started_at": "<ISO-8601 UTC>",
 *    "finished_at": "<ISO-8601 UTC>" | null, "ms": <build time> | null, "notes": <notes in the view> | null,
 *    "view": "<16 hex: the view's digest, src/tools/warm.ts>" | null, "reason": "<reason code>" | null}
 *
 * The record says what the warm-up did in that worker; the view stays warm while that worker runs and the policy
 * keeps the view's root and names rule (a change makes the next call build a new view). Nothing in it comes from a
 * note: counts, times and a digest of the home, root and names rule.
 */
import fs from 'node:fs';
import path from 'node:path';
import { replaceFile } from '../atomic-write.js';
import type { Policy } from '../policy/types.js';
import { viewDigest, type WarmOutcome } from '../tools/warm.js';
import { pluginDirOf } from './home.js';
import { readPluginRecord } from './plugin-record.js';

/** The record's file name inside the plugin directory. */
export const VIEW_STATE_FILE = 'view.json';
/** Largest record read (the worker writes about 250 bytes). */
const MAX_STATE_BYTES = 16 * 1024;

/** One warm-up as recorded. */
export interface ViewState {
  v: 1;
  pid: number;
  state: 'building' | 'warm' | 'refused';
  started_at: string;
  finished_at: string | null;
  ms: number | null;
  notes: number | null;
  view: string | null;
  reason: string | null;
}

/** The record of a warm-up that has just started in this process. */
export function buildingState(now = new Date()): ViewState {
  return {
    v: 1,
    pid: process.pid,
    state: 'building',
    started_at: now.toISOString(),
    finished_at: null,
    ms: null,
    notes: null,
    view: null,
    reason: null,
  };
}

/** The record of a finished warm-up, from the one written at its start. */
export function finishedState(start: ViewState, outcome: WarmOutcome, now = new Date()): ViewState {
  const done = { ...start, finished_at: now.toISOString(), ms: Math.round(outcome.ms) };
  return outcome.ok
    ? { ...done, state: 'warm', notes: outcome.notes, view: outcome.view }
    : { ...done, state: 'refused', reason: outcome.reason };
}

/**
 * Replace `<home>/plugins/memory-bridge/view.json` with `state`, only when that directory is a real directory owned
 * by this user and not writable by group or others (as `install` leaves it), so the worker never writes through a
 * link or into a directory someone else controls. Best effort: returns false instead of throwing.
 */
export function writeViewState(home: string, state: ViewState): boolean {
  const dir = pluginDirOf(home);
  try {
    const st = fs.lstatSync(dir);
    if (!st.isDirectory() || st.uid !== process.geteuid?.() || (st.mode & 0o022) !== 0) return false;
    replaceFile(path.join(dir, VIEW_STATE_FILE), `${JSON.stringify(state)}\n`, 0o600);
    return true;
  } catch {
    return false;
  }
}

export type ViewStateRead = { state: 'absent' } | { state: 'unreadable' } | { state: 'found'; record: ViewState };

const isCount = (v: unknown): boolean => typeof v === 'number' && Number.isInteger(v) && v >= 0;
const isTextOrNull = (v: unknown): boolean => typeof v === 'string' || v === null;
const isCountOrNull = (v: unknown): boolean => v === null || isCount(v);

/**
 * Read `<pluginDir>/view.json` (`readPluginRecord`: O_NOFOLLOW, a regular file of at most 16 KiB) and check its
 * shape; never throws.
 */
export function readViewState(pluginDir: string): ViewStateRead {
  const read = readPluginRecord(pluginDir, VIEW_STATE_FILE, MAX_STATE_BYTES);
  if (read.state !== 'found') return read;
  const r = read.fields;
  const ok =
    typeof r === 'object' &&
    r !== null &&
    r.v === 1 &&
    isCount(r.pid) &&
    (r.state === 'building' || r.state === 'warm' || r.state === 'refused') &&
    typeof r.started_at === 'string' &&
    isTextOrNull(r.finished_at) &&
    isCountOrNull(r.ms) &&
    isCountOrNull(r.notes) &&
    isTextOrNull(r.view) &&
    isTextOrNull(r.reason);
  return ok ? { state: 'found', record: r as unknown as ViewState } : { state: 'unreadable' };
}

/**
 * True when process `pid` runs and is a memory-bridge worker: on Linux its command line ends with the argument
 * `worker` (a pid reused by another program does not count); elsewhere, that the process exists.
 */
export function workerRuns(pid: number): boolean {
  try {
    const cmdline = fs
      .readFileSync(`/proc/${pid}/cmdline`, 'latin1')
      .split('\0')
      .filter((a) => a !== '');
    return cmdline.at(-1) === 'worker';
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' && fs.existsSync('/proc/self')) return false;
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether the view is warm, and one operator line saying so and why. */
export interface ViewWarmth {
  warm: boolean;
  line: string;
}

/**
 * Describe the recorded warm-up of `home` against its current policy (undefined when the policy does not load).
 *
 * @param runs whether a worker process still runs (default `workerRuns`; tests pass their own)
 */
export function viewWarmth(
  home: string,
  read: ViewStateRead,
  policy: Pick<Policy, 'root' | 'names'> | undefined,
  runs: (pid: number) => boolean = workerRuns,
): ViewWarmth {
  if (read.state === 'absent')
    return { warm: false, line: 'not warm: no warm-up recorded (Hermes has not loaded the plugin with this version)' };
  if (read.state === 'unreadable')
    return { warm: false, line: `not warm: ${VIEW_STATE_FILE} is unreadable (start Hermes again to rewrite it)` };
  const r = read.record;
  const alive = runs(r.pid);
  if (r.state === 'refused')
    return { warm: false, line: `not warm: the warm-up of ${r.started_at} was refused (${r.reason ?? 'unknown'})` };
  if (!alive)
    return {
      warm: false,
      line: `not warm: the worker (pid ${r.pid}) that ${r.state === 'building' ? 'was building' : 'built'} the view has exited; the next Hermes start builds it again`,
    };
  if (r.state === 'building') return { warm: false, line: `building since ${r.started_at} (worker pid ${r.pid})` };
  if (policy !== undefined && r.view !== viewDigest(home, policy))
    return {
      warm: false,
      line: `not warm: the policy's root or names rule changed since the warm-up; the next call builds the new view`,
    };
  const seconds = ((r.ms ?? 0) / 1000).toFixed(1);
  return {
    warm: true,
    line: `warm: ${r.notes ?? 0} notes, built at ${r.finished_at} in ${seconds} s by worker pid ${r.pid}`,
  };
}
