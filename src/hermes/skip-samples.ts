/**
 * What `doctor` names of the objects its tree scan skipped (docs/CLI.md §doctor): the first few root-relative paths
 * per reason, shown so a terminal cannot be fooled by them, and the `doctor --list` command that prints the rest.
 * Operator output only: tool answers never carry a path.
 */
import { shellWord } from '../text/operator.js';

/** Paths named per reason in doctor's report; `--list` gives all of them. */
export const SAMPLES_PER_REASON = 3;

/**
 * Collects, through the scan's operator hook (`ScanLimits.onSkip`), the first `SAMPLES_PER_REASON` paths skipped
 * for each reason. Memory: at most that many paths per reason code (the codes are a fixed set).
 */
export class SkipSamples {
  private readonly byReason = new Map<string, string[]>();

  /** The `onSkip` hook: remembers `path` when fewer than `SAMPLES_PER_REASON` were kept for `reason`. */
  readonly onSkip = (reason: string, path: string): void => {
    let kept = this.byReason.get(reason);
    if (kept === undefined) {
      kept = [];
      this.byReason.set(reason, kept);
    }
    if (kept.length < SAMPLES_PER_REASON) kept.push(path);
  };

  /** The kept paths for `reason`, in scan order (empty when none were skipped for it). */
  of(reason: string): readonly string[] {
    return this.byReason.get(reason) ?? [];
  }

  /** Every reason with kept paths, as a plain object (doctor's `--json` `skipped` field). */
  toJSON(): Record<string, string[]> {
    return Object.fromEntries([...this.byReason].map(([reason, paths]) => [reason, [...paths]]));
  }
}

/** The command that lists every path skipped for `reason` under the profile `home` (absolute). */
export function listCommand(home: string, reason: string): string {
  return `memory-bridge doctor --home ${shellWord(home)} --list ${reason}`;
}
