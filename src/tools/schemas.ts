/**
 * The public input schemas of the two tools (docs/TOOLS.md), as plain JSON Schema. The MCP server advertises them
 * in tools/list and the Hermes shim mirrors them; `src/tools/args.ts` enforces the same bounds with zod.
 */

/** Longest query accepted, in code points. */
export const MAX_QUERY_CHARS = 500;
/** Longest id accepted, in code points (docs/TRUST.md). */
export const MAX_ID_CHARS = 512;
/** Hard ceiling of `limit` (the policy's `max_results` may lower it). */
export const LIMIT_CEILING = 10;

export const SEARCH_INPUT_SCHEMA = Object.freeze({
  type: 'object',
  properties: {
    query: {
      type: 'string',
      minLength: 1,
      maxLength: MAX_QUERY_CHARS,
      description: 'Words to look for in the notes this profile may read.',
    },
    limit: {
      type: 'integer',
      minimum: 1,
      maximum: LIMIT_CEILING,
      description: 'Most results to return (default set by the operator, at most the policy max_results).',
    },
  },
  required: ['query'],
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
  },
  required: ['id'],
  additionalProperties: false,
} as const);

export const TOOL_DESCRIPTIONS = Object.freeze({
  memory_bridge_search:
    'Search the Markdown memory this profile is allowed to see. Returns ids, titles and short snippets.',
  memory_bridge_read: 'Read one Markdown document by the id that memory_bridge_search returned.',
} as const);
