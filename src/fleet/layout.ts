/**
 * Where a card's file goes inside `--out`: `<domain>/<client_id>/<slot_name>--<id>.md` (episodic cards
 * `episodic--<id>.md`), earlier revisions under `<domain>/<client_id>/history/`. Pure functions; the writer opens
 * these segments one descriptor at a time.
 *
 * Rule (docs/EXPORT.md §Layout): every segment passes the portable name rule of docs/POLICY.md (`[A-Za-z0-9._-]+`, no
 * leading dot), so a segment can never be `.`, `..`, empty, or contain `/`, NUL, bidi or zero-width characters, and
 * no card text can name a place outside `--out`. A domain folder is the raw domain only when the domain is exactly
 * `work`, `personal` or `shared`; anything else gets a sanitised name plus a short hash of the raw value, so no
 * case-insensitive policy glob (`work/**`) can take `Work` or `work\u200b` for `work`. Client and slot segments
 * that had to be changed carry a short hash too, so two different raw values do not merge silently.
 */
import { createHash } from 'node:crypto';
import type { Card } from './card.js';

/** The portable name rule (docs/POLICY.md `names: "portable"`), plus "no leading dot". */
const PORTABLE = /^[A-Za-z0-9._-]+$/;

/** The three domains the fleet defines; only these become folder names as they are. */
export const KNOWN_DOMAINS: readonly string[] = Object.freeze(['work', 'personal', 'shared']);

/** Longest sanitised stem kept before the hash suffix, in characters. Keeps every file name far below 255 bytes. */
export const MAX_STEM = 64;

/** Hex digits of the short hash suffix (48 bits). */
export const HASH_HEX = 12;

/** Name of the per-client history folder. A client id equal to it in any case is always rewritten (with a hash). */
export const HISTORY_DIR = 'history';

/** True when `name` passes the portable rule and does not start with a dot. */
export function isPortableName(name: string): boolean {
  return PORTABLE.test(name) && !name.startsWith('.');
}

/**
 * Short hash of a raw value: the first {@link HASH_HEX} hex digits of SHA-256 over its UTF-16 code units, so values
 * that differ only in a lone surrogate (which UTF-8 encoding would blur) still hash apart.
 */
export function shortHash(raw: string): string {
  return createHash('sha256').update(Buffer.from(raw, 'utf16le')).digest('hex').slice(0, HASH_HEX);
}

/**
 * Replace every character outside `[A-Za-z0-9._-]` with `_`, drop leading dots, and cut to {@link MAX_STEM}
 * characters. An empty result becomes `_`.
 */
export function sanitiseStem(raw: string): string {
  let s = '';
  for (const ch of raw) s += /^[A-Za-z0-9._-]$/.test(ch) ? ch : '_';
  s = s.replace(/^\.+/, '').slice(0, MAX_STEM);
  return s === '' ? '_' : s;
}

/** `<sanitised>-<hash of raw>`: always portable, never equal to a known domain or to `history`. */
function hashed(raw: string): string {
  return `${sanitiseStem(raw)}-${shortHash(raw)}`;
}

/**
 * The part of a segment made from the card's value: the segment without the `-<hash>` suffix the layout adds.
 * Only these parts can carry a credential; the suffix, the `--` separator, the point id and history stamps are the
 * export's own characters (see {@link CardLocation.fromCard}).
 */
function cardPart(segment: string, raw: string): string {
  return segment === raw ? raw : sanitiseStem(raw);
}

/** Folder name for a domain: the raw value for exactly work/personal/shared, else sanitised + hash. */
export function domainSegment(domain: string): string {
  return KNOWN_DOMAINS.includes(domain) ? domain : hashed(domain);
}

/**
 * Folder or file-stem name for a client id or slot name: the raw value when it already passes the portable rule,
 * fits {@link MAX_STEM}, is all lower-case and is not reserved (compared without case); otherwise sanitised + hash.
 *
 * Why lower-case only: policy patterns match without regard to case and some filesystems fold case, so `HISTORY`
 * would be taken for the `history` folder by a policy that denies history folders, and `Hermes` and `hermes` would
 * share one folder on a case-insensitive filesystem. A name with any upper-case letter keeps its spelling but gains the
 * hash of its exact raw value, so no two raw values fold to the same segment.
 */
export function freeTextSegment(raw: string, reserved: readonly string[] = [], forceHash = false): string {
  const lower = raw.toLowerCase();
  const isReserved = reserved.some((r) => r.toLowerCase() === lower);
  if (!forceHash && isPortableName(raw) && raw.length <= MAX_STEM && raw === lower && !isReserved) return raw;
  return hashed(raw);
}

/** Root-relative location of a card's current file. `dir` is `[domain, client]`; `stem` has no `.md`. */
export interface CardLocation {
  dir: [string, string];
  stem: string;
  /** `stem + ".md"`. */
  file: string;
  /** `dir.join('/') + '/' + file`. */
  relPath: string;
  /**
   * The pieces of the path made from the card's own values (domain, client id, slot name, each as sanitised, without
   * the hash suffix). The credential gate scans these one by one rather than `relPath`: joined with the export's own
   * separators and point id, a harmless slot name such as `sk` or `xoxb` would read `sk--6f1c…` or `xoxb--6f1c…`,
   * which token rules match, and the card could never be written.
   */
  fromCard: string[];
}

/** Which name values the caller already changed (redacted): those always carry the hash, like sanitised ones. */
export interface ChangedNames {
  client?: boolean;
  slot?: boolean;
}

/**
 * Location of a card's current file. The point id is already normalised (UUID or decimal integer), so it is
 * portable as it stands. `changed` marks client or slot values the caller rewrote (a redacted credential): they
 * get the hash suffix even when portable, so a redacted name never equals a real client literally so called.
 */
export function cardLocation(
  card: Pick<Card, 'id' | 'domain' | 'client_id' | 'slot_name' | 'memory_type'>,
  changed: ChangedNames = {},
): CardLocation {
  const domain = domainSegment(card.domain);
  const client = freeTextSegment(card.client_id, [HISTORY_DIR], changed.client === true);
  const slot =
    card.memory_type === 'episodic' ? 'episodic' : freeTextSegment(card.slot_name, [], changed.slot === true);
  const stem = `${slot}--${card.id}`;
  const file = `${stem}.md`;
  const fromCard = [cardPart(domain, card.domain), cardPart(client, card.client_id)];
  if (card.memory_type !== 'episodic') fromCard.push(cardPart(slot, card.slot_name));
  return { dir: [domain, client], stem, file, relPath: `${domain}/${client}/${file}`, fromCard };
}

/** `yyyymmddThhmmssZ` in UTC for epoch seconds (fractions dropped). */
export function compactUtc(epochSeconds: number): string {
  return new Date(Math.floor(epochSeconds) * 1000)
    .toISOString()
    .replace(/\.\d{3}Z$/, 'Z')
    .replace(/[-:]/g, '');
}

/** History file name for an earlier export of a card: `<stem>--r<revision>-<yyyymmddThhmmssZ>.md`. */
export function historyFile(stem: string, revision: number, updatedAt: number): string {
  return `${stem}--r${revision}-${compactUtc(updatedAt)}.md`;
}

/**
 * Parse a history file name back into its parts, or null when `name` is not one for `stem`. Used to find the
 * history of one card and to order it (revision, then time) for `--keep-history`.
 */
export function parseHistoryFile(stem: string, name: string): { revision: number; stamp: string } | null {
  const prefix = `${stem}--r`;
  if (!name.startsWith(prefix) || !name.endsWith('.md')) return null;
  const m = /^([0-9]{1,16})-([0-9]{8}T[0-9]{6}Z)\.md$/.exec(name.slice(prefix.length));
  if (!m) return null;
  return { revision: Number(m[1]), stamp: m[2]! };
}
