import type { Collection, Filter, OptionalUnlessRequiredId } from 'mongodb';

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

/**
 * Inserts `doc`, or, when a unique index already holds its twin (a redelivery, a
 * retried job), returns the stored one that `sameAs` finds: an insert is the one
 * write FerretDB makes atomic, so "create once" is built on it.
 */
export async function insertOrGet<T extends { _id: string }>(
  col: Collection<T>,
  doc: OptionalUnlessRequiredId<T> & T,
  sameAs: Filter<T>,
): Promise<T> {
  try {
    await col.insertOne(doc);
    return doc;
  } catch (e) {
    if (!isDuplicateKey(e)) throw e;
    const stored = await col.findOne<T>(sameAs);
    if (!stored) throw e;
    return stored;
  }
}
