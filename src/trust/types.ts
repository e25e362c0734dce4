/**
 * Contracts between the trust layer (descriptor walk, checks, tree scan) and the layers above it.
 * The policy implements `NoteFilter`; the search index implements `KnownNotes`. The trust layer never imports
 * policy or search (dependencies point one way: tools → policy/search → trust → native).
 */
import type { FileStat } from '../../native/types.js';
import type { CallerView, StatThread } from './view.js';
import type { Writers } from './writers.js';

/** Name rule of docs/POLICY.md `names`. */
export type NameRule = 'portable' | 'unicode';

/**
 * What the policy decides about ids. Ids are root-relative POSIX paths ("projects/garden.md").
 * - `allowsNote(id)`: an allow pattern matches and no deny pattern matches (deny wins).
 * - `mayEnter(dirId)`: false when no allow pattern can match anything below `dirId`, or a deny pattern covers
 *   everything below it; such a directory is never opened or listed. Must be a sound over-approximation of
 *   "some id below dirId may be allowed".
 */
export interface NoteFilter {
  allowsNote(id: string): boolean;
  mayEnter(dirId: string): boolean;
}

/** Per-call scan limits (docs/POLICY.md §Limits, docs/TRUST.md §Budgets). */
export interface ScanLimits {
  names: NameRule;
  /** Policy-matching candidate notes considered per call; reaching it stops the scan (truncated). */
  maxEntries: number;
  /** Deepest note id, in segments (a note directly in the root has depth 1). */
  maxDepth: number;
  /** Sum of st_size of candidate notes considered per call; exceeding it stops the scan (truncated). */
  maxTotalBytes: number;
  /** Largest note in bytes. */
  maxFileBytes: number;
  /**
   * How long (ms) after a note's last change (ctime) a verification of it still counts as racy: its identity key
   * is then stored in a form the warm path never matches, so the note is opened and verified again on the next call.
   * Default `RACY_MARGIN_MS` (3000); tests that count opens of freshly written notes pass 0.
   */
  racyMarginMs?: number | undefined;
  /**
   * False: every note is still read and validated exactly as usual, but its text is dropped after the check
   * (`ScannedNote.text` is undefined), so memory stays bounded by one note. For operator counts (doctor), never for
   * an index. Default true.
   */
  keepText?: boolean | undefined;
  /**
   * Raw directory entries this call may list, at most RAW_ENTRY_CEILING (a larger value counts as the ceiling).
   * Tools always use the ceiling; tests lower it to reach the limit on a small tree (`BridgeOptions.rawEntryCeiling`).
   */
  rawEntryCeiling?: number | undefined;
  /**
   * Named writers of this call (resolved from the policy's `writers`): widen the owner, group and ACL checks of
   * every directory and note below the root (docs/TRUST.md §Named writers). Default none.
   */
  writers?: Writers | undefined;
  /**
   * Operator listing only (`doctor --list REASON`): told the reason and the root-relative path of every object the
   * scan skips (a name that is not UTF-8 is shown decoded with replacement characters). Never set for tool calls.
   */
  onSkip?: ((reason: string, path: string) => void) | undefined;
  /**
   * Operator counts only (doctor): told the root-relative id of every allowed, trusted note the depth look-ahead
   * finds below `maxDepth`, those below the 16-segment id limit included (down to LOOK_AHEAD_SEGMENTS). With it set
   * the look-ahead visits every such note instead of stopping at the first. Never set for tool calls.
   */
  onDeep?: ((id: string) => void) | undefined;
}

/** Hard ceiling on raw directory entries listed per call (docs/TRUST.md): more → `unavailable`. */
export const RAW_ENTRY_CEILING = 1_000_000;

/** The raw entry ceiling a scan or read with `limits` applies: `rawEntryCeiling` when lower, else the hard one. */
export function rawCeilingOf(limits: Pick<ScanLimits, 'rawEntryCeiling'>): number {
  const asked = limits.rawEntryCeiling;
  return asked !== undefined && asked >= 0 && asked < RAW_ENTRY_CEILING ? asked : RAW_ENTRY_CEILING;
}

/** Read-id syntax limits (docs/TRUST.md): over these an id is `invalid_request`, and search never returns one. */
export const MAX_ID_CHARS = 512;
export const MAX_ID_SEGMENTS = 16;

/**
 * Deepest id, in segments, the depth look-ahead looks at (docs/TRUST.md §Budgets). A note below the 16-segment id
 * limit can never be read whatever `max_depth` says, yet its folder is one the policy allows: the look-ahead still
 * finds it (the scan is `truncated`, doctor lists it under `too_deep`), so the operator learns to move it up. The
 * bound keeps one call's open descriptors and recursion to a fixed number of levels.
 */
export const LOOK_AHEAD_SEGMENTS = 32;

/**
 * Identity of a verified note: device, inode, size, mtime and ctime. Any change of content, mode, owner or ACL
 * changes ctime (and a replacement changes the inode), so an unchanged key means the object that passed every
 * check earlier is still that object with the same bytes.
 */
export type IdentityKey = string;

/**
 * The form of `key` a note verified within the racy margin of its last change is stored under (`CallerView.storedKey`):
 * a suffix no stat produces, so no later stat alone vouches for it (docs/DESIGN.md "Racy notes").
 */
export function racyKey(key: IdentityKey): IdentityKey {
  return `${key}${RACY_SUFFIX}`;
}

/** True for a key in its racy form (`racyKey`). */
export function isRacyKey(key: IdentityKey): boolean {
  return key.endsWith(RACY_SUFFIX);
}

const RACY_SUFFIX = ':racy';

/**
 * The search index tells the scan which notes it already holds verified text for, so warm calls do not re-read
 * unchanged notes. Trust (owner, mode, link count, device, size) is still checked from a fresh stat every call.
 */
export interface KnownNotes {
  /**
   * True when verified text of note `id` under identity `key` is held.
   *
   * `last` and `at` are a hint the scan may give: `last` is the `ScannedNote` it returned for this id in its
   * previous call (same id and key) and `at` the position this note will have in this call's `notes`. When the
   * last `sync` received that very object at that position, an implementation may answer from the record it
   * matched then (a position lookup instead of a search by id); the answer must be the one it would give without
   * the hint.
   */
  has(id: string, key: IdentityKey, last?: ScannedNote, at?: number): boolean;
}

/** One note that passed every check in this call. `text` is undefined when `KnownNotes.has` said it is known. */
export interface ScannedNote {
  id: string;
  key: IdentityKey;
  stat: FileStat;
  text: string | undefined;
}

/** The outcome of one scan (docs/TRUST.md §Scan, §Budgets). */
export interface ScanResult {
  /** Notes in scan order (ascending byte order of names, depth first). */
  notes: ScannedNote[];
  /** An entry or byte budget stopped the scan, or an allowed Markdown name exists below the depth limit. */
  truncated: boolean;
  /**
   * Which limit cut the scan when `truncated`: the entry or byte budget that stopped it, else `max_depth` (a trusted
   * candidate lies below the depth limit). Absent when nothing was cut. Operator output only (doctor).
   */
  cut?: 'max_entries' | 'max_total_bytes' | 'max_depth';
  /** Raw directory entries listed in this call (≤ RAW_ENTRY_CEILING). */
  rawEntries: number;
  /** Operator counts of skipped objects by reason (for doctor); never shown to the model. */
  skipped: Partial<Record<string, number>>;
  /**
   * Candidate notes whose kept statx answer stood in for this call's, vouched for by change notification
   * (docs/DESIGN.md §Change notification); absent when every candidate was statted.
   */
  unstatted?: number;
}

/** What a caller hands a scan beyond the policy: its view (what to keep between calls), and a second stat thread. */
export interface ScanOptions {
  /**
   * What this caller view keeps between calls (src/trust/view.ts): listings reused by directory identity, policy
   * answers, the last raw stat of each note, its watches. Without one, the scan uses a fresh view for this call
   * only: every directory is listed and every note statted as on a first call.
   */
  view?: CallerView;
  /**
   * A second thread that may issue part of the notes' statx calls (src/trust/warm/stat-pool.ts; production passes the
   * process's `statPool()`). Same call, same descriptor, same name bytes: which thread issued it never changes the
   * result. Without one, every stat is the main thread's.
   */
  statThread?: StatThread;
  /**
   * Change notification (docs/DESIGN.md §Change notification; needs `view`): a note whose inotify watch has
   * reported nothing since its last statx, in a directory whose listing this scan reuses, keeps that statx's answer
   * instead of asking again. Off (the default): every candidate note is statted. Turning it off closes the view's
   * instance.
   */
  watch?: boolean;
  /**
   * Called with each note as it joins the result, in scan order (a note once pushed stays in the result, also when a
   * budget stops the scan later): the cold thread's feed (src/search/cold-thread.ts). With a sink, the texts
   * read in this call are kept in shared chunks (`TextArena`), which the sink may hand to another thread to read.
   * The sink only observes: it never changes what the scan checks, charges or returns. `besideScan()` true: a thread
   * is building beside this scan, which will wait for it, so the scan spends the time it has to spare on watching
   * the notes of directories it lists afresh (`CallerView.openDirectory`), which saves the next call that work.
   */
  noteSink?: { accept(note: ScannedNote): void; besideScan?(): boolean } | undefined;
}
