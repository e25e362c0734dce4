/**
 * Issue 22 point 4: a client whose request bodies never arrive cannot hold the endpoint. Real sockets on 127.0.0.1
 * against a server in this process; every wait is a bounded loop, every socket is closed at the end.
 */
import test from 'ava';
import { removeTree } from '../helpers/fixtures.js';
import type { HttpServerOptions } from '../../src/server/http.js';
import {
  client,
  makeWorld,
  mcpHeaders,
  rawRequest,
  rawSocket,
  startLogged,
  toolCallBody,
  waitFor,
  type TestClient,
  type World,
} from './http-world.js';

let world: World;
let attacker: TestClient;
let victim: TestClient;
test.before(() => {
  world = makeWorld('mb-slowbody-');
  attacker = client('attacker', world.workHome);
  victim = client('victim', world.personalHome);
});
test.after.always(() => {
  if (world !== undefined) removeTree(world.base);
});

const serve = (extra: Partial<HttpServerOptions>) => startLogged(world, [attacker, victim], extra);

/** Headers of a tool call that promise `length` body bytes; the caller sends fewer. */
function promisingHead(port: number, token: string, length: number): string {
  return (
    `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${token}\r\n` +
    `Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${length}\r\n\r\n{`
  );
}

test('slow body › bodies that never arrive hold no concurrency slot: another client is answered at once', async (t) => {
  // Timeouts far beyond the test: only the fix can let the victim through while the attacker's bodies hang.
  const { server } = await serve({ maxConcurrency: 4, headersTimeoutMs: 120_000, requestTimeoutMs: 120_000 });
  const port = server.port;
  const held: Awaited<ReturnType<typeof rawSocket>>[] = [];
  try {
    for (let i = 0; i < 4; i++) held.push(await rawSocket(port, promisingHead(port, attacker.token, 500)));
    // Every one of them has reached the handler (its headers were accepted) before the victim calls.
    t.true(await waitFor(() => server.stats().reading + server.stats().inFlight === 4, 250), 'attacker requests seen');
    t.is(server.stats().inFlight, 0, 'a body being read holds no slot');
    const call = toolCallBody('memory_bridge_search', { query: 'heron' });
    const res = await rawRequest(port, { headers: mcpHeaders(port, victim.token), body: call });
    t.is(res.status, 200);
    t.true(res.body.includes('"ok\\":true'));
  } finally {
    for (const h of held) h.socket.destroy();
    await server.close(1000);
  }
});

test('slow body › one client reads at most its share of bodies at once; past it 503, other clients unaffected', async (t) => {
  const { server, lines } = await serve({ maxConcurrency: 3, headersTimeoutMs: 120_000, requestTimeoutMs: 120_000 });
  const port = server.port;
  const held: Awaited<ReturnType<typeof rawSocket>>[] = [];
  try {
    for (let i = 0; i < 3; i++) held.push(await rawSocket(port, promisingHead(port, attacker.token, 500)));
    t.true(await waitFor(() => server.stats().reading === 3, 250));
    const call = toolCallBody('memory_bridge_search', { query: 'heron' });
    const extra = await rawRequest(port, { headers: mcpHeaders(port, attacker.token), body: call });
    t.is(extra.status, 503);
    t.is(extra.headers['retry-after'], '1');
    t.true(lines.some((l) => l.startsWith('client=attacker') && l.includes('result=busy')));
    // The victim's own bodies are read beside the attacker's.
    const mine = await rawSocket(port, promisingHead(port, victim.token, Buffer.byteLength(call)));
    t.true(await waitFor(() => server.stats().reading === 4, 250));
    mine.socket.write(call.slice(1));
    t.true(await waitFor(() => mine.received().includes('"ok\\":true'), 250), mine.received());
    t.regex(mine.received(), /^HTTP\/1\.1 200 /);
    mine.socket.destroy();
  } finally {
    for (const h of held) h.socket.destroy();
    await server.close(1000);
  }
});

test('slow body › a body dripping one byte at a time gets 408 at the body deadline, long before the request timeout', async (t) => {
  const { server, lines } = await serve({ bodyTimeoutMs: 800, headersTimeoutMs: 120_000, requestTimeoutMs: 120_000 });
  const port = server.port;
  const drip = await rawSocket(port, promisingHead(port, attacker.token, 10_000));
  // A byte every 100 ms keeps the connection active; the deadline counts from the headers, not from the last byte.
  let sent = 0;
  const timer = setInterval(() => {
    if (!drip.socket.destroyed && sent < 200) {
      drip.socket.write(' ');
      sent++;
    }
  }, 100);
  try {
    await Promise.race([drip.closed, new Promise((r) => setTimeout(r, 20_000))]);
    t.true(drip.socket.destroyed || drip.received() !== '', 'the server ended the request by itself');
    t.regex(drip.received(), /^HTTP\/1\.1 408 /);
    t.true(sent < 200, `closed after ${sent} bytes`);
    t.true(await waitFor(() => lines.some((l) => l.includes('result=timeout status=408')), 100), lines.join('\n'));
    t.true(await waitFor(() => server.stats().reading === 0 && server.stats().inFlight === 0, 100));
  } finally {
    clearInterval(timer);
    drip.socket.destroy();
    await server.close(1000);
  }
});
