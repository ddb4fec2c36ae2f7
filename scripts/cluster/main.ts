// `npm run cluster -- up [--nodes 3] [--base-port 5701]`, `down`, `status`: a RabbitMQ
// cluster of the project's own on this machine (cluster.ts), beside the machine's node.
// Its description and the nodes' data and logs live in LPM_CLUSTER_DIR (default
// <tmp>/lpm-cluster); `npm start -- --broker-cluster N` starts one and runs on it.
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clusterStatus, clusterUrl, downCluster, readCluster, upCluster } from './cluster.ts';

const CLUSTER_DIR = process.env.LPM_CLUSTER_DIR ?? join(tmpdir(), 'lpm-cluster');
const CLUSTER_BASE_PORT = 5701;

function option(argv: string[], name: string, fallback: number): number {
  const at = argv.findIndex((a) => a === name || a.startsWith(`${name}=`));
  if (at === -1) return fallback;
  const value = Number(argv[at].includes('=') ? argv[at].slice(name.length + 1) : argv[at + 1]);
  if (!Number.isSafeInteger(value)) throw new Error(`${name} needs a number`);
  return value;
}

async function main(argv: string[]): Promise<number> {
  const [command] = argv;
  if (command === 'up') {
    const size = option(argv, '--nodes', 3);
    const basePort = option(argv, '--base-port', CLUSTER_BASE_PORT);
    // Named after its ports, which are free: no other cluster on the machine has the names.
    const cluster = await upCluster({ size, root: CLUSTER_DIR, id: `lpm${basePort}n`, basePort });
    process.stdout.write(
      `cluster of ${size} up in ${CLUSTER_DIR}\nAMQP_URL=${clusterUrl(cluster)}\nAMQP_QUEUE_TYPE=quorum\n`,
    );
    return 0;
  }
  const cluster = readCluster(CLUSTER_DIR);
  if (command === 'down') {
    if (cluster) await downCluster(cluster);
    process.stdout.write(cluster ? `cluster down; ${CLUSTER_DIR} removed\n` : 'no cluster is up\n');
    return 0;
  }
  if (command === 'status') {
    if (!cluster) {
      process.stdout.write('no cluster is up\n');
      return 1;
    }
    process.stdout.write(
      `${JSON.stringify({ amqp_url: clusterUrl(cluster), nodes: await clusterStatus(cluster) }, null, 2)}\n`,
    );
    return 0;
  }
  process.stderr.write('usage: npm run cluster -- up [--nodes 3] [--base-port 5701] | down | status\n');
  return 2;
}

if (import.meta.main) {
  process.exitCode = await main(process.argv.slice(2)).catch((err: unknown) => {
    process.stderr.write(`cluster: ${(err as Error).message}\n`);
    return 1;
  });
}
