/**
 * The loaded, validated policy (docs/POLICY.md). Produced only by `loadPolicy`; every field is already checked
 * against its default, ceiling and cross-constraints.
 */
import type { NameRule, NoteFilter } from '../trust/types.js';
import type { WritersSpec } from './accounts.js';

/** Effective limits after defaults (docs/POLICY.md table). Characters are Unicode code points. */
export interface Limits {
  max_results: number;
  default_results: number;
  snippet_chars: number;
  total_chars: number;
  max_file_bytes: number;
  max_entries: number;
  max_depth: number;
  read_chars: number;
  max_total_bytes: number;
}

/** The policy's `audit` object after defaults (docs/AUDIT.md, `AUDIT_TABLE`). */
export interface AuditSettings {
  readonly enabled: boolean;
  readonly queries: 'none' | 'hmac';
  /** Days (UTC) of audit files kept. */
  readonly retain_days: number;
  /** Largest audit file in bytes before a new one starts. */
  readonly max_file_bytes: number;
}

export interface Policy extends NoteFilter {
  readonly version: 1;
  /** Absolute canonical root directory. */
  readonly root: string;
  readonly allow: readonly string[];
  readonly deny: readonly string[];
  readonly allowCron: boolean;
  readonly allowSubagents: boolean;
  readonly names: NameRule;
  readonly limits: Readonly<Limits>;
  /** Named writers as written (names not yet resolved; `resolveWriters` in accounts.ts does that every call). */
  readonly writers: WritersSpec;
  /** The audit trail's settings (docs/AUDIT.md). */
  readonly audit: AuditSettings;
}
