import type { Server } from 'node:net';

/** Listens on an ephemeral port of 127.0.0.1; resolves with the port. */
export async function listenOnLoopback(server: Server, what: string): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error(`${what}: no port`);
  return address.port;
}
