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
import { STORE_OPERATION_TIMEOUT_MS, STORE_SELECTION_TIMEOUT_MS } from './time-budgets.ts';


export interface Store {
  /** The service's database (MikroORM's own connection). */
  db: Db;
  close(): Promise<void>;
}

/** An index an earlier version declared and a later one replaced: dropped at start, as the new one is made. */
export interface RetiredIndex {
  collection: string;
  /** Its name as the store made it (for an unnamed one, `<field>_1_<field>_1`). */
  name: string;
}

/** MongoDB's (and FerretDB's) codes for "no such index" and "no such collection". */
const INDEX_NOT_FOUND = 27;
const NAMESPACE_NOT_FOUND = 26;

/**
 * Connects to one service database, creates the indexes its entities declare and
 * drops those `retiredIndexes` names (each write would keep paying for them).
 */
export async function openStore(opts: { url: string; dbName: string; entities: Options['entities']; retiredIndexes?: RetiredIndex[]; logger?: Logger }): Promise<Store> {
  const orm = await MikroORM.init({
    clientUrl: opts.url,
    dbName: opts.dbName,
    entities: opts.entities,
    allowGlobalContext: false,
    debug: false,
    // A store that does not answer fails a request within a few seconds (503), not the driver's 30.
    driverOptions: { serverSelectionTimeoutMS: STORE_SELECTION_TIMEOUT_MS, monitorCommands: true },
  });
  try {
    await orm.schema.ensureIndexes();
    await dropRetired(orm.em.getConnection().getDb(), opts.retiredIndexes ?? []);
  } catch (e) {
    await orm.close();
    throw e;
  }
  const connection = orm.em.getConnection();
  const watchdog = watchMonitor(connection.getClient(), opts.logger ?? createLogger('store'));
  countStoreCommands(connection.getClient());
  return {
    db: connection.getClient().db(opts.dbName, { timeoutMS: STORE_OPERATION_TIMEOUT_MS }),
    close: async () => {
      watchdog.stop();
      await orm.close();
    },
  };
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
};

/** A stored record's type, inferred from its entity definition, without the outbox. */
export type RecordOf<E> = Omit<InferEntity<E>, keyof typeof outboxProperties>;
