// RabbitMQ nodes of the project's own, beside the machine's node and never joined to
// it: each runs as the `rabbitmq` user (so with the machine's Erlang cookie) under its
// own node name, AMQP and distribution ports, data, log and plugin files, all in one
// directory per node. rabbitmqctl is always given `-n <node>`: without it, it would
// talk to the machine's node.
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { isListening } from '../local-store.ts';

const run = promisify(execFile);

export interface ClusterNode {
  /** The Erlang node name, `<name>@localhost`. */
  node: string;
  amqpPort: number;
  distPort: number;
  dir: string;
}

const SERVER = '/usr/lib/rabbitmq/bin/rabbitmq-server';

/**
 * Distribution ports follow the AMQP ports (basePort+10..): both stay below the kernel's
 * ephemeral range, where a busy machine's outgoing connections would take them.
 */
export const DIST_PORT_OFFSET = 10;

export function nodeOf(id: string, index: number, basePort: number, root: string): ClusterNode {
  const name = `${id}${index + 1}`;
  return {
    node: `${name}@localhost`,
    amqpPort: basePort + index,
    distPort: basePort + DIST_PORT_OFFSET + index,
    dir: join(root, name),
  };
}

/**
 * The node's rabbitmq.conf. A node that hangs without closing its sockets (frozen,
 * cut off) is only given up by the others when the Erlang distribution misses its
 * ticks for net_ticktime (default 60 s: 45 to 75 s); until then the live nodes wait
 * on it to set up a connection, a channel or a consumer and to record its queues' new
 * leaders, so the clients that left it for a live node stall with it. At 10 s it is
 * given up in 7.5 to 12.5 s. When it wakes, the others have moved on without it (a
 * partition): autoheal restarts it into their cluster within seconds. pause_minority
 * (deploy/rabbitmq/cluster.conf) does not: a node frozen through the whole
 * partition never saw itself in a minority, and stays apart.
 */
export function nodeConfig(n: ClusterNode): string {
  return [
    `listeners.tcp.default = 127.0.0.1:${n.amqpPort}`,
    'net_ticktime = 10',
    'cluster_partition_handling = autoheal',
    '',
  ].join('\n');
}

/** rabbitmqctl against `node` only; rejects with its output when it fails. */
export async function ctl(node: ClusterNode, ...args: string[]): Promise<string> {
  try {
    const { stdout } = await run('rabbitmqctl', ['-n', node.node, ...args], { timeout: 60_000 });
    return stdout;
  } catch (err) {
    const e = err as { stderr?: string; stdout?: string; message: string };
    throw new Error(
      `rabbitmqctl -n ${node.node} ${args.join(' ')} failed: ${(e.stderr || e.stdout || e.message).trim()}`,
    );
  }
}

/** Writes the node's files (once) and starts it in the background; resolves once it answers AMQP. */
export async function startNode(n: ClusterNode): Promise<void> {
  for (const sub of ['mnesia', 'log']) mkdirSync(join(n.dir, sub), { recursive: true });
  writeFileSync(join(n.dir, 'rabbitmq.conf'), nodeConfig(n));
  writeFileSync(join(n.dir, 'enabled_plugins'), '[].\n');
  // Its own env file, so the machine's (which names the machine's node) is never read.
  writeFileSync(join(n.dir, 'rabbitmq-env.conf'), 'ERL_EPMD_ADDRESS=127.0.0.1\n');
  await run('chown', ['-R', 'rabbitmq:rabbitmq', n.dir]);
  await run('runuser', ['-u', 'rabbitmq', '--', 'test', '-w', n.dir]).catch(() => {
    throw new Error(
      `the rabbitmq user cannot write ${n.dir} (a parent directory closed to it?): choose another directory`,
    );
  });
  const env = {
    ...process.env,
    HOME: '/var/lib/rabbitmq',
    RABBITMQ_NODENAME: n.node,
    RABBITMQ_CONF_ENV_FILE: join(n.dir, 'rabbitmq-env.conf'),
    RABBITMQ_CONFIG_FILE: join(n.dir, 'rabbitmq.conf'),
    RABBITMQ_DIST_PORT: String(n.distPort),
    RABBITMQ_MNESIA_BASE: join(n.dir, 'mnesia'),
    RABBITMQ_LOG_BASE: join(n.dir, 'log'),
    RABBITMQ_ENABLED_PLUGINS_FILE: join(n.dir, 'enabled_plugins'),
    RABBITMQ_PID_FILE: join(n.dir, 'pid'),
    ERL_FLAGS: '-kernel inet_dist_use_interface {127,0,0,1}',
  };
  rmSync(join(n.dir, 'pid'), { force: true });
  // The rabbitmq user's soft limit of open files is 1,024, which a node serving a whole
  // test run's connections can reach; past it the node accepts no connection. It starts
  // with the user's hard limit instead.
  const child = spawn(
    'runuser',
    ['-u', 'rabbitmq', '--', 'sh', '-c', 'ulimit -n "$(ulimit -Hn)" && exec "$0"', SERVER],
    {
      env,
      cwd: n.dir,
      detached: true,
      stdio: 'ignore',
    },
  );
  child.unref();
  const deadline = Date.now() + 120_000;
  while (!(await isListening(n.amqpPort))) {
    if (Date.now() > deadline)
      throw new Error(
        `node ${n.node} not listening on ${n.amqpPort} after 120 s; the end of its log (${n.dir}/log):\n${logTail(n)}`,
      );
    await new Promise((r) => setTimeout(r, 250));
  }
}

function logTail(n: ClusterNode): string {
  const dir = join(n.dir, 'log');
  return readdirSync(dir)
    .filter((f) => f.endsWith('.log'))
    .map((f) => `${f}: ${readFileSync(join(dir, f), 'utf8').slice(-2000)}`)
    .join('\n');
}

/** The node's OS process (beam), or null when it is not running. */
export function pidOf(n: ClusterNode): number | null {
  const file = join(n.dir, 'pid');
  if (!existsSync(file)) return null;
  const pid = Number(readFileSync(file, 'utf8').trim());
  if (!Number.isSafeInteger(pid) || pid <= 0) return null;
  try {
    process.kill(pid, 0);
    return pid;
  } catch {
    return null;
  }
}

export function signalNode(n: ClusterNode, signal: NodeJS.Signals): void {
  const pid = pidOf(n);
  if (pid === null) throw new Error(`node ${n.node} is not running`);
  process.kill(pid, signal);
}

/** Stops the node (rabbitmqctl stop; SIGKILL when that fails) and waits for its process to end. */
export async function stopNode(n: ClusterNode): Promise<void> {
  const pid = pidOf(n);
  if (pid === null) return;
  process.kill(pid, 'SIGCONT');
  await ctl(n, 'stop').catch(() => process.kill(pid, 'SIGKILL'));
  const deadline = Date.now() + 30_000;
  while (pidOf(n) !== null) {
    if (Date.now() > deadline) process.kill(pid, 'SIGKILL');
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Joins `n` (fresh) to the cluster of `seed`. */
export async function joinNode(n: ClusterNode, seed: ClusterNode): Promise<void> {
  await ctl(n, 'stop_app');
  await ctl(n, 'join_cluster', seed.node);
  await ctl(n, 'start_app');
}

/** The nodes `n` sees running in its cluster. */
export async function runningNodes(n: ClusterNode): Promise<string[]> {
  const out = await ctl(n, 'cluster_status', '--formatter', 'json');
  return (JSON.parse(out) as { running_nodes?: string[] }).running_nodes ?? [];
}
