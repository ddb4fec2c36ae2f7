// One way to use MikroORM everywhere (docs/architecture.md, "The store"): entity
// definitions declare each collection's fields and indexes, the record types are
// inferred from them, and the indexes are created at start. Reads and writes go
// through the driver's Db in repositories, because an outbox write must be one
// atomic single-document update with the change (a $push beside the $set), which
// the EntityManager's unit of work does not express.
import { MikroORM, p, type InferEntity, type Options } from '@mikro-orm/mongodb';
import type { Db } from 'mongodb';
import type { DomainEvent } from '../events.ts';
import { createLogger, type Logger } from '../logger.ts';
import { countStoreCommands } from '../metrics.ts';
import { watchMonitor } from './monitor-watchdog.ts';
import { isAuthenticationFailure, isStoreError } from './store-errors.ts';
import { ConfigError } from '../config.ts';
import { STORE_OPERATION_TIMEOUT_MS, STORE_SELECTION_TIMEOUT_MS } from './time-budgets.ts';
import { backoffDelayMs } from '../backoff.ts';

export interface Store {
  /** The service's database (MikroORM's own connection). */
  db: Db;
  /** The readiness check: resolves when the store answers (and is set up), throws when not. */
  check(): Promise<void>;
  close(): Promise<void>;
}

/** A store still being set up in the background (startStore). */
export interface StartingStore extends Store {
  /**
   * Resolves true once the store answered and was set up, false when closed first;
   * rejects on an error that is not the store's, and with a ConfigError when the
   * store refuses the credentials.
   */
  ready: Promise<boolean>;
}

/** An index the entities no longer declare, replaced by another: dropped at start, as the new one is made. */
export interface RetiredIndex {
  collection: string;
  /** Its name as the store made it (for an unnamed one, `<field>_1_<field>_1`). */
  name: string;
}

export interface StoreOptions {
  url: string;
  dbName: string;
  entities: Options['entities'];
  /** Indexes the store holds and the entities no longer declare: dropped at start. */
  retiredIndexes?: RetiredIndex[];
  /** More set-up after the entities' indexes (the outbox's). */
  prepare?: (db: Db) => Promise<void>;
  logger?: Logger;
}

/** MongoDB's (and FerretDB's) codes for "no such index" and "no such collection". */
const INDEX_NOT_FOUND = 27;
const NAMESPACE_NOT_FOUND = 26;

/** Set-up attempts while the store does not answer: the first delay, doubled per failure up to the cap (each attempt itself waits up to STORE_SELECTION_TIMEOUT_MS). */
const SET_UP_RETRY_MIN_MS = 500;
const SET_UP_RETRY_MAX_MS = 5000;
/** Every how many failed attempts the warning is logged again. */
const SET_UP_WARN_EVERY = 12;

/**
 * The client of one service database, not connected yet (the driver connects on the
 * first operation), and its set-up: the indexes its entities declare, the retired
 * ones dropped (each write would keep paying for them), then `prepare`.
 */
async function storeClient(opts: StoreOptions) {
  const orm = await MikroORM.init({
    clientUrl: opts.url,
    dbName: opts.dbName,
    entities: opts.entities,
    allowGlobalContext: false,
    debug: false,
    // A store that does not answer fails a request within a few seconds (503), not the driver's 30.
    driverOptions: { serverSelectionTimeoutMS: STORE_SELECTION_TIMEOUT_MS, monitorCommands: true },
  });
  const connection = orm.em.getConnection();
  const client = connection.getClient();
  const db = client.db(opts.dbName, { timeoutMS: STORE_OPERATION_TIMEOUT_MS });
  const logger = opts.logger ?? createLogger('store');
  const watchdog = watchMonitor(client, logger);
  countStoreCommands(client);
  return {
    db,
    logger,
    setUp: async () => {
      // Explicitly: a failed first connection leaves the driver's topology closed, and
      // operations fail "Topology is closed" until connect() makes a new one.
      await client.connect();
      await orm.schema.ensureIndexes();
      await dropRetired(connection.getDb(), opts.retiredIndexes ?? []);
      await opts.prepare?.(db);
    },
    close: async () => {
      watchdog.stop();
      await orm.close();
    },
  };
}

/** Connects to one service database and sets it up; rejects when the store does not answer. */
export async function openStore(opts: StoreOptions): Promise<Store> {
  const store = await storeClient(opts);
  try {
    await store.setUp();
  } catch (e) {
    await store.close();
    throw e;
  }
  return { db: store.db, check: () => ping(store.db), close: store.close };
}

/**
 * The store of a server process, answered at once: it is set up in the background,
 * tried again with capped backoff for as long as the store does not answer (a
 * process starts whatever state its store is in, and is not ready until then).
 * Credentials the store refuses are a configuration error, never retried.
 */
export async function startStore(opts: StoreOptions): Promise<StartingStore> {
  const store = await storeClient(opts);
  let closed = false;
  let isSetUp = false;
  let lastError: unknown;
  let wake = () => {};
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  const ready = (async () => {
    for (let attempt = 0; !closed; attempt++) {
      try {
        await store.setUp();
        isSetUp = true;
        if (attempt > 0) store.logger.info({}, 'store reachable again: set up');
        return true;
      } catch (err) {
        if (closed) return false;
        if (isAuthenticationFailure(err))
          throw new ConfigError([`MONGO_URL: the store refused the credentials (${(err as Error).message})`]);
        if (!isStoreError(err)) throw err;
        lastError = err;
        const delay = backoffDelayMs(attempt, {
          firstMs: SET_UP_RETRY_MIN_MS,
          maxMs: SET_UP_RETRY_MAX_MS,
          jitter: 0.2,
        });
        // Said again about once a minute (at the capped delay): a store that never answers stays in sight.
        if (attempt % SET_UP_WARN_EVERY === 0)
          store.logger.warn({ err, attempt }, 'store not reachable at start; retrying in the background');
        else store.logger.debug({ err, attempt }, 'store set-up attempt failed');
        await pause(delay);
      }
    }
    return false;
  })();
  // Handled here too, so an error before the caller awaits it is not taken for an unhandled rejection.
  ready.catch(() => {});
  return {
    db: store.db,
    ready,
    check: async () => {
      if (!isSetUp) throw new Error(`not set up yet: ${lastError instanceof Error ? lastError.message : 'connecting'}`);
      await ping(store.db);
    },
    close: async () => {
      closed = true;
      wake();
      await store.close();
    },
  };
}

async function ping(db: Db): Promise<void> {
  await db.command({ ping: 1 });
}

async function dropRetired(db: Db, retired: RetiredIndex[]): Promise<void> {
  for (const { collection, name } of retired) {
    try {
      await db.collection(collection).dropIndex(name);
    } catch (e) {
      const code = (e as { code?: number }).code;
      if (code !== INDEX_NOT_FOUND && code !== NAMESPACE_NOT_FOUND) throw e;
    }
  }
}

/** The properties of an entity whose documents carry an outbox (outbox/fields.ts). */
export const outboxProperties = {
  outbox: p.json<DomainEvent[]>().lazy(),
  outbox_pending: p.boolean().nullable().lazy(),
  outbox_mark: p.string().nullable().lazy(),
  outbox_events: p.string().nullable().lazy(),
};

/** A stored record's type, inferred from its entity definition, without the outbox. */
export type RecordOf<E> = Omit<InferEntity<E>, keyof typeof outboxProperties>;
