/**
 * The audit trail written by real processes of every local transport at once (docs/AUDIT.md §Files): one-shot CLI
 * searches, Hermes workers and an `mcp` stdio server on one home, then `memory-bridge audit` and `audit verify` as
 * an operator runs them.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { newToken, tokenHash, writeClients } from '../../src/server/clients.js';
import { mkdirs, removeTree, writeNote } from '../helpers/fixtures.js';
import { makeWorld } from '../tools/world.js';

const MAIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'src', 'cli', 'main.js');

const w = makeWorld();
test.after.always(() => removeTree(w.tmp));
writeNote(w.root, 'projects/garden.md', '# Garden\nthe garden needs rain\n');
w.setPolicy({
  allow: ['**'],
  allow_cron: true,
  allow_subagents: true,
  audit: { enabled: true, queries: 'hmac', max_file_bytes: 65_536 },
});

/** Calls `serve` answers while the other writers run. */
const HTTP_CALLS = 20;

/** A running `memory-bridge serve` for one client bound to the world's home; resolves once it listens. */
async function startServe(): Promise<{ origin: string; token: string; stop: () => Promise<void> }> {
  const token = newToken();
  const clientsFile = path.join(mkdirs(w.tmp, 'cfg'), 'clients.json');
  writeClients(
    clientsFile,
    { clients: [{ name: 'hub-node', tokenSha256: tokenHash(token), home: w.home, runKind: 'interactive' }] },
    null,
  );
  const child = spawn(process.execPath, [MAIN, 'serve', '--listen', '127.0.0.1:0', '--clients', clientsFile], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr.setEncoding('utf8');
  const origin = await new Promise<string>((resolve, reject) => {
    child.stderr.on('data', (d: string) => {
      err += d;
      const m = /listening on (http:\/\/[^/\s]+)\/mcp/.exec(err);
      if (m !== null) resolve(m[1]!);
    });
    child.once('exit', () => reject(new Error(`serve exited: ${err}`)));
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    origin,
    token,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** One stateless 2025-era tools/call to `serve`; resolves with the tool's JSON text. */
async function httpSearch(origin: string, token: string, id: number): Promise<string> {
  const res = await fetch(`${origin}/mcp`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${token}`,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': '2025-11-25',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'memory_bridge_search', arguments: { query: 'garden' } },
    }),
  });
  return res.text();
}

/** Run a process to its end with `input` on stdin; resolves with its stdout. */
function run(args: string[], input = ''): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN, ...args], { stdio: ['pipe', 'pipe', 'ignore'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString('utf8');
    });
    child.on('error', reject);
    child.on('close', () => resolve(out));
    child.stdin.end(input);
  });
}

function workerLines(n: number): string {
  const caller = { home: w.home, profile: 'p', cron: true, subagent: false };
  return Array.from({ length: n }, (_, i) =>
    JSON.stringify({ v: 1, id: String(i), tool: 'memory_bridge_search', args: { query: 'garden' }, caller }),
  )
    .map((l) => `${l}\n`)
    .join('');
}

function mcpLines(): string {
  const lines = [
    {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    },
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: {
        name: 'memory_bridge_read',
        arguments: { id: 'projects/garden.md' },
        _meta: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
      },
    },
  ];
  return lines.map((l) => `${JSON.stringify(l)}\n`).join('');
}

test('processes › CLI, worker, mcp and serve writers on one home keep one whole chain across rotation; audit answers and verifies', async (t) => {
  const serve = await startServe();
  t.teardown(() => serve.stop());
  const jobs: Promise<string>[] = [];
  for (let i = 0; i < 6; i++) jobs.push(run(['search', '--home', w.home, '--run-kind', 'interactive', 'garden']));
  for (let i = 0; i < 3; i++) jobs.push(run(['worker'], workerLines(60)));
  jobs.push(run(['mcp', '--home', w.home, '--run-kind', 'interactive'], mcpLines()));
  // Two HTTP calls at a time for as long as the rest take, so `serve` writes while the other processes do.
  for (let k = 0; k < 2; k++)
    jobs.push(
      (async () => {
        let answers = '';
        for (let i = k; i < HTTP_CALLS; i += 2) answers += await httpSearch(serve.origin, serve.token, i);
        return answers;
      })(),
    );
  const outs = await Promise.all(jobs);
  t.is(outs.slice(10).join('').split('"ok\\":true').length - 1, HTTP_CALLS, 'serve answered every call');
  t.true(outs[9]!.includes('"id":2'), 'the mcp server answered the call');
  const verify = spawnSync(process.execPath, [MAIN, 'audit', 'verify', '--home', w.home], { encoding: 'utf8' });
  t.is(verify.status, 0, verify.stdout + verify.stderr);
  // About 550 bytes a record: 207 records rotate through at least two 64 KiB files while all the writers run.
  t.regex(verify.stdout, /: 207 records in [2-9] files, chain intact/);
  const listed = spawnSync(process.execPath, [MAIN, 'audit', '--home', w.home, '--json'], { encoding: 'utf8' });
  const records = listed.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  t.is(records.length, 207);
  const by = (k: string) => records.filter((r) => r['memory_bridge.transport'] === k).length;
  t.deepEqual([by('cli'), by('worker'), by('stdio'), by('http')], [6, 180, 1, HTTP_CALLS]);
  t.true(
    records
      .filter((r) => r['memory_bridge.transport'] === 'http')
      .every((r) => r['memory_bridge.client'] === 'hub-node'),
  );
  const stdio = records.find((r) => r['memory_bridge.transport'] === 'stdio')!;
  t.like(stdio, { trace_id: '0af7651916cd43dd8448eb211c80319c', 'gen_ai.tool.name': 'memory_bridge_read' });
  const cron = spawnSync(process.execPath, [MAIN, 'audit', '--home', w.home, '--run-kind', 'cron'], {
    encoding: 'utf8',
  });
  t.is(cron.stdout.trim().split('\n').length, 180);
  const who = spawnSync(process.execPath, [MAIN, 'audit', '--home', w.home, '--id', 'projects/garden.md'], {
    encoding: 'utf8',
  });
  t.is(who.stdout.trim().split('\n').length, 207);
  const none = spawnSync(process.execPath, [MAIN, 'audit', '--home', w.home, '--since', '2999-01-01'], {
    encoding: 'utf8',
  });
  t.is(none.stdout, '');
  t.false(fs.readdirSync(path.join(w.home, 'plugin-data', 'memory-bridge', 'audit')).some((f) => f.endsWith('.tmp')));
  // A record changed by hand: verify names it and exits 1.
  const dir = path.join(w.home, 'plugin-data', 'memory-bridge', 'audit');
  const file = path.join(dir, fs.readdirSync(dir).sort()[0]!);
  const text = fs.readFileSync(file, 'utf8').split('\n');
  text[10] = text[10]!.replace('"ok"', '"OK"');
  fs.writeFileSync(file, text.join('\n'));
  const broken = spawnSync(process.execPath, [MAIN, 'audit', 'verify', '--home', w.home], { encoding: 'utf8' });
  t.is(broken.status, 1);
  t.regex(broken.stdout, /chain broken at audit-\d{4}-\d{2}-\d{2}\.000001\.jsonl line 12:/);
});
