// The harness of the time-signal tests (due dates, SLAs, overdue records): replicas
// of a service as processes with a tap on the signals they publish, and in-process
// sweepers run at instants a test picks, for moments that lie ahead.
import { MongoClient, type Db } from 'mongodb';
import type { Identity } from '@lpm/shared/identity';
import { TimeSignals, type SignalDefinition } from '@lpm/shared/jobs/time-signals';
import type { ServiceName } from '@lpm/shared/service/names';
import { tapEvents, type EventTap } from './event-tap.ts';
import { replicasOf, type Replicas } from './replicas.ts';
import { quietLogger, waitFor } from './wait.ts';
import { NO_RELAY } from './service-parts.ts';

/** agenda's collection, where each replica records the runs of its sweep. */
const AGENDA_JOBS = 'agendaJobs';

export interface SignalReplicas extends Replicas {
  tap: EventTap;
  /** A request to the first replica for the harness's team. */
  call(method: string, path: string, body?: unknown): ReturnType<Replicas['send']>;
  /**
   * Resolves once nothing more can come of what was written so far: every replica
   * has finished a sweep that began after this call, no record of `collection`
   * holds an unpublished event, and the tap has caught up with the broker.
   */
  settle(): Promise<void>;
}

export interface SignalReplicasOptions {
  service: ServiceName;
  /** Names this test's exchange and databases. */
  name: string;
  team: Identity;
  /** The event types the tap listens for. */
  events: string[];
  /** The collection whose records carry the signals' outbox. */
  collection: string;
  env?: NodeJS.ProcessEnv;
  count?: number;
}

export async function startSignalReplicas(opts: SignalReplicasOptions): Promise<SignalReplicas> {
  const count = opts.count ?? 2;
  const replicas = await replicasOf(opts.service, opts.name, count);
  const tap = await tapEvents(replicas.exchange, opts.events);
  const client = await new MongoClient(process.env.MONGO_URL!).connect();
  const db = client.db(`${replicas.dbPrefix}${opts.service}`);
  try {
    await replicas.start(opts.env);
  } catch (e) {
    await Promise.all([replicas.stop(), tap.close(), client.close()]);
    throw e;
  }
  return {
    ...replicas,
    tap,
    call: (method, path, body) => replicas.send(opts.team, method, path, body),
    async settle() {
      await sweptByEvery(db, `${opts.service}:time-signals`, count, new Date());
      await waitFor(
        `no unpublished event in ${opts.collection}`,
        async () => (await db.collection(opts.collection).countDocuments({ outbox_pending: true })) === 0,
      );
      await tap.caughtUp();
    },
    async stop() {
      await replicas.stop();
      await tap.close();
      await client.close();
    },
  };
}

/**
 * Waits until `count` replicas have each finished a sweep begun after `since`, as
 * far as it can be seen: at the end of a run, agenda saves the run's start, its end
 * and the replica's name together on the job's document, which all replicas share,
 * so a run that another replica's overwrites before a read is not seen. Runs every
 * 250 ms on each replica: twice `count` distinct runs seen after `since` also do
 * (a machine so loaded that one replica's runs always land just after the other's).
 */
async function sweptByEvery(db: Db, jobName: string, count: number, since: Date): Promise<void> {
  const replicas = new Set<string>();
  const runs = new Set<number>();
  await waitFor(`a sweep by each of ${count} replicas`, async () => {
    const job = await db.collection(AGENDA_JOBS).findOne({ name: jobName });
    const [ran, finished, by] = [
      job?.lastRunAt as Date | null,
      job?.lastFinishedAt as Date | null,
      job?.lastModifiedBy as string | null,
    ];
    if (ran && finished && ran > since && finished >= ran) {
      runs.add(ran.getTime());
      if (by) replicas.add(by);
    }
    return replicas.size >= count || runs.size >= 2 * count;
  });
}

/** Sweeps as `count` replicas would, at `at`; their sweep() alone, never scheduled. */
export function sweepsAt(
  db: Db,
  name: string,
  signals: SignalDefinition[],
  count = 2,
): (at: Date) => Promise<number[]> {
  const sweepers = Array.from(
    { length: count },
    () => new TimeSignals({ db, intervalMs: 60_000, signals, relay: NO_RELAY, logger: quietLogger, name }),
  );
  return (at) => Promise.all(sweepers.map((s) => s.sweep(at)));
}
