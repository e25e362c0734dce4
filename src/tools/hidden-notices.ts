/**
 * Operator lines for notes a search could not consider (docs/TRUST.md §Hidden notes): from one scan's own counts
 * (`ScanResult.skipped`, `cut`), one line per view and reason, with the count and the `doctor` command that lists
 * them, never a name; rate-limited so a busy server does not flood its log. Pure bookkeeping: no filesystem call.
 */
import type { ScanResult } from '../trust/types.js';

/**
 * Skip reasons that hide a note the policy allows (docs/TRUST.md §Hidden notes): the names rule (`bad_name`), the
 * `max_file_bytes` budget (`too_large`) and the trust rule (link, owner, mode, ACL, open for writing, device, file
 * type, content, I/O). Not here, because they are the policy working as written or not a note at all: `denied`,
 * `not_markdown`, `hidden` (a leading dot, as `.obsidian` and `.trash`), `missing` (removed while the scan ran).
 */
export const HIDING_REASONS: readonly string[] = Object.freeze([
  'bad_name',
  'too_large',
  'symlink',
  'hard_link',
  'untrusted_owner',
  'group_writable',
  'world_writable',
  'acl_write',
  'acl_unreadable',
  'open_for_write',
  'other_device',
  'not_directory',
  'not_regular',
  'binary',
  'invalid_utf8',
  'io_error',
]);

/** Most time between two lines for one home and reason, in ms, once the first has been written: one minute. */
export const NOTICE_INTERVAL_MS = 60_000;
/** Most views whose last logged counts are kept (the oldest is forgotten first; it may then be logged again). */
export const MAX_NOTICE_VIEWS = 1024;

/** One operator line: `reason` is `hidden_notes` (skips) or `scan_cut` (a budget or the depth limit), `detail` its text. */
export interface HiddenNotice {
  reason: 'hidden_notes' | 'scan_cut';
  detail: string;
}

/** True for the reason of a line `HiddenNotices` gives (a server writes it as a line of its own). */
export function isHiddenNotice(reason: string): boolean {
  return reason === 'hidden_notes' || reason === 'scan_cut';
}

/**
 * Decides which lines one scan of a view gives. A line is written for a (view, reason) when its count differs from
 * the last one written for it (the first scan of a view that skips or cuts always differs), and no line for the same
 * home and reason was written in the last `intervalMs`; a count held back by the interval is written by the first
 * scan after it. So a home gets at most one line per reason per interval however many views (one per policy) its
 * calls use, an unchanged view stays quiet, and the first time a reason appears for a home it is told at once.
 */
export class HiddenNotices {
  /** Per view: the last count written per reason (0 once a reason written earlier has gone). */
  private readonly views = new Map<string, Map<string, number>>();
  /** Per home and reason: when its last line was written (ms, `now()`). */
  private readonly lastLine = new Map<string, number>();

  /**
   * @param intervalMs least time between two lines for one home and reason (ms, ≥ 0; default one minute)
   * @param now        the clock, in ms (default `Date.now`)
   */
  constructor(
    private readonly intervalMs = NOTICE_INTERVAL_MS,
    private readonly now: () => number = Date.now,
  ) {
    if (!(intervalMs >= 0)) throw new RangeError('intervalMs: a number ≥ 0');
  }

  /**
   * The lines for one scan of `view` (the index cache's view key) of `home`.
   *
   * @param scan the scan's counts as it returned them: `skipped` by reason, `cut` and the notes it kept
   * @returns zero or more lines, skips in the order of HIDING_REASONS, then the cut
   */
  report(home: string, view: string, scan: Pick<ScanResult, 'skipped' | 'cut' | 'notes'>): HiddenNotice[] {
    const counts = new Map<string, number>();
    for (const reason of HIDING_REASONS) {
      const n = scan.skipped[reason] ?? 0;
      if (n > 0) counts.set(reason, n);
    }
    if (scan.cut !== undefined) counts.set(scan.cut, scan.notes.length);
    let logged = this.views.get(view);
    if (logged === undefined) {
      if (counts.size === 0) return [];
      if (this.views.size >= MAX_NOTICE_VIEWS) this.views.delete(this.views.keys().next().value!);
      logged = new Map();
      this.views.set(view, logged);
    }
    // A reason written before and absent now is remembered as 0, so its return is a change.
    for (const reason of logged.keys()) if (!counts.has(reason)) logged.set(reason, 0);
    const lines: HiddenNotice[] = [];
    const now = this.now();
    for (const [reason, n] of counts) {
      if (logged.get(reason) === n) continue;
      const gate = `${home}\0${reason}`;
      const last = this.lastLine.get(gate);
      if (last !== undefined && now - last < this.intervalMs) continue;
      if (this.lastLine.size >= MAX_NOTICE_VIEWS * 4) this.lastLine.clear();
      this.lastLine.set(gate, now);
      logged.set(reason, n);
      lines.push(lineOf(reason, n));
    }
    return lines;
  }
}

/**
 * The text of one line (docs/TRUST.md §Hidden notes): reason code, count, the doctor command. The command names the
 * home as the placeholder `<home>`: operator logs carry no path (the server's home, the profile or the client named
 * on the same line says which one).
 */
function lineOf(reason: string, n: number): HiddenNotice {
  if (HIDING_REASONS.includes(reason))
    return { reason: 'hidden_notes', detail: `${reason} count=${n}; list them: ${DOCTOR} --list ${reason}` };
  // A cut: the scan stopped (or notes lie below max_depth) after `n` notes; doctor counts what it left out, and
  // `--list too_deep` names the notes below max_depth (a budget's cut has no list: the scan stopped).
  if (reason === 'max_depth')
    return { reason: 'scan_cut', detail: `${reason} searched=${n}; list what was left out: ${DOCTOR} --list too_deep` };
  return { reason: 'scan_cut', detail: `${reason} searched=${n}; count what was left out: ${DOCTOR}` };
}

/** The doctor command of every line. */
const DOCTOR = 'memory-bridge doctor --home <home>';
