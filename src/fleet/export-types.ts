/**
 * The shapes of one `export-fleet` run: what it is given (`ExportOptions`, built by the CLI from flags and the
 * environment) and what it answers (`ExportReport`, whose `summary` is the `--json` output; docs/EXPORT.md).
 */
import type { CapShortfall } from './caps.js';
import type { QdrantSettings } from './source-qdrant.js';

/** Where the cards come from. */
export type ExportSource = { kind: 'qdrant'; settings: QdrantSettings } | { kind: 'jsonl'; file: string };

/** Everything one run needs; the CLI builds it from flags and the environment. */
export interface ExportOptions {
  /** The output directory (absolute, or resolved against the working directory). */
  out: string;
  source: ExportSource;
  /** Domains to export (raw values); empty = all. Also the scope of mirror removal. */
  domains: string[];
  includeExpired: boolean;
  redact: boolean;
  /** Group name or numeric gid for `--group`, or null. */
  group: string | null;
  /** Newest history files kept per card; null = keep all. */
  keepHistory: number | null;
  dryRun: boolean;
  noWait: boolean;
  /**
   * Let a read that yields no valid card in scope remove every file of that scope (`--allow-empty`). Without it such
   * a run exits 1 and changes nothing: an empty answer is far more often a wrong file or collection than a fleet
   * that forgot everything.
   */
  allowEmpty?: boolean;
  /**
   * Most cards written into one client folder (`--max-cards-per-client`, default 1,000): the newest by `updated_at`
   * are kept. See src/fleet/caps.ts for the selection.
   */
  maxPerClient?: number;
  /**
   * Most cards written into one domain folder (`--max-cards-per-domain`, default 2,000), shared fairly between its
   * client folders.
   */
  maxPerDomain?: number;
  /**
   * Name of the source across runs (`--source-name`): mirror removal and history pruning act on files written from
   * the same source, and by default that is the Qdrant endpoint and collection, or the JSONL file's path, so a dated
   * dump file per run would be a new source each time. Null or absent: that default.
   */
  sourceName?: string | null;
  /** Environment for the key variable (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** "Now" in epoch seconds for the live rule (default: the clock at start). */
  nowSeconds?: number;
  /** Operator messages (stderr lines). */
  log?: (line: string) => void;
  /** Progress updates for a TTY bar: phase, done, total (total 0 = unknown). */
  progress?: (phase: 'read' | 'write', done: number, total: number) => void;
}

/** The closing summary; `--json` prints exactly these keys. */
export interface ExportSummary {
  ok: boolean;
  written: number;
  unchanged: number;
  /**
   * Files deleted: current files of cards gone from the source, no longer live or moved, and history files pruned by
   * `--keep-history`.
   */
  removed: number;
  history: number;
  skipped_secret: number;
  skipped_invalid: number;
  /** Cards not live (past `expires_at` and not pinned, or a status other than `active`), when not `--include-expired`. */
  skipped_expired: number;
  /** Cards left out by `--max-cards-per-client` or `--max-cards-per-domain` (their earlier files are removed). */
  skipped_over_cap: number;
  /**
   * Cards in the tree after this run (written or unchanged) whose text, names, entities or relations carry Unicode
   * tag characters (U+E0000–U+E007F) or bidi embedding, override or isolate controls (U+202A–U+202E,
   * U+2066–U+2069). They are written as they are; the tools show each as `<U+XXXX>` (docs/DESIGN.md §Returned
   * text).
   */
  hidden_controls: number;
}

/** The summary plus what the operator needs to act on. */
export interface ExportReport {
  summary: ExportSummary;
  /** Ids of cards not written because they hold a credential (never the credential). */
  secretIds: string[];
  /** Places in `--out` the export refused to touch, with the reason. */
  blocked: string[];
  /** Folders that lost cards to the caps (folder names with any credential-like piece redacted). */
  overCap: CapShortfall[];
  /** Each record counted in `skipped_invalid`: its point id (null when unusable), where it is, and why. */
  invalid: InvalidRecord[];
  /** Ids of the cards counted in `hidden_controls`, sorted. */
  hiddenControlIds: string[];
}

/** A record skipped as invalid. Never carries a card value: the id is normalised, the reason comes from the schema. */
export interface InvalidRecord {
  id: string | null;
  /** `line 12` for a JSONL source; absent for Qdrant points. */
  where?: string;
  /** `field: rule`, e.g. `created_at: required, missing`. */
  reason: string;
}
