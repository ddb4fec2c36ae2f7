// GET /health: the gateway is ready when its store and every upstream answer. One
// check runs at a time, whoever asks, and its answer is given again for up to
// maxAgeMs (1 s) after it: polling /health costs the store and the services one
// round of checks a second at most, however many callers poll.
import type { FastifyInstance } from 'fastify';
import { AppError, errorBody } from '@lpm/shared/errors';
import { SERVICE_NAMES, replicaUrls, type ServiceName } from '@lpm/shared/service/names';
import type { Upstreams } from '../config.ts';
import { recentResult } from '../recent-result.ts';
import { withTimeout } from '../timeout.ts';

export interface HealthOptions {
  upstreams: Upstreams;
  deployed?: readonly ServiceName[];
  pingStore(): Promise<void>;
  timeoutMs?: number;
  /** How long a check's answer is given again (default 1000). */
  maxAgeMs?: number;
}

type Status = 'ok' | 'down';

export function healthRoute(app: FastifyInstance, opts: HealthOptions): void {
  const timeoutMs = opts.timeoutMs ?? 2000;
  const deployed = opts.deployed ?? SERVICE_NAMES;
  const replicaUp = async (base: string): Promise<void> => {
    const res = await fetch(new URL('/health', base), { signal: AbortSignal.timeout(timeoutMs) });
    await res.body?.cancel();
    if (res.status !== 200) throw new Error(`health answered ${res.status}`);
  };
  /** A service with replicas is up when one of them is. */
  const upstreamUp = (setting: string): Promise<void> =>
    Promise.any(replicaUrls(setting).map(replicaUp)).then(() => undefined);
  const status = (p: Promise<void>): Promise<Status> =>
    p.then(
      () => 'ok' as const,
      () => 'down' as const,
    );

  const check = recentResult(async () => {
    const names = ['store', ...deployed] as const;
    const results = await Promise.all([
      status(withTimeout(opts.pingStore(), timeoutMs, 'store ping')),
      ...deployed.map((name) => status(upstreamUp(opts.upstreams[name]))),
    ]);
    const services = Object.fromEntries(names.map((n, i) => [n, results[i]])) as Record<string, Status>;
    const down = names.filter((n) => services[n] === 'down');
    // Not ready is a state callers poll for, not a failure of this request: answered, not thrown (and logged).
    if (down.length)
      return {
        status: 503,
        body: errorBody(
          new AppError(503, 'SERVICE_UNAVAILABLE', `Unavailable: ${down.join(', ')}`, { services, down }),
        ),
      };
    return { status: 200, body: { success: true, data: { status: 'ok', services } } };
  }, opts.maxAgeMs ?? 1000);

  app.get('/health', { config: { public: true }, logLevel: 'warn' }, async (_req, reply) => {
    const answer = await check();
    return reply.status(answer.status).send(answer.body);
  });
}
