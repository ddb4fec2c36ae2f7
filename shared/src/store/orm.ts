// MikroORM for MongoDB (and FerretDB, which speaks its wire protocol): one ORM per
// service database, indexes declared on the entities and created at start.
import { MikroORM, type Options } from '@mikro-orm/mongodb';
import type { Collection, Document } from 'mongodb';

export type Orm = MikroORM;

export async function openOrm(opts: { url: string; dbName: string; entities: Options['entities'] }): Promise<Orm> {
  const orm = await MikroORM.init({
    clientUrl: opts.url,
    dbName: opts.dbName,
    entities: opts.entities,
    allowGlobalContext: false,
    debug: false,
  });
  await orm.schema.ensureIndexes();
  return orm;
}

/** The driver's collection, for single-document atomic updates ($push of outbox events with the change). */
export function collectionOf<T extends Document = Document>(orm: Orm, name: string): Collection<T> {
  return orm.em.getConnection().getCollection(name) as unknown as Collection<T>;
}
