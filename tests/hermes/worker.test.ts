import test from 'ava';
import { remedyOf } from '../../src/remedies.js';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { LineSplitter, MAX_LINE_BYTES, idFromPrefix, parseRequestLine } from '../../src/hermes/protocol.js';
import { runWorker } from '../../src/hermes/worker.js';
import { createBridge } from '../../src/tools/bridge.js';
import { makeHome, makeTempDir, mkdirs, removeTree, writeNote, type ParsedJson } from '../helpers/fixtures.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const cli = path.join(repo, 'dist', 'src', 'cli', 'main.js');
const tmp = makeTempDir('mb-worker-');
test.after.always(() => removeTree(tmp));

const root = mkdirs(tmp, 'notes');
writeNote(root, 'projects/garden.md', '# Lantern Garden\n\nThe lantern garden is watered on Fridays.\n');
writeNote(root, 'decisions/watering.md', '# Watering decision\n\nWater the lantern garden at dawn.\n');
const homeA = makeHome(tmp, { version: 1, root, allow: ['projects/**'] }, 'homeA').home;
const homeB = makeHome(tmp, { version: 1, root, allow: ['decisions/**'], allow_cron: true }, 'homeB').home;

const UNAVAILABLE = { ok: false, error: { code: 'unavailable', message: 'Memory is unavailable.' } };

function request(
  id: unknown,
  overrides: Record<string, unknown> = {},
  callerOverrides: Record<string, unknown> = {},
): string {
  return JSON.stringify({
    v: 1,
    id,
    tool: 'memory_bridge_search',
    args: { query: 'lantern' },
    caller: { home: homeA, profile: 'a', cron: false, subagent: false, ...callerOverrides },
    ...overrides,
  });
}

/** Run a real worker (real bridge) over in-memory pipes; returns the parsed replies and the log lines. */
/**
 * Runs a worker over `input`. `logs` are the log lines without the remedy a line carries the first time its reason
 * appears; `told` are the lines as written.
 */
async function serve(
  input: Array<string | Buffer>,
): Promise<{ replies: ParsedJson[]; logs: string[]; told: string[] }> {
  const output = new PassThrough();
  const chunks: Buffer[] = [];
  output.on('data', (c: Buffer) => chunks.push(c));
  const logs: string[] = [];
  const told: string[] = [];
  const bridge = createBridge({ log: (e) => logs.push(`${e.tool} ${e.reason}`) });
  await runWorker({
    input: Readable.from(input.map((x) => (typeof x === 'string' ? Buffer.from(x) : x))),
    output,
    bridge,
    log: (l) => {
      told.push(l);
      logs.push(l.split(' → ')[0]!);
    },
  });
  const text = Buffer.concat(chunks).toString('utf8');
  const replies =
    text === ''
      ? []
      : text
          .trimEnd()
          .split('\n')
          .map((l) => JSON.parse(l));
  return { replies, logs, told };
}

test('worker › answers a valid request with the same id and the tool result', async (t) => {
  const { replies } = await serve([`${request('r1')}\n`]);
  t.is(replies.length, 1);
  t.deepEqual(Object.keys(replies[0]).sort(), ['id', 'result', 'v']);
  t.is(replies[0].v, 1);
  t.is(replies[0].id, 'r1');
  t.true(replies[0].result.ok);
  t.deepEqual(
    replies[0].result.results.map((r: ParsedJson) => r.id),
    ['projects/garden.md'],
  );
});

test('worker › answers read requests too', async (t) => {
  const { replies } = await serve([
    `${request('r', { tool: 'memory_bridge_read', args: { id: 'projects/garden.md' } })}\n`,
  ]);
  t.is(replies[0].result.id, 'projects/garden.md');
  t.regex(replies[0].result.content, /Lantern Garden/);
});

test('worker › a wrong protocol version gets unavailable', async (t) => {
  const { replies, logs } = await serve([`${request('r2', { v: 2 })}\n`, `${request('r3', { v: '1' })}\n`]);
  t.deepEqual(replies, [
    { v: 1, id: 'r2', result: UNAVAILABLE },
    { v: 1, id: 'r3', result: UNAVAILABLE },
  ]);
  t.true(logs.includes('worker bad_version'));
});

test('worker › missing or malformed fields get unavailable', async (t) => {
  const bad: Array<[string, string]> = [
    ['no tool', JSON.stringify({ v: 1, id: 'a', args: {}, caller: { home: homeA, cron: false, subagent: false } })],
    [
      'no args',
      JSON.stringify({
        v: 1,
        id: 'b',
        tool: 'memory_bridge_search',
        caller: { home: homeA, cron: false, subagent: false },
      }),
    ],
    ['no caller', JSON.stringify({ v: 1, id: 'c', tool: 'memory_bridge_search', args: { query: 'x' } })],
    ['unknown tool', request('d', { tool: 'memory_bridge_write' })],
    ['extra field', request('e', { home: homeB })],
    ['relative home', request('f', {}, { home: 'homeA' })],
    ['unnormalised home', request('g', {}, { home: `${homeA}/../homeA` })],
    ['trailing slash', request('h', {}, { home: `${homeA}/` })],
    ['string cron', request('i', {}, { cron: 'false' })],
    [
      'missing subagent',
      JSON.stringify({ v: 1, id: 'j', tool: 'memory_bridge_search', args: {}, caller: { home: homeA, cron: false } }),
    ],
    ['extra caller key', request('k', {}, { uid: 0 })],
  ];
  const { replies } = await serve(bad.map(([, line]) => `${line}\n`));
  t.is(replies.length, bad.length);
  for (const [i, reply] of replies.entries()) t.deepEqual(reply.result, UNAVAILABLE, bad[i]![0]);
});

test('worker › a caller record without a profile gets unavailable', async (t) => {
  const line = JSON.stringify({
    v: 1,
    id: 'np',
    tool: 'memory_bridge_search',
    args: { query: 'lantern' },
    caller: { home: homeA, cron: false, subagent: false },
  });
  const { replies, logs } = await serve([`${line}\n`]);
  t.deepEqual(replies, [{ v: 1, id: 'np', result: UNAVAILABLE }]);
  t.true(logs.includes('worker bad_caller'));
});

test('worker › an empty profile (Hermes gave no name) is served', async (t) => {
  const { replies } = await serve([`${request('ep', {}, { profile: '' })}\n`]);
  t.true(replies[0].result.ok);
  const outcome = parseRequestLine(Buffer.from(request('ep', {}, { profile: '' })));
  t.is(outcome.kind, 'call');
  if (outcome.kind === 'call') t.false('profile' in outcome.request.caller);
});

test('worker › a request line with a duplicate key gets unavailable, wherever the duplicate is', async (t) => {
  const good = request('dup0');
  const lines = [
    // a second caller record after the first: JSON.parse would keep the last one
    good.replace('"caller":{', `"caller":{"home":${JSON.stringify(homeB)},`).replace('dup0', 'dup1'),
    good.replace('"args":{', '"args":{"query":"other",').replace('dup0', 'dup2'),
    good
      .replace(/}$/, `,"caller":{"home":${JSON.stringify(homeB)},"profile":"b","cron":false,"subagent":false}}`)
      .replace('dup0', 'dup3'),
    good.replace('"v":1,', '"v":1,"v":1,').replace('dup0', 'dup4'),
  ];
  const { replies, logs } = await serve(lines.map((l) => `${l}\n`));
  t.deepEqual(
    replies.map((r) => r.id),
    ['dup1', 'dup2', 'dup3'],
  );
  for (const r of replies) t.deepEqual(r.result, UNAVAILABLE);
  t.true(logs.includes('worker duplicate_key'));
});

test('worker › a line without a usable id is logged and skipped', async (t) => {
  const lines = [
    'not json',
    '[1,2]',
    JSON.stringify({ v: 1, tool: 'memory_bridge_search', args: {}, caller: {} }),
    JSON.stringify({ v: 1, id: 7, tool: 'memory_bridge_search' }),
    JSON.stringify({ v: 1, id: '' }),
    JSON.stringify({ v: 1, id: 'x'.repeat(257) }),
  ];
  const { replies, logs } = await serve([...lines.map((l) => `${l}\n`), `${request('after')}\n`]);
  t.deepEqual(
    replies.map((r) => r.id),
    ['after'],
  );
  t.true(replies[0].result.ok);
  t.true(logs.includes('worker not_json'));
  t.true(logs.includes('worker no_id'));
});

test("worker › an oversized line is discarded; its id is answered only in the shim's own form", async (t) => {
  const big = 'x'.repeat(MAX_LINE_BYTES + 10);
  const shimForm = `{"v":1,"id":"big1","tool":"memory_bridge_search","args":{"query":"${big}"}}\n`;
  const otherForm = `{"tool":"memory_bridge_search","args":{"id":"big2","query":"${big}"},"v":1,"id":"big3"}\n`;
  // Delivered in 64 KiB pieces, as a pipe would.
  const stream = Buffer.from(`${shimForm + otherForm}${request('next')}\n`);
  const pieces: Buffer[] = [];
  for (let i = 0; i < stream.length; i += 65536) pieces.push(stream.subarray(i, i + 65536));
  const { replies, logs, told } = await serve(pieces);
  t.deepEqual(
    replies.map((r) => r.id),
    ['big1', 'next'],
  );
  t.deepEqual(replies[0].result, UNAVAILABLE);
  t.true(replies[1].result.ok);
  t.is(logs.filter((l) => l === 'worker oversized_line').length, 2);
  // The first line of a reason says what to do; the next one is the short code alone.
  t.deepEqual(
    told.filter((l) => l.startsWith('worker oversized_line')),
    [`worker oversized_line → ${remedyOf('oversized_line')}`, 'worker oversized_line'],
  );
});

test('worker › a line of exactly 1 MiB is still a line', (t) => {
  const splitter = new LineSplitter();
  const exact = Buffer.alloc(MAX_LINE_BYTES, 0x61);
  const events = [
    ...splitter.push(exact.subarray(0, 1000)),
    ...splitter.push(exact.subarray(1000)),
    ...splitter.push(Buffer.from('\r\n')),
  ];
  t.is(events.length, 1);
  t.is(events[0]!.kind, 'line');
  const over = splitter.push(Buffer.concat([Buffer.alloc(MAX_LINE_BYTES + 1, 0x61), Buffer.from('\n')]));
  t.is(over[0]!.kind, 'oversized');
});

test('worker › the oversized-line id is read only from the leading v and id members', (t) => {
  t.is(idFromPrefix(Buffer.from('{"v":1,"id":"abc","tool":')), 'abc');
  t.is(idFromPrefix(Buffer.from('{ "v" : 1 , "id" : "a\\"b" ')), 'a"b');
  t.is(idFromPrefix(Buffer.from('{"v":2,"id":"abc"')), undefined);
  t.is(idFromPrefix(Buffer.from('{"args":{"id":"x"},"v":1,"id":"y"')), undefined);
  t.is(idFromPrefix(Buffer.from('{"v":1,"id":"unterminated')), undefined);
});

test('worker › one worker serves several homes, each under its own policy', async (t) => {
  const { replies } = await serve([
    `${request('a1')}\n`,
    `${request('b1', {}, { home: homeB, profile: 'b' })}\n`,
    `${request('a2')}\n`,
  ]);
  t.deepEqual(
    replies.map((r) => r.result.results.map((h: ParsedJson) => h.id)),
    [['projects/garden.md'], ['decisions/watering.md'], ['projects/garden.md']],
  );
});

test('worker › identity comes from the caller record, never from the arguments', async (t) => {
  const { replies } = await serve([
    `${request('i1', { args: { query: 'lantern', home: homeB } })}\n`,
    `${request('i2', { args: { query: 'lantern', caller: { home: homeB } } })}\n`,
    `${request('i3', {}, { cron: true })}\n`,
    `${request('i4', {}, { home: homeB, cron: true })}\n`,
    `${request('i5', {}, { home: homeB, subagent: true })}\n`,
  ]);
  t.is(replies[0].result.error.code, 'invalid_request');
  t.is(replies[1].result.error.code, 'invalid_request');
  t.deepEqual(replies[2].result, UNAVAILABLE, 'homeA does not allow cron');
  t.true(replies[3].result.ok, 'homeB allows cron');
  t.deepEqual(replies[4].result, UNAVAILABLE, 'homeB does not allow subagents');
});

test('worker › empty lines are ignored and a last line without newline is served', async (t) => {
  const { replies } = await serve(['\n\r\n', `${request('last')}`]);
  t.deepEqual(
    replies.map((r) => r.id),
    ['last'],
  );
});

test('worker › parseRequestLine keeps only the caller fields', (t) => {
  const outcome = parseRequestLine(Buffer.from(request('p', {}, { profile: 'work' })));
  t.is(outcome.kind, 'call');
  if (outcome.kind === 'call')
    t.deepEqual(outcome.request.caller, { home: homeA, cron: false, subagent: false, profile: 'work' });
});

test('worker › the CLI worker serves stdin and exits 0 at end of input', async (t) => {
  const child = spawn(process.execPath, [cli, 'worker'], { stdio: ['pipe', 'pipe', 'pipe'], env: {} });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on('data', (c: Buffer) => out.push(c));
  child.stderr.on('data', (c: Buffer) => err.push(c));
  child.stdin.write(`${request('c1')}\n`);
  child.stdin.write('garbage\n');
  child.stdin.end(`${request('c2', {}, { home: homeB })}\n`);
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  t.is(code, 0);
  const replies = Buffer.concat(out)
    .toString('utf8')
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l));
  t.deepEqual(
    replies.map((r) => [r.id, r.result.ok]),
    [
      ['c1', true],
      ['c2', true],
    ],
  );
  const stderr = Buffer.concat(err).toString('utf8');
  t.regex(stderr, /worker not_json/);
  t.notRegex(stderr, new RegExp(tmp.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')), 'no paths in the log');
});
