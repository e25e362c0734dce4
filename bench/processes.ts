/**
 * Timing of the command-line baselines (ripgrep and grep) and of MCP servers through the official SDK client over
 * stdio, exactly as a host would talk to them. Every figure is wall-clock milliseconds from `performance.now()`.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

/** The version line of `cmd --version`, or null when the command is not installed. */
export function toolVersion(cmd: string): string | null {
  const r = spawnSync(cmd, ['--version'], { encoding: 'utf8' });
  if (r.error || r.status !== 0) return null;
  return r.stdout.split('\n')[0]?.trim() ?? null;
}

/** One timed run of a file-listing search command: spawn to exit, and how many files it listed. */
export interface ListRun {
  ms: number;
  files: number;
}

/**
 * Run `cmd args` to completion and time it (spawn to exit). Exit status 1 ("no match") counts as success for
 * rg and grep; anything else throws, because a failed baseline must not pass as a fast one.
 */
export function timeListCommand(cmd: string, args: string[]): ListRun {
  const t0 = performance.now();
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, stdio: ['ignore', 'pipe', 'pipe'] });
  const ms = performance.now() - t0;
  if (r.error) throw r.error;
  if (r.status !== 0 && r.status !== 1) throw new Error(`${cmd} exited with ${r.status}: ${r.stderr.slice(0, 200)}`);
  const files = r.stdout === '' ? 0 : r.stdout.trimEnd().split('\n').length;
  return { ms, files };
}

/** A connected MCP client with its server child. */
export interface McpSession {
  client: Client;
  transport: StdioClientTransport;
  /** Server child pid (the process whose RSS is read). */
  pid: number;
  /** Milliseconds from spawn to the end of the initialize handshake. */
  connectMs: number;
  /** Server stderr collected so far (for diagnosing a failed run). */
  stderr: () => string;
}

/**
 * Spawn `command args` as an MCP stdio server and complete the initialize handshake with the SDK client.
 * `env` is merged over the current environment. Throws when the server fails to start.
 */
export async function connect(
  command: string,
  args: string[],
  env: Record<string, string> = {},
  cwd?: string,
): Promise<McpSession> {
  const transport = new StdioClientTransport({
    command,
    args,
    env: { ...(process.env as Record<string, string>), ...env },
    stderr: 'pipe',
    ...(cwd ? { cwd } : {}),
  });
  let errText = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    if (errText.length < 20000) errText += chunk.toString('utf8');
  });
  const client = new Client({ name: 'memory-bridge-bench', version: '0.1.0' });
  const t0 = performance.now();
  try {
    await client.connect(transport);
  } catch (err) {
    await new Promise((resolve) => setTimeout(resolve, 50)); // let the last stderr chunk arrive
    const tail = errText.trim().slice(-800);
    throw new Error(`${err instanceof Error ? err.message : String(err)}${tail ? ` — server stderr: ${tail}` : ''}`);
  }
  const connectMs = performance.now() - t0;
  const pid = transport.pid;
  if (pid === null) throw new Error('server child has no pid');
  return { client, transport, pid, connectMs, stderr: () => errText };
}

/** Close the client (ends the server's stdin; the SDK escalates to signals if the child lingers). */
export async function disconnect(s: McpSession): Promise<void> {
  await s.client.close();
}

/** The JSON object a memory-bridge tool returned (from structuredContent or the first text block). */
export function toolPayload(result: unknown): Record<string, unknown> {
  const r = result as { structuredContent?: unknown; content?: { type: string; text?: string }[]; isError?: boolean };
  if (r.structuredContent && typeof r.structuredContent === 'object')
    return r.structuredContent as Record<string, unknown>;
  const text = r.content?.find((c) => c.type === 'text')?.text;
  if (text === undefined) throw new Error('tool result carries no text block');
  return JSON.parse(text) as Record<string, unknown>;
}

/** One timed tool call: latency and the decoded payload. */
export async function timeCall(
  s: McpSession,
  name: string,
  args: Record<string, unknown>,
): Promise<{ ms: number; result: unknown }> {
  const t0 = performance.now();
  const result = await s.client.callTool({ name, arguments: args });
  return { ms: performance.now() - t0, result };
}

/** VmRSS and VmHWM of `pid` in MiB, from /proc/<pid>/status (Linux); null fields elsewhere. */
export function rssOf(pid: number): { rssMiB: number | null; hwmMiB: number | null } {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (key: string): number | null => {
      const m = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status);
      return m ? Math.round((Number(m[1]) / 1024) * 10) / 10 : null;
    };
    return { rssMiB: kb('VmRSS'), hwmMiB: kb('VmHWM') };
  } catch {
    return { rssMiB: null, hwmMiB: null };
  }
}

/**
 * CPU time (user + system, all threads) `pid` has used so far in milliseconds, from fields 14 and 15 of
 * /proc/<pid>/stat (clock ticks of 10 ms on Linux with USER_HZ 100); null elsewhere. Differences over many calls
 * give a per-call CPU cost that other load on the machine moves much less than wall time. With `children`, the CPU
 * of the waited-for children of `pid` instead (the bench's own `spawnSync` runs of rg, measured around each run).
 */
export function cpuMsOf(pid: number | 'self', children = false): number | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses; fields after the last ')' are plain.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime, stime (fields 14, 15); cutime, cstime (16, 17): children waited for, such as spawnSync's.
    const at = children ? 13 : 11;
    const ticks = Number(fields[at]) + Number(fields[at + 1]);
    return Number.isFinite(ticks) ? ticks * 10 : null;
  } catch {
    return null;
  }
}
