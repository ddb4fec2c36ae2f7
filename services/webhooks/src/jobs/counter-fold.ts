// Every second, the attempts recorded since the last fold are added to their
// webhooks' counters (CountersRepository.fold): off the delivery path, in bulk,
// one replica at a time. The webhooks the fold added failures to are then checked
// for deactivation (Deactivation.afterFailures). Before the first fold, the counters'
// data in the shapes of earlier versions is converted, once (CountersMigration).
import type { Logger } from '@lpm/shared/logger';
import { periodicTask, type BackgroundTask } from '@lpm/shared/service/runner';
import type { CountersMigration } from '../data/counters-migration.ts';
import type { CountersRepository } from '../data/counters-repository.ts';
import type { Deactivation } from '../domain/deactivation.ts';

export const COUNTER_FOLD_INTERVAL_MS = 1000;

export function counterFoldTask(opts: {
  counters: CountersRepository;
  migration: Pick<CountersMigration, 'run'>;
  deactivation: Pick<Deactivation, 'afterFailures'>;
  logger: Logger;
  intervalMs?: number;
}): BackgroundTask {
  return periodicTask({
    name: 'webhook counter fold',
    intervalMs: opts.intervalMs ?? COUNTER_FOLD_INTERVAL_MS,
    logger: opts.logger,
    run: async () => {
      if (!(await opts.migration.run())) return;
      await opts.counters.fold();
      await opts.deactivation.afterFailures(opts.counters.takeFailing());
    },
  });
}
