import net from 'node:net';
import test from 'ava';
import { peerKey } from '../../src/server/http-connections.js';
import type { HttpServerOptions } from '../../src/server/http.js';
import { removeTree } from '../helpers/fixtures.js';
import {
  client,
  makeWorld,
  mcpHeaders,
  rawRequest,
  startLogged,
  toolCallBody,
  waitFor,
  type TestClient,
  type World,
} from './http-world.js';

let world: World;
let work: TestClient;
test.before(() => {
  world = makeWorld('mb-http-conn-');
  work = client('work-laptop', world.workHome);
});
test.after.always(() => {
  if (world !== undefined) removeTree(world.base);
});

const serve = (extra: Partial<HttpServerOptions>) => startLogged(world, [work], extra);

/** A raw connection from `from` (any 127.0.0.0/8 address is loopback on Linux) that has written `text`. */
interface Conn {
  socket: net.Socket;
  received: () => string;
  isClosed: () => boolean;
  closed: Promise<void>;
}

async function connectFrom(port: number, from: string, text: string): Promise<Conn> {
  const socket = net.connect({ port, host: '127.0.0.1', localAddress: from });
  let data = '';
  let done = false;
  socket.setEncoding('utf8');
  socket.on('data', (d: string) => (data += d));
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) =>
    socket.once('close', () => {
      done = true;
      resolve();
    }),
  );
  await new Promise<void>((resolve) => {
    socket.once('connect', () => resolve());
    socket.once('close', () => resolve());
  });
  if (!done) socket.write(text);
  return { socket, received: () => data, isClosed: () => done, closed };
}

function healthz(port: number): string {
  return `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`;
}

function trickle(port: number): string {
  return `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n`;
}

/** One complete, authorized keep-alive tool call. */
function authorizedCall(port: number): string {
  const body = toolCallBody('memory_bridge_search', { query: 'heron' });
  return (
    `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${work.token}\r\n` +
    'Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  );
}

/** Wait until a keep-alive call's whole answer (status line to the end of the JSON body) has arrived. */
async function answered(c: Conn): Promise<boolean> {
  return waitFor(() => /^HTTP\/1\.1 200 [\s\S]*\r\n\r\n[\s\S]*\}$/.test(c.received()) || c.isClosed());
}

async function healthyFor(port: number): Promise<void> {
  const h = await rawRequest(port, { method: 'GET', path: '/healthz', headers: { Host: `127.0.0.1:${port}` } });
  if (h.status !== 200) throw new Error(`healthz: ${h.status}`);
  const call = await rawRequest(port, {
    headers: mcpHeaders(port, work.token),
    body: toolCallBody('memory_bridge_search', { query: 'heron' }),
  });
  if (call.status !== 200) throw new Error(`call: ${call.status}`);
}

test('connections › peerKey: IPv4 as is, IPv4-mapped as IPv4, IPv6 by /64', (t) => {
  t.is(peerKey('192.0.2.7'), '192.0.2.7');
  t.is(peerKey('::ffff:192.0.2.7'), '192.0.2.7');
  t.is(peerKey('2001:db8:0:1::5'), '2001:db8:0:1::/64');
  t.is(peerKey('2001:0DB8:0000:0001:aaaa:bbbb:cccc:dddd'), '2001:db8:0:1::/64');
  t.is(peerKey('::1'), '0:0:0:0::/64');
  t.is(peerKey('fe80::1%eth0'), 'fe80:0:0:0::/64');
  t.is(peerKey(undefined), '-');
});

test('connections › one peer cannot hold the budget: health checks close, unfinished headers are capped per peer and evicted at the global cap', async (t) => {
  // Header timeouts far beyond the test's length: connections close here only because of the caps.
  const s = await serve({
    maxConnections: 100,
    maxConnectionsPerPeer: 30,
    headersTimeoutMs: 120_000,
    requestTimeoutMs: 120_000,
  });
  const all: Conn[] = [];
  try {
    const port = s.server.port;
    // 80 keep-alive health checks from one peer: each is answered and closed, none stays idle.
    const checks = await Promise.all(Array.from({ length: 80 }, () => connectFrom(port, '127.0.0.2', healthz(port))));
    all.push(...checks);
    await Promise.all(checks.map((c) => c.closed));
    for (const c of checks) {
      // Refused at the peer cap (nothing received) or answered with Connection: close.
      if (c.received() !== '') {
        t.regex(c.received(), /^HTTP\/1\.1 200 /);
        t.regex(c.received(), /\r\nConnection: close\r\n/i);
      }
    }
    t.true(checks.filter((c) => c.received() !== '').length >= 30);
    t.true(await waitFor(() => s.server.stats().connections === 0));

    // 80 connections from one peer that never finish their headers: 30 held, 50 refused at once.
    const slow = await Promise.all(Array.from({ length: 80 }, () => connectFrom(port, '127.0.0.3', trickle(port))));
    all.push(...slow);
    t.true(await waitFor(() => slow.filter((c) => c.isClosed()).length === 50));
    t.is(s.server.stats().connections, 30);
    t.true(s.server.stats().refused >= 50);
    t.true(s.lines.some((l) => /^connections refused reason=peer_limit count=\d+$/.test(l)));
    // Everyone else is still served.
    await t.notThrowsAsync(healthyFor(port));

    // Three more peers of 30 header-less connections each go past the global cap of 100: the oldest header-less
    // connections are closed to admit them, and other clients are still served.
    for (const from of ['127.0.0.4', '127.0.0.5', '127.0.0.6']) {
      all.push(...(await Promise.all(Array.from({ length: 30 }, () => connectFrom(port, from, trickle(port))))));
    }
    t.true(await waitFor(() => s.server.stats().connections === 100));
    // The 20 closed to make room are the oldest header-less ones: 127.0.0.3's.
    t.true(await waitFor(() => slow.filter((c) => c.isClosed()).length === 70));
    t.is(s.server.stats().evicted, 20);
    await t.notThrowsAsync(healthyFor(port));
    t.true(s.server.stats().connections <= 100);
  } finally {
    for (const c of all) c.socket.destroy();
    await s.server.close(1000);
  }
});

test('connections › at a cap the oldest idle keep-alive connection is closed to admit a new one (the peer’s own at the peer cap)', async (t) => {
  const s = await serve({ maxConnections: 12, maxConnectionsPerPeer: 4 });
  const all: Conn[] = [];
  try {
    const port = s.server.port;
    const byPeer = new Map<string, Conn[]>();
    // Three peers with four idle keep-alive connections each, made idle in this order: 12, the global cap.
    for (const from of ['127.0.0.2', '127.0.0.3', '127.0.0.4']) {
      const conns: Conn[] = [];
      for (let i = 0; i < 4; i++) {
        const c = await connectFrom(port, from, authorizedCall(port));
        t.true(await answered(c));
        t.false(c.isClosed(), `${from} #${i}`);
        conns.push(c);
      }
      byPeer.set(from, conns);
      all.push(...conns);
    }
    t.is(s.server.stats().connections, 12);

    // A new peer: the connection idle longest (127.0.0.2's first) is closed, and the new call is answered.
    const fresh = await connectFrom(port, '127.0.0.5', authorizedCall(port));
    all.push(fresh);
    t.true(await answered(fresh));
    t.regex(fresh.received(), /^HTTP\/1\.1 200 /);
    await byPeer.get('127.0.0.2')![0]!.closed;
    t.is(all.filter((c) => c.isClosed()).length, 1);

    // 127.0.0.3 at its cap of 4 opens a fifth: its own oldest idle connection goes, not 127.0.0.2's older ones.
    const fifth = await connectFrom(port, '127.0.0.3', authorizedCall(port));
    all.push(fifth);
    t.true(await answered(fifth));
    t.regex(fifth.received(), /^HTTP\/1\.1 200 /);
    await byPeer.get('127.0.0.3')![0]!.closed;
    t.false(byPeer.get('127.0.0.2')![1]!.isClosed());
    t.is(all.filter((c) => c.isClosed()).length, 2);
    t.is(s.server.stats().connections, 12);
    t.is(s.server.stats().evicted, 2);

    // A peer whose connections are all busy (unfinished headers) gets a fifth refused: nothing idle of its own.
    const busy = await Promise.all(Array.from({ length: 4 }, () => connectFrom(port, '127.0.0.6', trickle(port))));
    all.push(...busy);
    t.true(await waitFor(() => s.server.stats().evicted === 6));
    const refused = await connectFrom(port, '127.0.0.6', trickle(port));
    all.push(refused);
    await refused.closed;
    t.is(refused.received(), '');
    t.false(busy.some((c) => c.isClosed()));
    t.is(s.server.stats().refused, 1);
  } finally {
    for (const c of all) c.socket.destroy();
    await s.server.close(1000);
  }
});
