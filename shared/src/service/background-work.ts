// The background tasks that several services' server.ts build the same way from the
// runtime runService hands them: the sweep of their time signals, the team syncs of
// their records and the backfill of their list markers.
import { TimeSignals, type TimeSignalsOptions } from '../jobs/time-signals.ts';
import { TeamSyncs, type TeamSyncsOptions } from '../jobs/team-syncs.ts';
import { listBackfillTask, type ListBuckets } from '../store/list-buckets.ts';
import type { ServiceName } from './names.ts';
import type { ServiceRuntime } from './runner.ts';

/** The sweep that emits the service's due `signals` every SCHEDULER_INTERVAL, its jobs named for the service. */
export function signalSweep(
  { db, config, relay, logger }: ServiceRuntime,
  name: ServiceName,
  signals: TimeSignalsOptions['signals'],
): TimeSignals {
  return new TimeSignals({ db, intervalMs: config.schedulerIntervalMs, signals, relay, logger, name });
}

/** The team syncs of the service's records: `work` by the kind the gateway asks for. */
export function teamSyncs({ db, logger }: ServiceRuntime, work: TeamSyncsOptions['work']): TeamSyncs {
  return new TeamSyncs({ db, logger, work });
}

/** The backfill of the list markers of `lists`, a failed one tried again after SCHEDULER_INTERVAL. */
export function listsBackfill({ config, logger }: ServiceRuntime, ...lists: ListBuckets[]) {
  return listBackfillTask(lists, logger, config.schedulerIntervalMs);
}
