// The faults of the drill on a RabbitMQ cluster of its own (`--cluster N`), in this
// order: the node leading the most queues SIGKILLed and started again after the
// outage; later another node the same; a third node frozen (SIGSTOP) for the outage,
// then let go on (SIGCONT); Redis cut for the outage (the system reaches it through a
// TCP proxy the drill controls: the machine's Redis is never touched). Each node
// fault waits for the node to be back in the cluster before the next fault.
import type { TcpProxy } from '@lpm/test-kit/tcp-proxy';
import { leaderCounts, waitForMembers, type Cluster } from '../cluster/cluster.ts';
import { signalNode, startNode, type ClusterNode } from '../cluster/nodes.ts';
import type { Fault } from './faults.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface ClusterFaults {
  faults: Fault[];
  /** Queue leaderships the nodes held when they were lost: each one a failover of its queue. */
  failovers(): number;
}

export function clusterFaults(opts: {
  cluster: Cluster;
  vhost: string;
  redis: TcpProxy;
  outageMs: number;
}): ClusterFaults {
  const { cluster, vhost, redis, outageMs } = opts;
  const lost = new Set<string>();
  let failovers = 0;
  /** The node not lost yet that leads the most queues now. */
  const leading = async (): Promise<ClusterNode> => {
    const counts = await leaderCounts(cluster, vhost);
    const left = cluster.nodes.filter((n) => !lost.has(n.node));
    if (left.length === 0) throw new Error('every node has been lost once already');
    const node = left.reduce((a, b) => ((counts.get(b.node) ?? 0) > (counts.get(a.node) ?? 0) ? b : a));
    lost.add(node.node);
    failovers += counts.get(node.node) ?? 0;
    return node;
  };
  const killed = async () => {
    const node = await leading();
    signalNode(node, 'SIGKILL');
    await sleep(outageMs);
    await startNode(node);
    await waitForMembers(cluster, cluster.nodes.length);
  };
  const frozen = async () => {
    const node = await leading();
    signalNode(node, 'SIGSTOP');
    try {
      await sleep(outageMs);
    } finally {
      signalNode(node, 'SIGCONT');
    }
    await waitForMembers(cluster, cluster.nodes.length);
  };
  const redisOut = async () => {
    redis.cut();
    try {
      await sleep(outageMs);
    } finally {
      redis.restore();
    }
  };
  const faults: Fault[] = [
    { name: 'SIGKILL of the node leading the most queues', run: killed },
    { name: 'SIGKILL of another node', run: killed },
    { name: 'SIGSTOP of a third node', run: frozen },
    { name: 'Redis out', run: redisOut },
  ];
  return { faults: cluster.nodes.length >= 3 ? faults : faults.slice(-1), failovers: () => failovers };
}
