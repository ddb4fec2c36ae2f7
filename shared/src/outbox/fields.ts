// The outbox's part of a record: the events of its last write under its writer's
// mark (outbox/marks.ts), or its pending events in its own `outbox` array, written
// by the same single-document write as the change they describe.
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

/** The events a write stores under a mark (marks.ts), replacing those of the document's last marked write; as one JSON string, which the store decodes as one value. */
export interface MarkedOutboxFields {
  outbox_mark: string;
  outbox_events: string;
}

export function outboxMarked(mark: string, events: DomainEvent<unknown>[]): MarkedOutboxFields {
  return { outbox_mark: mark, outbox_events: JSON.stringify(events) };
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

/** Indexes the relay's queries use: outbox_pending and outbox_mark on each collection, expiry on the locks. */
export async function createOutboxIndexes(db: Db, collections: string[]): Promise<void> {
  for (const name of collections) {
    await db.collection(name).createIndex({ outbox_pending: 1 }, SWEEP);
    await db.collection(name).createIndex({ outbox_mark: 1 }, SWEEP);
  }
  await createLockIndexes(db);
}
