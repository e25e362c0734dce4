import test from 'ava';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { removeTree } from '../helpers/fixtures.js';
import { bearerChallenge, publicOrigin } from '../../src/server/resource-metadata.js';
import {
  DEFAULT_RATE,
  RateLimiter,
  startHttpServer,
  type HttpServerHandle,
  type HttpServerOptions,
} from '../../src/server/http.js';
import {
  callJson,
  client,
  connectHttp,
  makeWorld,
  mcpHeaders,
  rawRequest,
  rawSocket,
  setClients,
  toolCallBody,
  waitFor,
  type RawResponse,
  type TestClient,
  type World,
} from './http-world.js';

let world: World;
let work: TestClient;
let personal: TestClient;
let cron: TestClient;
test.before(() => {
  world = makeWorld();
  work = client('work-laptop', world.workHome);
  personal = client('home-desktop', world.personalHome);
  cron = client('nightly', world.cronHome, 'cron');
});
test.after.always(() => {
  if (world !== undefined) removeTree(world.base);
});

/** A server on an ephemeral loopback port with its own clients file; `lines` collects its operator log. */
async function serve(
  clients: TestClient[],
  extra: Partial<HttpServerOptions> = {},
): Promise<{ server: HttpServerHandle; url: string; lines: string[]; file: string; close: () => Promise<void> }> {
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
  return { server, url: `${server.origin}/mcp`, lines, file, close: () => server.close(1000) };
}

function statusOf(err: unknown): number | undefined {
  return err instanceof StreamableHTTPError ? err.code : undefined;
}

test('http › two tokens bound to two homes each see only their own policy’s notes', async (t) => {
  const s = await serve([work, personal]);
  try {
    const a = await connectHttp(s.url, work.token);
    const b = await connectHttp(s.url, personal.token);
    const tools = await a.listTools();
    t.deepEqual(tools.tools.map((x) => x.name).sort(), ['memory_bridge_read', 'memory_bridge_search']);

    const hitsA = await callJson(a, 'memory_bridge_search', { query: 'heron' });
    const hitsB = await callJson(b, 'memory_bridge_search', { query: 'heron' });
    t.true(hitsA.ok);
    t.true(hitsB.ok);
    t.deepEqual(hitsA.results.map((r: { id: string }) => r.id).sort(), ['shared/glossary.md', 'work/roadmap.md']);
    t.deepEqual(
      hitsB.results.map((r: { id: string }) => r.id),
      ['personal/diary.md'],
    );

    t.true((await callJson(a, 'memory_bridge_read', { id: 'work/roadmap.md' })).ok);
    const crossA = await callJson(a, 'memory_bridge_read', { id: 'personal/diary.md' });
    const crossB = await callJson(b, 'memory_bridge_read', { id: 'work/roadmap.md' });
    t.is(crossA.error.code, 'not_found_or_denied');
    t.is(crossB.error.code, 'not_found_or_denied');
    await a.close();
    await b.close();
  } finally {
    await s.close();
  }
});

test('http › the run kind comes from the client entry: a cron client needs the policy’s allow_cron', async (t) => {
  const cronOnWork = client('cron-on-work', world.workHome, 'cron');
  const s = await serve([cron, cronOnWork]);
  try {
    const allowed = await connectHttp(s.url, cron.token);
    const refused = await connectHttp(s.url, cronOnWork.token);
    t.true((await callJson(allowed, 'memory_bridge_search', { query: 'heron' })).ok);
    t.is((await callJson(refused, 'memory_bridge_search', { query: 'heron' })).error.code, 'unavailable');
    t.true(s.lines.some((l) => l.includes('client=cron-on-work') && l.includes('reason=cron_refused')));
    await allowed.close();
    await refused.close();
  } finally {
    await s.close();
  }
});

test('http › missing, malformed, unknown and revoked tokens all get the identical 401', async (t) => {
  const revoked = client('revoked', world.workHome);
  const s = await serve([work]);
  try {
    const port = s.server.port;
    const body = toolCallBody('memory_bridge_search', { query: 'heron' });
    const variants: (string | null)[] = [
      null,
      'Bearer',
      'Basic dXNlcjpwYXNz',
      `Bearer ${work.token}x`,
      `Bearer ${work.token.slice(0, -1)}`,
      `Bearer ${revoked.token}`,
      `Bearer ${'a'.repeat(4000)}`,
      `Bearer ${work.token} extra`,
      `bearer\t${work.token}`,
    ];
    const answers = [];
    for (const auth of variants) {
      const headers = mcpHeaders(port, null, auth === null ? {} : { Authorization: auth });
      answers.push(await rawRequest(port, { headers, body }));
    }
    const first = answers[0]!;
    t.is(first.status, 401);
    t.is(
      first.headers['www-authenticate'],
      `Bearer resource_metadata="http://127.0.0.1:${port}/.well-known/oauth-protected-resource"`,
    );
    for (const a of answers) {
      t.is(a.status, 401);
      t.deepEqual(a.headers, first.headers);
      t.is(a.body, first.body);
    }
    t.false(first.body.includes('token'));
    // The real SDK client with a wrong token cannot even initialize.
    const err = await t.throwsAsync(connectHttp(s.url, revoked.token));
    t.is(statusOf(err), 401);
    const ok = await rawRequest(port, { headers: mcpHeaders(port, work.token), body });
    t.is(ok.status, 200);
  } finally {
    await s.close();
  }
});

test('http › a removed client is refused from its next request on; an added one works at once', async (t) => {
  const later = client('later', world.personalHome);
  const s = await serve([work, personal]);
  try {
    const a = await connectHttp(s.url, work.token);
    t.true((await callJson(a, 'memory_bridge_search', { query: 'heron' })).ok);
    setClients(s.file, [personal, later]);
    const err = await t.throwsAsync(callJson(a, 'memory_bridge_search', { query: 'heron' }));
    t.is(statusOf(err), 401);
    const c = await connectHttp(s.url, later.token);
    t.true((await callJson(c, 'memory_bridge_search', { query: 'heron' })).ok);
    await c.close();
    await a.close().catch(() => undefined);
  } finally {
    await s.close();
  }
});

test('http › an unusable clients file refuses every request (503) and names the reason in the log only', async (t) => {
  const s = await serve([work]);
  try {
    const port = s.server.port;
    const body = toolCallBody('memory_bridge_search', { query: 'heron' });
    const { chmodSync } = await import('node:fs');
    chmodSync(s.file, 0o666);
    const res = await rawRequest(port, { headers: mcpHeaders(port, work.token), body });
    t.is(res.status, 503);
    t.false(res.body.includes(s.file));
    t.true(s.lines.at(-1)!.includes('reason=clients_untrusted'));
    chmodSync(s.file, 0o600);
    t.is((await rawRequest(port, { headers: mcpHeaders(port, work.token), body })).status, 200);
  } finally {
    await s.close();
  }
});

test('http › Host must be an allowed name with the listen port (or an --allowed-host); any Origin must be listed or our own', async (t) => {
  const s = await serve([work], {
    allowedHosts: ['hub.example.org', 'proxy.example.org:8443'],
    allowedOrigins: ['https://app.example.org'],
  });
  try {
    const port = s.server.port;
    const other = port === 9999 ? 9998 : 9999;
    const body = toolCallBody('memory_bridge_search', { query: 'heron' });
    const send = (extra: Record<string, string>) =>
      rawRequest(port, { headers: mcpHeaders(port, work.token, extra), body });
    const refused = ['evil.example', `evil.example:${port}`, '127.0.0.2', 'localhost.evil.example', ''];
    // The default names count only with the listen port (no port means 80 for http).
    refused.push(`127.0.0.1:${other}`, 'localhost:1', '127.0.0.1', 'localhost', `[::1]:${other}`);
    // An --allowed-host with a port allows that port only.
    refused.push('proxy.example.org', `proxy.example.org:${port}`, 'proxy.example.org:443');
    refused.push(`127.0.0.1:${port}0`, `127.0.0.1:${port}:${port}`, '127.0.0.1:99999');
    for (const host of refused) {
      const res = await send({ Host: host });
      t.is(res.status, 403, host);
    }
    // A bare --allowed-host accepts any port or none (behind a proxy the Host carries the proxy's port, or none).
    const accepted = [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, `LOCALHOST:${port}`];
    accepted.push('HUB.example.org:443', 'hub.example.org', `hub.example.org:${port}`, 'proxy.example.org:8443');
    for (const host of accepted) {
      t.is((await send({ Host: host })).status, 200, host);
    }
    t.is((await send({ Origin: 'https://evil.example' })).status, 403);
    t.is((await send({ Origin: 'null' })).status, 403);
    t.is((await send({ Origin: 'https://app.example.org' })).status, 200);
    // The server's own origin (a host and port the Host check accepts exactly) passes; a bare any-port name,
    // another port or another name does not.
    for (const origin of [`http://127.0.0.1:${port}`, `http://LOCALHOST:${port}/`, 'https://proxy.example.org:8443'])
      t.is((await send({ Origin: origin })).status, 200, origin);
    for (const origin of [
      `http://127.0.0.1:${other}`,
      'http://hub.example.org',
      `http://evil.example:${port}`,
      `ftp://127.0.0.1:${port}`,
      `http://127.0.0.1:${port}/x`,
      `http://user@127.0.0.1:${port}`,
      'http://proxy.example.org',
    ])
      t.is((await send({ Origin: origin })).status, 403, origin);
    // Host is judged before anything else, also for the health check.
    t.is((await rawRequest(port, { method: 'GET', path: '/healthz', headers: { Host: 'evil.example' } })).status, 403);
    // The SDK client through the name "localhost" passes.
    const c = await connectHttp(`http://localhost:${port}/mcp`, work.token);
    t.true((await callJson(c, 'memory_bridge_search', { query: 'heron' })).ok);
    await c.close();
  } finally {
    await s.close();
  }
});

test('http › GET /healthz: 200 without a token and without details; other paths and methods are refused', async (t) => {
  const s = await serve([work]);
  try {
    const port = s.server.port;
    const host = { Host: `127.0.0.1:${port}` };
    const health = await rawRequest(port, { method: 'GET', path: '/healthz', headers: host });
    t.is(health.status, 200);
    t.is(health.body, 'ok\n');
    t.is((await rawRequest(port, { method: 'GET', path: '/', headers: host })).status, 404);
    t.is((await rawRequest(port, { method: 'POST', path: '/healthz', headers: host })).status, 405);
    const get = await rawRequest(port, { method: 'GET', headers: mcpHeaders(port, work.token) });
    t.is(get.status, 405);
    t.is((await rawRequest(port, { method: 'GET', headers: mcpHeaders(port, null) })).status, 401);
  } finally {
    await s.close();
  }
});

test('http › bodies over 1 MiB get 413, declared or streamed; malformed JSON and batches get 400', async (t) => {
  const s = await serve([work]);
  try {
    const port = s.server.port;
    const declared = await rawSocket(
      port,
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${work.token}\r\n` +
        'Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 2000000\r\n\r\n',
    );
    await declared.closed;
    t.regex(declared.received(), /^HTTP\/1\.1 413 /);

    const big = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(1_100_000) } });
    const streamed = await rawRequest(port, {
      headers: { ...mcpHeaders(port, work.token), 'Transfer-Encoding': 'chunked' },
      body: big,
    });
    t.is(streamed.status, 413);

    const bad = ['{"jsonrpc":"2.0",', '{"jsonrpc":"2.0","jsonrpc":"2.0","id":1,"method":"ping"}', '\uFEFF{}', '[]'];
    for (const body of bad) {
      const res = await rawRequest(port, { headers: mcpHeaders(port, work.token), body });
      t.is(res.status, 400, body);
    }
    const batch = JSON.stringify([
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      { jsonrpc: '2.0', id: 2, method: 'ping' },
    ]);
    t.is((await rawRequest(port, { headers: mcpHeaders(port, work.token), body: batch })).status, 400);
    const garbage = await rawSocket(port, 'NOT HTTP AT ALL\r\n\r\n');
    await garbage.closed;
    t.regex(garbage.received(), /^HTTP\/1\.1 400 /);
    // Still serving.
    const ok = await rawRequest(port, {
      headers: mcpHeaders(port, work.token),
      body: toolCallBody('memory_bridge_search', { query: 'heron' }),
    });
    t.is(ok.status, 200);
  } finally {
    await s.close();
  }
});

test('http › slow clients: unfinished headers and unfinished bodies get 408 and the connection closes', async (t) => {
  const s = await serve([work], { headersTimeoutMs: 1000, requestTimeoutMs: 2000 });
  try {
    const port = s.server.port;
    const headers = await rawSocket(port, `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n`);
    const body = await rawSocket(
      port,
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${work.token}\r\n` +
        'Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{',
    );
    await headers.closed;
    await body.closed;
    t.regex(headers.received(), /^HTTP\/1\.1 408 /);
    t.regex(body.received(), /^HTTP\/1\.1 408 /);
    t.true(await waitFor(() => s.server.stats().inFlight === 0));
    // One line each, whichever side of the header deadline the server read the second request's headers on.
    t.true(
      await waitFor(() => s.lines.filter((l) => l.includes('result=timeout status=408')).length === 2),
      s.lines.join('\n'),
    );
  } finally {
    await s.close();
  }
});

test('http › a client that disconnects mid-request leaves nothing behind', async (t) => {
  const s = await serve([work]);
  try {
    const port = s.server.port;
    const head =
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${work.token}\r\n` +
      'Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n';
    const call = toolCallBody('memory_bridge_search', { query: 'heron' });
    for (let i = 0; i < 5; i++) {
      // Whole request sent, gone before the answer.
      const whole = await rawSocket(port, `${head}Content-Length: ${Buffer.byteLength(call)}\r\n\r\n${call}`);
      whole.socket.destroy();
      // Half a body, then gone.
      const half = await rawSocket(
        port,
        `${head}Content-Length: ${Buffer.byteLength(call)}\r\n\r\n${call.slice(0, 20)}`,
      );
      await waitFor(() => s.server.stats().inFlight > 0, 50);
      half.socket.destroy();
    }
    t.true(await waitFor(() => s.server.stats().inFlight === 0 && s.server.stats().connections === 0));
    t.true(s.lines.some((l) => l.includes('result=disconnected')));
    const c = await connectHttp(s.url, work.token);
    t.true((await callJson(c, 'memory_bridge_search', { query: 'heron' })).ok);
    await c.close();
  } finally {
    await s.close();
  }
});

test('http › more requests in flight than --max-concurrency get 503 with Retry-After', async (t) => {
  const s = await serve([work, personal], { maxConcurrency: 2 });
  try {
    const port = s.server.port;
    const call = toolCallBody('memory_bridge_search', { query: 'heron' });
    const len = Buffer.byteLength(call);
    const whole = (token: string) =>
      `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${token}\r\n` +
      `Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${len}\r\n\r\n${call}`;
    // A request is in flight from its whole body until its answer; the answer waits one turn of the event loop, so
    // whole requests written at the same moment on six connections are read in one turn and all count at once.
    let statuses: string[] = [];
    let busyAnswer = '';
    for (let round = 0; round < 10 && busyAnswer === ''; round++) {
      const socks = await Promise.all(Array.from({ length: 6 }, () => rawSocket(port, '')));
      t.true(await waitFor(() => s.server.stats().connections === 6));
      for (const [i, r] of socks.entries()) r.socket.write(whole(i % 2 === 0 ? work.token : personal.token));
      t.true(await waitFor(() => socks.every((r) => /\r\n\r\n\{/.test(r.received()))));
      statuses = socks.map((r) => r.received().slice(9, 12));
      busyAnswer = socks.find((r) => r.received().startsWith('HTTP/1.1 503 '))?.received() ?? '';
      for (const r of socks) r.socket.destroy();
      t.true(await waitFor(() => s.server.stats().inFlight === 0));
    }
    t.regex(busyAnswer, /\r\nRetry-After: 1\r\n/i, statuses.join(' '));
    t.true(statuses.filter((x) => x === '200').length >= 2, statuses.join(' '));
    t.true(
      statuses.every((x) => x === '200' || x === '503'),
      statuses.join(' '),
    );
    t.true(s.lines.some((l) => l.includes('result=busy status=503')));
    t.is((await rawRequest(port, { headers: mcpHeaders(port, personal.token), body: call })).status, 200);
  } finally {
    await s.close();
  }
});

test('http › the per-client rate limit answers 429 with Retry-After and leaves other clients alone', async (t) => {
  // A bucket that refills once in 1000 s: exactly `burst` requests pass, whatever the machine's speed.
  const s = await serve([work, personal], { rate: { perSecond: 0.001, burst: 3 } });
  try {
    const port = s.server.port;
    const call = toolCallBody('memory_bridge_search', { query: 'heron' });
    const statuses: number[] = [];
    let retryAfter: string | string[] | undefined;
    for (let i = 0; i < 6; i++) {
      const res = await rawRequest(port, { headers: mcpHeaders(port, work.token), body: call });
      statuses.push(res.status);
      if (res.status === 429) retryAfter = res.headers['retry-after'];
    }
    t.deepEqual(statuses, [200, 200, 200, 429, 429, 429]);
    t.true(Number(retryAfter) >= 1);
    t.is((await rawRequest(port, { headers: mcpHeaders(port, personal.token), body: call })).status, 200);
    // Unauthenticated requests never touch a bucket.
    t.is(s.server.stats().buckets, 2);
  } finally {
    await s.close();
  }
});

test('http › the default rate limit (20/s, burst 40) through the real server with a stopped clock', async (t) => {
  t.deepEqual({ ...DEFAULT_RATE }, { perSecond: 20, burst: 40 });
  // The limiter's clock stands still unless the test moves it: the counts are exact whatever the machine's speed.
  let now = 1_000_000;
  const s = await serve([work, personal], { maxConcurrency: 200, maxConnectionsPerPeer: 1024, clock: () => now });
  try {
    const port = s.server.port;
    const call = toolCallBody('memory_bridge_search', { query: 'heron' });
    const burst = async (token: string, n: number): Promise<RawResponse[]> =>
      Promise.all(Array.from({ length: n }, () => rawRequest(port, { headers: mcpHeaders(port, token), body: call })));
    const count = (rs: RawResponse[], status: number): number => rs.filter((r) => r.status === status).length;

    const first = await burst(work.token, 60);
    t.is(count(first, 200), 40);
    t.is(count(first, 429), 20);
    t.true(first.filter((r) => r.status === 429).every((r) => r.headers['retry-after'] === '1'));
    // Half a second refills 10 tokens (20/s), one second 20; never more than the burst.
    now += 500;
    t.is(count(await burst(work.token, 15), 200), 10);
    now += 1000;
    t.is(count(await burst(work.token, 30), 200), 20);
    now += 3_600_000;
    t.is(count(await burst(work.token, 50), 200), 40);
    // Another client has a bucket of its own.
    t.is(count(await burst(personal.token, 41), 200), 40);
  } finally {
    await s.close();
  }
});

test('http › RateLimiter: refill per second up to the burst, Retry-After in whole seconds', (t) => {
  let now = 0;
  const limiter = new RateLimiter(2, 3, () => now);
  t.deepEqual(
    [0, 0, 0].map(() => limiter.take('a')),
    [0, 0, 0],
  );
  // Empty: one token comes back in 0.5 s, reported as 1 s.
  t.is(limiter.take('a'), 1);
  now += 500;
  t.is(limiter.take('a'), 0);
  t.is(limiter.take('a'), 1);
  const slow = new RateLimiter(0.25, 1, () => now);
  t.is(slow.take('b'), 0);
  t.is(slow.take('b'), 4);
  // A full bucket holds no information: pruned once more than `keep` are kept.
  // Half a second later 'a' holds 1 token and 'c' 2 (kept), 'd' is full again (dropped).
  t.is(limiter.take('c'), 0);
  t.is(limiter.take('c'), 0);
  t.is(limiter.take('d'), 0);
  now += 500;
  limiter.prune(1);
  t.is(limiter.size, 2);
  now += 10_000;
  limiter.prune(0);
  t.is(limiter.size, 0);
});

test('http › one operator line per request with client, tool, result, status and duration; no secrets', async (t) => {
  const s = await serve([work]);
  try {
    const port = s.server.port;
    const c = await connectHttp(s.url, work.token);
    // The SDK client opens (tries to open) its event stream with a GET after initializing: 405 here.
    t.true(await waitFor(() => s.lines.some((l) => l.includes('status=405'))));
    const before = s.lines.length;
    await callJson(c, 'memory_bridge_search', { query: 'heronsecretquery' });
    await callJson(c, 'memory_bridge_read', { id: 'work/roadmap.md' });
    await callJson(c, 'memory_bridge_read', { id: 'personal/diary.md' });
    await rawRequest(port, { headers: mcpHeaders(port, 'mbt_wrong'), body: '{}' });
    t.true(await waitFor(() => s.lines.length === before + 4), s.lines.slice(before).join('\n'));
    const lines = s.lines.slice(before);
    t.regex(lines[0]!, /^client=work-laptop tool=memory_bridge_search result=ok status=200 ms=\d+\.\d$/);
    t.regex(lines[1]!, /^client=work-laptop tool=memory_bridge_read result=ok status=200 ms=\d+\.\d$/);
    t.regex(lines[2]!, /^client=work-laptop tool=memory_bridge_read result=not_found_or_denied reason=\w+ status=200 /);
    t.regex(lines[3]!, /^client=- tool=- result=unauthorized status=401 /);
    for (const l of s.lines) {
      for (const secret of ['heronsecretquery', 'roadmap', 'diary', work.token, work.entry.tokenSha256, world.base])
        t.false(l.includes(secret), l);
    }
    await c.close();
  } finally {
    await s.close();
  }
});

test('http › close() lets a request in flight finish, refuses new connections, and resolves', async (t) => {
  const s = await serve([work]);
  const port = s.server.port;
  const call = toolCallBody('memory_bridge_search', { query: 'heron' });
  const slow = await rawSocket(
    port,
    `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${work.token}\r\n` +
      `Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${Buffer.byteLength(call)}\r\n\r\n`,
  );
  // Its headers are in and its body is awaited: the request has begun.
  t.true(await waitFor(() => s.server.stats().reading === 1));
  const closed = s.server.close(10_000);
  await t.throwsAsync(rawRequest(port, { method: 'GET', path: '/healthz', headers: { Host: `127.0.0.1:${port}` } }));
  slow.socket.write(call);
  await slow.closed;
  t.regex(slow.received(), /^HTTP\/1\.1 200 /);
  t.true(slow.received().includes('"ok\\":true'));
  await closed;
});

test('http › RFC 9728: protected-resource metadata without a token, named by every 401, same for every Host it is reached by', async (t) => {
  const s = await serve([work]);
  try {
    const port = s.server.port;
    for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
      for (const host of [`127.0.0.1:${port}`, `localhost:${port}`]) {
        const r = await rawRequest(port, { method: 'GET', path, headers: { Host: host } });
        t.is(r.status, 200, `${path} ${host}`);
        t.regex(String(r.headers['content-type']), /^application\/json/);
        t.is(r.headers.connection, 'close');
        t.deepEqual(JSON.parse(r.body), {
          resource: `http://${host}/mcp`,
          bearer_methods_supported: ['header'],
          resource_name: 'memory-bridge',
        });
        t.false('authorization_servers' in JSON.parse(r.body), 'no OAuth server: hosts send the static header');
      }
    }
    // The challenge names the document at the address the client used; following it gives the document.
    const denied = await rawRequest(port, {
      headers: mcpHeaders(port, null),
      body: toolCallBody('memory_bridge_search', { query: 'heron' }),
    });
    t.is(denied.status, 401);
    const m = /^Bearer resource_metadata="http:\/\/127\.0\.0\.1:(\d+)(\/[^"]+)"$/.exec(
      String(denied.headers['www-authenticate']),
    );
    t.truthy(m);
    const doc = await rawRequest(port, { method: 'GET', path: m![2]!, headers: { Host: `127.0.0.1:${m![1]}` } });
    t.is(JSON.parse(doc.body).resource, `http://127.0.0.1:${port}/mcp`);
    // Host and Origin checks come first here too; a POST is not a metadata request.
    t.is(
      (
        await rawRequest(port, {
          method: 'GET',
          path: '/.well-known/oauth-protected-resource',
          headers: { Host: 'evil.example' },
        })
      ).status,
      403,
    );
    t.is(
      (
        await rawRequest(port, {
          method: 'GET',
          path: '/.well-known/oauth-protected-resource',
          headers: { Host: `127.0.0.1:${port}`, Origin: 'https://evil.example' },
        })
      ).status,
      403,
    );
    t.is(
      (
        await rawRequest(port, {
          method: 'POST',
          path: '/.well-known/oauth-protected-resource',
          headers: { Host: `127.0.0.1:${port}` },
          body: '{}',
        })
      ).status,
      405,
    );
    t.true(s.lines.some((l) => /tool=resource_metadata result=ok status=200/.test(l)));
  } finally {
    await s.close();
  }
});

test('http › the metadata names https behind TLS or a TLS-terminating proxy, and keeps a port only when given', (t) => {
  t.is(publicOrigin({ name: 'hub.example', port: null }, true), 'https://hub.example');
  t.is(publicOrigin({ name: 'hub.example', port: 8443 }, true), 'https://hub.example:8443');
  t.is(publicOrigin({ name: '[::1]', port: 8765 }, false), 'http://[::1]:8765');
  t.is(publicOrigin(null, true), null);
  t.is(bearerChallenge(null), 'Bearer');
});
