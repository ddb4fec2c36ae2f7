// A process starts whatever state its dependencies are in. A service (or
// the gateway) started while its store, or its broker, hangs behind a TCP proxy this
// test controls (connections accepted, nothing answered, as a paused FerretDB) stays
// up: it listens, /health/live answers 200 and /health/ready 503 naming what is
// missing, for longer than several set-up attempts; once the proxy lets the bytes
// through it turns ready by itself. Everything it prints is JSON lines.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { freePort } from '../scripts/local-store.ts';
import { proxyInFrontOf, type ProxiedUrl } from '@lpm/test-kit/proxied-url';
import type { TcpProxy } from '@lpm/test-kit/tcp-proxy';
import { waitFor, sleep } from '@lpm/test-kit/wait';

const root = fileURLToPath(new URL('..', import.meta.url));
/** Longer than several set-up attempts (each waits up to 5 s for the store, then up to 5 s more). */
const HELD_MS = 25_000;

interface Started {
  proc: ChildProcess;
  output(): string;
}

const running: ChildProcess[] = [];
const proxies: TcpProxy[] = [];

afterAll(async () => {
  for (const p of proxies) p.restore();
  await Promise.all(
    running.map(
      (p) =>
        new Promise((done) =>
          p.exitCode !== null || p.signalCode !== null ? done(null) : (p.once('exit', done), p.kill('SIGTERM')),
        ),
    ),
  );
  await Promise.all(proxies.map((p) => p.close()));
});

function start(script: string, env: NodeJS.ProcessEnv): Started {
  const proc = spawn(process.execPath, [script], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, INTERNAL_TOKEN: randomBytes(32).toString('hex'), LOG_LEVEL: 'info', ...env },
  });
  running.push(proc);
  let output = '';
  proc.stdout.on('data', (d) => (output += d));
  proc.stderr.on('data', (d) => (output += d));
  return { proc, output: () => output };
}

async function stalledProxy(url: string, defaultPort: number): Promise<ProxiedUrl> {
  const stalled = await proxyInFrontOf(url, defaultPort);
  proxies.push(stalled.proxy);
  stalled.proxy.stall();
  return stalled;
}

async function probe(
  port: number,
  path: string,
): Promise<{
  status: number;
  body: { error?: { details?: { down?: string[]; reasons?: Record<string, string> } } };
} | null> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(5000) });
    return { status: res.status, body: (await res.json()) as never };
  } catch {
    return null;
  }
}

/** Up and not ready for `what` the whole time: checked every second for HELD_MS. */
async function expectHeldNotReady(started: Started, port: number, what: string): Promise<void> {
  await waitFor('listening', async () => (await probe(port, '/health/live')) !== null, 30_000);
  for (const until = Date.now() + HELD_MS; Date.now() < until; await sleep(1000)) {
    expect(started.proc.exitCode).toBeNull();
    expect((await probe(port, '/health/live'))?.status).toBe(200);
    const ready = await probe(port, '/health/ready');
    expect(ready?.status).toBe(503);
    expect(ready?.body.error?.details?.down).toContain(what);
  }
}

async function expectReadySoon(port: number): Promise<void> {
  const back = Date.now();
  await waitFor('ready', async () => (await probe(port, '/health/ready'))?.status === 200, 30_000);
  expect(Date.now() - back).toBeLessThan(30_000);
}

/**
 * Up and not ready for `what` while `stalled` holds its bytes (then `whileHeld` checks more), ready soon after
 * it lets them through, and JSON lines only throughout.
 */
async function expectHeldUntilLetThrough(
  started: Started,
  port: number,
  what: string,
  stalled: TcpProxy,
  whileHeld: () => Promise<void> = async () => {},
): Promise<void> {
  await expectHeldNotReady(started, port, what);
  await whileHeld();
  stalled.restore();
  await expectReadySoon(port);
  expectOnlyJsonLines(started.output());
}

function expectOnlyJsonLines(output: string): void {
  const notJson = output
    .trim()
    .split('\n')
    .filter((line) => {
      try {
        JSON.parse(line);
        return false;
      } catch {
        return true;
      }
    });
  expect(notJson).toEqual([]);
}

/** The clients service on a free port, with a database prefix and an exchange of `name`, and `env` over its environment. */
async function startClients(name: string, env: Record<string, string>) {
  const port = await freePort();
  const prefix = `${process.env.MONGO_DB_PREFIX}${name}_`;
  const started = start('services/clients/src/server.ts', {
    PORT: String(port),
    MONGO_DB_PREFIX: prefix,
    AMQP_EXCHANGE: `${prefix}events`,
    ...env,
  });
  return { port, started };
}

test('when a service starts with its store hung, then it stays up, live and not ready naming the store, and turns ready (consumers started) once the store answers', async () => {
  const store = await stalledProxy(process.env.MONGO_URL!, 27017);
  const { port, started } = await startClients('storehung', { MONGO_URL: store.url });

  await expectHeldUntilLetThrough(started, port, 'store', store.proxy, async () => {
    const held = await probe(port, '/health/ready');
    expect(held?.body.error?.details?.reasons?.store).toMatch(/^not set up yet/);
    expect(held?.body.error?.details?.reasons?.consumers).toMatch(/^not started/);
  });
  expect(started.output()).toMatch(/store not reachable at start; retrying in the background/);
}, 120_000);

test('when a service starts with its broker hung, then it stays up, live and not ready naming the broker, and turns ready once the broker answers', async () => {
  const broker = await stalledProxy(process.env.AMQP_URL!, 5672);
  const { port, started } = await startClients('brokerhung', { AMQP_URL: broker.url });

  await expectHeldUntilLetThrough(started, port, 'broker', broker.proxy);
}, 120_000);

test('when the gateway starts with its store hung, then it stays up, live and not ready naming the store on its internal listener, and turns ready once the store answers', async () => {
  const store = await stalledProxy(process.env.MONGO_URL!, 27017);
  const [port, internalPort] = [await freePort(), await freePort()];
  const started = start('gateway/src/server.ts', {
    PORT: String(port),
    INTERNAL_PORT: String(internalPort),
    MONGO_URL: store.url,
    MONGO_DB_PREFIX: `${process.env.MONGO_DB_PREFIX}gatewayhung_`,
    REDIS_KEY_PREFIX: `${process.env.REDIS_KEY_PREFIX}gatewayhung:`,
  });

  await expectHeldUntilLetThrough(started, internalPort, 'store', store.proxy);
}, 120_000);

test('when a service starts with credentials the store refuses, then it exits 78 (a configuration error, not restarted) after one fatal line without the password', async () => {
  const url = new URL(process.env.MONGO_URL!);
  url.username = 'lpm';
  url.password = 'wrong-s3cret';
  const { started } = await startClients('badcredentials', { MONGO_URL: url.toString() });

  // Retrying (the old code) keeps the process running: the race then answers 'still running'.
  let timer: NodeJS.Timeout | undefined;
  const code = await Promise.race([
    new Promise<number | null>((resolve) => started.proc.once('exit', resolve)),
    new Promise((resolve) => (timer = setTimeout(() => resolve('still running'), 30_000))),
  ]).finally(() => clearTimeout(timer));
  expect(code).toBe(78);
  expectOnlyJsonLines(started.output());
  const fatal = started
    .output()
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { level: number; msg: string })
    .filter((l) => l.level === 60);
  expect(fatal.map((l) => l.msg)).toEqual([
    expect.stringMatching(
      /^clients refused its configuration: invalid configuration:\n {2}MONGO_URL: the store refused the credentials/,
    ),
  ]);
  expect(started.output()).not.toContain('wrong-s3cret');
}, 60_000);
