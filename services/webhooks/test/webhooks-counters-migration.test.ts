// The counters' data in the shapes earlier versions stored, converted once before the
// first fold (CountersMigration): webhooks that kept their counters themselves or had
// none, attempts stored `counted: false`, deliveries stored before the log's markers.
// The app in process on its own database (webhooks-retention-suite.ts); each test
// seeds the old shapes straight into the store and clears the record that the
// conversion ran, as a database of an earlier version has none.
import { HOUR_MS } from '@lpm/shared/store/markers';
import { identity } from '@lpm/test-kit/teams';
import { COUNTERS_MIGRATION, CountersMigration } from '../src/data/counters-migration.ts';
import type {
  AttemptRecord,
  DeliveryRecord,
  WebhookCountersRecord,
  WebhookRecord,
} from '../src/data/webhook-entity.ts';
import { watchStore } from './store-commands.ts';
import {
  attemptOf,
  attemptOfNewDelivery,
  counters,
  countOf,
  deliveries,
  deliveryOf,
  listed,
  newTeamHook,
  receiver,
  recordAndCount,
  retentionSuite,
  sut,
} from './webhooks-retention-suite.ts';
import { webhookRecord } from './records.ts';

retentionSuite();

/** A start of the service on a database an earlier version left: the conversion not recorded. */
async function migrate(): Promise<CountersMigration> {
  await sut.db.collection('webhook_migrations').deleteMany({});
  const migration = new CountersMigration(sut.db, counters);
  expect(await migration.run()).toBe(true);
  return migration;
}

/** A webhook as an earlier version stored it: no counters document, and its own counters when `kept`. */
async function oldWebhook(teamId: string, path: string, kept?: Partial<WebhookRecord>): Promise<string> {
  const record = webhookRecord(teamId, `${receiver.url}/${path}`, { events: ['client.created'], ...kept });
  await sut.db.collection<WebhookRecord>('webhooks').insertOne(record);
  return record._id;
}

const countersOf = (id: string) => sut.db.collection<WebhookCountersRecord>('webhook_counters').findOne({ _id: id });

test('when a database holds every earlier shape of the counters, then the conversion leaves them in the current one once, with the same counts, and a later start reads only its record', async () => {
  const who = identity();
  const at = new Date(Date.now() - 3 * HOUR_MS);
  // Counted by its attempts (no `counted` field), one more stored `counted: false`, and deliveries without markers.
  const oldest = await oldWebhook(who.teamId, 'oldest');
  const old: DeliveryRecord[] = [];
  for (const ok of [true, false, true, false]) {
    const d = deliveryOf(who.teamId, oldest, new Date(at.getTime() + old.length * 60_000));
    old.push(d);
    await sut.db.collection<DeliveryRecord>('deliveries').insertOne(d);
    const a = attemptOf(d, 1, ok, d.created_at);
    await sut.db.collection<AttemptRecord>('attempts').insertOne(old.length === 4 ? { ...a, counted: false } : a);
  }
  // Its counters kept on itself, its last count naming an attempt whose mark a crash left unset.
  const named = attemptOf(deliveryOf(who.teamId, 'x'), 1, false, at);
  const kept = await oldWebhook(who.teamId, 'kept', {
    total_deliveries: 20,
    failed_deliveries: 5,
    last_triggered_at: at,
    last_counted: [named._id],
  });
  await sut.db.collection<AttemptRecord>('attempts').insertMany([
    { ...named, webhook_id: kept, counted: false },
    { ...attemptOf(deliveryOf(who.teamId, kept), 1, true, at), counted: false },
  ]);

  await migrate();

  expect(await countersOf(oldest)).toMatchObject({ total_deliveries: 4, failed_deliveries: 2, log_ready: true });
  expect(await countersOf(kept)).toMatchObject({ total_deliveries: 21, failed_deliveries: 5, log_ready: true });
  expect(await countOf('attempts', { webhook_id: { $in: [oldest, kept] }, counted: false })).toBe(0);
  expect(await countOf('deliveries', { webhook_id: oldest, log_minute: { $exists: false } })).toBe(0);
  // The log counts the old deliveries from their hours, as many as there are.
  expect((await deliveries.page(who.teamId, oldest, { page: 1, limit: 2, sort: '-created_at' })).total).toBe(4);
  expect(await listed(who, oldest)).toMatchObject({ total_deliveries: 4, failed_deliveries: 2, success_rate: 50 });
  expect(await sut.db.collection('webhook_migrations').findOne({ _id: COUNTERS_MIGRATION as never })).toMatchObject({
    done_at: expect.any(Date),
  });

  // The fold goes on from there, and a later start finds the record and converts nothing.
  await recordAndCount(await attemptOfNewDelivery(who.teamId, oldest, true));
  expect(await countersOf(oldest)).toMatchObject({ total_deliveries: 5, failed_deliveries: 2 });
  const watched = await watchStore(sut.db.databaseName);
  try {
    expect(await new CountersMigration(watched.db, counters).run()).toBe(true);
    expect(watched.take()).toEqual([expect.objectContaining({ op: 'find', collection: 'webhook_migrations' })]);
  } finally {
    await watched.close();
  }
});

test('when a webhook stored before the counters has attempts, then the conversion counts them as before, and the fold goes on from there', async () => {
  const who = identity();
  const legacy = await oldWebhook(who.teamId, 'legacy');
  const at = new Date(Date.now() - 5000);
  for (const ok of [true, false, true]) {
    // Stored as before: no `counted` field.
    await sut.db
      .collection<AttemptRecord>('attempts')
      .insertOne(await attemptOfNewDelivery(who.teamId, legacy, ok, at));
  }

  await migrate();
  expect(await listed(who, legacy)).toMatchObject({
    total_deliveries: 3,
    failed_deliveries: 1,
    success_rate: 66.7,
    last_triggered_at: at.toISOString(),
  });
  await recordAndCount(await attemptOfNewDelivery(who.teamId, legacy, true));
  expect(await listed(who, legacy)).toMatchObject({ total_deliveries: 4, failed_deliveries: 1, success_rate: 75 });
  expect(await countersOf(legacy)).toMatchObject({ total_deliveries: 4 });
});

test('when a webhook still holds its counters itself (stored before webhook_counters), then the conversion goes on from them, and counts its attempts left uncounted once', async () => {
  const { who, id } = await newTeamHook('kept-itself');
  const leftover = await attemptOfNewDelivery(who.teamId, id, true);
  await sut.db.collection<AttemptRecord>('attempts').insertOne({ ...leftover, counted: false });
  // Counters kept on the webhook itself, naming its last count, and no counters document.
  await sut.db.collection<WebhookCountersRecord>('webhook_counters').deleteOne({ _id: id });
  await sut.db.collection<WebhookRecord>('webhooks').updateOne(
    { _id: id },
    {
      $set: {
        total_deliveries: 10,
        failed_deliveries: 4,
        last_triggered_at: leftover.at,
        last_counted: [leftover._id],
      },
    },
  );

  // Recorded then, and not yet counted.
  const uncounted = await attemptOfNewDelivery(who.teamId, id, false);
  await sut.db.collection<AttemptRecord>('attempts').insertOne({ ...uncounted, counted: false });

  await migrate();
  await recordAndCount(await attemptOfNewDelivery(who.teamId, id, false));

  expect(await listed(who, id)).toMatchObject({ total_deliveries: 12, failed_deliveries: 6 });
  expect(await countOf('attempts', { webhook_id: id, counted: false })).toBe(0);
});
