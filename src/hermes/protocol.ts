/**
 * The worker's JSON-lines protocol (docs/HERMES.md): one request object per line on stdin, one reply per line on
 * stdout, each line at most 1 MiB.
 *
 *   request `{"v": 1, "id": "<string>", "tool": "memory_bridge_search" | "memory_bridge_read" | <a surface>, "args": {…},
 *            "caller": {"home": "/abs", "profile": "<name or empty>", "cron": <bool>, "subagent": <bool>}}`
 *            or, in place of `caller`, `"hermes": {<signals>}`: what the shim read in Hermes's process, from which
 *            src/hermes/caller.ts decides the caller record (a refusal answers `unavailable` and logs its reason)
 *   reply   `{"v": 1, "id": "<same>", "result": <tool JSON, docs/TOOLS.md, or a surface's answer>}`
 *
 * The surfaces (`hermes_recall`, `hermes_complete`, `hermes_expand`, `hermes_prompt_section`) are Hermes's hook,
 * context-reference provider and prompt section, answered in src/hermes/surfaces.ts.
 *
 * One more `tool`, `"warm_up"` with `args` `{}`, builds the caller's view ahead of its first call (docs/HERMES.md,
 * "Warm first call"); its reply's result is `{"ok": true, "notes": <n>, "ms": <build time>}` or the `unavailable`
 * error JSON.
 *
 * The caller record is the only source of identity and run kind; `args` go to the tool untouched (the tool
 * validates them, so an identity-looking argument is just an unknown argument). `profile` is required (docs/HERMES.md
 * §Worker protocol lists it); the empty string means Hermes named no profile. Request lines are parsed as strict JSON
 * (src/policy/json.ts): a duplicate key anywhere makes the line ambiguous, so it is refused, never resolved.
 */
import { z } from 'zod';
import { errorResult } from '../errors.js';
import { parseStrictJson, StrictJsonError } from '../policy/json.js';
import type { Caller, ToolName, ToolResult } from '../tools/types.js';
import { TOOL_NAMES } from '../tools/types.js';
import { isNormalAbsolute } from '../trust/path.js';
import { LineSplitter as GenericLineSplitter } from '../text/lines.js';
import { callerFromSignals, MAX_HOME_BYTES, MAX_PROFILE_CHARS } from './caller.js';
import { SURFACE_NAMES, type SurfaceAnswer, type SurfaceName } from './surfaces.js';

/** The request `tool` of a warm-up (docs/HERMES.md, "Warm first call"). */
export const WARM_UP = 'warm_up';

/** The result of a warm-up's reply. */
export interface WarmUpResult {
  ok: true;
  /** Notes in the view it built. */
  notes: number;
  /** How long the build took, ms (whole). */
  ms: number;
}

/** Longest line accepted, in bytes, without its newline (docs/HERMES.md). */
export const MAX_LINE_BYTES = 1024 * 1024;
/** The only protocol version. */
export const PROTOCOL_VERSION = 1;
/** Longest request id echoed back, in UTF-16 code units. */
export const MAX_REQUEST_ID_CHARS = 256;
/** How much of an oversized line is kept to recover its id (the rest is discarded unread). */
export const OVERSIZED_PREFIX_BYTES = 1024;

const RequestId = z.string().min(1).max(MAX_REQUEST_ID_CHARS);

/** An absolute, already-normalised POSIX path without NUL (`isNormalAbsolute`): the shim sends exactly this form. */
const Home = z
  .string()
  .min(1)
  .refine((h) => Buffer.byteLength(h, 'utf8') <= MAX_HOME_BYTES, 'home too long')
  .refine(isNormalAbsolute, 'home not absolute and normal');

const CallerRecord = z.strictObject({
  home: Home,
  profile: z.string().max(MAX_PROFILE_CHARS),
  cron: z.boolean(),
  subagent: z.boolean(),
});

const Request = z
  .strictObject({
    v: z.literal(PROTOCOL_VERSION),
    id: RequestId,
    tool: z.enum([...TOOL_NAMES, ...SURFACE_NAMES, WARM_UP]),
    // Present but unvalidated here: the tool answers invalid_request for bad arguments.
    args: z.unknown().refine((a) => a !== undefined, 'args missing'),
    caller: CallerRecord.optional(),
    // The shim's raw signals, decided by src/hermes/caller.ts.
    hermes: z.record(z.string(), z.unknown()).optional(),
  })
  .refine((r) => (r.caller === undefined) !== (r.hermes === undefined), {
    path: ['caller'],
    message: 'exactly one of caller and hermes',
  });

/** A request that passed validation. */
export interface WorkerRequest {
  id: string;
  /** A tool, a Hermes surface (src/hermes/surfaces.ts) or the warm-up. */
  tool: ToolName | SurfaceName | typeof WARM_UP;
  args: unknown;
  caller: Caller;
}

/**
 * What to do with one line:
 * - `call`: a valid request.
 * - `reject`: answer `id` with `unavailable` (wrong `v`, a missing or malformed field, a duplicate key, an
 *   oversized line whose id could still be read).
 * - `skip`: no usable id; log `reason` and send nothing.
 */
export type LineOutcome =
  | { kind: 'call'; request: WorkerRequest }
  | { kind: 'reject'; id: string; reason: string; tool?: string }
  | { kind: 'skip'; reason: string };

/**
 * Classify one complete line (without its newline). Never throws.
 *
 * A line that is not strict JSON (a duplicate key, invalid UTF-8, too deep, …) is answered only when its id can be
 * read from the shim's own leading `{"v":1,"id":"…"` form (see `idFromPrefix`); otherwise it is skipped.
 */
export function parseRequestLine(line: Buffer): LineOutcome {
  let value: unknown;
  try {
    value = parseStrictJson(line);
  } catch (err) {
    const reason = !(err instanceof StrictJsonError)
      ? 'not_json'
      : err.reason === 'invalid_utf8' || err.reason === 'duplicate_key'
        ? err.reason
        : 'not_json';
    const id = idFromPrefix(line.subarray(0, OVERSIZED_PREFIX_BYTES));
    return id === undefined ? { kind: 'skip', reason } : { kind: 'reject', id, reason };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { kind: 'skip', reason: 'not_object' };
  const idCheck = RequestId.safeParse((value as Record<string, unknown>).id);
  if (!idCheck.success) return { kind: 'skip', reason: 'no_id' };
  const id = idCheck.data;
  const parsed = Request.safeParse(value);
  if (!parsed.success) return { kind: 'reject', id, reason: rejectReason(parsed.error) };
  const { tool, args, caller, hermes } = parsed.data;
  if (hermes !== undefined) {
    const decided = callerFromSignals(hermes);
    if (!decided.ok) return { kind: 'reject', id, reason: decided.reason, tool };
    return { kind: 'call', request: { id, tool, args, caller: decided.caller } };
  }
  const record: Caller = { home: caller!.home, cron: caller!.cron, subagent: caller!.subagent };
  if (caller!.profile !== '') record.profile = caller!.profile;
  return { kind: 'call', request: { id, tool, args, caller: record } };
}

/** A short reason code naming the first failing field (operator log only). */
function rejectReason(error: z.ZodError): string {
  const first = error.issues[0];
  const field = first?.path[0];
  if (field === 'v') return 'bad_version';
  if (field === 'tool') return 'bad_tool';
  if (field === 'caller' || field === 'hermes') return 'bad_caller';
  if (field === 'args') return 'missing_args';
  if (first?.code === 'unrecognized_keys') return 'unknown_field';
  return 'bad_request';
}

/**
 * Recover the id of an oversized line from its first bytes, but only in the exact form the shim writes
 * (`{"v":1,"id":"…"` as the first two members, optional spaces): anywhere else a `"id"` could be a tool argument.
 */
export function idFromPrefix(prefix: Buffer): string | undefined {
  const head = prefix.toString('utf8');
  // biome-ignore lint/suspicious/noControlCharactersInRegex: a JSON string excludes exactly the C0 controls (RFC 8259)
  const m = /^\{\s*"v"\s*:\s*1\s*,\s*"id"\s*:\s*("(?:[^"\\\u0000-\u001f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*")/.exec(
    head,
  );
  if (m === null) return undefined;
  try {
    const id = JSON.parse(m[1]!) as unknown;
    return RequestId.safeParse(id).success ? (id as string) : undefined;
  } catch {
    return undefined;
  }
}

/** The reply line (with its newline) for a request id and a tool result (docs/TOOLS.md §Results). */
export function replyLine(id: string, result: ToolResult | SurfaceAnswer | WarmUpResult): string {
  return `${JSON.stringify({ v: PROTOCOL_VERSION, id, result })}\n`;
}

/** The reply line carrying `unavailable`. */
export function unavailableReply(id: string): string {
  return replyLine(id, errorResult('unavailable'));
}

export type { LineEvent } from '../text/lines.js';

/**
 * The worker's line splitter (docs/DESIGN.md "Line framing"): lines of at most `maxBytes` (default MAX_LINE_BYTES);
 * an oversized line keeps its first OVERSIZED_PREFIX_BYTES, from which `idFromPrefix` may recover its id.
 */
export class LineSplitter extends GenericLineSplitter {
  constructor(maxBytes = MAX_LINE_BYTES) {
    super(maxBytes, OVERSIZED_PREFIX_BYTES);
  }
}
