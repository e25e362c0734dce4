/**
 * The Hermes surfaces beside the two tools (docs/HERMES.md §Worker protocol): what the shim forwards from Hermes's
 * `pre_llm_call` hook, its `@memory:` context-reference provider and its system prompt section. One row per surface
 * (SURFACE_TABLE): its request name, its arguments' schema, the answer when they are wrong, and the step that
 * answers. Every row decides through the bridge (search or read of the same caller) or the policy read fresh; the
 * shim only passes the answer on.
 */
import { z } from 'zod';
import type { Bridge, Caller } from '../tools/types.js';
import { runPromptSection } from './prompt-section.js';
import { runRecall, type RecallSilence } from './recall.js';
import { MAX_COMPLETIONS, runComplete, runExpand } from './references.js';

/** Request names of the surfaces (the worker protocol's `tool` field). */
export const SURFACE_NAMES = ['hermes_recall', 'hermes_complete', 'hermes_expand', 'hermes_prompt_section'] as const;
export type SurfaceName = (typeof SURFACE_NAMES)[number];

/** Longest user message taken for recall, in UTF-16 code units (only its first 500 make the query). */
const MAX_MESSAGE_CHARS = 200_000;

/**
 * A user message as Hermes passes it to the hook: the text, or a list of content parts whose text parts are joined
 * with newlines (other parts are not text to recall from); anything else is no text.
 */
const Message = z.unknown().transform((message) => {
  if (typeof message === 'string') return message;
  if (!Array.isArray(message)) return '';
  const texts: string[] = [];
  for (const part of message as unknown[]) {
    const p = part as { type?: unknown; text?: unknown } | null;
    if (typeof p === 'object' && p !== null && p.type === 'text' && typeof p.text === 'string') texts.push(p.text);
  }
  return texts.join('\n');
});

/** The typed text after `@memory:` (anything but text is nothing typed yet). */
const Typed = z.unknown().transform((q) => (typeof q === 'string' ? q : ''));

/** How many completions Hermes asks for: any finite number, truncated and clamped to 1–MAX_COMPLETIONS. */
const Limit = z
  .number()
  .refine(Number.isFinite)
  .transform((n) => Math.max(1, Math.min(Math.trunc(n), MAX_COMPLETIONS)));

/** A surface's answer: `context` (text or null) or `items` (completions). */
export type SurfaceAnswer = { ok: true; context: string | null } | { ok: true; items: unknown[] };

/** One row: the schema of `args`, the answer for arguments that fail it, and the step. */
interface SurfaceRow {
  name: SurfaceName;
  args: z.ZodType;
  empty: SurfaceAnswer;
  run(bridge: Bridge, args: never, caller: Caller, silent: (why: RecallSilence) => void): SurfaceAnswer;
}

/** The surfaces, by request name (docs/HERMES.md §Worker protocol lists their arguments and answers). */
export const SURFACE_TABLE: readonly SurfaceRow[] = Object.freeze([
  {
    name: 'hermes_recall',
    args: z.strictObject({ message: Message.pipe(z.string().max(MAX_MESSAGE_CHARS)) }),
    empty: { ok: true, context: null },
    run: (bridge, args: { message: string }, caller, silent) => runRecall(bridge, args, caller, silent),
  },
  {
    name: 'hermes_complete',
    args: z.strictObject({ query: Typed.pipe(z.string().max(512)), limit: Limit }),
    empty: { ok: true, items: [] },
    run: (bridge, args: { query: string; limit: number }, caller) => runComplete(bridge, args, caller),
  },
  {
    name: 'hermes_expand',
    // Hermes passes what follows `@memory:`; an id is at most 1024 characters, so a longer target is cut there.
    args: z.strictObject({
      target: z
        .string()
        .min(1)
        .transform((t) => t.slice(0, 1024)),
    }),
    empty: { ok: true, context: null },
    run: (bridge, args: { target: string }, caller) => runExpand(bridge, args, caller),
  },
  {
    name: 'hermes_prompt_section',
    args: z.strictObject({}),
    empty: { ok: true, context: null },
    run: (_bridge, _args: Record<string, never>, caller) => runPromptSection(caller),
  },
] satisfies SurfaceRow[]);

/** True when `name` is a surface's request name. */
export function isSurface(name: string): name is SurfaceName {
  return (SURFACE_NAMES as readonly string[]).includes(name);
}

/**
 * Answer one surface request. Never throws: arguments that fail the row's schema, or any exception, give the
 * row's empty answer and one log reason (`bad_arguments`, `internal`); a recall that gives nothing for a reason worth
 * telling the operator (`run_kind`, `refused`, `boundary`) logs `recall_<reason>`.
 *
 * @param log one short reason code per event (never a path or note text)
 */
export function runSurface(
  bridge: Bridge,
  name: SurfaceName,
  args: unknown,
  caller: Caller,
  log: (subject: string, reason: string) => void,
): SurfaceAnswer {
  const row = SURFACE_TABLE.find((r) => r.name === name)!;
  const parsed = row.args.safeParse(args);
  if (!parsed.success) {
    log(name, 'bad_arguments');
    return row.empty;
  }
  const silent = (why: RecallSilence): void => {
    if (why === 'run_kind' || why === 'refused' || why === 'boundary') log(name, `recall_${why}`);
  };
  try {
    return row.run(bridge, parsed.data as never, caller, silent);
  } catch {
    log(name, 'internal');
    return row.empty;
  }
}
