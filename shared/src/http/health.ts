// Health endpoints. `/health` is the public one (the gateway's answers for the whole
// system; a service's for its store). The probes an orchestrator acts on mean less:
// `/health/live` fails only when the process is wedged (its event loop stalls), so a
// restart is what fixes it; `/health/ready` fails while a dependency is unreachable
// (the store, the broker, its consumers not attached), which a restart does not fix:
// the process only stops getting traffic until the dependency is back.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { FastifyInstance } from 'fastify';
import { AppError, errorBody, serviceUnavailable } from '../errors.ts';

/** GET /health: 200 when `check` resolves, else 503 in the error envelope. Needs no credential. */
export function healthRoute(app: FastifyInstance, check: () => Promise<void>): void {
  app.get('/health', { config: { public: true }, logLevel: 'warn' }, async () => {
    try {
      await check();
    } catch (e) {
      throw serviceUnavailable('Not ready', { cause: e });
    }
    return { success: true, data: { status: 'ok' } };
  });
}

/** A readiness check: resolves when its dependency is usable, throws (or rejects) when not. */
export type ReadinessCheck = () => unknown;

export interface ProbeOptions {
  /** What readiness needs, by name (`store`, `broker`, `consumers`): each must pass. */
  ready: Record<string, ReadinessCheck>;
  /** A check not settled by then counts as failed (the store driver itself waits 30 s). Default 2000. */
  checkTimeoutMs?: number;
  /** The event loop's worst delay, over the last one or two windows, above which the process is wedged. Default 10 s. */
  maxLoopDelayMs?: number;
  /** The window of that measure. Default 15 s. */
  loopWindowMs?: number;
}

export const LIVE_PATH = '/health/live';
export const READY_PATH = '/health/ready';

/**
 * The worst event-loop delay seen over the current and the previous window. A fully
 * stuck loop cannot answer at all (the probe's timeout fails it); one that stalls for
 * long stretches answers between them, and this reports the stall it just had.
 */
function eventLoopStalls(windowMs: number): { worstMs(): number; stop(): void } {
  const histogram = monitorEventLoopDelay({ resolution: 20 });
  histogram.enable();
  let previousMs = 0;
  const timer = setInterval(() => {
    previousMs = histogram.max / 1e6;
    histogram.reset();
  }, windowMs).unref();
  return {
    worstMs: () => Math.max(previousMs, histogram.max / 1e6),
    stop: () => {
      clearInterval(timer);
      histogram.disable();
    },
  };
}

const timedOut = (ms: number) =>
  new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms).unref());

/**
 * GET /health/live and GET /health/ready on `app`, without credential. Both answer in
 * the envelope; a 503 names what failed in `error.details`.
 */
export function probeRoutes(app: FastifyInstance, opts: ProbeOptions): void {
  const checkTimeoutMs = opts.checkTimeoutMs ?? 2000;
  const maxLoopDelayMs = opts.maxLoopDelayMs ?? 10_000;
  const loop = eventLoopStalls(opts.loopWindowMs ?? 15_000);
  app.addHook('onClose', async () => loop.stop());
  const route = { config: { public: true }, logLevel: 'warn', schema: { hide: true } } as const;

  app.get(LIVE_PATH, route, async (_req, reply) => {
    const worstMs = Math.round(loop.worstMs());
    if (worstMs > maxLoopDelayMs) {
      return reply.status(503).send(
        errorBody(
          new AppError(503, 'SERVICE_UNAVAILABLE', `Event loop stalled for ${worstMs} ms`, {
            event_loop_delay_ms: worstMs,
          }),
        ),
      );
    }
    return { success: true, data: { status: 'ok', event_loop_delay_ms: worstMs } };
  });

  app.get(READY_PATH, route, async (_req, reply) => {
    const names = Object.keys(opts.ready);
    const results = await Promise.allSettled(
      names.map((n) => Promise.race([Promise.resolve().then(opts.ready[n]), timedOut(checkTimeoutMs)])),
    );
    const checks = Object.fromEntries(names.map((n, i) => [n, results[i].status === 'fulfilled' ? 'ok' : 'down']));
    const down = names.filter((n) => checks[n] === 'down');
    // Not ready is a state the orchestrator polls for, not a failure of this request: answered, not thrown.
    if (down.length) {
      const reasons = Object.fromEntries(
        results.flatMap((r, i) =>
          r.status === 'rejected' ? [[names[i], r.reason instanceof Error ? r.reason.message : String(r.reason)]] : [],
        ),
      );
      return reply
        .status(503)
        .send(
          errorBody(
            new AppError(503, 'SERVICE_UNAVAILABLE', `Not ready: ${down.join(', ')}`, { checks, down, reasons }),
          ),
        );
    }
    return { success: true, data: { status: 'ok', checks } };
  });
}
