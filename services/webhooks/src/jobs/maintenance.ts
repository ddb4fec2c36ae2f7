// The safety nets of delivery, run every SCHEDULER_INTERVAL: alert e-mails still
// owed, deliveries whose next attempt a crashed process never queued (or whose
// job was dead-lettered), the attempt claims crashed processes left, and the
// recoveries they left running.
import type { Logger } from '@lpm/shared/logger';
import { periodicTask, type BackgroundTask } from '@lpm/shared/service/runner';
import type { Deactivation } from '../domain/deactivation.ts';
import type { Deliveries } from '../domain/deliveries.ts';
import type { Recoveries } from '../domain/recoveries.ts';

/** A pending attempt this late is taken for lost (far longer than a queue backlog lasts). */
const STUCK_AFTER_MS = 10 * 60_000;

export function maintenanceTask(opts: {
  deliveries: Deliveries;
  deactivation: Deactivation;
  recoveries: Recoveries;
  intervalMs: number;
  logger: Logger;
}): BackgroundTask {
  return periodicTask({
    name: 'webhook maintenance',
    intervalMs: opts.intervalMs,
    logger: opts.logger,
    run: async () => {
      await opts.deactivation.sendPendingAlerts();
      const requeued = await opts.deliveries.requeueStuck(STUCK_AFTER_MS);
      if (requeued) opts.logger.warn({ requeued }, 'webhook deliveries requeued after a lost attempt job');
      await opts.deliveries.sweepClaims();
      const resumed = await opts.recoveries.resumeStalled();
      if (resumed) opts.logger.warn({ resumed }, 'webhook recoveries resumed after their process stopped');
    },
  });
}
