// A tiny TCP proxy for outage tests: put it between a client and a shared server,
// then cut() (server gone) or stall() (server hung) without touching the server.
import { connect, createServer, type Socket } from 'node:net';
import { listenOnLoopback } from './listen.ts';

export interface TcpProxy {
  /** The local port (127.0.0.1) to point the client at. */
  readonly port: number;
  /** Destroys every open connection and refuses new ones until restore(). */
  cut(): void;
  /** Keeps connections open but holds back all bytes, both ways, until restore(). */
  stall(): void;
  /** Accepts connections again and delivers the bytes held back by stall(), in order. */
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let isCut = false;
  let isStalled = false;
  let held: Array<[Socket, Buffer]> = [];

  const track = (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  };
  const forward = (from: Socket, to: Socket) => {
    from.on('data', (chunk: Buffer) => {
      if (isStalled) held.push([to, chunk]);
      else to.write(chunk);
    });
  };
  const destroyAll = () => {
    for (const s of sockets) s.destroy();
    sockets.clear();
    held = [];
  };

  const server = createServer((client) => {
    track(client);
    if (isCut) {
      // Accept-then-reset: the client sees the connection die during its handshake.
      client.resetAndDestroy();
      return;
    }
    const upstream = connect({ host: targetHost, port: targetPort });
    track(upstream);
    const kill = () => {
      client.destroy();
      upstream.destroy();
    };
    for (const s of [client, upstream]) {
      s.on('error', kill);
      s.on('close', kill);
    }
    forward(client, upstream);
    forward(upstream, client);
  });

  const port = await listenOnLoopback(server, 'tcp proxy');

  return {
    port,
    cut() {
      isCut = true;
      destroyAll();
    },
    stall() {
      isStalled = true;
    },
    restore() {
      isCut = false;
      isStalled = false;
      const pending = held;
      held = [];
      for (const [to, chunk] of pending) if (!to.destroyed) to.write(chunk);
    },
    async close() {
      isCut = true;
      destroyAll();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
