/**
 * Name rules of docs/POLICY.md (`names`: portable / unicode), the note-name rule, and read-id syntax validation
 * (docs/TRUST.md). Pure string checks; no filesystem call.
 */
import { BridgeError, type Reason } from '../errors.js';
import { MAX_ID_CHARS, MAX_ID_SEGMENTS, type NameRule } from './types.js';

const PORTABLE = /^[A-Za-z0-9._-]+$/;
/** Letters, marks, numbers, punctuation, symbols (general categories L, M, N, P, S) and U+0020 only. */
const UNICODE_ALLOWED = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]+$/u;
/** Separators other systems (Windows, classic macOS) read inside a name; never allowed under the unicode rule. */
const UNICODE_FORBIDDEN = /[/\\:]/;
/** C0 controls, DEL and C1 controls. */
const CONTROL = /\p{Cc}/u;

/**
 * Why one path segment fails the name rule, or null when it passes.
 * - `hidden`: a leading dot (under both rules; this also covers `.` and `..`).
 * - `bad_name`: empty; portable: anything outside `[A-Za-z0-9._-]`; unicode: a code point outside L/M/N/P/S and
 *   U+0020 (so no control, format, separator other than the space, surrogate, private-use or unassigned code
 *   point), a leading or trailing space, `/`, `\` or `:`.
 *
 * The unicode rule accepts a name in any normal form: macOS and sync tools write names decomposed (NFD), and the
 * id is the name as stored. Policy and `within` patterns are compared with the NFC form of the id
 * (src/policy/glob.ts), so a decomposed name is allowed and denied exactly as its composed spelling
 * (docs/POLICY.md §Names).
 */
export function segmentReason(name: string, rule: NameRule): Reason | null {
  if (name.length === 0) return 'bad_name';
  if (name.charCodeAt(0) === 0x2e) return 'hidden';
  if (rule === 'portable') return PORTABLE.test(name) ? null : 'bad_name';
  if (!UNICODE_ALLOWED.test(name) || UNICODE_FORBIDDEN.test(name)) return 'bad_name';
  if (name.charCodeAt(0) === 0x20 || name.charCodeAt(name.length - 1) === 0x20) return 'bad_name';
  return null;
}

/** True when one path segment passes the name rule (docs/POLICY.md); hidden names fail under both rules. */
export function segmentOk(name: string, rule: NameRule): boolean {
  return segmentReason(name, rule) === null;
}

/** True when `name` is a Markdown note name: it ends in lowercase `.md` and has at least one character before it. */
export function isNoteName(name: string): boolean {
  return name.length > 3 && name.endsWith('.md');
}

/** Number of Unicode code points in `text` (a surrogate pair counts once). */
export function codePointLength(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    // Skip the low half of a well-formed pair.
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

/** True when an id is within the read tool's syntax limits (512 code points, 16 segments): search returns no other. */
export function idWithinLimits(id: string, segments: number): boolean {
  return segments <= MAX_ID_SEGMENTS && idCharsWithinLimit(id);
}

/** True when an id has at most 512 code points (the read tool's length limit, docs/TRUST.md), whatever its depth. */
export function idCharsWithinLimit(id: string): boolean {
  return id.length <= MAX_ID_CHARS || codePointLength(id) <= MAX_ID_CHARS;
}

const ID_HINT = 'id: a relative document path as returned by memory_bridge_search';

/**
 * Validates the syntax of a read id (docs/TRUST.md) before any filesystem call.
 *
 * @param raw the untrusted `id` argument
 * @returns the id, unchanged
 * @throws BridgeError('invalid_request', 'bad_id', hint) for a non-string, an empty string, more than 512 code
 *   points or 16 segments, a leading `/`, an empty segment (`//` or a trailing `/`), a `.` or `..` segment,
 *   a backslash, NUL or any control character (C0, DEL, C1).
 */
export function validateId(raw: unknown): string {
  const bad = (): never => {
    throw new BridgeError('invalid_request', 'bad_id', ID_HINT);
  };
  if (typeof raw !== 'string' || raw.length === 0) return bad();
  if (raw.length > MAX_ID_CHARS && codePointLength(raw) > MAX_ID_CHARS) return bad();
  if (raw.includes('\\') || CONTROL.test(raw)) return bad();
  const segments = raw.split('/');
  if (segments.length > MAX_ID_SEGMENTS) return bad();
  for (const s of segments) {
    if (s === '' || s === '.' || s === '..') return bad();
  }
  return raw;
}
