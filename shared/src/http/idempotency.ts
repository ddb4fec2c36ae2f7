// Idempotency-Key on POST (docs/decisions.md §9, extension): a POST repeated with the same
// key by the same team within 24 h gets the first response again, byte for byte,
// with `Idempotent-Replayed: true`; the same key with another request is 422.
// A service whose answers carry secrets (a webhook's signing secret) gives a
// sealer: the stored answer is then encrypted at rest, opened only to replay it.
// A run that answered a server error, or died, may still have stored its record: the
// next request with the key runs it again with the ids the first run made
// (ids.withIdSeed), so the store refuses a second record (RecordStore.insert).
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Collection, Db } from 'mongodb';
import { badRequest, businessRule, conflict } from '../errors.ts';
import { isDuplicateKey } from '../store/duplicate-key.ts';
import { bucketOf, purgeByMarker } from '../store/markers.ts';
import { withIdSeed } from '../ids.ts';
import { DAY_MS } from '../time.ts';

const HEADER = 'idempotency-key';
const ENTRIES = 'idempotency_keys';
const KEEP_MS = DAY_MS;
/** A pending entry this old belongs to a process that died mid-request. */
const ABANDONED_MS = 60_000;

/** Encrypts answers kept for replay (AES-GCM: services/webhooks' SecretBox). */
export interface Sealer {
  seal(plain: string): string;
  open(sealed: string): string;
}

interface Entry {
  _id: string;
  request_hash: string;
  /** failed: the last run answered a server error, and the next request with the key runs it again. */
  state: 'pending' | 'done' | 'failed';
  /** When the run under way took the key (an entry of an older version: created_at). */
  claimed_at?: Date;
  status?: number;
  content_type?: string;
  body?: string;
  /** The body is sealed (Sealer), not in clear. */
  sealed?: boolean;
  created_at: Date;
  /** The day of created_at: the purge's equality marker (store/markers.ts). */
  created_day: number;
}

declare module 'fastify' {
  interface FastifyRequest {
    idempotencyEntry?: string;
    /** When the key was first taken: with the entry's id, the seed of the ids this run makes (ids.withIdSeed). */
    idempotencyAt?: Date;
  }
}

function requestHash(req: FastifyRequest): string {
  return createHash('sha256')
    .update(`${req.method} ${req.url}\n${req.rawBody ?? ''}`)
    .digest('hex');
}

/**
 * Retention: drops the records older than the 24 h they are replayed for (answers
 * up to 1 MiB each), day by day by their created_day. A service calls it from its
 * periodic jobs with the database it gave createServiceApp (the webhooks service:
 * jobs/retention.ts). A delete only, so replicas running it at once do no harm and
 * it needs no exactly-once claim; a record it removes would not be replayed anyway.
 */
export async function purgeIdempotencyKeys(db: Db, now = new Date()): Promise<number> {
  const { deleted } = await purgeByMarker(db, {
    collection: ENTRIES,
    timeField: 'created_at',
    markerField: 'created_day',
    bucketMs: DAY_MS,
    before: new Date(now.getTime() - KEEP_MS),
  });
  return deleted;
}

export function idempotentPosts(app: FastifyInstance, db: Db, sealer?: Sealer): void {
  const entries = db.collection<Entry>(ENTRIES);

  app.addHook('preValidation', (req, reply) => takeKey(entries, sealer, req, reply));

  // Answers below 500 are kept for replay; after a server error the key is freed so a retry runs again.
  // The answer goes out whatever the store says: a 201 turned into a 500 by a failed
  // bookkeeping write would make its caller retry a write that happened. The entry then
  // stays pending, and a retry gets 409 until it is abandoned (ABANDONED_MS).
  app.addHook('onSend', async (req, reply, payload) => {
    const id = req.idempotencyEntry;
    if (!id) return payload;
    req.idempotencyEntry = undefined;
    try {
      await settle(entries, sealer, id, reply.statusCode, payload, String(reply.getHeader('content-type') ?? ''));
    } catch (err) {
      req.log.warn({ err, idempotency_key: id }, 'idempotency entry not settled; it stays pending until abandoned');
    }
    return payload;
  });

  // Each POST handler runs under its key's id seed, so a run again makes the ids the first run made.
  app.addHook('onRoute', (route) => {
    if (route.method !== 'POST' && !(Array.isArray(route.method) && route.method.includes('POST'))) return;
    const handler = route.handler;
    route.handler = function seeded(this: FastifyInstance, req, reply) {
      const at = req.idempotencyAt;
      return at && req.idempotencyEntry
        ? withIdSeed(req.idempotencyEntry, at.getTime(), () => handler.call(this, req, reply))
        : handler.call(this, req, reply);
    };
  });
}

/**
 * A POST with an Idempotency-Key: takes the key for this run (a new one, or one whose
 * last run failed or was abandoned), or replays the answer kept for it.
 */
async function takeKey(
  entries: Collection<Entry>,
  sealer: Sealer | undefined,
  req: FastifyRequest,
  reply: FastifyReply,
) {
  const given = req.headers[HEADER];
  if (req.method !== 'POST' || given === undefined) return;
  const key = Array.isArray(given) ? given[0] : given;
  if (key.length < 1 || key.length > 255) {
    throw badRequest('Idempotency-Key must be 1 to 255 characters', { field: 'Idempotency-Key', type: 'invalid' });
  }
  const id = `${req.identity.teamId}:${key}`;
  const hash = requestHash(req);
  for (;;) {
    const now = new Date();
    try {
      await entries.insertOne({
        _id: id,
        request_hash: hash,
        state: 'pending',
        created_at: now,
        claimed_at: now,
        created_day: bucketOf(now, DAY_MS),
      });
      req.idempotencyEntry = id;
      req.idempotencyAt = now;
      return;
    } catch (e) {
      if (!isDuplicateKey(e)) throw e;
    }
    const found = await entries.findOne({ _id: id });
    if (!found) continue;
    if (now.getTime() - found.created_at.getTime() > KEEP_MS) {
      await entries.deleteOne({ _id: id, created_at: found.created_at });
      continue;
    }
    if (found.request_hash !== hash) {
      throw businessRule('Idempotency key reused with different request', 'idempotency_key_reused');
    }
    const claimedAt = found.claimed_at ?? found.created_at;
    const abandoned = found.state === 'pending' && now.getTime() - claimedAt.getTime() > ABANDONED_MS;
    if (found.state === 'failed' || abandoned) {
      // Run again, as the same run: its ids come from the key and the first run's instant.
      const taken = await entries.updateOne(
        {
          _id: id,
          state: found.state,
          created_at: found.created_at,
          ...(found.claimed_at ? { claimed_at: found.claimed_at } : {}),
        },
        { $set: { state: 'pending', claimed_at: now } },
      );
      if (taken.matchedCount === 0) continue;
      req.idempotencyEntry = id;
      req.idempotencyAt = found.created_at;
      return;
    }
    if (found.state === 'pending') {
      throw conflict('A request with this Idempotency-Key is in progress', 'idempotency_request_in_progress');
    }
    return reply
      .status(found.status ?? 200)
      .header('content-type', found.content_type ?? 'application/json; charset=utf-8')
      .header('idempotent-replayed', 'true')
      .send(found.sealed && found.body !== undefined ? opened(sealer, found.body) : found.body);
  }
}

function opened(sealer: Sealer | undefined, body: string): string {
  if (!sealer) throw new Error('a sealed idempotency record and no sealer to open it');
  return sealer.open(body);
}

async function settle(
  entries: Collection<Entry>,
  sealer: Sealer | undefined,
  id: string,
  status: number,
  payload: unknown,
  contentType: string,
): Promise<void> {
  if (status >= 500 || typeof payload !== 'string') {
    await entries.updateOne({ _id: id, state: 'pending' }, { $set: { state: 'failed' } });
  } else {
    await entries.updateOne(
      { _id: id },
      {
        $set: {
          state: 'done',
          status,
          content_type: contentType,
          body: sealer ? sealer.seal(payload) : payload,
          sealed: sealer !== undefined,
        },
      },
    );
  }
}
