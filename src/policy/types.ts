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

/** The policy's `recall` object after defaults (docs/HERMES.md §Recall, `RECALL_TABLE`). */
export interface RecallSettings {
  readonly enabled: boolean;
  /** Most notes recalled before one turn (1–5). */
  readonly max_notes: number;
  /** Most code points of ids, titles and snippets recalled before one turn (at most limits.total_chars). */
  readonly max_chars: number;
  /** A note is recalled only when its search score is above this. */
  readonly min_score: number;
  /** Recall in cron runs (which allow_cron must let call the tools at all). */
  readonly cron: boolean;
  /** Recall in subagent runs (which allow_subagents must let call the tools at all). */
  readonly subagents: boolean;
}

/** The policy's `prompt_section` object after defaults (docs/HERMES.md §System prompt section). */
export interface PromptSectionSettings {
  readonly enabled: boolean;
  /** One line of operator text on what this profile's memory holds ("" for none). */
  readonly about: string;
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
  /** Recall before each Hermes turn (docs/HERMES.md §Recall). */
  readonly recall: RecallSettings;
  /** The Hermes system prompt section (docs/HERMES.md §System prompt section). */
  readonly promptSection: PromptSectionSettings;
}
