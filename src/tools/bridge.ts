/**
 * `createBridge()`: the two tools over one long-lived process (docs/TOOLS.md, docs/POLICY.md, docs/SEARCH.md). Methods never throw: a
 * refusal becomes the error JSON of docs/TOOLS.md §Errors and one operator log event (a reason code, never a path or a message); any
 * unexpected exception becomes `unavailable` with reason `internal`, logged with the exception's class name only.
 */
import { auditCall } from './audit-step.js';
import type { CallContext } from '../audit/record.js';
import { errorResult, type ErrorResult } from '../errors.js';
import type { Policy } from '../policy/types.js';
import { bridgeErrorOf } from '../trust/refusal.js';
import { refusalWords, RemedyNotes } from '../remedies.js';
import { profileOf } from './caller.js';
import { HiddenNotices } from './hidden-notices.js';
import { runRead } from './read.js';
import { runWarmUp, type WarmOutcome } from './warm.js';
import { DEFAULT_MAX_INDEX_BYTES, DEFAULT_MAX_INDEXES, IndexCache, runSearch } from './search.js';
import type {
  Bridge,
  BridgeOptions,
  LogEvent,
  ManyReadResult,
  OutlineResult,
  ReadResult,
  SearchResult,
  ToolName,
  ToolResult,
} from './types.js';

/**
 * The default operator log: one line on stderr per event, `<prog>: <tool> <reason>` (`root_untrusted root=<reason>`
 * when the policy's root was refused: src/remedies.ts `refusalWords`; plus the class of an internal
 * error or a notice's sentence), ending with ` → <remedy>` the first time this logger sees that reason
 * (src/remedies.ts `RemedyNotes`). Each call makes a logger with its own memory of what it has told.
 *
 * @param prog the line's prefix, e.g. "memory-bridge search" (default "memory-bridge")
 */
export function stderrLogger(prog = 'memory-bridge'): (event: LogEvent) => void {
  const notes = new RemedyNotes();
  return (event) => {
    const detail = event.detail === undefined ? '' : ` (${event.detail})`;
    // A notice's detail already is its remedy.
    const told = event.detail === undefined || event.reason === 'internal';
    const remedy = told ? notes.suffix(event.reason, event.subject) : '';
    process.stderr.write(`${prog}: ${event.tool} ${refusalWords(event.reason, event.subject)}${detail}${remedy}\n`);
  };
}

/** The class name of a thrown value (never its message, which may hold a path). */
function className(err: unknown): string {
  if (err instanceof Error) return err.constructor.name || 'Error';
  return typeof err;
}

/**
 * Create the tool handlers.
 *
 * @param options.log       where refusal events go (default `stderrLogger()`); a throwing logger is ignored
 * @param options.maxIndexes most per-view search indexes kept (default 8, an integer ≥ 1; RangeError otherwise)
 * @param options.maxIndexBytes most memory (bytes, as IndexCache.bytes counts it) across the kept views (default 512 MiB, a
 *   number ≥ 1; RangeError otherwise); least recently used views are dropped after a search, never the one just used
 * @param options.racyMarginMs ms after a note's last change during which it is re-verified every call (default 3000)
 * @param options.rawEntryCeiling raw directory entries one call may list (default and most RAW_ENTRY_CEILING)
 * @param options.watch     change notification for warm searches (default on unless MEMORY_BRIDGE_WATCH=0)
 * @param options.transport how calls reach this bridge, for the audit trail (default 'library')
 * @param options.clock     ms since the epoch (default Date.now): the audit records' times and their files' UTC day
 * @param options.noticeIntervalMs least ms between two operator lines about hidden notes for one home and reason
 *   (default one minute; src/tools/hidden-notices.ts)
 */
export function createBridge(options: BridgeOptions = {}): Bridge {
  const log = options.log ?? stderrLogger();
  const indexes = new IndexCache(
    options.maxIndexes ?? DEFAULT_MAX_INDEXES,
    options.maxIndexBytes ?? DEFAULT_MAX_INDEX_BYTES,
    options.racyMarginMs,
    options.rawEntryCeiling,
    true,
    options.watch ?? process.env.MEMORY_BRIDGE_WATCH !== '0',
  );
  const hidden = new HiddenNotices(options.noticeIntervalMs);

  function emit(event: LogEvent): void {
    try {
      log(event);
    } catch {
      // A broken logger must not turn an answer into an exception.
    }
  }

  const transport = options.transport ?? 'library';
  const clock = options.clock ?? Date.now;

  /** Run the tool; a throw becomes its refusal (logged) or `unavailable`/`internal`. */
  function answered<T extends ToolResult>(
    tool: ToolName,
    caller: unknown,
    run: () => T,
  ): { result: T | ErrorResult; reason: string | undefined } {
    try {
      return { result: run(), reason: undefined };
    } catch (err) {
      try {
        const profile = profileOf(caller);
        const who = profile === undefined ? {} : { profile };
        const refusal = bridgeErrorOf(err);
        if (refusal !== undefined) {
          emit({
            tool,
            reason: refusal.reason,
            ...who,
            ...(refusal.subject === undefined ? {} : { subject: refusal.subject }),
          });
          return { result: errorResult(refusal.code, refusal.hint), reason: refusal.reason };
        }
        emit({ tool, reason: 'internal', detail: className(err), ...who });
      } catch {
        // Even a hostile caller record or error object only gets the generic answer.
      }
      return { result: errorResult('unavailable'), reason: 'internal' };
    }
  }

  /**
   * Every tool call of every transport passes here: the answer, then its audit record when the caller's policy
   * turns the trail on (audit-step.ts). An unwritable record turns any answer into `unavailable` with the
   * operator reason `audit_unwritable`: nothing leaves unrecorded (docs/AUDIT.md §Failing closed).
   */
  function guarded<T extends ToolResult>(
    tool: ToolName,
    caller: unknown,
    args: unknown,
    context: CallContext | undefined,
    run: (seen: (policy: Policy) => void) => T,
  ): T | ErrorResult {
    const startMs = clock();
    const started = process.hrtime.bigint();
    let policy: Policy | undefined;
    const { result, reason } = answered(tool, caller, () =>
      run((p) => {
        policy = p;
      }),
    );
    const audit = auditCall({
      tool,
      args,
      caller,
      context: context ?? {},
      transport,
      policy,
      result,
      reason,
      startMs,
      durationS: Number(process.hrtime.bigint() - started) / 1e9,
      nowMs: clock(),
    });
    if (audit !== 'unwritable') return result;
    const profile = profileOf(caller);
    emit(profile === undefined ? { tool, reason: 'audit_unwritable' } : { tool, reason: 'audit_unwritable', profile });
    return errorResult('unavailable');
  }

  const bridge: Bridge = {
    search(args, caller, context, surface): SearchResult | ErrorResult {
      return guarded('memory_bridge_search', caller, args, context, (seen) =>
        runSearch(
          args,
          caller,
          indexes,
          (reason, detail) => {
            const profile = profileOf(caller);
            emit(
              profile === undefined
                ? { tool: 'memory_bridge_search', reason, detail }
                : { tool: 'memory_bridge_search', reason, detail, profile },
            );
          },
          hidden,
          seen,
          surface,
        ),
      );
    },
    read(args, caller, context): ReadResult | OutlineResult | ManyReadResult | ErrorResult {
      return guarded('memory_bridge_read', caller, args, context, (seen) =>
        runRead(args, caller, options.rawEntryCeiling, seen),
      );
    },
    warm(caller, settle): WarmOutcome {
      const profile = profileOf(caller);
      const who = profile === undefined ? {} : { profile };
      const outcome = runWarmUp(
        caller,
        indexes,
        (reason, detail) => emit({ tool: 'worker', reason, detail, ...who }),
        hidden,
        settle === true,
      );
      if (!outcome.ok) emit({ tool: 'worker', reason: outcome.reason, ...who });
      return outcome;
    },
    call(tool, args, caller, context): ToolResult {
      if (tool === 'memory_bridge_search') return bridge.search(args, caller, context);
      if (tool === 'memory_bridge_read') return bridge.read(args, caller, context);
      // Unreachable for typed callers; an untyped one still gets an answer rather than an exception.
      return errorResult('invalid_request', 'tool: memory_bridge_search or memory_bridge_read');
    },
    held: () => ({ views: indexes.size, notes: indexes.notes }),
  };
  return bridge;
}
