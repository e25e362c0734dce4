/**
 * The persisted index of a profile view (docs/DESIGN.md, "The persisted index"): where it lives, how the operator
 * command builds it, and how it is loaded. The file's format is src/search/persisted.ts; the command that writes it
 * is `memory-bridge index` (src/cli/commands/index.ts). The tool path never writes it.
 *
 * - **Where.** `<home>/plugin-data/memory-bridge/search-index.mbi`, beside the policy, in the trusted plugin-data
 *   directory; mode 0600.
 * - **What.** One view's postings, term dictionary, field lengths and per-entry note identity, from one scan through
 *   the profile's own policy and trust rule (`buildPersistedIndex`): it names only notes that profile saw, and holds
 *   no note text.
 * - **Load.** Read with the trust rule of every trusted file there (`readTrustedFileAndStat`: descriptor walk from
 *   `/`, owner root or this user, no group or world write, no ACL write grant, one link, no symlink), and also
 *   readable by its owner only; then checksum, version and structure (`decodePersisted`); then the view: a file built
 *   for another home, root or names rule is refused. Any refusal is an operator reason code
 *   (`PersistedRefusal`) and the file is ignored: the call answers as without it.
 * - **Use.** An entry is used only for a note this call's own scan returned, with the identity the entry holds
 *   (`revalidate`); anything else is rebuilt from the note's verified text.
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import type { Native } from '../../native/types.js';
import { BridgeError } from '../errors.js';
import { scanLimitsOf } from '../policy/scan-limits.js';
import type { Policy } from '../policy/types.js';
import { FIELDS, IndexBuilder, type NoteIndex, type TextFacts } from '../search/index.js';
import { builtFromPersisted } from '../search/persisted-adopt.js';
import {
  decodePersisted,
  encodePersisted,
  entryIdentity,
  type PersistedFormatRefusal,
  type PersistedIndex,
  revalidate,
} from '../search/persisted.js';
import { remedyOf } from '../remedies.js';
import { shellWord } from '../text/operator.js';
import { readTrustedFileAndStat } from '../trust/path.js';
import { scanTree } from '../trust/scan.js';
import { isRacyKey, type KnownNotes, type ScannedNote, type ScanResult } from '../trust/types.js';
import { parseCaller } from './caller.js';
import { IndexCache } from './index-cache.js';
import { policyAndRoot } from './start.js';

/** The persisted index's file name in the plugin-data directory. */
export const PERSISTED_INDEX_FILE = 'search-index.mbi';
/** Largest persisted index read, in bytes (about 0.4 × the notes' bytes; the default max_total_bytes is 1 GiB). */
export const MAX_PERSISTED_BYTES = 1024 * 1024 * 1024;
/** The command that builds or refreshes it (what status and doctor print), the home quoted for a shell. */
export function refreshCommand(home: string): string {
  return `memory-bridge index --home ${shellWord(home)}`;
}

/** `<home>/plugin-data/memory-bridge/search-index.mbi` for an absolute `home`. */
export function persistedIndexPath(home: string): string {
  return path.posix.join(home, 'plugin-data', 'memory-bridge', PERSISTED_INDEX_FILE);
}

/**
 * The view a persisted index belongs to: SHA-256 (hex) of `IndexCache.keyOf(home, policy)` (profile home, root,
 * names rule), so a file copied from another home or built under another root or names rule is refused.
 */
export function viewOf(home: string, policy: Pick<Policy, 'root' | 'names'>): string {
  return createHash('sha256').update(IndexCache.keyOf(home, policy)).digest('hex');
}

/**
 * Why a persisted index was not used (operator reason codes, never shown to the model):
 * `index_untrusted` (the trust rule refused the file or a directory above it; `detail` is its reason, e.g.
 * `untrusted_owner`, `group_writable`, `symlink`, `hard_link`), `index_readable` (group or others may read it),
 * `index_too_large`, `index_truncated`, `index_corrupt` (checksum, magic or structure), `index_version` (another
 * format), `index_foreign` (built for another view).
 */
export type PersistedRefusal =
  | 'index_untrusted'
  | 'index_readable'
  | 'index_too_large'
  | 'index_truncated'
  | 'index_corrupt'
  | 'index_version'
  | 'index_foreign';

const FORMAT_REFUSAL: Readonly<Record<PersistedFormatRefusal, PersistedRefusal>> = Object.freeze({
  truncated: 'index_truncated',
  corrupt: 'index_corrupt',
  version: 'index_version',
});

/** A load's outcome. `bytes` is the file's size; `ageMs` how long ago it was built (by its header). */
export type PersistedLoad =
  | { state: 'absent' }
  | { state: 'refused'; reason: PersistedRefusal; detail?: string }
  | { state: 'loaded'; index: PersistedIndex; bytes: number; ageMs: number };

/**
 * Load the persisted index of the view (`home`, `policy`) under the rule of the module comment.
 *
 * @param home   absolute profile home
 * @param policy this call's policy (its root and names rule name the view)
 * @returns absent, refused with its reason, or loaded; never throws for anything about the file
 * @throws ResourceExhaustedError (out of descriptors or memory), which is not a verdict on the file
 */
export function loadPersistedIndex(
  home: string,
  policy: Pick<Policy, 'root' | 'names'>,
  native?: Native,
  now: number = Date.now(),
): PersistedLoad {
  let read: ReturnType<typeof readTrustedFileAndStat>;
  try {
    read = readTrustedFileAndStat(persistedIndexPath(home), MAX_PERSISTED_BYTES, native);
  } catch (err) {
    if (!(err instanceof BridgeError)) throw err;
    if (err.reason === 'missing') return { state: 'absent' };
    if (err.reason === 'too_large') return { state: 'refused', reason: 'index_too_large' };
    return { state: 'refused', reason: 'index_untrusted', detail: err.reason };
  }
  if ((read.stat.mode & 0o077) !== 0) return { state: 'refused', reason: 'index_readable' };
  const decoded = decodePersisted(read.bytes);
  if ('refused' in decoded) return { state: 'refused', reason: FORMAT_REFUSAL[decoded.refused] };
  if (decoded.fields !== FIELDS.length) return { state: 'refused', reason: 'index_version' };
  if (decoded.view !== viewOf(home, policy)) return { state: 'refused', reason: 'index_foreign' };
  return { state: 'loaded', index: decoded, bytes: read.bytes.length, ageMs: Math.max(0, now - decoded.builtAtMs) };
}

/** A scan's known notes when nothing is known: every note is opened, judged and read. */
const NOTHING_KNOWN: KnownNotes = Object.freeze({ has: () => false });

/** What `buildPersistedIndex` made: the file's bytes and the counts the command reports. */
export interface PersistedBuild {
  bytes: Buffer;
  notes: number;
  terms: number;
  postings: number;
  /** Notes changed within the racy margin of the scan: their entries never match a later scan's key (rebuilt). */
  racy: number;
  /** The scan was cut by a budget (max_entries, max_total_bytes, max_depth): the index holds what it returned. */
  cut: ScanResult['cut'];
  skipped: Partial<Record<string, number>>;
}

/** How `buildPersistedIndex` runs. */
export interface PersistedBuildOptions {
  /** Told the notes read so far, after the scan and after each 1,000 notes indexed. */
  progress?: (phase: 'scanned' | 'indexed', notes: number) => void;
  /** ScanLimits.racyMarginMs of the scan (undefined: the trust layer's default; tests that write notes pass 0). */
  racyMarginMs?: number;
  /** The clock the header's build time is read from (ms since the epoch). */
  now?: () => number;
}

/**
 * Build the persisted index of `home`'s view: the profile's policy read through the trusted walk, the root opened
 * through it, every note scanned, judged and read exactly as a first search call does (the policy's allow and deny,
 * its limits and named writers, the trust rule), each read note indexed by `IndexBuilder` (the steps of a fresh
 * index's sync), and the result encoded without titles, tags or text, with each note's identity from this scan.
 *
 * @param home absolute profile home
 * @throws BridgeError('unavailable', reason) when the policy or the root is refused (as a tool call would be)
 */
export function buildPersistedIndex(home: string, native: Native, options: PersistedBuildOptions = {}): PersistedBuild {
  const { progress = () => undefined, now = Date.now } = options;
  const caller = parseCaller({ home, cron: false, subagent: false });
  const { policy, writers, rootFd } = policyAndRoot(caller, native, () => undefined);
  let scan: ScanResult;
  try {
    const limits = { ...scanLimitsOf(policy), writers, racyMarginMs: options.racyMarginMs };
    scan = scanTree(rootFd, policy, limits, NOTHING_KNOWN, native);
  } finally {
    native.close(rootFd);
  }
  const builtAtMs = now();
  progress('scanned', scan.notes.length);
  const builder = new IndexBuilder();
  for (const note of scan.notes) {
    builder.add(note.id, note.text!);
    if (builder.count % 1000 === 0) progress('indexed', builder.count);
  }
  const built = builder.finish();
  progress('indexed', built.count);
  const n = scan.notes.length;
  const ident = {
    mode: new Uint32Array(n),
    uid: new Uint32Array(n),
    gid: new Uint32Array(n),
    nlink: new Uint32Array(n),
  };
  let racy = 0;
  for (let i = 0; i < n; i++) {
    const note = scan.notes[i]!;
    const id = entryIdentity(note.stat);
    ident.mode[i] = id.mode;
    ident.uid[i] = id.uid;
    ident.gid[i] = id.gid;
    ident.nlink[i] = id.nlink;
    if (isRacyKey(note.key)) racy++;
  }
  const persisted: PersistedIndex = {
    view: viewOf(home, policy),
    builtAtMs,
    fields: FIELDS.length,
    count: n,
    ids: built.ids,
    keys: scan.notes.map((note) => note.key),
    ...ident,
    terms: built.table.terms,
    liveTerms: built.liveTerms,
    postings: built.postings,
    // The builder's slot arrays end at the last list; the file has one slot per (term, field).
    listAt: widened(built.listAt, built.table.terms.length * FIELDS.length),
    listSize: widened(built.listSize, built.table.terms.length * FIELDS.length),
    big: built.big,
    listCount: built.listCount,
    sorted: built.sorted,
    fieldLength: built.fieldLength,
    lengthSum: built.lengthSum,
  };
  return {
    bytes: encodePersisted(persisted),
    notes: n,
    terms: built.liveTerms,
    postings: built.postings.length,
    racy,
    cut: scan.cut,
    skipped: scan.skipped,
  };
}

/** `a` extended with zeros to `length` items. */
function widened(a: Int32Array, length: number): Int32Array {
  if (a.length >= length) return a;
  const out = new Int32Array(length);
  out.set(a);
  return out;
}

/** What the last first call of a view did with its persisted index (status and doctor show it; `lastUseOf`). */
export type PersistedUse =
  | { state: 'absent' }
  | { state: 'refused'; reason: PersistedRefusal; detail?: string }
  | { state: 'used'; revalidated: number; rebuilt: number; unused: number; ageMs: number };

/** True unless MEMORY_BRIDGE_PERSISTED_INDEX=0 (read on every first call). */
export function persistedIndexOn(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.MEMORY_BRIDGE_PERSISTED_INDEX !== '0';
}

/** Most views whose last use is remembered (one per profile home and root, usually a handful). */
const MAX_USES = 64;
const uses = new Map<string, PersistedUse & { at: number }>();

/** The last use recorded for a view (`IndexCache.keyOf`) in this process, with when (ms since the epoch). */
export function lastUseOf(key: string): (PersistedUse & { at: number }) | undefined {
  return uses.get(key);
}

function remember(key: string, use: PersistedUse): PersistedUse {
  uses.delete(key);
  uses.set(key, { ...use, at: Date.now() });
  if (uses.size > MAX_USES) uses.delete(uses.keys().next().value!);
  return use;
}

/** The view indexes already offered the persisted index: each is offered it once, on its first call. */
const offered = new WeakSet<NoteIndex>();

/**
 * The persisted index the first call of the view `key` (its empty `index`) may use: loaded under the rule of the
 * module comment, or undefined (off, absent or refused; a refusal is told to `notice` with its reason code and
 * remedy, and the call answers as without the file). An index is offered the file once: a view that stays empty
 * (no note allowed, or every note gone) does not read and check the whole file again on each call; a view dropped
 * and made again (a new index) is offered it again.
 */
export function persistedForFirstCall(
  index: NoteIndex,
  home: string,
  policy: Pick<Policy, 'root' | 'names'>,
  key: string,
  native: Native,
  notice: (reason: string, detail: string) => void,
): PersistedIndex | undefined {
  if (index.size !== 0 || offered.has(index) || !persistedIndexOn()) return undefined;
  const load = loadPersistedIndex(home, policy, native);
  offered.add(index);
  if (load.state === 'loaded') return load.index;
  remember(key, load);
  if (load.state === 'refused')
    notice(
      load.reason,
      `the persisted index was ignored${load.detail === undefined ? '' : ` (${load.detail})`}: ${remedyOf(load.reason)}`,
    );
  return undefined;
}

/**
 * Make the empty `index` hold exactly `notes` (a first call's scan, every note read and verified in this call) from
 * `persisted`: the entries that revalidate against this scan (`revalidate`) are adopted (`builtFromPersisted`,
 * `NoteIndex.adoptBuilt`), and one `sync` of the whole scan then indexes every other note from its text and keeps
 * the adopted ones. A stale or foreign entry is never used. Told to `notice` when notes had to be indexed again
 * (`index_stale`).
 *
 * @param facts the cold thread's title, tags and body start of every note of `notes` (ColdFeed.facts), or undefined
 *   (they are then computed here from each kept note's text)
 * @returns false (index unchanged) when no entry revalidated or the entries do not describe this scan; the call
 *   then builds as without the file
 * @throws Error from the adoption's sync (the caller drops the view, as after any failed sync)
 */
export function adoptPersisted(
  index: NoteIndex,
  notes: readonly ScannedNote[],
  persisted: PersistedIndex,
  key: string,
  notice: (reason: string, detail: string) => void,
  facts?: TextFacts,
  now: number = Date.now(),
): boolean {
  const check = revalidate(persisted, notes);
  const ageMs = Math.max(0, now - persisted.builtAtMs);
  const made = check.revalidated === 0 ? null : builtFromPersisted(persisted, notes, check.entryOf, facts);
  if (made === null || !index.adoptBuilt(made.notes, made.built)) {
    remember(key, { state: 'used', revalidated: 0, rebuilt: notes.length, unused: persisted.count, ageMs });
    if (notes.length > 0)
      notice('index_stale', `no entry of the persisted index matched this scan: ${remedyOf('index_stale')}`);
    return false;
  }
  index.sync(notes.map((note, pos) => (check.entryOf[pos]! >= 0 ? knownAs(note) : note)));
  remember(key, { state: 'used', revalidated: check.revalidated, rebuilt: check.rebuilt, unused: check.unused, ageMs });
  if (check.rebuilt > 0)
    notice(
      'index_stale',
      `${check.rebuilt} of ${notes.length} notes were indexed again from their text: ${remedyOf('index_stale')}`,
    );
  return true;
}

/** `note` as the scan gives a note the index already holds under its key: without text. */
function knownAs(note: ScannedNote): ScannedNote {
  return { id: note.id, key: note.key, stat: note.stat, text: undefined };
}
