// Completing and deleting activities in process, and what each does to the
// activity's events (the other endpoints: activities-api.test.ts).
import { newEvent, type DomainEvent } from '@lpm/shared/events';
import { createLogger } from '@lpm/shared/logger';
import { outboxOnInsert } from '@lpm/shared/outbox/fields';
import { OutboxRelay } from '@lpm/shared/outbox/relay';
import { bucketOf } from '@lpm/shared/store/markers';
import { expectNotFound, expectRefused } from '@lpm/test-kit/error-answers';
import { ActivitiesRepository, TOMBSTONES } from '../src/data/activities-repository.ts';
import { startActivities } from './helper.ts';
import { activitiesSuite, call, create, DAY, ISO_MS, other, sut, t } from './activities-suite.ts';

activitiesSuite();
describe('PUT /v1/activities/{id}/complete', () => {
  test('when a pending activity is completed, then status, completed_at, completed_by and notes come back', async () => {
    const a = await create({ type: 'meeting', title: 'Audiência' });
    const res = await call('PUT', `/v1/activities/${a.id}/complete`, { notes: 'Acordo fechado' });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual({
      id: a.id,
      status: 'completed',
      completed_at: expect.stringMatching(ISO_MS),
      completed_by: { id: t.userId, name: null },
      completion_notes: 'Acordo fechado',
    });
  });

  test('when no body is sent, then it is completed without notes', async () => {
    const a = await create({ type: 'task', title: 'Sem notas' });
    const res = await sut.call(t, {
      method: 'PUT',
      url: `/v1/activities/${a.id}/complete`,
      headers: { 'content-type': 'application/json' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.completion_notes).toBeNull();
  });

  test('when already completed, then 422 Activity already completed; when cancelled, 422 Cannot complete cancelled activity', async () => {
    const a = await create({ type: 'task', title: 'X' });
    await call('PUT', `/v1/activities/${a.id}/complete`, {});
    expectRefused(await call('PUT', `/v1/activities/${a.id}/complete`, {}), 'Activity already completed');
    const b = await create({ type: 'task', title: 'Y' });
    await call('PUT', `/v1/activities/${b.id}`, { status: 'cancelled' });
    expectRefused(await call('PUT', `/v1/activities/${b.id}/complete`, {}), 'Cannot complete cancelled activity');
  });

  test('when the activity is unknown, then 404 Activity not found', async () => {
    expectNotFound(
      await call('PUT', '/v1/activities/act_01jd3k0000000000000000000/complete', {}),
      'Activity not found',
    );
  });
});

describe('DELETE /v1/activities/{id}', () => {
  test('when pending, in progress or cancelled, then it is removed: deleted = true, then 404', async () => {
    for (const status of [null, 'in_progress', 'cancelled']) {
      const a = await create({ type: 'task', title: 'Apagar' });
      if (status) await call('PUT', `/v1/activities/${a.id}`, { status });
      const res = await call('DELETE', `/v1/activities/${a.id}`);
      expect(res.statusCode).toBe(200);
      expect(res.json().data).toEqual({ id: a.id, deleted: true });
      expectNotFound(await call('GET', `/v1/activities/${a.id}`), 'Activity not found');
    }
  });

  test('when completed, then 422 Cannot delete completed activity and it stays', async () => {
    const a = await create({ type: 'task', title: 'Feita' });
    await call('PUT', `/v1/activities/${a.id}/complete`, {});
    const e = expectRefused(await call('DELETE', `/v1/activities/${a.id}`), 'Cannot delete completed activity');
    expect(e.details).toEqual({ reason: 'cannot_delete_completed_activity' });
    expect((await call('GET', `/v1/activities/${a.id}`)).statusCode).toBe(200);
  });

  test('when a DELETE is retried after its first attempt stored the tombstone and then failed, then the retry publishes nothing new: one activity.deleted in all', async () => {
    const published: DomainEvent[] = [];
    const relay: { to?: OutboxRelay } = {};
    const own = await startActivities({
      relay: { kick: (collection, id, events) => relay.to?.kick(collection, id, events) },
    });
    relay.to = new OutboxRelay({
      db: own.db,
      collections: ['activities', TOMBSTONES],
      publisher: { publish: async (e) => void published.push(e) },
      logger: createLogger('test', 'silent'),
      intervalMs: 50,
      scanGraceMs: 0,
    });
    relay.to.start();
    let first: DomainEvent | undefined;
    try {
      const a = (
        await own.call(t, {
          method: 'POST',
          url: '/v1/activities',
          payload: { type: 'task', title: 'Apagar duas vezes' },
        })
      ).json().data;
      // What the first attempt left when the store failed between its two writes: its tombstone (with its
      // activity.deleted), the activity still there; the client got a 503 and retries.
      first = newEvent('activity.deleted', t.teamId, { id: a.id, case_id: null }, null, t.userId);
      const now = new Date();
      await own.db.collection(TOMBSTONES).insertOne({
        _id: a.id as never,
        team_id: t.teamId,
        deleted_at: now,
        deleted_day: bucketOf(now, DAY),
        ...outboxOnInsert([first]),
      });

      const res = await own.call(t, { method: 'DELETE', url: `/v1/activities/${a.id}` });
      expect(res.json().data).toEqual({ id: a.id, deleted: true });
      expect((await own.call(t, { method: 'GET', url: `/v1/activities/${a.id}` })).statusCode).toBe(404);
    } finally {
      await relay.to.stop();
      // Everything still stored anywhere goes out too: what is published is all there is.
      await relay.to.runOnce();
      await own.close();
    }
    const deleted = published.filter((e) => e.type === 'activity.deleted');
    expect(deleted.map((e) => e.id)).toEqual([first.id]);
    expect(published.filter((e) => e.type === 'activity.created')).toHaveLength(1);
  }, 20_000);

  test("when a deleted activity's tombstone is a day old and its events went out, then the purge removes it; younger or still pending ones stay", async () => {
    const a = await create({ type: 'task', title: 'Lápide' });
    expect((await call('DELETE', `/v1/activities/${a.id}`)).statusCode).toBe(200);
    const tombstones = sut.db.collection<{ _id: string; deleted_at: Date; outbox_pending?: boolean }>(TOMBSTONES);
    expect(await tombstones.findOne({ _id: a.id })).toMatchObject({ deleted_at: expect.any(Date) });
    const dayAgo = new Date(Date.now() - 25 * 3600_000);
    await tombstones.insertMany([
      { _id: 'act_old_drained', deleted_at: dayAgo },
      { _id: 'act_old_pending', deleted_at: dayAgo, outbox_pending: true },
    ]);
    const repository = new ActivitiesRepository(sut.db, { kick: () => {} });
    expect(await repository.purgeTombstones(new Date(Date.now() - 24 * 3600_000))).toBe(1);
    expect(
      (await tombstones.find({ _id: { $in: [a.id, 'act_old_drained', 'act_old_pending'] } }).toArray())
        .map((t) => t._id)
        .sort(),
    ).toEqual([a.id, 'act_old_pending'].sort());
  });

  test('when the purge has run before, then tombstones go by the day they were deleted: a drained one of a past day goes, a pending one stays until drained', async () => {
    const repository = new ActivitiesRepository(sut.db, { kick: () => {} });
    const tombstones = sut.db.collection<{
      _id: string;
      deleted_at: Date;
      deleted_day: number;
      outbox_pending?: boolean;
    }>(TOMBSTONES);
    // Every older tombstone drained: this first run takes them all and stores the cursor.
    await tombstones.updateMany({}, { $set: { outbox_pending: false } });
    await repository.purgeTombstones(new Date(Date.now() - DAY));
    expect(
      await sut.db.collection<{ _id: string }>('sweep_cursors').findOne({ _id: `purge:${TOMBSTONES}:deleted_day` }),
    ).not.toBeNull();
    const a = await create({ type: 'task', title: 'Lápide do dia' });
    expect((await call('DELETE', `/v1/activities/${a.id}`)).statusCode).toBe(200);
    const stone = await tombstones.findOne({ _id: a.id });
    expect(stone).toMatchObject({ deleted_day: Math.floor(stone!.deleted_at.getTime() / DAY), outbox_pending: true }); // no relay here: its events stay pending
    const inThreeDays = Date.now() + 3 * DAY;

    await repository.purgeTombstones(new Date(inThreeDays));
    expect(await tombstones.findOne({ _id: a.id })).not.toBeNull();
    await tombstones.updateOne({ _id: a.id }, { $set: { outbox_pending: false } }); // as the relay leaves it once they went out
    expect(await repository.purgeTombstones(new Date(inThreeDays))).toBeGreaterThanOrEqual(1);
    expect(await tombstones.findOne({ _id: a.id })).toBeNull();
  });

  test("when unknown or another team's, then 404 Activity not found", async () => {
    const a = await create({ type: 'task', title: 'Minha' });
    expectNotFound(await call('DELETE', `/v1/activities/${a.id}`, undefined, other), 'Activity not found');
    expectNotFound(await call('DELETE', '/v1/activities/act_01jd3k0000000000000000000'), 'Activity not found');
  });
});
