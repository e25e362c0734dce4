/**
 * The audit trail through `serve` (docs/AUDIT.md §Records): a real Streamable HTTP server and SDK client; the
 * record names the client from the clients file and never its token.
 */
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { auditedServer } from './served.js';
import { callJson, connectHttp } from '../server/http-world.js';

test('http › a serve call is recorded with its client name, never its token', async (t) => {
  const { w, laptop, server } = await auditedServer(t, 'mb-audit-http-');
  const c = await connectHttp(`${server.origin}/mcp`, laptop.token);
  t.teardown(() => c.close());
  const found = await callJson(c, 'memory_bridge_search', { query: 'heron' });
  t.true(found.ok);
  const dir = path.join(w.workHome, 'plugin-data', 'memory-bridge', 'audit');
  const text = fs
    .readdirSync(dir)
    .map((f) => fs.readFileSync(path.join(dir, f), 'utf8'))
    .join('');
  const records = text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  t.is(records.length, 1);
  t.like(records[0], {
    'memory_bridge.transport': 'http',
    'memory_bridge.client': 'laptop',
    'memory_bridge.outcome': 'ok',
    'gen_ai.tool.name': 'memory_bridge_search',
  });
  t.false(text.includes(laptop.token));
  t.false(text.includes('heron'));
  t.false(text.includes('personal'));
});
