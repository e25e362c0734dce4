/**
 * The policy document's schema (docs/POLICY.md) as a strict zod 4 schema, plus the limit table as data.
 *
 * Strict everywhere: an unknown key at any level is an error, required keys have no defaults, and every optional
 * key's default is stated in its description. The schema only judges the parsed JSON value; reading the file and
 * the strict JSON rules live in `load.ts` and `json.ts`.
 */
import path from 'node:path';
import { z } from 'zod';
import { promptSectionSchema, recallSchema } from './surfaces.js';
import type { Limits } from './types.js';
import { MAX_PATTERNS, MAX_PATTERN_CHARS, PATTERN_REASON_TEXT, validatePattern } from './glob.js';
import { MAX_ID } from '../trust/writers.js';

/** One row of the limit table: the key, its default and hard ceiling (every limit is at least 1), its unit. */
export interface LimitSpec {
  readonly key: keyof Limits;
  readonly default: number;
  readonly ceiling: number;
  readonly unit: 'results' | 'characters' | 'bytes' | 'entries' | 'segments';
  readonly meaning: string;
}

/**
 * Defaults and ceilings of every limit (docs/POLICY.md), in the order docs/POLICY.md, `status` and `doctor` print them.
 * "characters" are Unicode code points.
 */
export const LIMIT_TABLE: readonly LimitSpec[] = Object.freeze(
  (
    [
      {
        key: 'max_results',
        default: 10,
        ceiling: 10,
        unit: 'results',
        meaning: 'Largest `limit` a search may ask for.',
      },
      {
        key: 'default_results',
        default: 5,
        ceiling: 5,
        unit: 'results',
        meaning: 'Results a search returns when it gives no `limit`; must not exceed max_results.',
      },
      {
        key: 'snippet_chars',
        default: 300,
        ceiling: 300,
        unit: 'characters',
        meaning: 'Longest snippet in a search result.',
      },
      {
        key: 'total_chars',
        default: 4000,
        ceiling: 4000,
        unit: 'characters',
        meaning: 'Sum of id, title and snippet lengths over one search response; must be at least snippet_chars.',
      },
      {
        key: 'max_file_bytes',
        default: 262_144,
        ceiling: 1_048_576,
        unit: 'bytes',
        meaning: 'Largest note that is read; bigger notes are skipped.',
      },
      {
        key: 'max_entries',
        default: 200_000,
        ceiling: 500_000,
        unit: 'entries',
        meaning:
          'Trusted policy-matching candidate notes considered per call; reaching it stops the scan (the answer says incomplete).',
      },
      {
        key: 'max_depth',
        default: 8,
        ceiling: 16,
        unit: 'segments',
        meaning: 'Deepest note id in path segments (a note directly in the root has depth 1).',
      },
      {
        key: 'read_chars',
        default: 8000,
        ceiling: 8000,
        unit: 'characters',
        meaning: 'Longest content a read returns before it is cut with a truncation note.',
      },
      {
        key: 'max_total_bytes',
        default: 1_073_741_824,
        ceiling: 4_294_967_296,
        unit: 'bytes',
        meaning:
          'Sum of the sizes of trusted candidate notes considered per call; exceeding it stops the scan (the answer says incomplete).',
      },
    ] satisfies LimitSpec[]
  ).map((row) => Object.freeze(row)),
);

/** The limits in effect when `limits` is absent or empty. */
export const DEFAULT_LIMITS: Readonly<Limits> = Object.freeze(
  Object.fromEntries(LIMIT_TABLE.map((row) => [row.key, row.default])) as unknown as Limits,
);

function limitRow(key: keyof Limits): LimitSpec {
  const row = LIMIT_TABLE.find((r) => r.key === key);
  if (row === undefined) throw new Error(`no limit row for ${key}`);
  return row;
}

function limitField(key: keyof Limits) {
  const row = limitRow(key);
  const range = `an integer from 1 to ${row.ceiling}`;
  return z
    .int({ error: range })
    .min(1, { error: range })
    .max(row.ceiling, { error: range })
    .default(row.default)
    .describe(`${row.meaning} Unit: ${row.unit}. Default ${row.default}; at least 1; ceiling ${row.ceiling}.`);
}

function inRange(value: unknown, key: keyof Limits): value is number {
  const row = limitRow(key);
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= row.ceiling;
}

/** Longest accepted root path in bytes, excluding the terminating NUL (Linux PATH_MAX is 4096 with it). */
const MAX_ROOT_BYTES = 4095;

/**
 * Why `root` is unacceptable as written, or null. The symlink and ownership rules are not checked here: the
 * descriptor walk from `/` refuses a link or an untrusted directory anywhere in the chain (docs/TRUST.md).
 */
export function rootProblem(root: string): string | null {
  if (root.includes('\0')) return 'must not contain a NUL character';
  if (Buffer.byteLength(root, 'utf8') > MAX_ROOT_BYTES) return `must be at most ${MAX_ROOT_BYTES} bytes`;
  if (!root.startsWith('/')) return 'must be an absolute path';
  if (root === '/') return 'must not be the filesystem root "/"';
  if (root.endsWith('/')) return 'must not end with "/"';
  if (path.posix.normalize(root) !== root) return 'must be in normal form (no "//", "." or ".." components)';
  if (root === '/proc' || root.startsWith('/proc/')) return 'must not be /proc or below it';
  return null;
}

/**
 * `when` for a list's length checks: only a real array. Zod runs length checks on any value with a `length`
 * property even after the type check failed, so `{"length": [{}]}` (an object from the strict parser, which has no
 * prototype) would be compared with a number and throw instead of being reported as "not a list".
 */
const onlyArrays = (payload: { value: unknown }): boolean => Array.isArray(payload.value);

/**
 * A length check's parameters with `when: onlyArrays` added. `when` is a field of every Zod check's definition
 * (`$ZodCheckDef.when`) that the public parameter types of `.min`/`.max` leave out; it is set here, once.
 */
function onArrays<T extends { error: string }>(params: T): T {
  return Object.assign(params, { when: onlyArrays });
}

function patternList(min: number) {
  return z
    .array(z.string({ error: 'each pattern must be a string' }))
    .min(min, onArrays({ error: 'must list at least one pattern' }))
    .max(MAX_PATTERNS, onArrays({ error: `must list at most ${MAX_PATTERNS} patterns` }))
    .superRefine((list, ctx) => {
      if (list.length > MAX_PATTERNS) return; // reported by .max; never scan an oversized list
      list.forEach((p, i) => {
        const reason = validatePattern(p);
        if (reason !== null) ctx.addIssue({ code: 'custom', message: PATTERN_REASON_TEXT[reason], path: [i] });
      });
    });
}

/** Most entries in `writers.users` and in `writers.groups`. */
export const MAX_WRITERS = 64;

/**
 * A user or group name as `useradd`/`groupadd` accept it (letters, digits, ".", "_", "-", not starting with "-",
 * optionally ending in "$"), at most 256 characters.
 */
const WRITER_NAME = /^[A-Za-z0-9._][A-Za-z0-9._-]{0,254}\$?$/;

function writerList(kind: 'user' | 'group') {
  const what = `each ${kind} must be a ${kind} name (letters, digits, ".", "_", "-") or a numeric id from 0 to ${MAX_ID}`;
  return z
    .array(z.union([z.int().min(0).max(MAX_ID), z.string().regex(WRITER_NAME)], { error: what }), {
      error: `must be a list of ${kind} names or ids`,
    })
    .max(MAX_WRITERS, onArrays({ error: `must list at most ${MAX_WRITERS} ${kind}s` }))
    .default([])
    .describe(
      `${kind === 'user' ? 'Users' : 'Groups'} whose writes below the root are trusted: names (resolved on every ` +
        `call from /etc/${kind === 'user' ? 'passwd' : 'group'}; an unknown name makes the policy invalid) or ` +
        `numeric ids. Default []; at most ${MAX_WRITERS}.`,
    );
}

const writersSchema = z.strictObject({ users: writerList('user'), groups: writerList('group') });

const limitsSchema = z
  .strictObject({
    max_results: limitField('max_results'),
    default_results: limitField('default_results'),
    snippet_chars: limitField('snippet_chars'),
    total_chars: limitField('total_chars'),
    max_file_bytes: limitField('max_file_bytes'),
    max_entries: limitField('max_entries'),
    max_depth: limitField('max_depth'),
    read_chars: limitField('read_chars'),
    max_total_bytes: limitField('max_total_bytes'),
  })
  .superRefine((l, ctx) => {
    // Defaults are already filled in, so a limit given alone is compared with the other one's default.
    if (inRange(l.default_results, 'default_results') && inRange(l.max_results, 'max_results')) {
      if (l.default_results > l.max_results) {
        ctx.addIssue({
          code: 'custom',
          path: ['default_results'],
          message: `default_results (${l.default_results}) must not exceed max_results (${l.max_results}); a key left out takes its default`,
        });
      }
    }
    if (inRange(l.total_chars, 'total_chars') && inRange(l.snippet_chars, 'snippet_chars')) {
      if (l.total_chars < l.snippet_chars) {
        ctx.addIssue({
          code: 'custom',
          path: ['total_chars'],
          message: `total_chars (${l.total_chars}) must be at least snippet_chars (${l.snippet_chars}); a key left out takes its default`,
        });
      }
    }
  });

/** One row of the audit table: a key of the policy's `audit` object, its default, range and meaning. */
export interface AuditSpec {
  readonly key: 'enabled' | 'queries' | 'retain_days' | 'max_file_bytes';
  /** The default as JSON would write it. */
  readonly default: boolean | string | number;
  /** For integers: the smallest and largest accepted value; for the others, null. */
  readonly range: readonly [number, number] | null;
  readonly unit: 'flag' | 'choice' | 'days' | 'bytes';
  readonly meaning: string;
}

/**
 * Keys, defaults and ranges of the policy's `audit` object (docs/AUDIT.md), in the order docs/AUDIT.md lists them.
 * An absent `audit` object is `{"enabled": false}` with these defaults: the tool path then writes nothing.
 */
export const AUDIT_TABLE: readonly AuditSpec[] = Object.freeze(
  (
    [
      {
        key: 'enabled',
        default: false,
        range: null,
        unit: 'flag',
        meaning: 'Write one audit record per tool call; a call whose record cannot be written answers unavailable.',
      },
      {
        key: 'queries',
        default: 'none',
        range: null,
        unit: 'choice',
        meaning:
          '"none": no trace of the query; "hmac": HMAC-SHA256 of the query under a per-home key, never the text.',
      },
      {
        key: 'retain_days',
        default: 30,
        range: [1, 3660],
        unit: 'days',
        meaning: 'Audit files of days (UTC) older than this many days are removed when a new file starts.',
      },
      {
        key: 'max_file_bytes',
        default: 16_777_216,
        range: [65_536, 1_073_741_824],
        unit: 'bytes',
        meaning: 'A record that would make the current file bigger than this starts a new file.',
      },
    ] satisfies AuditSpec[]
  ).map((row) => Object.freeze(row)),
);

function auditRow(key: AuditSpec['key']): AuditSpec {
  const row = AUDIT_TABLE.find((r) => r.key === key);
  if (row === undefined) throw new Error(`no audit row for ${key}`);
  return row;
}

function auditInteger(key: 'retain_days' | 'max_file_bytes') {
  const row = auditRow(key);
  const [min, max] = row.range!;
  const range = `an integer from ${min} to ${max}`;
  return z
    .int({ error: range })
    .min(min, { error: range })
    .max(max, { error: range })
    .default(row.default as number)
    .describe(`${row.meaning} Unit: ${row.unit}. Default ${row.default}; from ${min} to ${max}.`);
}

const auditSchema = z.strictObject({
  enabled: z
    .boolean({ error: 'must be true or false' })
    .default(false)
    .describe(`${auditRow('enabled').meaning} Default false.`),
  queries: z
    .enum(['none', 'hmac'], { error: 'must be "none" or "hmac"' })
    .default('none')
    .describe(`${auditRow('queries').meaning} Default "none".`),
  retain_days: auditInteger('retain_days'),
  max_file_bytes: auditInteger('max_file_bytes'),
});

/** The policy document (docs/POLICY.md). Parse with `PolicySchema.safeParse(value)`; the output has every default. */
export const PolicySchema = z
  .strictObject({
    version: z.literal(1, { error: 'must be 1' }).describe('Format version. Required; must be 1.'),
    root: z
      .string({ error: 'must be a string' })
      .superRefine((root, ctx) => {
        const problem = rootProblem(root);
        if (problem !== null) ctx.addIssue({ code: 'custom', message: problem });
      })
      .describe(
        'Directory holding the notes. Required. Absolute, in normal form without a trailing "/", not "/" and not ' +
          'under /proc; every component must be a real directory (no symlink) that passes the trust rule.',
      ),
    allow: patternList(1).describe(
      `Patterns of note ids this profile may see. Required; 1 to ${MAX_PATTERNS} patterns of at most ` +
        `${MAX_PATTERN_CHARS} characters each.`,
    ),
    deny: patternList(0)
      .default([])
      .describe(
        `Patterns of note ids this profile may never see; deny wins over allow. Default []; at most ` +
          `${MAX_PATTERNS} patterns.`,
      ),
    allow_cron: z
      .boolean({ error: 'must be true or false' })
      .default(false)
      .describe('Whether cron runs may call the tools. Default false.'),
    allow_subagents: z
      .boolean({ error: 'must be true or false' })
      .default(false)
      .describe('Whether subagent runs may call the tools. Default false.'),
    names: z
      .enum(['portable', 'unicode'], { error: 'must be "portable" or "unicode"' })
      .default('unicode')
      .describe(
        'Name rule for every path segment below the root. "unicode" (default): letters, marks, numbers, ' +
          'punctuation, symbols and spaces in any normal form (NFC or NFD), no control, format or separator ' +
          'character, no leading dot, edge spaces, "/", "\\" or ":". "portable": [A-Za-z0-9._-]+.',
      ),
    writers: writersSchema
      .prefault({})
      .describe(
        'Team memory: users and groups, besides root and the running user, whose writes below the root are trusted ' +
          '(owner, group write, ACL entries). Never applies to the policy file or the directories above the root. ' +
          'Default none.',
      ),
    limits: limitsSchema
      .prefault({})
      .describe(
        'Per-call limits; every key optional with its default, at least 1 and at most its ceiling. Default {}.',
      ),
    audit: auditSchema
      .prefault({})
      .describe('The audit trail (docs/AUDIT.md): every key optional with its default. Default {} (off).'),
    recall: recallSchema
      .prefault({})
      .describe('Recall before each Hermes turn (docs/HERMES.md §Recall): every key optional. Default {} (off).'),
    prompt_section: promptSectionSchema
      .prefault({})
      .describe('The Hermes system prompt section (docs/HERMES.md §System prompt section). Default {} (off).'),
  })
  .superRefine((doc, ctx) => {
    // Limits are already filled in, so recall.max_chars given alone is compared with total_chars's default.
    const maxChars = doc.recall?.max_chars;
    const totalChars = doc.limits?.total_chars;
    if (typeof maxChars === 'number' && typeof totalChars === 'number' && maxChars > totalChars) {
      ctx.addIssue({
        code: 'custom',
        path: ['recall', 'max_chars'],
        message: `recall.max_chars (${maxChars}) must not exceed limits.total_chars (${totalChars}); a key left out takes its default`,
      });
    }
  })
  .describe('memory-bridge policy, <home>/plugin-data/memory-bridge/policy.json (docs/POLICY.md).');

/** The validated document with every default filled in. */
export type PolicyDocument = z.output<typeof PolicySchema>;
