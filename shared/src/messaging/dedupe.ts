// Idempotency for consumers, by message id: the outbox publishes at least once and
// a redelivery can race a retry, so a consumer whose handler must not run twice
// passes a Dedupe. The one store is MongoDB (FerretDB locally).
import type { Db } from 'mongodb';
import { isDuplicateKey } from '../store/duplicate-key.ts';
import { bucketOf, purgeByMarker } from '../store/markers.ts';
import { DAY_MS } from '../time.ts';

/**
 * Idempotency store for a consumer. A delivery claims its event id before the
 * handler runs, so two deliveries of one event at the same moment (redelivery
 * racing a retry, two replicas) never both run it.
 */
export interface Dedupe {
  /** 'new': this delivery owns the event; 'done': handled before; 'busy': another delivery is handling it now. */
  claim(eventId: string): Promise<'new' | 'done' | 'busy'>;
  complete(eventId: string): Promise<void>;
  /** Gives the claim up after a failed handler, so a retry can claim it again. */
  release(eventId: string): Promise<void>;
}

const PREFIX = 'dedupe_';

/** A claim older than this is taken over: its holder died mid-handler. */
export const CLAIM_STALE_MS = 60_000;

interface DedupeRecord {
  _id: string;
  state: 'processing' | 'done';
  at: Date;
  /** The day of `at`, written with it: the purge's equality marker (store/markers.ts). */
  at_day: number;
}

/** `at` and its day, set together. */
function stamped(): Pick<DedupeRecord, 'at' | 'at_day'> {
  const at = new Date();
  return { at, at_day: bucketOf(at, DAY_MS) };
}

/**
 * Deletes the records of every consumer's dedupe collection last written before
 * `before` (DEDUPE_RETENTION ago: a redelivery comes within minutes, a replay from a
 * dead-letter queue was never done), day by day by their at_day. A delete: replicas
 * running it at once agree.
 */
export async function purgeDedupeRecords(db: Db, before: Date): Promise<number> {
  const collections = await db.listCollections({}, { nameOnly: true }).toArray();
  let deleted = 0;
  for (const { name } of collections) {
    if (!name.startsWith(PREFIX)) continue;
    deleted += (
      await purgeByMarker(db, { collection: name, timeField: 'at', markerField: 'at_day', bucketMs: DAY_MS, before })
    ).deleted;
  }
  return deleted;
}

/**
 * Dedupe backed by a collection `dedupe_<consumerName>` whose `_id` is the event
 * id: inserting the id is the claim (an insert is the one write FerretDB makes
 * atomic), `state` turns to done once the handler succeeded.
 */
export function mongoDedupe(db: Db, consumerName: string, opts: { claimStaleMs?: number } = {}): Dedupe {
  const staleMs = opts.claimStaleMs ?? CLAIM_STALE_MS;
  const col = db.collection<DedupeRecord>(`${PREFIX}${consumerName}`);
  return {
    async claim(eventId) {
      try {
        await col.insertOne({ _id: eventId, state: 'processing', ...stamped() });
        return 'new';
      } catch (err) {
        if (!isDuplicateKey(err)) throw new Error(`dedupe claim ${eventId} failed`, { cause: err });
      }
      const held = await col.findOne({ _id: eventId });
      if (!held) return this.claim(eventId);
      if (held.state === 'done') return 'done';
      if (Date.now() - held.at.getTime() < staleMs) return 'busy';
      await col.deleteOne({ _id: eventId, state: 'processing', at: held.at });
      return this.claim(eventId);
    },
    async complete(eventId) {
      await col.updateOne({ _id: eventId }, { $set: { state: 'done', ...stamped() } });
    },
    async release(eventId) {
      await col.deleteOne({ _id: eventId, state: 'processing' });
    },
  };
}
