/**
 * Shared pieces of the HTTP endpoint tests: a memory tree with two profile homes whose policies see different
 * folders, a clients file in a trusted directory, real SDK clients over Streamable HTTP, and raw HTTP requests for
 * what the SDK client never sends (bad hosts, partial bodies, garbage).
 */
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { makeHome, makeTempDir, mkdirs, writeNote, type ParsedJson } from '../helpers/fixtures.js';
import { newToken, tokenHash, writeClients, type ClientEntry, type ClientRunKind } from '../../src/server/clients.js';
import { startHttpServer, type HttpServerHandle, type HttpServerOptions } from '../../src/server/http.js';
import type { McpExchange } from '../../src/server/http-mcp.js';
import type { McpServerOptions } from '../../src/server/mcp.js';

export const NOTES = {
  'work/roadmap.md': '# Roadmap\n\nThe heron launch ships in spring.\n',
  'shared/glossary.md': '# Glossary\n\nHeron means the shared release train.\n',
  'personal/diary.md': '# Diary\n\nThe heron nested by the pond today.\n',
} as const;

export interface World {
  base: string;
  root: string;
  /** Policy allows work/** and shared/**. */
  workHome: string;
  /** Policy allows personal/** only. */
  personalHome: string;
  /** Policy allows everything and opts into cron runs. */
  cronHome: string;
  /** Trusted directory holding the clients file. */
  cfg: string;
  clientsFile: string;
}

export function makeWorld(prefix = 'mb-http-'): World {
  const base = makeTempDir(prefix);
  const root = mkdirs(base, 'memory');
  for (const [id, text] of Object.entries(NOTES)) writeNote(root, id, text);
  const policy = (allow: string[], cron = false) => ({ version: 1, root, allow, deny: [], allow_cron: cron });
  const cfg = mkdirs(base, 'cfg');
  return {
    base,
    root,
    workHome: makeHome(base, policy(['work/**', 'shared/**']), 'work-home').home,
    personalHome: makeHome(base, policy(['personal/**']), 'personal-home').home,
    cronHome: makeHome(base, policy(['**'], true), 'cron-home').home,
    cfg,
    clientsFile: path.join(cfg, 'clients.json'),
  };
}

/** A client as the tests know it: the entry and its token. */
export interface TestClient {
  entry: ClientEntry;
  token: string;
}

export function client(name: string, home: string, runKind: ClientRunKind = 'interactive'): TestClient {
  const token = newToken();
  return { token, entry: { name, tokenSha256: tokenHash(token), home, runKind } };
}

/** Replace the clients file with exactly these clients (the library's own atomic write). */
export function setClients(file: string, clients: readonly TestClient[]): void {
  let current: Buffer | null = null;
  try {
    current = fs.readFileSync(file);
  } catch {
    current = null;
  }
  writeClients(file, { clients: clients.map((c) => c.entry) }, current);
}

/** A connected SDK client over Streamable HTTP with a bearer token. */
export async function connectHttp(url: string, token: string | null, fetchImpl?: FetchLike): Promise<Client> {
  const headers: Record<string, string> = token === null ? {} : { Authorization: `Bearer ${token}` };
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers },
    ...(fetchImpl === undefined ? {} : { fetch: fetchImpl }),
  });
  const c = new Client({ name: 'memory-bridge-http-test', version: '0.0.0' });
  await c.connect(transport);
  return c;
}

/** Call a tool and return the parsed tool JSON (docs/TOOLS.md). */
export async function callJson(c: Client, name: string, args: Record<string, unknown>): Promise<ParsedJson> {
  const res = await c.callTool({ name, arguments: args });
  const content = res.content as { type: string; text: string }[];
  return JSON.parse(content[0]!.text);
}

/** One raw HTTP response. */
export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** Send one request with exactly these headers (Host included) and body; resolves with the response. */
export function rawRequest(
  port: number,
  opts: { method?: string; path?: string; headers?: Record<string, string>; body?: string | Buffer },
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: opts.method ?? 'POST',
        path: opts.path ?? '/mcp',
        headers: opts.headers ?? {},
        agent: false,
        setHost: false,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** The headers of a well-formed MCP POST from a client with `token`. */
export function mcpHeaders(
  port: number,
  token: string | null,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    Host: `127.0.0.1:${port}`,
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    ...(token === null ? {} : { Authorization: `Bearer ${token}` }),
    ...extra,
  };
}

/** A JSON-RPC tools/call body. */
export function toolCallBody(name: string, args: Record<string, unknown>, id = 1): string {
  return JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
}

/**
 * Open a raw TCP connection and write `text`; resolves with the socket once written. Everything the server sends
 * back is collected in `received()`; `closed` settles when the server (or we) close the connection.
 */
export async function rawSocket(
  port: number,
  text: string,
): Promise<{ socket: net.Socket; received: () => string; closed: Promise<void> }> {
  const socket = net.connect(port, '127.0.0.1');
  let data = '';
  socket.setEncoding('utf8');
  socket.on('data', (d: string) => (data += d));
  const closed = new Promise<void>((resolve) => {
    socket.once('close', () => resolve());
  });
  socket.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('error', reject);
  });
  await new Promise<void>((resolve) => socket.write(text, () => resolve()));
  return { socket, received: () => data, closed };
}

/**
 * A server on an ephemeral loopback port with a clients file of its own (in `world.cfg`) naming `clients`; `lines`
 * collects its operator log.
 */
export async function startLogged(
  world: World,
  clients: readonly TestClient[],
  extra: Partial<HttpServerOptions> = {},
): Promise<{ server: HttpServerHandle; lines: string[] }> {
  const file = `${world.cfg}/clients-${Math.random().toString(16).slice(2)}.json`;
  setClients(file, clients);
  const lines: string[] = [];
  const server = await startHttpServer({
    listen: { host: '127.0.0.1', port: 0 },
    clientsFile: file,
    version: '0.0.0-test',
    log: (line) => lines.push(line),
    ...extra,
  });
  return { server, lines };
}

/** Wait until `cond()` holds, checking every 20 ms at most `tries` times; false when it never did. */
export async function waitFor(cond: () => boolean, tries = 500): Promise<boolean> {
  for (let i = 0; i < tries; i++) {
    if (cond()) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return cond();
}

/**
 * A fetch for the SDK client that trusts exactly `ca` (a self-signed test certificate), built on node:https; enough
 * for JSON responses and the 405 of GET /mcp.
 */
export function fetchTrusting(ca: Buffer): FetchLike {
  return (url, init) =>
    new Promise<Response>((resolve, reject) => {
      const headers = new Headers(init?.headers);
      const out: Record<string, string> = {};
      headers.forEach((v, k) => {
        out[k] = v;
      });
      const req = https.request(url, { method: init?.method ?? 'GET', headers: out, ca, agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => {
          const h = new Headers();
          for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') h.set(k, v);
          const status = res.statusCode ?? 500;
          const body = status === 202 || status === 204 ? null : Buffer.concat(chunks);
          resolve(new Response(body, { status, headers: h }));
        });
      });
      req.on('error', reject);
      req.end(typeof init?.body === 'string' ? init.body : undefined);
    });
}

/**
 * An HTTP server on 127.0.0.1 that hands every JSON body to `exchange` as `options`' caller, as `serve` does once
 * its checks have passed (none of them is applied here: what is under test is the answer). A body that is not
 * JSON gets 400, a fault 500.
 */
export function startExchangeServer(exchange: McpExchange, options: McpServerOptions): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let message: unknown;
      try {
        message = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        res.writeHead(400);
        res.end();
        return;
      }
      exchange.answer(req, res, message, options).catch(() => {
        if (!res.headersSent) res.writeHead(500);
        res.end();
      });
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}
