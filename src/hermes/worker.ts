/**
 * `memory-bridge worker`: the long-lived child the Hermes shim talks to (docs/HERMES.md).
 *
 * Reads request lines from `input`, answers each on `output` in order, and returns when `input` ends (or `output`
 * closes). Requests are handled one at a time by one `Bridge`, which keeps an index per profile home, so one worker
 * serves every profile that the shim's process hosts. Identity comes only from each request's caller record.
 */
import type { Readable, Writable } from 'node:stream';
import { errorResult, type ErrorResult } from '../errors.js';
import { refusalWords, RemedyNotes } from '../remedies.js';
import type { Bridge, Caller, LogEvent, ToolResult } from '../tools/types.js';
import { type WarmOutcome, warmUpView } from '../tools/warm.js';
import {
  LineSplitter,
  idFromPrefix,
  parseRequestLine,
  replyLine,
  unavailableReply,
  WARM_UP,
  type LineEvent,
  type WarmUpResult,
} from './protocol.js';
import { isSurface, runSurface } from './surfaces.js';
import { buildingState, finishedState, type ViewState, writeViewState } from './view-state.js';

export interface WorkerOptions {
  /** Request lines (the shim's pipe; stdin for the command). */
  input: Readable;
  /** Reply lines (stdout for the command). */
  output: Writable;
  /** Does the work; synchronous and never throws (src/tools/types.ts). */
  bridge: Bridge;
  /** Operator log: one short reason code per event, never a path or content. Default: stderr. */
  log?: (line: string) => void;
  /** Where a warm-up's record goes (default `writeViewState`: the home's plugin directory). */
  recordViewState?: (home: string, state: ViewState) => void;
}

/**
 * One warm-up request (src/tools/warm.ts): record that it started and how it ended (src/hermes/view-state.ts, for
 * `status` and `doctor`), and answer `{ok, notes, ms}` or `unavailable`. Requests after it wait in the input until
 * it is done, so a first tool call that arrives during the build is answered from the built view; once one waits,
 * the passes after the build stop (`waiting`), so it waits for the build only.
 */
async function warmUp(
  bridge: Bridge,
  caller: Caller,
  record: (home: string, state: ViewState) => void,
  waiting: () => boolean,
): Promise<WarmUpResult | ErrorResult> {
  const home = caller.home;
  const start = buildingState();
  if (home !== null) record(home, start);
  const refused: WarmOutcome = { ok: false, reason: 'internal', ms: 0 };
  let outcome: WarmOutcome;
  try {
    outcome =
      bridge.warm === undefined
        ? refused
        : await warmUpView((settle) => bridge.warm?.(caller, settle) ?? refused, waiting);
  } catch {
    outcome = refused;
  }
  if (home !== null) record(home, finishedState(start, outcome));
  return outcome.ok ? { ok: true, notes: outcome.notes, ms: Math.round(outcome.ms) } : errorResult('unavailable');
}

/** Profile names come from the shim; keep log lines single-line and plain. */
function logSafe(text: string, most = 128): string {
  return /^[A-Za-z0-9._-]{1,128}$/.test(text) ? text : JSON.stringify(text.slice(0, most));
}

/**
 * Format a bridge log event as one worker log line: `<tool> <reason>[ (<detail>)][ profile=<name>]` (`<reason>` is
 * `root_untrusted root=<reason>` for a refused root: src/remedies.ts `refusalWords`), then
 * ` → <remedy>` the first time `notes` sees the reason (src/remedies.ts; a notice's detail is its own remedy).
 */
export function formatLogEvent(event: LogEvent, notes?: RemedyNotes): string {
  const profile = event.profile === undefined ? '' : ` profile=${logSafe(event.profile)}`;
  // A notice's detail is a sentence with a command (docs/TRUST.md §Hidden notes): room for it whole.
  const detail = event.detail === undefined ? '' : ` (${logSafe(event.detail, 512)})`;
  const told = event.detail === undefined || event.reason === 'internal';
  const remedy = notes === undefined || !told ? '' : notes.suffix(event.reason, event.subject);
  return `${event.tool} ${refusalWords(event.reason, event.subject)}${detail}${profile}${remedy}`;
}

/**
 * Serve requests until `input` ends. Resolves (never rejects) when done.
 *
 * Per line: a valid request → `{"v":1,"id","result"}` from the bridge; a line with a usable id but anything else
 * wrong (`v` ≠ 1, a missing or malformed field, an oversized line whose start is `{"v":1,"id":"…"`) → the same reply
 * with the `unavailable` result; no usable id → a log line and no reply. Empty lines are ignored.
 */
export async function runWorker(options: WorkerOptions): Promise<void> {
  const { input, output, bridge } = options;
  const write = options.log ?? ((line: string) => process.stderr.write(`memory-bridge worker: ${line}\n`));
  // The worker's own line-protocol reasons say once what to do, like the bridge's (formatLogEvent).
  const notes = new RemedyNotes();
  const log = (subject: string, reason: string): void => write(`${subject} ${reason}${notes.suffix(reason)}`);
  const splitter = new LineSplitter();
  // Lines split from the input and not yet handled; with the bytes the stream holds unread, whether a request waits.
  let unhandled = 0;
  const waiting = (): boolean => unhandled > 0 || input.readableLength > 0;

  let outputClosed = false;
  const markClosed = (): void => {
    outputClosed = true;
  };
  output.on('error', markClosed);
  output.on('close', markClosed);

  const send = async (line: string): Promise<void> => {
    if (outputClosed) return;
    if (output.write(line)) return;
    await new Promise<void>((resolve) => {
      const done = (): void => {
        output.off('drain', done);
        output.off('close', done);
        output.off('error', done);
        resolve();
      };
      output.on('drain', done);
      output.on('close', done);
      output.on('error', done);
    });
  };

  const handle = async (event: LineEvent): Promise<void> => {
    if (event.kind === 'oversized') {
      const id = idFromPrefix(event.prefix);
      log('worker', 'oversized_line');
      if (id !== undefined) await send(unavailableReply(id));
      return;
    }
    if (event.bytes.length === 0) return;
    const outcome = parseRequestLine(event.bytes);
    if (outcome.kind === 'skip') {
      log('worker', outcome.reason);
      return;
    }
    if (outcome.kind === 'reject') {
      log(outcome.tool ?? 'worker', outcome.reason);
      await send(unavailableReply(outcome.id));
      return;
    }
    const { id, tool, args, caller } = outcome.request;
    if (isSurface(tool)) {
      await send(replyLine(id, runSurface(bridge, tool, args, caller, log)));
      return;
    }
    if (tool === WARM_UP) {
      await send(replyLine(id, await warmUp(bridge, caller, options.recordViewState ?? writeViewState, waiting)));
      return;
    }
    let result: ToolResult;
    try {
      result = bridge.call(tool, args, caller);
    } catch {
      // The bridge promises never to throw; if it does anyway the caller still gets a well-formed refusal.
      log(tool, 'internal');
      result = errorResult('unavailable');
    }
    await send(replyLine(id, result));
  };

  try {
    for await (const chunk of input as AsyncIterable<Buffer | string>) {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
      const events = splitter.push(bytes);
      unhandled = events.length;
      for (const event of events) {
        unhandled--;
        await handle(event);
        if (outputClosed) return;
      }
    }
    for (const event of splitter.end()) await handle(event);
  } catch {
    log('worker', 'input_error');
  } finally {
    output.off('error', markClosed);
    output.off('close', markClosed);
  }
}
