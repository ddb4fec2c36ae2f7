import type { FastifyBaseLogger } from 'fastify';

/** Longer than this and the process exits anyway: orchestrators kill at 30 s. */
const STOP_DEADLINE_MS = 15_000;

/**
 * On the first SIGTERM or SIGINT, runs `stop` (close the HTTP server first, then
 * what it used) and exits 0; exits 1 if stopping takes too long.
 */
export function stopOnSignals(log: FastifyBaseLogger, stop: () => Promise<void>): void {
  let stopping = false;
  const onSignal = async (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'stopping');
    setTimeout(() => process.exit(1), STOP_DEADLINE_MS).unref();
    try {
      await stop();
    } catch (err) {
      log.error({ err }, 'stopping failed');
      process.exit(1);
    }
    process.exit(0);
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, (s) => void onSignal(s));
}
