import type { FastifyInstance } from 'fastify';
import { serviceUnavailable } from '../errors.ts';

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
