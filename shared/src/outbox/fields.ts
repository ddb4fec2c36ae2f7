// The outbox's part of a record: its pending events in its own `outbox` array,
// written by the same single-document write as the change they describe.
import type { Db, Document } from 'mongodb';
import type { DomainEvent } from '../events.ts';
import { createLockIndexes } from '../store/lock.ts';
import { SWEEP } from '../store/time-budgets.ts';

export interface OutboxFields {
  outbox: DomainEvent<unknown>[];
  outbox_pending: true;
}

/** Fields to spread into a new document so its events are written with it. */
export function outboxOnInsert(events: DomainEvent<unknown>[]): OutboxFields {
  return { outbox: events, outbox_pending: true };
}

/**
 * Adds events to an operator-style update document ({ $set, $inc, ... }) without
 * changing its other effects: `$push` to `outbox` and `$set.outbox_pending = true`.
 */
export function outboxUpdate<U extends Document>(update: U, events: DomainEvent<unknown>[]): U {
  if (events.length === 0) return update;
  for (const key of Object.keys(update)) {
    if (!key.startsWith('$')) throw new Error(`outboxUpdate needs an operator update document, got field "${key}"`);
  }
  const operators: { $set?: Document; $push?: Document } = update;
  const $set = { ...operators.$set, outbox_pending: true };
  const $push = { ...operators.$push };
  if ('outbox' in $push) throw new Error('outboxUpdate: the update already pushes to outbox');
  $push.outbox = { $each: events };
  return { ...update, $set, $push };
}

/** Indexes the relay's queries use: outbox_pending on each collection, expiry on the locks. */
export async function createOutboxIndexes(db: Db, collections: string[]): Promise<void> {
  for (const name of collections) await db.collection(name).createIndex({ outbox_pending: 1 }, SWEEP);
  await createLockIndexes(db);
}
