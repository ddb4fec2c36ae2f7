// The webhooks service as a process of its own, so that a test can kill it
// (SIGKILL) and start it again over the same store, with a receiver for its
// deliveries and an admin team to call it as.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll } from '@jest/globals';
import { defaultTeamSettings, identityHeaders, type Identity } from '@lpm/shared/identity';
import { newId } from '@lpm/shared/ids';
import { READY_PATH } from '@lpm/shared/http/health';
import { freePortBlock } from '@lpm/test-kit/ports';
import { startHttpsReceiver, type HttpsReceiver } from '@lpm/test-kit/https-receiver';
import { waitFor } from '@lpm/test-kit/wait';

const root = fileURLToPath(new URL('../../..', import.meta.url));

export interface WebhooksProcess {
  readonly team: Identity;
  /** The process's AMQP exchange: `<prefix>events`. */
  readonly exchange: string;
  /** Set up before the suite's tests. */
  readonly receiver: HttpsReceiver;
  /** Starts the service (again) and waits until it is ready. */
  start(what?: string): Promise<void>;
  /** Kills the running service with SIGKILL and waits until it has exited. */
  kill(): Promise<void>;
  /** Calls the service as the team's admin; a body is sent as JSON. */
  request: (
    method: string,
    path: string,
    body?: unknown,
  ) => Promise<{ status: number; body: { data: Record<string, unknown> } }>;
  /** The distinct ids of the events of `type` the receiver was sent. */
  receivedIds: (type: string) => Set<string>;
}

/**
 * Before the suite's tests: a free port and an HTTPS receiver; after them, the
 * service (if still running) is killed and the receiver closed. The service runs
 * on its own database prefix and exchange, with `env` added to its environment.
 */
export function webhooksProcessForSuite(prefix: string, env: Record<string, string>): WebhooksProcess {
  const token = randomBytes(32).toString('hex');
  // The same key across restarts: the service must open the secrets it sealed.
  const secretKey = randomBytes(32).toString('hex');
  const exchange = `${prefix}events`;
  let port = 0;
  let receiver: HttpsReceiver | undefined;
  let service: ChildProcess | undefined;
  const team: Identity = {
    teamId: newId('team'),
    userId: newId('user'),
    scopes: ['read', 'write', 'admin'],
    settings: defaultTeamSettings(),
  };

  beforeAll(async () => {
    port = await freePortBlock();
    receiver = await startHttpsReceiver();
  });
  afterAll(async () => {
    if (service && service.exitCode === null) service.kill('SIGKILL');
    await receiver?.close();
  });

  const isReady = () =>
    fetch(`http://127.0.0.1:${port}${READY_PATH}`, { signal: AbortSignal.timeout(2000) }).then(
      (r) => r.status === 200,
      () => false,
    );

  return {
    team,
    exchange,
    get receiver() {
      return receiver!;
    },
    async start(what = 'the webhooks service ready') {
      service = spawn(process.execPath, ['services/webhooks/src/server.ts'], {
        cwd: root,
        stdio: ['ignore', 'ignore', 'inherit'],
        env: {
          ...process.env,
          PORT: String(port),
          MONGO_DB_PREFIX: prefix,
          AMQP_EXCHANGE: exchange,
          INTERNAL_TOKEN: token,
          WEBHOOK_SECRET_KEY: secretKey,
          WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
          ...env,
        },
      });
      await waitFor(what, isReady, 60_000);
    },
    async kill() {
      const running = service!;
      const exited = new Promise((done) => running.once('exit', done));
      running.kill('SIGKILL');
      await exited;
    },
    request: (method, path, body) =>
      fetch(`http://127.0.0.1:${port}${path}`, {
        method,
        headers: {
          ...identityHeaders(team, token),
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as { data: Record<string, unknown> } })),
    receivedIds: (type) =>
      new Set(
        receiver!.requests
          .map((r) => JSON.parse(r.body))
          .filter((p) => p.type === type)
          .map((p) => p.id as string),
      ),
  };
}
