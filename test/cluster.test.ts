// `npm run cluster -- up|status|down`: RabbitMQ nodes of the project's own, joined into
// one cluster beside the machine's node, which is never joined, stopped or reconfigured.
// A node of its own is frozen (SIGSTOP) to show the others give it up within seconds.
import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { connect as amqpConnect } from 'amqplib';
import { createLogger } from '@lpm/shared/logger';
import { Broker } from '@lpm/shared/messaging/broker';
import { isListening } from '../scripts/local-store.ts';
import { freePortBlock } from '../scripts/system.ts';
import { DIST_PORT_OFFSET } from '../scripts/cluster/nodes.ts';

const root = fileURLToPath(new URL('..', import.meta.url));

const cluster = (env: NodeJS.ProcessEnv, ...args: string[]) =>
  promisify(execFile)(process.execPath, ['scripts/cluster/main.ts', ...args], {
    cwd: root,
    env: { ...process.env, ...env },
    encoding: 'utf8',
  });

interface Status {
  nodes: { node: string; amqp_port: number; pid: number | null; running_nodes: string[] | null }[];
}

const machineNodes = () =>
  JSON.parse(execFileSync('rabbitmqctl', ['cluster_status', '--formatter', 'json'], { encoding: 'utf8' }))
    .running_nodes;

test("when a cluster of 3 is brought up, then its nodes see each other, take AMQP on their own ports, and down removes them and their files, the machine's node as found", async () => {
  const before = machineNodes();
  // Not under the run's directory: the nodes run as the rabbitmq user, who cannot enter it.
  const dir = join(tmpdir(), `lpm-cluster-test-${process.env.LPM_TEST_RUN}`);
  const basePort = await freePortBlock(DIST_PORT_OFFSET + 3);
  const env = { LPM_CLUSTER_DIR: dir };
  try {
    const up = await cluster(env, 'up', '--nodes', '3', '--base-port', String(basePort));
    const amqpUrl = /AMQP_URL=(\S+)/.exec(up.stdout)![1];
    expect(amqpUrl.split(',')).toHaveLength(3);

    const status = JSON.parse((await cluster(env, 'status')).stdout) as {
      nodes: { node: string; amqp_port: number; pid: number | null; running_nodes: string[] }[];
    };
    const names = status.nodes.map((n) => n.node).sort();
    expect(names).toEqual([1, 2, 3].map((i) => `lpm${basePort}n${i}@localhost`).sort());
    for (const n of status.nodes) {
      expect(n.pid).not.toBeNull();
      expect([...n.running_nodes].sort()).toEqual(names);
    }
    expect(status.nodes.map((n) => n.amqp_port).sort()).toEqual([basePort, basePort + 1, basePort + 2]);
    const conn = await amqpConnect(amqpUrl.split(',')[2]);
    await conn.close();
    expect(machineNodes()).toEqual(before);
  } finally {
    await cluster(env, 'down');
  }
  expect(existsSync(dir)).toBe(false);
  expect(await Promise.all([0, 1, 2].map((i) => isListening(basePort + i)))).toEqual([false, false, false]);
  expect(machineNodes()).toEqual(before);
}, 300_000);

test('when the node leading a quorum queue is frozen, then a broker on a live node publishes into the queue again and a consumer there gets it within 30 s, and the frozen node rejoins once let go on', async () => {
  const dir = join(tmpdir(), `lpm-cluster-freeze-${process.env.LPM_TEST_RUN}`);
  const basePort = await freePortBlock(DIST_PORT_OFFSET + 3);
  const env = { LPM_CLUSTER_DIR: dir };
  const status = async () => JSON.parse((await cluster(env, 'status')).stdout) as Status;
  const opened: { close(): Promise<void> }[] = [];
  let frozen: number | null = null;
  try {
    const up = await cluster(env, 'up', '--nodes', '3', '--base-port', String(basePort));
    const urls = /AMQP_URL=(\S+)/.exec(up.stdout)![1].split(',');
    // A quorum queue is led by the node that declares it.
    const third = await amqpConnect(urls[2]);
    const declaring = await third.createChannel();
    await declaring.assertQueue('freeze', { durable: true, arguments: { 'x-queue-type': 'quorum' } });
    await third.close();
    // Its publish channel is open before the freeze; it first publishes into the queue after.
    const broker = await Broker.connect({
      url: urls[0],
      exchange: 'freeze-test',
      logger: createLogger('test', 'silent'),
    });
    opened.push(broker);
    frozen = (await status()).nodes.find((n) => n.amqp_port === basePort + 2)!.pid!;
    process.kill(frozen, 'SIGSTOP');

    const until = Date.now() + 30_000;
    const both = (async () => {
      const live = await amqpConnect(`${urls[0]}?heartbeat=5`);
      live.on('error', () => {});
      opened.push(live);
      const consuming = await live.createChannel();
      const consumed = new Promise<string>((resolve) => {
        // Refused only when the connection goes (the test then fails on the missing message).
        consuming.consume('freeze', (m) => m && resolve(m.content.toString()), { noAck: true }).catch(() => {});
      });
      const message = { id: 'evt_after_the_freeze', type: 'test.freeze', created_at: new Date().toISOString() };
      // A publish left unconfirmed rejects and is sent again, as the outbox does.
      for (;;) {
        const sent = await broker.publishToQueue(message, 'freeze').then(
          () => true,
          () => false,
        );
        if (sent || Date.now() > until) break;
      }
      return JSON.parse(await consumed) as { id: string };
    })();
    both.catch(() => {});
    // Without a short net_ticktime the live nodes wait on the frozen one for 45 to 75 s.
    let timer: NodeJS.Timeout | undefined;
    const within = await Promise.race([
      both,
      new Promise<null>((r) => (timer = setTimeout(() => r(null), until - Date.now()))),
    ]);
    clearTimeout(timer);
    expect(within?.id).toBe('evt_after_the_freeze');
    process.kill(frozen, 'SIGCONT');
    frozen = null;

    const names = [1, 2, 3].map((i) => `lpm${basePort}n${i}@localhost`).sort();
    const rejoined = async () =>
      (await status()).nodes.every((n) => [...(n.running_nodes ?? [])].sort().join() === names.join());
    const deadline = Date.now() + 120_000;
    while (!(await rejoined()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 1000));
    expect(await rejoined()).toBe(true);
  } finally {
    if (frozen !== null) process.kill(frozen, 'SIGCONT');
    for (const c of opened) await c.close().catch(() => {});
    await cluster(env, 'down');
  }
  expect(existsSync(dir)).toBe(false);
}, 300_000);
