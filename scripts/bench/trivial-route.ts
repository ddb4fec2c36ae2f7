// The machine's yardstick for the `machine` scenario: a Fastify app with one route
// answering {"ok":true}, no logging, as the reference machine's figure was measured
// (~55,000 req/s at 19 µs of CPU a request; docs/benchmarks.md).
// A child process with Node's default flags. Prints `listening <port>` once it listens.
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.get('/', async () => ({ ok: true }));
await app.listen({ host: '127.0.0.1', port: 0 });
const address = app.server.address();
process.stdout.write(`listening ${typeof address === 'object' && address ? address.port : ''}\n`);
for (const signal of ['SIGTERM', 'SIGINT'] as const)
  process.once(signal, () => void app.close().then(() => process.exit(0)));
