// `npm start -- --broker-cluster N` (and the drill's `--cluster N`): a cluster of N
// RabbitMQ nodes of the run's own (cluster.ts) on free ports, in a directory of its
// own, which the caller takes down when it stops.
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePortBlock } from '../system.ts';
import { DIST_PORT_OFFSET } from './nodes.ts';
import { upCluster, type Cluster } from './cluster.ts';

/** The N of `--broker-cluster N` (or `--broker-cluster=N`) in argv; null when not given. */
export function parseClusterSize(argv: string[], flag = '--broker-cluster'): number | null {
  const at = argv.findIndex((a) => a === flag || a.startsWith(`${flag}=`));
  if (at === -1) return null;
  const n = Number(argv[at].includes('=') ? argv[at].slice(flag.length + 1) : argv[at + 1]);
  if (!Number.isInteger(n) || n < 1 || n > 9) throw new Error(`${flag} needs a node count from 1 to 9`);
  return n;
}

/** Starts a cluster of `size` nodes whose AMQP and distribution ports are all free. */
export async function startPrivateCluster(size: number, label: string): Promise<Cluster> {
  const basePort = await freePortBlock(DIST_PORT_OFFSET + size);
  return upCluster({
    size,
    basePort,
    id: `lpm${basePort}n`,
    root: join(tmpdir(), `lpm-${label}-cluster-${basePort}`),
  });
}
