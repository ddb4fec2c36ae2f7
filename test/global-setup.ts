import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFerretdb } from '../scripts/local-store.ts';
import { ensureRabbitmq, ensureRedis } from '../scripts/local-servers.ts';
import { addClusterVhost, clusterUrl } from '../scripts/cluster/cluster.ts';
import { startPrivateCluster } from '../scripts/cluster/for-start.ts';
import { createTestTls } from '@lpm/test-kit/test-ca';

export default async function globalSetup(): Promise<void> {
  const run = `${Date.now().toString(36)}${process.pid.toString(36)}`;
  const dir = mkdtempSync(join(tmpdir(), `lpm-test-${run}-`));
  // Under LPM_TEST_DIR, so teardown removes it. Jest workers and the processes the
  // tests spawn start after this and read NODE_EXTRA_CA_CERTS; see trustTestCa() for this one.
  const tls = createTestTls(join(dir, 'tls'), process.env.NODE_EXTRA_CA_CERTS);
  process.env.LPM_TEST_TLS_DIR = tls.dir;
  process.env.NODE_EXTRA_CA_CERTS = tls.caBundle;
  const [startedRabbitmq, startedRedis] = await Promise.all([ensureRabbitmq(), ensureRedis()]);
  // Servers this run started are stopped again at the end: they are left as found.
  process.env.LPM_TEST_STOP_SERVERS = [startedRabbitmq && 'rabbitmq', startedRedis && 'redis']
    .filter(Boolean)
    .join(',');
  const database = `lpm_test_${run}`;
  const store = process.env.MONGO_URL ? null : await startFerretdb({ dataDir: join(dir, 'ferretdb'), database });
  // The suite's broker is a RabbitMQ node of its own, with every queue a quorum queue as
  // in production. The machine's node is left to what runs beside (the single-node drill).
  const broker = await startPrivateCluster(1, `test-${run}`);
  const vhost = `lpm-test-${run}`;
  await addClusterVhost(broker, vhost);
  process.env.LPM_TEST_BROKER_ROOT = broker.root;
  process.env.LPM_TEST_RUN = run;
  process.env.LPM_TEST_DIR = dir;
  process.env.MONGO_URL = store?.url ?? process.env.MONGO_URL;
  process.env.MONGO_DB_PREFIX = `t${run}_`;
  process.env.AMQP_URL = clusterUrl(broker, vhost);
  process.env.AMQP_VHOST = vhost;
  process.env.AMQP_QUEUE_TYPE = 'quorum';
  process.env.LPM_TEST_RABBITMQ_NODE = broker.nodes[0].node;
  process.env.REDIS_URL = 'redis://127.0.0.1:6379';
  process.env.REDIS_KEY_PREFIX = `lpm-test-${run}:`;
  (globalThis as Record<string, unknown>).__lpmStore = store;
  process.env.LPM_TEST_PG_DATABASE = store ? database : '';
}
