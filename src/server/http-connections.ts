/**
 * The connection budget of `memory-bridge serve` (docs/HTTP.md, "Connections"): at most `total` connections open
 * at once and at most `perPeer` from one peer, so no one address (or IPv6 /64) can hold the whole budget, with or
 * without a token.
 *
 * A new connection is admitted like this:
 *
 * 1. Its peer already holds `perPeer` connections: the peer's own oldest idle keep-alive connection is closed to make
 *    room; when the peer has none idle (all busy or still sending headers), the new connection is refused.
 * 2. The server holds `total` connections: the oldest idle keep-alive connection is closed; when none is idle, the
 *    oldest connection that has not finished its first request's headers is closed; when every connection is
 *    busy with a request, the new connection is refused.
 *
 * Idle keep-alive connections are the cheapest to close: nothing is in flight, and a client reconnects on its next
 * request. Every step costs at most one pass over the open connections (at most `total`).
 */
import type { Socket } from 'node:net';

/** Where a connection stands: before its first request's headers, answering a request, or idle between requests. */
type ConnectionState = 'new' | 'busy' | 'idle';

interface Connection {
  socket: Socket;
  peer: string;
  state: ConnectionState;
}

/** Why a connection was refused: its peer's cap, or every connection of the server busy. */
export type Refusal = 'peer_limit' | 'full';

/**
 * The peer a connection counts against: an IPv4 address (IPv4-mapped IPv6 addresses as IPv4), or the /64 prefix of
 * an IPv6 address, since one host usually holds a whole /64 (RFC 4291 §2.5.4 interface identifiers are 64 bits).
 *
 * @param address `socket.remoteAddress` (undefined once the socket is gone)
 * @returns a key such as `192.0.2.7` or `2001:db8:0:1::/64`
 */
export function peerKey(address: string | undefined): string {
  if (address === undefined || address === '') return '-';
  const a = address.toLowerCase().split('%', 1)[0]!;
  const mapped = /^::ffff:(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})$/.exec(a);
  if (mapped !== null) return mapped[1]!;
  if (!a.includes(':')) return a;
  const halves = a.split('::');
  const head = halves[0] === '' ? [] : halves[0]!.split(':');
  const tail = halves.length < 2 || halves[1] === '' ? [] : halves[1]!.split(':');
  const groups =
    halves.length < 2
      ? head
      : [...head, ...Array<string>(Math.max(0, 8 - head.length - tail.length)).fill('0'), ...tail];
  const prefix = groups.slice(0, 4).map((g) => (/^[0-9a-f]{1,4}$/.test(g) ? Number.parseInt(g, 16).toString(16) : g));
  return `${prefix.join(':')}::/64`;
}

/** The open connections of one server, by age, with the idle ones in the order they became idle. */
export class ConnectionTable {
  /** Insertion order is age: the first entry is the oldest connection. */
  private readonly open = new Map<Socket, Connection>();
  /** Insertion order is the moment a connection became idle: the first entry has been idle longest. */
  private readonly idle = new Map<Socket, Connection>();
  private readonly perPeerCount = new Map<string, number>();
  /** Connections refused, and idle or header-less connections closed to admit another, since the start. */
  refused = 0;
  evicted = 0;

  /**
   * @param total most connections open at once (≥ 1)
   * @param perPeer most connections open at once from one peer (1 to `total`)
   */
  constructor(
    private readonly total: number,
    private readonly perPeer: number,
  ) {}

  get size(): number {
    return this.open.size;
  }

  /**
   * Admit `socket` (just accepted), closing an idle or header-less connection to make room when a cap is reached.
   *
   * @returns null when admitted, else why it must be refused (the caller closes it)
   */
  admit(socket: Socket): Refusal | null {
    const peer = peerKey(socket.remoteAddress);
    if ((this.perPeerCount.get(peer) ?? 0) >= this.perPeer) {
      const own = this.firstOf(this.idle, (c) => c.peer === peer);
      if (own === null) {
        this.refused++;
        return 'peer_limit';
      }
      this.evict(own);
    }
    if (this.open.size >= this.total) {
      const victim = this.firstOf(this.idle, () => true) ?? this.firstOf(this.open, (c) => c.state === 'new');
      if (victim === null) {
        this.refused++;
        return 'full';
      }
      this.evict(victim);
    }
    const c: Connection = { socket, peer, state: 'new' };
    this.open.set(socket, c);
    this.perPeerCount.set(peer, (this.perPeerCount.get(peer) ?? 0) + 1);
    return null;
  }

  /** A request's headers arrived on `socket`: it is busy until its response closes. */
  busy(socket: Socket): void {
    const c = this.open.get(socket);
    if (c === undefined) return;
    c.state = 'busy';
    this.idle.delete(socket);
  }

  /** The response on `socket` closed and the connection stays open: it is idle (the newest idle one). */
  idleAgain(socket: Socket): void {
    const c = this.open.get(socket);
    if (c === undefined || socket.destroyed) return;
    c.state = 'idle';
    this.idle.delete(socket);
    this.idle.set(socket, c);
  }

  /** `socket` closed: forget it (closing twice is harmless). */
  remove(socket: Socket): void {
    const c = this.open.get(socket);
    if (c === undefined) return;
    this.open.delete(socket);
    this.idle.delete(socket);
    const n = (this.perPeerCount.get(c.peer) ?? 1) - 1;
    if (n <= 0) this.perPeerCount.delete(c.peer);
    else this.perPeerCount.set(c.peer, n);
  }

  private evict(c: Connection): void {
    this.remove(c.socket);
    this.evicted++;
    c.socket.destroy();
  }

  private firstOf(map: Map<Socket, Connection>, keep: (c: Connection) => boolean): Connection | null {
    for (const c of map.values()) if (keep(c)) return c;
    return null;
  }
}
