// A service's app in process on a database of its own, as every service's tests
// start it: the store opened with the service's entities, the app built by the
// service's own wiring (`build`), each documented answer checked against the
// OpenAPI document, and everything closed and dropped again by close().
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import type { Db } from 'mongodb';
import type { Identity } from '@lpm/shared/identity';
import { openStore, type StoreOptions } from '@lpm/shared/store/orm';
import { callAs } from './api.ts';
import { assertWholeAnswers, checkWholeAnswers } from './whole-answers.ts';

/** The token the gateway would send; one per test process, shared by every app it starts. */
export const INTERNAL_TOKEN = randomBytes(32).toString('hex');

/** What a service's wiring gives back: its app, what its tests reach into, and what to stop around the app's close. */
export interface BuiltService<T> {
  app: FastifyInstance;
  /** The service's own parts its tests use (domain object, repository, fakes...). */
  parts: T;
  /** Stopped before the app closes (background passes that use the store). */
  stop?: () => Promise<void>;
  /** Released after the app closed (outbound clients). */
  release?: () => Promise<void>;
}

export interface BuildContext {
  db: Db;
  internalToken: string;
  /** The app's logger: silent unless DEBUG_LOG is set. */
  logger: false | { level: 'error' };
}

export interface ServiceUnderTestOptions<T extends object> {
  /** The service's name, the stem of its scratch database's name. */
  name: string;
  entities: StoreOptions['entities'];
  /** Another app's database (a second replica) instead of a fresh one. */
  dbName?: string;
  /** Another store than the run's (MONGO_URL). */
  mongoUrl?: string;
  build(ctx: BuildContext): Promise<BuiltService<T>>;
}

export interface ServiceUnderTest {
  app: FastifyInstance;
  db: Db;
  /** The app called in process as the gateway would call it, for `who`. */
  call(who: Identity, opts: InjectOptions): Promise<LightMyRequestResponse>;
  /** Stops and closes everything, drops the database, and throws when an answer differed from its documented shape. */
  close(): Promise<void>;
}

/** A fresh scratch database name for `service`, under the run's prefix. */
function scratchDbName(service: string): string {
  return `${process.env.MONGO_DB_PREFIX}${service}_${randomBytes(4).toString('hex')}`;
}

export async function startServiceUnderTest<T extends object>(
  opts: ServiceUnderTestOptions<T>,
): Promise<T & ServiceUnderTest> {
  const store = await openStore({
    url: opts.mongoUrl ?? process.env.MONGO_URL!,
    dbName: opts.dbName ?? scratchDbName(opts.name),
    entities: opts.entities,
  });
  const built = await opts.build({
    db: store.db,
    internalToken: INTERNAL_TOKEN,
    logger: process.env.DEBUG_LOG ? { level: 'error' } : false,
  });
  const { app } = built;
  const answers = checkWholeAnswers(app);
  await app.ready();
  const sut: ServiceUnderTest = {
    app,
    db: store.db,
    call: callAs(() => app, INTERNAL_TOKEN),
    close: async () => {
      await built.stop?.();
      await app.close();
      await built.release?.();
      await store.db.dropDatabase();
      await store.close();
      assertWholeAnswers(answers);
    },
  };
  // The parts object itself, so that a part a closure changes (a counter) is the one the test reads.
  return Object.assign(built.parts, sut);
}

/**
 * Starts a service and a second replica of it on the same database before the
 * suite's tests, hands both to `ready` (awaited: it may store what they share), and
 * closes them after the tests.
 */
export function replicasForSuite<S extends ServiceUnderTest>(
  start: () => Promise<S>,
  startReplica: (dbName: string) => Promise<S>,
  ready: (sut: S, replica: S) => void | Promise<void>,
): void {
  let sut: S | undefined;
  let replica: S | undefined;
  beforeAll(async () => {
    sut = await start();
    replica = await startReplica(sut.db.databaseName);
    await ready(sut, replica);
  }, 60_000);
  afterAll(async () => {
    await replica?.close();
    await sut?.close();
  });
}

/** Starts a service before the suite's tests, hands it to `ready`, and closes it after them. */
export function serviceForSuite<S extends ServiceUnderTest>(start: () => Promise<S>, ready: (sut: S) => void): void {
  let sut: S | undefined;
  beforeAll(async () => {
    sut = await start();
    ready(sut);
  }, 60_000);
  afterAll(async () => {
    await sut?.close();
  });
}
