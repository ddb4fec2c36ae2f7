// What the time-signal tests of each service check the same way: the one signal a
// record gives at the broker, and a service in process swept at chosen instants.
import type { Document } from 'mongodb';
import type { Identity } from '@lpm/shared/identity';
import type { SignalDefinition } from '@lpm/shared/jobs/time-signals';
import { serviceForSuite, type ServiceUnderTest } from './service-under-test.ts';
import { sweepsAt, type SignalReplicas } from './time-signals.ts';

/**
 * Record `id` gives exactly one `type` event at the broker, once everything written
 * has settled: from no actor, for `team`, with no previous attributes, its object
 * matching `object`.
 */
export async function expectOneSignal(
  replicas: SignalReplicas,
  team: Identity,
  type: string,
  object: { id: string } & Record<string, unknown>,
): Promise<void> {
  const [event] = await replicas.tap.waitFor(type, object.id);
  expect(event).toMatchObject({ team_id: team.teamId, actor_id: null, data: { previous_attributes: null, object } });
  await replicas.settle();
  expect(replicas.tap.of(type, object.id)).toHaveLength(1);
}

export interface SweptInProcess<S extends ServiceUnderTest> {
  /** The service, once the suite's beforeAll has started it. */
  sut: () => S;
  /** Sweeps as two replicas would, at `at`. */
  sweepAt: (at: Date) => Promise<number[]>;
  /** Record `id` of the signals' collection as stored. */
  stored: (id: string) => Promise<Document | null>;
  /** The types of the events record `id` holds in its outbox (no relay runs here), oldest first. */
  outboxTypes: (id: string) => Promise<string[]>;
}

/**
 * Starts the service before the suite's tests, with sweepers of its `signals` on its
 * database, `service` their job's name and `collection` where the records are.
 */
export function sweptInProcess<S extends ServiceUnderTest>(
  start: () => Promise<S>,
  signals: (sut: S) => SignalDefinition[],
  where: { service: string; collection: string },
): SweptInProcess<S> {
  let sut: S | undefined;
  let sweep: SweptInProcess<S>['sweepAt'] | undefined;
  serviceForSuite(start, (started) => {
    sut = started;
    sweep = sweepsAt(started.db, where.service, signals(started));
  });
  const stored = (id: string) => sut!.db.collection<Document & { _id: string }>(where.collection).findOne({ _id: id });
  return {
    sut: () => sut!,
    sweepAt: (at) => sweep!(at),
    stored,
    outboxTypes: async (id) => ((await stored(id))?.outbox ?? []).map((e: { type: string }) => e.type),
  };
}
