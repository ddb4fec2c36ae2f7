// Idle keep-alive connections stay open as long as a load balancer or a client
// pooling connections expects (Fastify's 72 s, not Node's 5 s): a request sent on a
// connection idle for 6 s is answered, not met by a closed socket.
import { Agent, request } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { createHttpApp, KEEP_ALIVE_TIMEOUT_MS } from '../src/http/app.ts';

let app: FastifyInstance;
let port: number;

beforeAll(async () => {
  app = createHttpApp({ name: 'keep-alive-test', logger: false, documented: false });
  app.get('/ping', async () => ({ success: true, data: { pong: true } }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  port = (app.server.address() as { port: number }).port;
});

afterAll(() => app.close());

const get = (agent: Agent) =>
  new Promise<{ status: number; socket: unknown }>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/ping', agent }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, socket: req.socket }));
    });
    req.on('error', reject);
    req.end();
  });

test('when a connection has been idle for 6 s, then the next request on it is answered', async () => {
  expect(app.server.keepAliveTimeout).toBe(KEEP_ALIVE_TIMEOUT_MS);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const first = await get(agent);
    expect(first.status).toBe(200);
    await new Promise((r) => setTimeout(r, 6000));
    const second = await get(agent);
    expect(second.status).toBe(200);
    expect(second.socket).toBe(first.socket);
  } finally {
    agent.destroy();
  }
}, 15_000);
