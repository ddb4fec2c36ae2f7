// `npm run cluster -- up|status|down`: RabbitMQ nodes of the project's own, joined into
// one cluster beside the machine's node, which is never joined, stopped or reconfigured.
import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { connect as amqpConnect } from 'amqplib';
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
