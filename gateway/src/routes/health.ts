// GET /health: the gateway is ready when its store and every upstream answer.
import type { FastifyInstance } from 'fastify';
import { AppError, errorBody } from '@lpm/shared/errors';
import { SERVICE_NAMES, replicaUrls, type ServiceName } from '@lpm/shared/service/names';
import type { Upstreams } from '../config.ts';
import { withTimeout } from '../timeout.ts';

export interface HealthOptions {
  upstreams: Upstreams;
  deployed?: readonly ServiceName[];
  pingStore(): Promise<void>;
  timeoutMs?: number;
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
  const upstreamUp = (setting: string): Promise<void> => Promise.any(replicaUrls(setting).map(replicaUp)).then(() => undefined);
  const status = (p: Promise<void>): Promise<Status> => p.then(() => 'ok' as const, () => 'down' as const);

  app.get('/health', { config: { public: true }, logLevel: 'warn' }, async (_req, reply) => {
    const names = ['store', ...deployed] as const;
    const results = await Promise.all([
      status(withTimeout(opts.pingStore(), timeoutMs, 'store ping')),
      ...deployed.map((name) => status(upstreamUp(opts.upstreams[name]))),
    ]);
    const services = Object.fromEntries(names.map((n, i) => [n, results[i]])) as Record<string, Status>;
    const down = names.filter((n) => services[n] === 'down');
    // Not ready is a state callers poll for, not a failure of this request: answered, not thrown (and logged).
    if (down.length) {
      return reply.status(503).send(errorBody(new AppError(503, 'SERVICE_UNAVAILABLE', `Unavailable: ${down.join(', ')}`, { services, down })));
    }
    return { success: true, data: { status: 'ok', services } };
  });
}
