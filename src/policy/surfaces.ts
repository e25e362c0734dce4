/**
 * The policy's Hermes surface objects (docs/HERMES.md §Recall, §System prompt section): `recall`, which answers
 * Hermes's `pre_llm_call` hook with the top allowed snippets for the user's message, and `prompt_section`, which
 * tells each new session that the tools exist. Both are off unless the operator turns them on. Their keys, defaults
 * and ranges are data (RECALL_TABLE, PROMPT_SECTION_TABLE); the zod schemas are built from the tables.
 */
import { z } from 'zod';

/** One row of a surface table: a key, its default as JSON writes it, its range (numbers) and its meaning. */
export interface SurfaceSpec {
  readonly key: string;
  readonly default: boolean | number | string;
  /** Smallest and largest accepted value of a number (integer when `unit` is `notes` or `characters`); else null. */
  readonly range: readonly [number, number] | null;
  readonly unit: 'flag' | 'notes' | 'characters' | 'score' | 'text';
  readonly meaning: string;
}

/** Largest `recall.max_chars` (the ceiling of `limits.total_chars`, which it may not exceed either). */
export const MAX_RECALL_CHARS = 100_000;
/** Largest `recall.min_score` (far above any score a note reaches; src/search/select.ts orders by it). */
export const MAX_MIN_SCORE = 1_000_000;
/** Longest `prompt_section.about`, in code points (one line of operator text). */
export const MAX_ABOUT_CHARS = 200;

/** Keys of the policy's `recall` object (docs/HERMES.md §Recall), in the order the docs list them. */
export const RECALL_TABLE: readonly SurfaceSpec[] = Object.freeze(
  (
    [
      {
        key: 'enabled',
        default: false,
        range: null,
        unit: 'flag',
        meaning: "Answer Hermes's pre_llm_call hook with the top allowed snippets for the user's message.",
      },
      {
        key: 'max_notes',
        default: 3,
        range: [1, 5],
        unit: 'notes',
        meaning: 'Most notes recalled before one turn.',
      },
      {
        key: 'max_chars',
        default: 1500,
        range: [1, MAX_RECALL_CHARS],
        unit: 'characters',
        meaning: 'Most characters of ids, titles and snippets recalled before one turn; at most limits.total_chars.',
      },
      {
        key: 'min_score',
        default: 0,
        range: [0, MAX_MIN_SCORE],
        unit: 'score',
        meaning: 'A note is recalled only when its search score is above this (0: any match).',
      },
      {
        key: 'cron',
        default: false,
        range: null,
        unit: 'flag',
        meaning: 'Recall in cron runs too (allow_cron must also be true).',
      },
      {
        key: 'subagents',
        default: false,
        range: null,
        unit: 'flag',
        meaning: 'Recall in subagent runs too (allow_subagents must also be true).',
      },
    ] satisfies SurfaceSpec[]
  ).map((row) => Object.freeze(row)),
);

/** Keys of the policy's `prompt_section` object (docs/HERMES.md §System prompt section). */
export const PROMPT_SECTION_TABLE: readonly SurfaceSpec[] = Object.freeze(
  (
    [
      {
        key: 'enabled',
        default: false,
        range: null,
        unit: 'flag',
        meaning: "Add a short section to each new session's system prompt saying that the memory tools exist.",
      },
      {
        key: 'about',
        default: '',
        range: null,
        unit: 'text',
        meaning: `One line (at most ${MAX_ABOUT_CHARS} characters) on what this profile's memory holds, shown in the section.`,
      },
    ] satisfies SurfaceSpec[]
  ).map((row) => Object.freeze(row)),
);

function rowOf(table: readonly SurfaceSpec[], key: string): SurfaceSpec {
  const row = table.find((r) => r.key === key);
  if (row === undefined) throw new Error(`no surface row for ${key}`);
  return row;
}

function flag(table: readonly SurfaceSpec[], key: string) {
  const row = rowOf(table, key);
  return z
    .boolean({ error: 'must be true or false' })
    .default(row.default as boolean)
    .describe(`${row.meaning} Default ${row.default}.`);
}

function number(table: readonly SurfaceSpec[], key: string, integer: boolean) {
  const row = rowOf(table, key);
  const [min, max] = row.range!;
  const range = `${integer ? 'an integer' : 'a number'} from ${min} to ${max}`;
  const base = integer ? z.int({ error: range }) : z.number({ error: range });
  return base.min(min, { error: range }).max(max, { error: range });
}

function withDefault(table: readonly SurfaceSpec[], key: string, integer: boolean) {
  const row = rowOf(table, key);
  const [min, max] = row.range!;
  return number(table, key, integer)
    .default(row.default as number)
    .describe(`${row.meaning} Unit: ${row.unit}. Default ${row.default}; from ${min} to ${max}.`);
}

/** `recall.max_chars` when the policy leaves it out: RECALL_TABLE's default, or limits.total_chars when smaller. */
export function defaultRecallChars(totalChars: number): number {
  return Math.min(rowOf(RECALL_TABLE, 'max_chars').default as number, totalChars);
}

/** True for text an operator may put on the prompt section's one line: no line break and no C0/C1 control. */
function isOneLine(text: string): boolean {
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp === 0x2028 || cp === 0x2029) return false;
  }
  return true;
}

/** The `recall` object; absent is `{"enabled": false}` with the defaults above. */
export const recallSchema = z.strictObject({
  enabled: flag(RECALL_TABLE, 'enabled'),
  max_notes: withDefault(RECALL_TABLE, 'max_notes', true),
  // Its default depends on limits.total_chars (`defaultRecallChars`), so it is filled in when the policy is built.
  max_chars: number(RECALL_TABLE, 'max_chars', true)
    .optional()
    .describe(
      `${rowOf(RECALL_TABLE, 'max_chars').meaning} Unit: characters. Default 1500, or limits.total_chars when smaller.`,
    ),
  min_score: withDefault(RECALL_TABLE, 'min_score', false),
  cron: flag(RECALL_TABLE, 'cron'),
  subagents: flag(RECALL_TABLE, 'subagents'),
});

/** The `prompt_section` object; absent is `{"enabled": false}`. */
export const promptSectionSchema = z.strictObject({
  enabled: flag(PROMPT_SECTION_TABLE, 'enabled'),
  about: z
    .string({ error: 'must be a string' })
    .refine((t) => [...t].length <= MAX_ABOUT_CHARS, { error: `must be at most ${MAX_ABOUT_CHARS} characters` })
    .refine(isOneLine, { error: 'must be one line without control characters' })
    .default('')
    .describe(rowOf(PROMPT_SECTION_TABLE, 'about').meaning),
});
