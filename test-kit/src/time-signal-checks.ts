// What the time-signal tests of each service check the same way: the signals records
// give at the broker through replicas of the service, and a service in process swept
// at chosen instants.
import type { Document } from 'mongodb';
import type { Identity } from '@lpm/shared/identity';
import type { SignalDefinition } from '@lpm/shared/jobs/time-signals';
import { serviceForSuite, type ServiceUnderTest } from './service-under-test.ts';
import { day, identity } from './teams.ts';
import { startSignalReplicas, sweepsAt, type SignalReplicas, type SignalReplicasOptions } from './time-signals.ts';

export interface SignalReplicasSuite {
  /** The team the replicas are called for: a new one in the default zone. */
  team: Identity;
  /** The replicas, once the suite's beforeAll has started them. */
  replicas: () => SignalReplicas;
  /** A request to the first replica for the team. */
  send: SignalReplicas['call'];
  /**
   * Record `object.id` gives exactly one `type` event at the broker, once everything
   * written has settled: from no actor, for the team, with no previous attributes,
   * its object matching `object`.
   */
  expectOneSignal: (type: string, object: { id: string } & Record<string, unknown>) => Promise<void>;
  /**
   * A record POSTed to `path` as `body` with its date `field` three days ago gives
   * `type`; that date moved to two days ago, it gives `type` again. Resolves with its id.
   */
  signalAgainOnMove: (type: string, path: string, field: string, body: Record<string, unknown>) => Promise<string>;
}

/**
 * Starts replicas of the service before the suite's tests and stops them after;
 * `env` is read as they start, after the beforeAll hooks declared before this call.
 */
export function signalReplicasForSuite(
  options: Omit<SignalReplicasOptions, 'team' | 'env'> & { env?: () => NodeJS.ProcessEnv },
): SignalReplicasSuite {
  const team = identity();
  let started: SignalReplicas | undefined;
  beforeAll(async () => {
    started = await startSignalReplicas({ ...options, team, env: options.env?.() });
  }, 40_000);
  afterAll(async () => {
    await started?.stop();
  });
  const replicas = () => started!;
  return {
    team,
    replicas,
    send: (method, path, body) => replicas().call(method, path, body),
    expectOneSignal: async (type, object) => {
      const [event] = await replicas().tap.waitFor(type, object.id);
      expect(event).toMatchObject({
        team_id: team.teamId,
        actor_id: null,
        data: { previous_attributes: null, object },
      });
      await replicas().settle();
      expect(replicas().tap.of(type, object.id)).toHaveLength(1);
    },
    signalAgainOnMove: async (type, path, field, body) => {
      const { id } = (await replicas().call('POST', path, { ...body, [field]: day(-3) })).body.data as { id: string };
      await replicas().tap.waitFor(type, id);
      expect((await replicas().call('PUT', `${path}/${id}`, { [field]: day(-2) })).status).toBe(200);
      await replicas().tap.waitFor(type, id, 2);
      return id;
    },
  };
}

export interface SweptInProcess<S extends ServiceUnderTest> {
  /** A team of the suite's own, in the default zone. */
  team: Identity;
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
    team: identity(),
    sut: () => sut!,
    sweepAt: (at) => sweep!(at),
    stored,
    outboxTypes: async (id) => ((await stored(id))?.outbox ?? []).map((e: { type: string }) => e.type),
  };
}
