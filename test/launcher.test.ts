// Issue 28: the launcher supervises. A process that keeps dying (here the webhooks
// service, refused at start by a bad WEBHOOK_ALLOWED_PORTS) is started again with
// backoff (1, 2, 4, 8 s), and its fifth death in a row, each within a minute of its
// start, stops everything, with exit code 1.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { isListening } from '../scripts/local-store.ts';
import { freePortBlock } from '../scripts/system.ts';

const root = fileURLToPath(new URL('..', import.meta.url));

test('when one process dies 5 times in a row, each within a minute of its start, then the launcher stops everything and exits 1', async () => {
  const base = await freePortBlock();
  const run = `${process.env.MONGO_DB_PREFIX}launcher_`;
  const launcher = spawn(process.execPath, ['scripts/start.ts'], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      PORT: String(base),
      MONGO_DB_PREFIX: run,
      REDIS_KEY_PREFIX: `${process.env.REDIS_KEY_PREFIX}launcher:`,
      AMQP_EXCHANGE: `${run}events`,
      LOG_LEVEL: 'warn',
      WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64'),
      WEBHOOK_ALLOWED_PORTS: 'not-a-port',
    },
  });
  let output = '';
  launcher.stdout.on('data', (d) => (output += d));
  launcher.stderr.on('data', (d) => (output += d));
  const code = await new Promise<number | null>((done) => launcher.once('exit', (c) => done(c)));

  expect(code).toBe(1);
  expect(output.match(/\[start\] webhooks pid \d+/g)).toHaveLength(5);
  expect(output).toMatch(/\[start\] webhooks exited \(1\); starting it again in 1 s/);
  expect(output).toMatch(/\[start\] webhooks exited \(1\); starting it again in 8 s/);
  expect(output).toMatch(/\[start\] webhooks exited \(1\), 5 times in a row within a minute of its start; stopping everything/);
  // Everything it started is gone: the gateway, the other services.
  expect(await Promise.all([0, 1, 2, 3, 4, 5, 7].map((i) => isListening(base + i)))).toEqual(Array(7).fill(false));
}, 240_000);
