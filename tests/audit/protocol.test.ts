/**
 * What a record says about the protocol and about search hits (docs/AUDIT.md §Records): real clients of both SDK
 * lines over stdio (`memory-bridge mcp`) and Streamable HTTP (`serve`), each pinned to one MCP revision; every
 * record names the revision its call was made under and the trace id of its `_meta.traceparent`, and every search
 * hit its `version`, the one a read of the note in the same process answers.
 */
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { auditedServer } from './served.js';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as V1StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport as V1HttpClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  Client as V2Client,
  StreamableHTTPClientTransport as V2HttpClientTransport,
} from '@modelcontextprotocol/client';
import { StdioClientTransport as V2StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { CLI } from '../cli/tree.js';

const MODERN = '2026-07-28';
const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const LEGACY = '2025-11-25';

/** The records of `home`'s trail, oldest first. */
function records(home: string): Record<string, unknown>[] {
  const dir = path.join(home, 'plugin-data', 'memory-bridge', 'audit');
  return fs
    .readdirSync(dir)
    .sort()
    .map((f) => fs.readFileSync(path.join(dir, f), 'utf8'))
    .join('')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

type Call = (name: string, args: Record<string, unknown>) => Promise<Record<string, unknown>>;

test('protocol › each record names its MCP revision; search hits carry the version a read answers', async (t) => {
  const { w, laptop, server } = await auditedServer(t, 'mb-audit-protocol-');
  const stdio = {
    command: process.execPath,
    args: [CLI, 'mcp', '--home', w.workHome, '--run-kind', 'interactive'],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    stderr: 'ignore' as const,
  };
  const auth = { requestInit: { headers: { Authorization: `Bearer ${laptop.token}` } } };
  const url = new URL(`${server.origin}/mcp`);
  const ways: Array<[string, string, () => Promise<{ call: Call; close: () => Promise<void> }>]> = [
    ['stdio', LEGACY, async () => v1(new V1StdioClientTransport(stdio))],
    ['http', LEGACY, async () => v1(new V1HttpClientTransport(url, auth))],
    ['stdio', MODERN, async () => v2(new V2StdioClientTransport(stdio))],
    ['http', MODERN, async () => v2(new V2HttpClientTransport(url, auth))],
  ];
  const readVersions: string[] = [];
  for (const [, , open] of ways) {
    const session = await open();
    try {
      const found = await session.call('memory_bridge_search', { query: 'heron' });
      t.is(found.ok, true);
      const read = await session.call('memory_bridge_read', { id: 'work/roadmap.md' });
      readVersions.push(String(read.version));
    } finally {
      await session.close();
    }
  }
  const all = records(w.workHome);
  t.is(all.length, ways.length * 2);
  ways.forEach(([transport, revision], i) => {
    const [search, read] = [all[2 * i]!, all[2 * i + 1]!];
    for (const r of [search, read])
      t.like(
        r,
        {
          'memory_bridge.transport': transport,
          'mcp.protocol.version': revision,
          trace_id: '4bf92f3577b34da6a3ce929d0e0e4736',
        },
        `${transport} ${revision}`,
      );
    const hits = search['memory_bridge.notes'] as { id: string; version?: string }[];
    t.deepEqual(hits.map((h) => h.id).sort(), ['shared/glossary.md', 'work/roadmap.md']);
    // The hit's version is the one a read of the same note in the same process answered.
    t.is(hits.find((h) => h.id === 'work/roadmap.md')?.version, readVersions[i]);
    t.regex(hits.find((h) => h.id === 'shared/glossary.md')?.version ?? '', /^[A-Za-z0-9_-]{22}$/);
    t.like((read['memory_bridge.notes'] as unknown[])[0], { id: 'work/roadmap.md', version: readVersions[i] });
  });
});

function payload(r: unknown): Record<string, unknown> {
  return (r as { structuredContent: Record<string, unknown> }).structuredContent;
}

async function v1(transport: V1StdioClientTransport | V1HttpClientTransport) {
  const c = new V1Client({ name: 'v1-test', version: '0.0.0' });
  await c.connect(transport);
  const call: Call = async (name, args) =>
    payload(await c.callTool({ name, arguments: args, _meta: { traceparent: TRACEPARENT } }));
  return { call, close: () => c.close() };
}

async function v2(transport: V2StdioClientTransport | V2HttpClientTransport) {
  const c = new V2Client({ name: 'v2-test', version: '0.0.0' }, { versionNegotiation: { mode: { pin: MODERN } } });
  await c.connect(transport);
  const call: Call = async (name, args) =>
    payload(await c.callTool({ name, arguments: args, _meta: { traceparent: TRACEPARENT } }));
  return { call, close: () => c.close() };
}
