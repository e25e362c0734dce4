/**
 * The audit step of every tool call (docs/AUDIT.md): after a call has its answer and before the answer leaves the
 * bridge, one record is appended when the caller's policy turns the trail on. `createBridge` (bridge.ts)
 * runs it for every call of every transport (stdio, HTTP, worker, CLI), refusals included.
 */
import { loadPolicy } from '../policy/load.js';
import type { AuditSettings, Policy } from '../policy/types.js';
import { runKindOf, type CallContext, type Transport } from '../audit/record.js';
import { appendRecord } from '../audit/writer.js';
import { recordOf } from './audit-record.js';
import { parseCaller } from './caller.js';
import type { ToolName, ToolResult } from './types.js';

/** One finished call, as the bridge saw it. */
export interface FinishedCall {
  tool: ToolName;
  args: unknown;
  caller: unknown;
  context: CallContext;
  transport: Transport;
  /** The policy the call loaded (undefined when it was refused before its policy was read). */
  policy: Policy | undefined;
  result: ToolResult;
  /** The refusal's reason code for `ok: false`. */
  reason: string | undefined;
  startMs: number;
  durationS: number;
  nowMs: number;
}

/**
 * The audit settings that govern a finished call: its own policy's; for a call refused before its policy was read
 * (its arguments, most often) the policy is read now, and a policy that cannot be read means no trail (the call
 * released nothing, and there is no setting to honour).
 */
function settingsOf(call: FinishedCall, home: string): AuditSettings | undefined {
  if (call.policy !== undefined) return call.policy.audit;
  try {
    return loadPolicy(home).audit;
  } catch {
    return undefined;
  }
}

/** The query of a search that passed argument validation, read once from the (already validated) arguments. */
function queryOf(call: FinishedCall): string | undefined {
  if (call.tool !== 'memory_bridge_search' || (!call.result.ok && call.result.error.code === 'invalid_request'))
    return undefined;
  try {
    const q = (call.args as { query?: unknown }).query;
    return typeof q === 'string' ? q : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Record a finished call when its policy turns the trail on.
 *
 * @returns 'off' (no trail for this call), 'written', or 'unwritable' (the caller must answer `unavailable` and
 *   release nothing: docs/AUDIT.md §Failing closed)
 */
export function auditCall(call: FinishedCall): 'off' | 'written' | 'unwritable' {
  let home: string;
  let runKind: ReturnType<typeof runKindOf>;
  try {
    const who = parseCaller(call.caller);
    home = who.home;
    runKind = runKindOf(who.cron, who.subagent);
  } catch {
    return 'off';
  }
  const settings = settingsOf(call, home);
  if (settings === undefined || !settings.enabled) return 'off';
  const record = recordOf({
    startMs: call.startMs,
    durationS: call.durationS,
    tool: call.tool,
    home,
    transport: call.transport,
    runKind,
    context: call.context,
    result: call.result,
    ...(call.reason === undefined ? {} : { reason: call.reason }),
  });
  try {
    appendRecord(home, settings, record, queryOf(call), call.nowMs);
    return 'written';
  } catch {
    // AuditUnwritable, and anything else (a resource limit, a bug): the record is just as unwritten.
    return 'unwritable';
  }
}
