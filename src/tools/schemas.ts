/**
 * The public input schemas of the two tools (docs/TOOLS.md), as plain JSON Schema. The MCP server advertises them
 * in tools/list and the Hermes shim mirrors them; `src/tools/args.ts` enforces the same bounds with zod.
 */
import { MAX_PATTERN_CHARS } from '../policy/glob.js';
import { MAX_TAG_CHARS } from '../search/tags.js';

/** The shape of a date argument (the server checks the date is real; src/tools/filters.ts `parseInstant`). */
const DATE_PATTERN = '^\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?(Z|[+-]\\d{2}:\\d{2})?)?$';

/** Longest query accepted, in code points. */
export const MAX_QUERY_CHARS = 500;
/** Longest id accepted, in code points (docs/TRUST.md). */
export const MAX_ID_CHARS = 512;
/** Hard ceiling of `limit` (the policy's `max_results` may lower it). */
export const LIMIT_CEILING = 10;
/** Most ids in one memory_bridge_read `ids`. */
export const MAX_READ_IDS = 5;
/** Longest `section` argument, in code points. */
export const MAX_SECTION_CHARS = 200;
/** Most headings an outline lists (src/search/sections.ts). */
export const MAX_OUTLINE_HEADINGS = 200;
/** Most `tags` in one search. */
export const MAX_FILTER_TAGS = 8;
/** Longest `modified_after` / `modified_before` text (`2026-12-01T09:30:00.123456789+01:00` is 35). */
export const MAX_DATE_CHARS = 35;
/** Most `within` patterns in one search. */
export const MAX_WITHIN_PATTERNS = 8;

export const SEARCH_INPUT_SCHEMA = Object.freeze({
  type: 'object',
  properties: {
    query: {
      type: 'string',
      minLength: 1,
      maxLength: MAX_QUERY_CHARS,
      description:
        'Words to look for in the notes this profile may read. May be left out when within, tags, modified_after or modified_before is given: then the matching notes come newest first.',
    },
    limit: {
      type: 'integer',
      minimum: 1,
      maximum: LIMIT_CEILING,
      description:
        'Most results to return (default set by the operator; a value above the policy max_results is lowered to it).',
    },
    within: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_WITHIN_PATTERNS,
      items: { type: 'string', minLength: 1, maxLength: MAX_PATTERN_CHARS },
      description:
        'Optional: only search notes whose id matches one of these glob patterns, e.g. ["decisions/**", "projects/*.md"]. * stays inside a folder, ** spans folders, {a,b} alternatives, [a-z] classes; case-insensitive. It only narrows what you may see, never widens it.',
    },
    tags: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_FILTER_TAGS,
      items: { type: 'string', minLength: 1, maxLength: MAX_TAG_CHARS + 1 },
      description:
        'Optional: only notes carrying every one of these tags (front matter tags or inline #tag; case-insensitive; "project" also matches #project/alpha), e.g. ["pricing"].',
    },
    modified_after: {
      type: 'string',
      minLength: 10,
      maxLength: MAX_DATE_CHARS,
      pattern: DATE_PATTERN,
      description:
        'Optional: only notes modified at or after this ISO 8601 date or date-time, UTC unless an offset is given, e.g. "2026-11-30" or "2026-11-30T09:00:00+01:00".',
    },
    modified_before: {
      type: 'string',
      minLength: 10,
      maxLength: MAX_DATE_CHARS,
      pattern: DATE_PATTERN,
      description: 'Optional: only notes modified before this ISO 8601 date or date-time, e.g. "2026-12-01".',
    },
    sort: {
      type: 'string',
      enum: ['relevance', 'modified'],
      description: 'Optional: "relevance" (default) or "modified" (newest first, ties by id).',
    },
  },
  additionalProperties: false,
} as const);

export const READ_INPUT_SCHEMA = Object.freeze({
  type: 'object',
  properties: {
    id: {
      type: 'string',
      minLength: 1,
      maxLength: MAX_ID_CHARS,
      description: 'A document id exactly as memory_bridge_search returned it (root-relative path).',
    },
    ids: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_READ_IDS,
      items: { type: 'string', minLength: 1, maxLength: MAX_ID_CHARS },
      description:
        'Instead of id: read up to 5 notes in one call, e.g. ["decisions/pricing.md", "runbook.md"]. Answers come in the order asked, each as a single read would answer, sharing one total_chars budget (each still at most read_chars).',
    },
    offset: {
      type: 'integer',
      minimum: 0,
      description:
        'Characters (Unicode code points) to skip, default 0 (inside the section when section is given). A cut answer gives next_offset: pass it to read on. Compare version across reads: it changes when the note changed.',
    },
    section: {
      type: 'string',
      minLength: 1,
      maxLength: MAX_SECTION_CHARS,
      description:
        'Read only the section under this heading (to the next heading of the same or a higher level): its text as shown, e.g. "Rollout plan", or its slug as a link writes it, e.g. "rollout-plan" from [[runbook#Rollout plan]].',
    },
    outline: {
      const: true,
      description: "true: list the note's headings (level, text, offset) instead of its text, at most 200.",
    },
  },
  additionalProperties: false,
} as const);

export const TOOL_DESCRIPTIONS = Object.freeze({
  memory_bridge_search:
    'Search the Markdown memory this profile is allowed to see. Returns ids, titles and short snippets. Pass within (glob patterns such as ["decisions/**"]), tags or modified_after/modified_before to search only part of it: they narrow, never widen. Without query, the matching notes come newest first.',
  memory_bridge_read:
    "Read one Markdown document by the id that memory_bridge_search returned (or up to 5 with ids). Long notes come in pieces: pass the next_offset of an answer as offset to read on. outline: true lists the headings; section reads one heading's section.",
} as const);

/** The public error JSON of docs/TOOLS.md §Errors, as a JSON Schema (both tools answer it). */
const ERROR_OUTPUT_SCHEMA = Object.freeze({
  type: 'object',
  properties: {
    ok: { const: false },
    error: {
      type: 'object',
      properties: {
        code: { enum: ['invalid_request', 'unavailable', 'not_found_or_denied'] },
        message: { type: 'string' },
        hint: { type: 'string' },
      },
      required: ['code', 'message'],
      additionalProperties: false,
    },
  },
  required: ['ok', 'error'],
  additionalProperties: false,
} as const);

/**
 * What `memory_bridge_search` answers (docs/TOOLS.md §Results): the hits, or the error JSON. MCP wants an output
 * schema whose root is an object; the two shapes are told apart by `ok`.
 */
export const SEARCH_OUTPUT_SCHEMA = Object.freeze({
  type: 'object',
  oneOf: [
    {
      type: 'object',
      properties: {
        ok: { const: true },
        results: {
          type: 'array',
          maxItems: LIMIT_CEILING,
          items: {
            type: 'object',
            properties: { id: { type: 'string' }, title: { type: 'string' }, snippet: { type: 'string' } },
            required: ['id', 'snippet'],
            additionalProperties: false,
          },
        },
        truncated: { type: 'boolean' },
        incomplete: { const: true },
      },
      required: ['ok', 'results', 'truncated'],
      additionalProperties: false,
    },
    ERROR_OUTPUT_SCHEMA,
  ],
} as const);

/** One note's text window (a read with `id`, and each readable item of a read with `ids`). */
const TEXT_READ_SCHEMA = Object.freeze({
  type: 'object',
  properties: {
    ok: { const: true },
    id: { type: 'string' },
    title: { type: 'string' },
    content: { type: 'string' },
    truncated: { type: 'boolean' },
    offset: { type: 'integer', minimum: 0 },
    next_offset: { type: 'integer', minimum: 0 },
    version: { type: 'string' },
    section: { type: 'string' },
  },
  required: ['ok', 'id', 'title', 'content', 'truncated', 'offset', 'version'],
  additionalProperties: false,
} as const);

/**
 * What `memory_bridge_read` answers (docs/TOOLS.md §Results): one note's text window, its outline (`outline: true`),
 * the answers of several reads (`ids`: `notes`, each a text window or the error JSON), or the error JSON.
 */
export const READ_OUTPUT_SCHEMA = Object.freeze({
  type: 'object',
  oneOf: [
    TEXT_READ_SCHEMA,
    {
      type: 'object',
      properties: {
        ok: { const: true },
        id: { type: 'string' },
        title: { type: 'string' },
        outline: {
          type: 'array',
          maxItems: MAX_OUTLINE_HEADINGS,
          items: {
            type: 'object',
            properties: {
              level: { type: 'integer', minimum: 1, maximum: 6 },
              text: { type: 'string' },
              offset: { type: 'integer', minimum: 0 },
            },
            required: ['level', 'text', 'offset'],
            additionalProperties: false,
          },
        },
        truncated: { type: 'boolean' },
        version: { type: 'string' },
      },
      required: ['ok', 'id', 'title', 'outline', 'truncated', 'version'],
      additionalProperties: false,
    },
    {
      type: 'object',
      properties: {
        ok: { const: true },
        notes: {
          type: 'array',
          minItems: 1,
          maxItems: MAX_READ_IDS,
          items: { oneOf: [TEXT_READ_SCHEMA, ERROR_OUTPUT_SCHEMA] },
        },
        truncated: { type: 'boolean' },
      },
      required: ['ok', 'notes', 'truncated'],
      additionalProperties: false,
    },
    ERROR_OUTPUT_SCHEMA,
  ],
} as const);
