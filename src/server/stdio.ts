/**
 * The MCP stdio transport (docs/DESIGN.md "Line framing"): newline-delimited JSON-RPC on a readable and a writable
 * stream, implementing the SDK's `Transport` interface, handed to the SDK's `serveStdio` instead of its
 * `StdioServerTransport`, which keeps a 10 MiB read buffer and closes the connection on a line over it; ours never
 * holds more than MAX_MCP_LINE_BYTES of one line and answers an oversized line in place.
 *
 * - Framing is linear in the bytes received (`LineSplitter`).
 * - A line longer than MAX_MCP_LINE_BYTES (1 MiB) is never held: it is dropped as it arrives and answered with a
 *   JSON-RPC error `-32600` (Invalid Request) whose id is read from the line's first or last bytes when it sits
 *   there as a top-level member, else `null`; the session goes on.
 * - A line that is not JSON is answered with `-32700` (Parse error, id `null`); JSON that is not a JSON-RPC message
 *   with `-32600`, with its id when it has one. Blank lines are ignored.
 * - End of input closes the transport (`onclose`), once `beforeClose` (if given) has settled; an error on either
 *   stream closes it at once.
 */
import type { Readable, Writable } from 'node:stream';
import {
  parseJSONRPCMessage,
  ProtocolErrorCode,
  type JSONRPCMessage,
  type Transport,
} from '@modelcontextprotocol/server';
import { LineSplitter, type LineEvent } from '../text/lines.js';
import { carryRawArguments } from './raw-arguments.js';

/** Longest request line accepted, in bytes without the newline: tool arguments are at most a few KiB. */
export const MAX_MCP_LINE_BYTES = 1024 * 1024;
/** Bytes kept from each end of an oversized line to recover its id. */
const KEEP_BYTES = 1024;

/** A JSON-RPC id as JSON text: an integer or a short string without escapes beyond the simple ones. */
const ID_TEXT = String.raw`(-?\d{1,16}|"(?:[^"\\\u0000-\u001f]|\\["\\/bfnrt]){0,256}")`;
/** `"id"` as the first member (optionally after `"jsonrpc":"2.0"`) of the top-level object. */
const ID_AT_START = new RegExp(String.raw`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*${ID_TEXT}\s*[,}]`);
/** `"id"` as the last member of the top-level object (the SDK's clients write it last). */
const ID_AT_END = new RegExp(String.raw`,\s*"id"\s*:\s*${ID_TEXT}\s*\}\s*$`);

/**
 * The id of an oversized line, read only where it cannot belong to a nested object: the first member of the
 * top-level object, or its last member closing the line. Null when neither holds.
 */
export function idOfOversized(prefix: Buffer, suffix: Buffer): string | number | null {
  const m = ID_AT_START.exec(prefix.toString('utf8')) ?? ID_AT_END.exec(suffix.toString('utf8'));
  if (m === null) return null;
  try {
    const id = JSON.parse(m[1]!) as unknown;
    return typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id)) ? id : null;
  } catch {
    return null;
  }
}

/** A JSON-RPC error response (the shape the SDK's `JSONRPCErrorSchema` accepts, with a null id allowed). */
function errorResponse(id: string | number | null, code: number, message: string): JSONRPCMessage {
  return { jsonrpc: '2.0', id, error: { code, message } } as unknown as JSONRPCMessage;
}

export interface LineTransportOptions {
  /** Longest line accepted (default MAX_MCP_LINE_BYTES); tests use a smaller one. */
  maxLineBytes?: number;
  /** Operator log for framing problems (a short reason code). */
  log?: (reason: string) => void;
  /**
   * At end of input, wait for this before closing, so that the answers to requests already read are still
   * written (`runMcpServer` while the bridge still loads). Default: close at once.
   */
  beforeClose?: () => Promise<void>;
}

/** Newline-delimited JSON-RPC over two streams (see the module comment). */
export class LineTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** Settles once the transport has closed (end of input, a stream error, or `close()`). */
  readonly ended: Promise<void>;
  private settleClosed: () => void = () => undefined;

  private readonly splitter: LineSplitter;
  private readonly maxLineBytes: number;
  private started = false;
  private closed = false;
  private readonly log: (reason: string) => void;
  private readonly beforeClose: (() => Promise<void>) | undefined;

  constructor(
    private readonly input: Readable = process.stdin,
    private readonly output: Writable = process.stdout,
    options: LineTransportOptions = {},
  ) {
    this.maxLineBytes = options.maxLineBytes ?? MAX_MCP_LINE_BYTES;
    this.splitter = new LineSplitter(this.maxLineBytes, KEEP_BYTES);
    this.log = options.log ?? (() => undefined);
    this.beforeClose = options.beforeClose;
    this.ended = new Promise((resolve) => {
      this.settleClosed = resolve;
    });
  }

  private readonly onData = (chunk: Buffer | string): void => {
    const events = this.splitter.push(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk);
    for (const event of events) this.handle(event);
  };

  private readonly onEnd = (): void => {
    for (const event of this.splitter.end()) this.handle(event);
    if (this.beforeClose === undefined) void this.close();
    else void this.beforeClose().finally(() => this.close());
  };

  private readonly onStreamError = (error: Error): void => {
    this.onerror?.(error);
    void this.close();
  };

  async start(): Promise<void> {
    if (this.started) throw new Error('LineTransport already started');
    this.started = true;
    this.input.on('data', this.onData);
    this.input.once('end', this.onEnd);
    this.input.once('close', this.onEnd);
    this.input.on('error', this.onStreamError);
    this.output.on('error', this.onStreamError);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.input.off('data', this.onData);
    this.input.off('end', this.onEnd);
    this.input.off('close', this.onEnd);
    this.input.off('error', this.onStreamError);
    this.output.off('error', this.onStreamError);
    if (this.input.listenerCount('data') === 0) this.input.pause();
    this.onclose?.();
    this.settleClosed();
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.closed) return resolve();
      if (this.output.write(`${JSON.stringify(message)}\n`)) resolve();
      else this.output.once('drain', () => resolve());
    });
  }

  /** One framed line: a message for the session, or a JSON-RPC error answered here. */
  private handle(event: LineEvent): void {
    if (this.closed) return;
    if (event.kind === 'oversized') {
      this.log('oversized_line');
      void this.send(
        errorResponse(
          idOfOversized(event.prefix, event.suffix),
          ProtocolErrorCode.InvalidRequest,
          `Request line longer than ${this.maxLineBytes} bytes`,
        ),
      );
      return;
    }
    const text = event.bytes.toString('utf8');
    if (text.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      this.log('parse_error');
      void this.send(errorResponse(null, ProtocolErrorCode.ParseError, 'Parse error'));
      return;
    }
    let message: JSONRPCMessage;
    try {
      message = parseJSONRPCMessage(carryRawArguments(value));
    } catch {
      this.log('invalid_message');
      const id = (value as { id?: unknown } | null)?.id;
      const usable = typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id)) ? id : null;
      // A notification-shaped object (no id) gets no answer; anything else learns it was not a valid request.
      if (usable === null && typeof value === 'object' && value !== null && 'method' in value) return;
      void this.send(errorResponse(usable, ProtocolErrorCode.InvalidRequest, 'Invalid Request'));
      return;
    }
    this.onmessage?.(message);
  }
}
