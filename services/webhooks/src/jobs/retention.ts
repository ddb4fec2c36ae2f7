// Retention (domain/history-retention.ts), run about once an hour on the service's
// scheduler (a timer ticking every SCHEDULER_INTERVAL). Idempotency-Key records are
// purged by the service runner for every service.
import type { Logger } from '@lpm/shared/logger';
import { periodicTask, type BackgroundTask } from '@lpm/shared/service/runner';
import { RETENTION_EVERY_MS, type HistoryRetention } from '../domain/history-retention.ts';

export function retentionTask(opts: {
  retention: Pick<HistoryRetention, 'purge'>;
  intervalMs: number;
  logger: Logger;
}): BackgroundTask {
  return periodicTask({
    name: 'webhook retention',
    intervalMs: opts.intervalMs,
    atMostEveryMs: RETENTION_EVERY_MS,
    logger: opts.logger,
    run: async () => {
      const purged = await opts.retention.purge();
      if (Object.values(purged).some((n) => n > 0)) opts.logger.info(purged, 'webhook history past retention purged');
    },
  });
}
