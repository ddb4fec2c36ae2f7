// A RabbitMQ cluster of the project's own on this machine (nodes.ts): its nodes started
// side by side, the others joined to the first, its description kept in
// `<root>/cluster.json` so `down` and `status` find it; `down` stops every node and
// removes the root with their data and logs.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isListening } from '../local-store.ts';
import { ctl, joinNode, nodeOf, pidOf, runningNodes, startNode, stopNode, type ClusterNode } from './nodes.ts';

export interface Cluster {
  id: string;
  root: string;
  nodes: ClusterNode[];
}

export interface ClusterOptions {
  size: number;
  /** The directory of the nodes and cluster.json; removed at down. */
  root: string;
  /** Node names are `<id><n>@localhost`. */
  id: string;
  /** AMQP ports basePort.., distribution ports basePort+10.. (nodes.ts). */
  basePort: number;
}

const STATE = 'cluster.json';

export function readCluster(root: string): Cluster | null {
  const file = join(root, STATE);
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Cluster) : null;
}

export async function upCluster(o: ClusterOptions): Promise<Cluster> {
  if (!Number.isSafeInteger(o.size) || o.size < 1 || o.size > 9) throw new Error(`--nodes must be 1 to 9: ${o.size}`);
  if (readCluster(o.root)) throw new Error(`a cluster is up already in ${o.root} (down it first)`);
  const nodes = Array.from({ length: o.size }, (_, i) => nodeOf(o.id, i, o.basePort, o.root));
  for (const n of nodes) {
    for (const port of [n.amqpPort, n.distPort])
      if (await isListening(port)) throw new Error(`port ${port} is taken (give another --base-port)`);
  }
  mkdirSync(o.root, { recursive: true });
  const cluster: Cluster = { id: o.id, root: o.root, nodes };
  writeFileSync(join(o.root, STATE), JSON.stringify(cluster, null, 2));
  try {
    await Promise.all(nodes.map((n) => startNode(n)));
    for (const n of nodes.slice(1)) await joinNode(n, nodes[0]);
    await waitForMembers(cluster, nodes.length);
  } catch (err) {
    await downCluster(cluster).catch(() => {});
    throw err;
  }
  return cluster;
}

export async function downCluster(c: Cluster): Promise<void> {
  await Promise.all(c.nodes.map((n) => stopNode(n)));
  rmSync(c.root, { recursive: true, force: true });
}

/** Resolves once a node sees `count` nodes running (a node brought back has rejoined). */
export async function waitForMembers(c: Cluster, count: number, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    for (const n of c.nodes) {
      if (pidOf(n) === null) continue;
      const running = await runningNodes(n).catch(() => []);
      if (running.length >= count) return;
    }
    if (Date.now() > deadline) throw new Error(`the cluster did not reach ${count} running nodes in ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** AMQP_URL naming every node of the cluster, for `vhost` (default `/`). */
export function clusterUrl(c: Cluster, vhost = '/'): string {
  return c.nodes.map((n) => `amqp://guest:guest@127.0.0.1:${n.amqpPort}/${encodeURIComponent(vhost)}`).join(',');
}

export interface NodeStatus {
  node: string;
  amqp_port: number;
  pid: number | null;
  /** The nodes this node sees running; null when it does not answer. */
  running_nodes: string[] | null;
}

export async function clusterStatus(c: Cluster): Promise<NodeStatus[]> {
  return Promise.all(
    c.nodes.map(async (n) => ({
      node: n.node,
      amqp_port: n.amqpPort,
      pid: pidOf(n),
      running_nodes: pidOf(n) === null ? null : await runningNodes(n).catch(() => null),
    })),
  );
}

/** How many quorum queues of `vhost` each node leads, asked of the first node that answers. */
export async function leaderCounts(c: Cluster, vhost: string): Promise<Map<string, number>> {
  for (const n of c.nodes) {
    if (pidOf(n) === null) continue;
    try {
      const out = await ctl(n, 'list_queues', '-p', vhost, 'name', 'leader', '--quiet', '--no-table-headers');
      const counts = new Map<string, number>(c.nodes.map((x) => [x.node, 0]));
      for (const line of out.split('\n')) {
        const leader = line.split('\t')[1]?.trim();
        if (leader && counts.has(leader)) counts.set(leader, counts.get(leader)! + 1);
      }
      return counts;
    } catch {
      // a node that does not answer (frozen, starting): ask the next
    }
  }
  throw new Error('no node of the cluster answers');
}

export async function addClusterVhost(c: Cluster, vhost: string): Promise<void> {
  await ctl(c.nodes[0], 'add_vhost', vhost);
  await ctl(c.nodes[0], 'set_permissions', '-p', vhost, 'guest', '.*', '.*', '.*');
}
