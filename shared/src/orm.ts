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

/**
 * A unique index refused the write. FerretDB 1.24 reports this as 11000 on insert
 * but as InternalError (code 1) with its backend's text on update (SQLite's
 * "UNIQUE constraint failed", PostgreSQL's SQLSTATE 23505), so all are recognised.
 */
export function isDuplicateKey(e: unknown): boolean {
  const err = e as { code?: number; message?: string; cause?: unknown } | undefined;
  if (!err) return false;
  if (err.code === 11000) return true;
  if (err.code === 1 && /UNIQUE constraint failed|SQLSTATE 23505/.test(err.message ?? '')) return true;
  return err.cause !== undefined && err.cause !== e && isDuplicateKey(err.cause);
}
