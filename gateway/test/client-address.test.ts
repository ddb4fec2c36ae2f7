import { afterAll, describe, expect, test } from '@jest/globals';
import Fastify, { type FastifyInstance } from 'fastify';
import { clientAddress, type TrustedProxies } from '../src/auth/client-address.ts';

const apps: FastifyInstance[] = [];

afterAll(async () => {
  for (const app of apps) await app.close();
});

/** What the gateway takes for the client's address of a request from `peer` carrying `forwardedFor`. */
function addressUnder(trusted: TrustedProxies) {
  const app = Fastify({ logger: false });
  apps.push(app);
  const read = clientAddress(trusted);
  app.get('/', async (req) => ({ address: read(req) }));
  return async (peer: string, forwardedFor?: string) => {
    const headers = forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor };
    const res = await app.inject({ method: 'GET', url: '/', remoteAddress: peer, headers });
    return res.json().address as string;
  };
}

describe('client address', () => {
  test('when no proxy is trusted, then the socket address is used and X-Forwarded-For is ignored', async () => {
    const address = addressUnder([]);
    expect(await address('203.0.113.7')).toBe('203.0.113.7');
    expect(await address('203.0.113.7', '198.51.100.1')).toBe('203.0.113.7');
    expect(await addressUnder(0)('203.0.113.7', '198.51.100.1')).toBe('203.0.113.7');
  });

  test('when the peer is a trusted proxy, then the nearest untrusted address of X-Forwarded-For is the client', async () => {
    const address = addressUnder(['10.0.0.0/8', '127.0.0.1']);
    expect(await address('10.1.2.3', '198.51.100.1')).toBe('198.51.100.1');
    expect(await address('127.0.0.1', '198.51.100.1, 10.9.9.9')).toBe('198.51.100.1');
    // What the client wrote itself, left of the address its proxy saw, does not count.
    expect(await address('10.1.2.3', '1.1.1.1, 198.51.100.1')).toBe('198.51.100.1');
    expect(await address('10.1.2.3')).toBe('10.1.2.3');
  });

  test('when the peer is not a trusted proxy, then its X-Forwarded-For is ignored', async () => {
    const address = addressUnder(['10.0.0.0/8']);
    expect(await address('203.0.113.7', '10.0.0.1, 198.51.100.1')).toBe('203.0.113.7');
  });

  test('when a hop count is trusted, then the address that many hops away is the client', async () => {
    const address = addressUnder(2);
    expect(await address('10.1.2.3', '1.1.1.1, 198.51.100.1, 10.4.5.6')).toBe('198.51.100.1');
    expect(await address('10.1.2.3', '198.51.100.1')).toBe('198.51.100.1');
  });
});
