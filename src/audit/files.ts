/**
 * Where a profile's audit trail lives and how its files are named (docs/AUDIT.md §Files): the directory
 * `<home>/plugin-data/memory-bridge/audit/` beside the policy, and files `audit-YYYY-MM-DD.NNNNNN.jsonl` (the UTC
 * day of their first record, then a six-digit sequence number from 000001), so the names' byte order is the
 * records' order.
 */
import path from 'node:path';

/** `<home>/plugin-data/memory-bridge` (the policy's directory) for an absolute, normal `home`. */
export function policyDirOf(home: string): string {
  return path.posix.join(home, 'plugin-data', 'memory-bridge');
}

/** The audit directory's name inside the policy's directory. */
export const AUDIT_DIR_NAME = 'audit';

/** `<home>/plugin-data/memory-bridge/audit`. */
export function auditDirOf(home: string): string {
  return path.posix.join(policyDirOf(home), AUDIT_DIR_NAME);
}

/** The per-home HMAC key's file name in the policy's directory (outside the audit directory: copies of the trail never carry it). */
export const KEY_FILE_NAME = 'audit.key';

/** Most files one audit directory may hold before every append is refused (`audit_unwritable`). */
export const MAX_AUDIT_FILES = 100_000;

/** Highest sequence number of one day (six digits). */
export const MAX_SEQUENCE = 999_999;

/** One audit file's name, parsed. */
export interface AuditFileName {
  readonly name: string;
  /** UTC day, `YYYY-MM-DD`. */
  readonly day: string;
  readonly sequence: number;
}

const NAME = /^audit-(\d{4}-\d{2}-\d{2})\.(\d{6})\.jsonl$/;

/** The parsed name, or null for any other directory entry (ignored by writers and readers alike). */
export function parseAuditName(name: string): AuditFileName | null {
  // Fixed-width pattern without nested repetition: linear in the name's length (at most 255 bytes).
  if (name.length !== 'audit-YYYY-MM-DD.000001.jsonl'.length) return null;
  const m = NAME.exec(name);
  if (m === null) return null;
  const sequence = Number(m[2]);
  if (sequence < 1) return null;
  return { name, day: m[1]!, sequence };
}

/** The file name of `day`'s file number `sequence` (1 to MAX_SEQUENCE). */
export function auditName(day: string, sequence: number): string {
  return `audit-${day}.${String(sequence).padStart(6, '0')}.jsonl`;
}

/** The UTC day (`YYYY-MM-DD`) of a time in ms since the epoch. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** The UTC day `days` days before `day`. */
export function dayMinus(day: string, days: number): string {
  return utcDay(Date.parse(`${day}T00:00:00Z`) - days * 86_400_000);
}

/** Audit file names of a listing (raw entry names), in record order. */
export function auditFilesOf(names: readonly string[]): AuditFileName[] {
  const files: AuditFileName[] = [];
  for (const n of names) {
    const parsed = parseAuditName(n);
    if (parsed !== null) files.push(parsed);
  }
  return files.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The chain's start: the `prev` of the very first record of a trail. */
export const GENESIS = '0'.repeat(64);
