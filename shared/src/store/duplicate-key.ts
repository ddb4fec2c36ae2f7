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
