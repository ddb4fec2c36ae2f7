// Every Activities endpoint in process: the app on its
// own database, the cases, clients, deals and users around it faked.
import { newEvent, type DomainEvent } from '@lpm/shared/events';
import type { Identity } from '@lpm/shared/identity';
import { createLogger } from '@lpm/shared/logger';
import { outboxOnInsert } from '@lpm/shared/outbox/fields';
import { OutboxRelay } from '@lpm/shared/outbox/relay';
import { bucketOf } from '@lpm/shared/store/markers';
import { DOCUMENT_LOCK_MS, LOCKS_COLLECTION, lockKey } from '@lpm/shared/store/lock';
import { expectError } from '@lpm/test-kit/api';
import { ActivitiesRepository, TOMBSTONES } from '../src/data/activities-repository.ts';
import { day, identity } from '@lpm/test-kit/teams';
import { startActivities, type ActivitiesUnderTest } from './helper.ts';

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const ZONE = 'America/Sao_Paulo';
const DAY = 86_400_000;

let sut: ActivitiesUnderTest;
let t: Identity;
let other: Identity;

const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown, who = t) => sut.call(who, { method, url, payload: payload as never });
const create = async (body: Record<string, unknown>, who = t) => {
  const res = await call('POST', '/v1/activities', body, who);
  expect(res.statusCode).toBe(201);
  return res.json().data;
};

beforeAll(async () => {
  sut = await startActivities();
  t = identity(ZONE);
  other = identity(ZONE);
});

afterAll(async () => {
  await sut?.close();
});

describe('POST /v1/activities', () => {
  test('when only type and title are sent, then 201 returns it pending, media, with flat links', async () => {
    const res = await call('POST', '/v1/activities', { type: 'task', title: 'Protocolar petição' });
    expect(res.statusCode).toBe(201);
    expect(res.json().data).toEqual({
      id: expect.stringMatching(/^act_[0-9a-z]{26}$/),
      type: 'task',
      title: 'Protocolar petição',
      description: null,
      status: 'pending',
      priority: 'media',
      due_date: null,
      due_time: null,
      case_id: null,
      client_id: null,
      deal_id: null,
      assigned_to: null,
      created_by: t.userId,
      deadline_rule: null,
      deadline: null,
      reminder: null,
      recurrence: null,
      metadata: {},
      completed_at: null,
      completion_notes: null,
      created_at: expect.stringMatching(ISO_MS),
      updated_at: expect.stringMatching(ISO_MS),
    });
  });

  test('when every field is sent, then they are stored and the reminder keeps its channels', async () => {
    const k = sut.world.addCase(t.teamId, 'Cobrança', '0001-22');
    const c = sut.world.addClient(t.teamId, 'Padaria São José');
    const d = sut.world.addDeal(t.teamId);
    const u = sut.world.addUser(t.teamId, 'Bia', 'bia@x.adv.br');
    const body = {
      type: 'deadline',
      title: 'Contestação',
      description: 'Prazo de 15 dias',
      priority: 'alta',
      due_date: '2027-03-10',
      due_time: '14:30',
      case_id: k.id,
      client_id: c.id,
      deal_id: d,
      assigned_to: u.id,
      reminder: { enabled: true, before_minutes: 60, channels: ['email', 'push'] },
      recurrence: { frequency: 'weekly', interval: 2, count: 4 },
      metadata: { vara: '2ª' },
    };
    const created = await create(body);
    expect(created).toMatchObject({ ...body, status: 'pending', recurrence: { frequency: 'weekly', interval: 2, count: 4, until: null } });

    const detail = (await call('GET', `/v1/activities/${created.id}`)).json().data;
    expect(detail).toMatchObject({
      case: { id: k.id, title: 'Cobrança', number: '0001-22' },
      client: { id: c.id, name: 'Padaria São José' },
      deal_id: d,
      assigned_to: { id: u.id, name: 'Bia', email: 'bia@x.adv.br' },
      created_by: { id: t.userId, name: null },
      completed_by: null,
    });
  });

  test('when a reminder is sent without channels, then it is stored enabled with e-mail', async () => {
    const created = await create({ type: 'call', title: 'Ligar', reminder: { before_minutes: 15 } });
    expect(created.reminder).toEqual({ enabled: true, before_minutes: 15, channels: ['email'] });
  });

  test('when type or title is missing, then 400 names the field', async () => {
    expect(expectError(await call('POST', '/v1/activities', { title: 'X' }), 400, 'VALIDATION_ERROR', 'type is required').details).toMatchObject({ field: 'type', type: 'required' });
    expectError(await call('POST', '/v1/activities', { type: 'task' }), 400, 'VALIDATION_ERROR', 'title is required');
  });

  test('when type or priority is outside its list, then 400 Invalid type / Invalid priority', async () => {
    expectError(await call('POST', '/v1/activities', { type: 'lunch', title: 'X' }), 400, 'VALIDATION_ERROR', 'Invalid type');
    expectError(await call('POST', '/v1/activities', { type: 'task', title: 'X', priority: 'urgente' }), 400, 'VALIDATION_ERROR', 'Invalid priority');
  });

  test('when due_date or due_time is malformed, then 400 with the field message', async () => {
    expectError(await call('POST', '/v1/activities', { type: 'task', title: 'X', due_date: '2027-02-30' }), 400, 'VALIDATION_ERROR', 'due_date must be a date (YYYY-MM-DD)');
    expectError(await call('POST', '/v1/activities', { type: 'task', title: 'X', due_time: '24:00' }), 400, 'VALIDATION_ERROR', 'due_time must be a time (HH:mm)');
  });

  test('when status or an unknown field is sent on create, then 400 Unknown field', async () => {
    expectError(await call('POST', '/v1/activities', { type: 'task', title: 'X', status: 'completed' }), 400, 'VALIDATION_ERROR', 'Unknown field: status');
    expectError(await call('POST', '/v1/activities', { type: 'task', title: 'X', days_overdue: 1 }), 400, 'VALIDATION_ERROR', 'Unknown field: days_overdue');
  });

  test('when a link is unknown, malformed or another team\'s, then 404 with its message', async () => {
    const foreignCase = sut.world.addCase(other.teamId, 'Alheio');
    for (const case_id of [foreignCase.id, 'case_01jd3k0000000000000000000', 'nope']) {
      expectError(await call('POST', '/v1/activities', { type: 'task', title: 'X', case_id }), 404, 'NOT_FOUND', 'Case not found');
    }
    expectError(await call('POST', '/v1/activities', { type: 'task', title: 'X', client_id: sut.world.addClient(other.teamId, 'Y').id }), 404, 'NOT_FOUND', 'Client not found');
    expectError(await call('POST', '/v1/activities', { type: 'task', title: 'X', deal_id: sut.world.addDeal(other.teamId) }), 404, 'NOT_FOUND', 'Deal not found');
    expectError(await call('POST', '/v1/activities', { type: 'task', title: 'X', assigned_to: sut.world.addUser(other.teamId, 'Z', 'z@z.z').id }), 404, 'NOT_FOUND', 'User not found');
  });
});

describe('GET /v1/activities/{id}', () => {
  test('when the id is unknown, of another team or of another kind, then 404 Activity not found', async () => {
    const mine = await create({ type: 'note', title: 'Nota' });
    expectError(await call('GET', '/v1/activities/act_01jd3k0000000000000000000'), 404, 'NOT_FOUND', 'Activity not found');
    expectError(await call('GET', `/v1/activities/${mine.id}`, undefined, other), 404, 'NOT_FOUND', 'Activity not found');
    expectError(await call('GET', '/v1/activities/case_01jd3k0000000000000000000'), 404, 'NOT_FOUND', 'Activity not found');
  });
});

describe('PUT /v1/activities/{id}', () => {
  test('when fields change, then the response holds id, the fields sent and updated_at', async () => {
    const a = await create({ type: 'task', title: 'Rascunho' });
    const res = await call('PUT', `/v1/activities/${a.id}`, { title: ' Final ', due_date: '2027-05-01', status: 'in_progress' });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual({ id: a.id, title: 'Final', due_date: '2027-05-01', status: 'in_progress', updated_at: expect.stringMatching(ISO_MS) });
    expect((await call('GET', `/v1/activities/${a.id}`)).json().data).toMatchObject({ title: 'Final', status: 'in_progress', due_date: '2027-05-01' });
  });

  test('when the body is empty, then 400 No fields to update', async () => {
    const a = await create({ type: 'task', title: 'X' });
    expectError(await call('PUT', `/v1/activities/${a.id}`, {}), 400, 'VALIDATION_ERROR', 'No fields to update');
  });

  test('when status is outside the list, then 400 Invalid status', async () => {
    const a = await create({ type: 'task', title: 'X' });
    expectError(await call('PUT', `/v1/activities/${a.id}`, { status: 'done' }), 400, 'VALIDATION_ERROR', 'Invalid status');
  });

  test('when a move is not allowed, then 422 Invalid status transition; cancelled is final, completed may only be cancelled', async () => {
    const a = await create({ type: 'task', title: 'X' });
    expect((await call('PUT', `/v1/activities/${a.id}`, { status: 'completed' })).json().data).toMatchObject({
      status: 'completed',
      completed_at: expect.stringMatching(ISO_MS),
      completed_by: { id: t.userId, name: null },
    });
    const e = expectError(await call('PUT', `/v1/activities/${a.id}`, { status: 'pending' }), 422, 'VALIDATION_ERROR', 'Invalid status transition');
    expect(e.details).toEqual({ reason: 'invalid_status_transition' });
    expect((await call('PUT', `/v1/activities/${a.id}`, { status: 'cancelled' })).statusCode).toBe(200);
    for (const status of ['pending', 'in_progress', 'completed']) {
      expectError(await call('PUT', `/v1/activities/${a.id}`, { status }), 422, 'VALIDATION_ERROR', 'Invalid status transition');
    }
  });

  test('when a link is set it is checked; null unlinks', async () => {
    const a = await create({ type: 'task', title: 'X' });
    expectError(await call('PUT', `/v1/activities/${a.id}`, { case_id: 'case_01jd3k0000000000000000000' }), 404, 'NOT_FOUND', 'Case not found');
    const k = sut.world.addCase(t.teamId, 'Vinculado');
    expect((await call('PUT', `/v1/activities/${a.id}`, { case_id: k.id })).json().data.case_id).toBe(k.id);
    expect((await call('PUT', `/v1/activities/${a.id}`, { case_id: null })).json().data.case_id).toBeNull();
    expect((await call('GET', `/v1/activities/${a.id}`)).json().data.case).toBeNull();
  });

  test('when the activity is unknown, then 404 Activity not found', async () => {
    expectError(await call('PUT', '/v1/activities/act_01jd3k0000000000000000000', { title: 'X' }), 404, 'NOT_FOUND', 'Activity not found');
  });
});

describe('PUT /v1/activities/{id}/complete', () => {
  test('when a pending activity is completed, then status, completed_at, completed_by and notes come back', async () => {
    const a = await create({ type: 'meeting', title: 'Audiência' });
    const res = await call('PUT', `/v1/activities/${a.id}/complete`, { notes: 'Acordo fechado' });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual({ id: a.id, status: 'completed', completed_at: expect.stringMatching(ISO_MS), completed_by: { id: t.userId, name: null }, completion_notes: 'Acordo fechado' });
  });

  test('when no body is sent, then it is completed without notes', async () => {
    const a = await create({ type: 'task', title: 'Sem notas' });
    const res = await sut.call(t, { method: 'PUT', url: `/v1/activities/${a.id}/complete`, headers: { 'content-type': 'application/json' } });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.completion_notes).toBeNull();
  });

  test('when already completed, then 422 Activity already completed; when cancelled, 422 Cannot complete cancelled activity', async () => {
    const a = await create({ type: 'task', title: 'X' });
    await call('PUT', `/v1/activities/${a.id}/complete`, {});
    expectError(await call('PUT', `/v1/activities/${a.id}/complete`, {}), 422, 'VALIDATION_ERROR', 'Activity already completed');
    const b = await create({ type: 'task', title: 'Y' });
    await call('PUT', `/v1/activities/${b.id}`, { status: 'cancelled' });
    expectError(await call('PUT', `/v1/activities/${b.id}/complete`, {}), 422, 'VALIDATION_ERROR', 'Cannot complete cancelled activity');
  });

  test('when the activity is unknown, then 404 Activity not found', async () => {
    expectError(await call('PUT', '/v1/activities/act_01jd3k0000000000000000000/complete', {}), 404, 'NOT_FOUND', 'Activity not found');
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
      expectError(await call('GET', `/v1/activities/${a.id}`), 404, 'NOT_FOUND', 'Activity not found');
    }
  });

  test('when completed, then 422 Cannot delete completed activity and it stays', async () => {
    const a = await create({ type: 'task', title: 'Feita' });
    await call('PUT', `/v1/activities/${a.id}/complete`, {});
    const e = expectError(await call('DELETE', `/v1/activities/${a.id}`), 422, 'VALIDATION_ERROR', 'Cannot delete completed activity');
    expect(e.details).toEqual({ reason: 'cannot_delete_completed_activity' });
    expect((await call('GET', `/v1/activities/${a.id}`)).statusCode).toBe(200);
  });

  test('when a DELETE is retried after its first attempt stored the tombstone and then failed, then the retry publishes nothing new: one activity.deleted in all', async () => {
    const published: DomainEvent[] = [];
    const relay: { to?: OutboxRelay } = {};
    const own = await startActivities({ relay: { kick: (collection, id, events) => relay.to?.kick(collection, id, events) } });
    relay.to = new OutboxRelay({ db: own.db, collections: ['activities', TOMBSTONES], publisher: { publish: async (e) => void published.push(e) }, logger: createLogger('test', 'silent'), intervalMs: 50, scanGraceMs: 0 });
    relay.to.start();
    let first: DomainEvent | undefined;
    try {
      const a = (await own.call(t, { method: 'POST', url: '/v1/activities', payload: { type: 'task', title: 'Apagar duas vezes' } })).json().data;
      // What the first attempt left when the store failed between its two writes: its tombstone (with its
      // activity.deleted), the activity still there; the client got a 503 and retries.
      first = newEvent('activity.deleted', t.teamId, { id: a.id, case_id: null }, null, t.userId);
      const now = new Date();
      await own.db.collection(TOMBSTONES).insertOne({ _id: a.id as never, team_id: t.teamId, deleted_at: now, deleted_day: bucketOf(now, DAY), ...outboxOnInsert([first]) });

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

  test('when a deleted activity\'s tombstone is a day old and its events went out, then the purge removes it; younger or still pending ones stay', async () => {
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
    expect((await tombstones.find({ _id: { $in: [a.id, 'act_old_drained', 'act_old_pending'] } }).toArray()).map((t) => t._id).sort()).toEqual([a.id, 'act_old_pending'].sort());
  });

  test('when the purge has run before, then tombstones go by the day they were deleted: a drained one of a past day goes, a pending one stays until drained', async () => {
    const repository = new ActivitiesRepository(sut.db, { kick: () => {} });
    const tombstones = sut.db.collection<{ _id: string; deleted_at: Date; deleted_day: number; outbox_pending?: boolean }>(TOMBSTONES);
    // Every older tombstone drained: this first run takes them all and stores the cursor.
    await tombstones.updateMany({}, { $set: { outbox_pending: false } });
    await repository.purgeTombstones(new Date(Date.now() - DAY));
    expect(await sut.db.collection<{ _id: string }>('sweep_cursors').findOne({ _id: `purge:${TOMBSTONES}:deleted_day` })).not.toBeNull();
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

  test('when unknown or another team\'s, then 404 Activity not found', async () => {
    const a = await create({ type: 'task', title: 'Minha' });
    expectError(await call('DELETE', `/v1/activities/${a.id}`, undefined, other), 404, 'NOT_FOUND', 'Activity not found');
    expectError(await call('DELETE', '/v1/activities/act_01jd3k0000000000000000000'), 404, 'NOT_FOUND', 'Activity not found');
  });
});

describe('GET /v1/activities', () => {
  const team = identity(ZONE);
  const ids: Record<string, string> = {};
  let caseId: string;
  let userId: string;

  beforeAll(async () => {
    caseId = sut.world.addCase(team.teamId, 'Ação', '123').id;
    userId = sut.world.addUser(team.teamId, 'Ana', 'ana@x.br').id;
    ids.none = (await create({ type: 'note', title: 'Sem prazo', priority: 'baixa' }, team)).id;
    ids.late = (await create({ type: 'deadline', title: 'Atrasada', due_date: day(-2), priority: 'alta', case_id: caseId }, team)).id;
    ids.today = (await create({ type: 'task', title: 'Hoje', due_date: day(0), due_time: '00:00', assigned_to: userId }, team)).id;
    ids.later = (await create({ type: 'meeting', title: 'Depois', due_date: day(10) }, team)).id;
    ids.done = (await create({ type: 'task', title: 'Feita', due_date: day(-5) }, team)).id;
    await call('PUT', `/v1/activities/${ids.done}/complete`, {}, team);
  });

  const list = async (qs = '') => {
    const res = await call('GET', `/v1/activities${qs}`, undefined, team);
    expect(res.statusCode).toBe(200);
    return res.json();
  };

  test('when listed with no parameters, then by due date ascending, no due date last, with the list item shape', async () => {
    const body = await list();
    expect(body.data.map((a: { id: string }) => a.id)).toEqual([ids.done, ids.late, ids.today, ids.later, ids.none]);
    expect(body.pagination).toEqual({ page: 1, limit: 20, total: 5, pages: 1 });
    expect(body.data[1]).toEqual({
      id: ids.late,
      type: 'deadline',
      title: 'Atrasada',
      description: null,
      status: 'pending',
      priority: 'alta',
      due_date: day(-2),
      case: { id: caseId, title: 'Ação', number: '123' },
      assigned_to: null,
      created_at: expect.stringMatching(ISO_MS),
    });
    expect(body.data[2].assigned_to).toEqual({ id: userId, name: 'Ana' });
  });

  test('when sorted descending by due date, then still no due date last; by priority, by meaning', async () => {
    expect((await list('?sort=-due_date')).data.map((a: { id: string }) => a.id)).toEqual([ids.later, ids.today, ids.late, ids.done, ids.none]);
    const byPriority = (await list('?sort=-priority')).data.map((a: { priority: string }) => a.priority);
    expect(byPriority[0]).toBe('alta');
    expect(byPriority.at(-1)).toBe('baixa');
    expectError(await call('GET', '/v1/activities?sort=title', undefined, team), 400, 'VALIDATION_ERROR', 'Invalid sort field');
  });

  test('when filtered, then only matching activities come back', async () => {
    const idsOf = async (qs: string) => (await list(qs)).data.map((a: { id: string }) => a.id).sort();
    expect(await idsOf('?type=meeting')).toEqual([ids.later]);
    expect(await idsOf('?status=completed')).toEqual([ids.done]);
    expect(await idsOf('?priority=alta')).toEqual([ids.late]);
    expect(await idsOf(`?case_id=${caseId}`)).toEqual([ids.late]);
    expect(await idsOf(`?assigned_to=${userId}`)).toEqual([ids.today]);
    expect(await idsOf(`?from=${day(-2)}&to=${day(0)}`)).toEqual([ids.late, ids.today].sort());
    expect(await idsOf('?overdue=true')).toEqual([ids.late, ids.today].sort());
  });

  test('when a filter is outside its list, then 400 with its message', async () => {
    expectError(await call('GET', '/v1/activities?type=x', undefined, team), 400, 'VALIDATION_ERROR', 'Invalid type');
    expectError(await call('GET', '/v1/activities?status=x', undefined, team), 400, 'VALIDATION_ERROR', 'Invalid status');
    expectError(await call('GET', '/v1/activities?priority=x', undefined, team), 400, 'VALIDATION_ERROR', 'Invalid priority');
    expectError(await call('GET', '/v1/activities?limit=101', undefined, team), 400, 'VALIDATION_ERROR', 'limit must be an integer from 1 to 100');
  });

  test('when paged, then page 2 holds the rest and a page past the end is empty with the true total', async () => {
    const p2 = await list('?limit=2&page=2');
    expect(p2.data.map((a: { id: string }) => a.id)).toEqual([ids.today, ids.later]);
    const past = await list('?limit=2&page=9');
    expect(past.data).toEqual([]);
    expect(past.pagination).toEqual({ page: 9, limit: 2, total: 5, pages: 3 });
  });

  test('when the overdue list is asked, then open activities past their due moment with days_overdue in calendar days', async () => {
    const res = await call('GET', '/v1/activities/overdue', undefined, team);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.data).toEqual([
      { id: ids.late, type: 'deadline', title: 'Atrasada', status: 'pending', priority: 'alta', due_date: day(-2), days_overdue: 2, case: { id: caseId, title: 'Ação' } },
      { id: ids.today, type: 'task', title: 'Hoje', status: 'pending', priority: 'media', due_date: day(0), days_overdue: 0, case: null },
    ]);
    expect(body.pagination).toEqual({ page: 1, limit: 20, total: 2, pages: 1 });
  });
});

describe('recurrence', () => {
  const seriesOf = async (title: string) =>
    (await call('GET', '/v1/activities?limit=100')).json().data.filter((a: { title: string }) => a.title === title);

  test('when a daily series with count 3 is completed again and again, then exactly three occurrences exist', async () => {
    let a = await create({ type: 'task', title: 'Diária', due_date: '2027-01-10', recurrence: { frequency: 'daily', count: 3 } });
    for (let i = 0; i < 3; i++) {
      await call('PUT', `/v1/activities/${a.id}/complete`, {});
      const open = (await seriesOf('Diária')).filter((x: { status: string }) => x.status === 'pending');
      a = open[0];
    }
    const all = await seriesOf('Diária');
    expect(all.map((x: { due_date: string; status: string }) => [x.due_date, x.status])).toEqual([
      ['2027-01-10', 'completed'],
      ['2027-01-11', 'completed'],
      ['2027-01-12', 'completed'],
    ]);
  });

  test('when a monthly series starts on 2027-01-31, then the next fall on 2027-02-28 and 2027-03-31, pending with the same fields', async () => {
    const first = await create({ type: 'deadline', title: 'Mensal', priority: 'alta', due_date: '2027-01-31', due_time: '09:00', recurrence: { frequency: 'monthly' } });
    await call('PUT', `/v1/activities/${first.id}/complete`, {});
    const second = (await seriesOf('Mensal')).find((x: { status: string }) => x.status === 'pending');
    expect(second).toMatchObject({ due_date: '2027-02-28', status: 'pending', priority: 'alta', type: 'deadline' });
    expect((await call('GET', `/v1/activities/${second.id}`)).json().data).toMatchObject({ due_time: '09:00', recurrence: { frequency: 'monthly', interval: 1 } });
    await call('PUT', `/v1/activities/${second.id}`, { status: 'completed' });
    const third = (await seriesOf('Mensal')).find((x: { status: string }) => x.status === 'pending');
    expect(third.due_date).toBe('2027-03-31');
  });

  /** Another writer takes the activity's lock slots, well past a completion's lock wait, until `release`. */
  const holdLock = async (id: string) => {
    const locks = sut.db.collection<{ _id: string; owner: string; expires_at: Date }>(LOCKS_COLLECTION);
    const slot = Math.floor(Date.now() / DOCUMENT_LOCK_MS);
    await locks.insertMany(Array.from({ length: 4 }, (_, i) => ({ _id: `${lockKey('activities', id)}:${slot + i}`, owner: 'test', expires_at: new Date((slot + i + 1) * DOCUMENT_LOCK_MS) })));
    return { release: () => locks.deleteMany({ owner: 'test' }) };
  };
  const dueAndStatus = async (title: string) => (await seriesOf(title)).map((x: { due_date: string; status: string }) => [x.due_date, x.status]);

  test('when a completion fails with 503 (the record busy) and is never retried, then the series does not advance; a retry advances it once', async () => {
    const a = await create({ type: 'task', title: 'Falha no meio', due_date: '2027-02-01', recurrence: { frequency: 'daily', count: 5 } });
    const lock = await holdLock(a.id);
    try {
      expectError(await call('PUT', `/v1/activities/${a.id}/complete`, {}), 503, 'SERVICE_UNAVAILABLE', 'The record is busy; retry');
      expectError(await call('PUT', `/v1/activities/${a.id}`, { status: 'completed' }), 503, 'SERVICE_UNAVAILABLE', 'The record is busy; retry');
    } finally {
      await lock.release();
    }
    expect(await dueAndStatus('Falha no meio')).toEqual([['2027-02-01', 'pending']]);
    expect((await call('PUT', `/v1/activities/${a.id}/complete`, {})).statusCode).toBe(200);
    expectError(await call('PUT', `/v1/activities/${a.id}/complete`, {}), 422, 'VALIDATION_ERROR', 'Activity already completed');
    expect(await dueAndStatus('Falha no meio')).toEqual([
      ['2027-02-01', 'completed'],
      ['2027-02-02', 'pending'],
    ]);
  }, 30_000);

  test('when a completion loses to a cancel made while it waited for the record, then 422 and the series does not advance', async () => {
    const a = await create({ type: 'task', title: 'Cancelada antes', due_date: '2027-03-01', recurrence: { frequency: 'weekly' } });
    const b = await create({ type: 'task', title: 'Cancelada antes por PUT', due_date: '2027-03-01', recurrence: { frequency: 'weekly' } });
    for (const [id, complete, refusal] of [
      [a.id, () => call('PUT', `/v1/activities/${a.id}/complete`, {}), 'Cannot complete cancelled activity'],
      [b.id, () => call('PUT', `/v1/activities/${b.id}`, { status: 'completed' }), 'Invalid status transition'],
    ] as const) {
      const lock = await holdLock(id);
      const completing = complete();
      // The writer holding the lock cancels the activity, then lets the completion in.
      await new Promise((r) => setTimeout(r, 1000));
      await sut.db.collection('activities').updateOne({ _id: id as never }, { $set: { status: 'cancelled', open: 0 }, $inc: { version: 1 } });
      await lock.release();
      expectError(await completing, 422, 'VALIDATION_ERROR', refusal);
    }
    expect(await dueAndStatus('Cancelada antes')).toEqual([['2027-03-01', 'cancelled']]);
    expect(await dueAndStatus('Cancelada antes por PUT')).toEqual([['2027-03-01', 'cancelled']]);
  }, 30_000);

  test('when the process dies between the completion and its next occurrence, then the series repair writes that occurrence, once however often it runs', async () => {
    const a = await create({ type: 'task', title: 'Reparo', due_date: '2027-04-01', recurrence: { frequency: 'monthly' } });
    expect((await call('PUT', `/v1/activities/${a.id}/complete`, {})).statusCode).toBe(200);
    const activities = sut.db.collection<Record<string, unknown> & { _id: string }>('activities');
    const made = await activities.findOne({ series_id: a.id, occurrence: 2 }, { projection: { outbox: 0, outbox_pending: 0 } });
    expect(made).toMatchObject({ due_date: '2027-05-01', status: 'pending', occurrence_key: `${a.id}:2` });
    // The state such a death leaves: the completion written with the occurrence it owes, the occurrence not.
    await activities.deleteOne({ _id: made!._id });
    await activities.updateOne({ _id: a.id }, { $set: { next_pending: 1, next_occurrence: made } });
    expect(await dueAndStatus('Reparo')).toEqual([['2027-04-01', 'completed']]);

    await Promise.all([sut.activities.settleOwedOccurrences(), sut.activities.settleOwedOccurrences()]);
    await sut.activities.settleOwedOccurrences();
    expect(await dueAndStatus('Reparo')).toEqual([
      ['2027-04-01', 'completed'],
      ['2027-05-01', 'pending'],
    ]);
    expect((await activities.findOne({ series_id: a.id, occurrence: 2 }))?._id).toBe(made!._id);
    expect(await activities.findOne({ _id: a.id })).toMatchObject({ next_pending: 0, next_occurrence: null });
    // A second occurrence 2, whatever its id, is refused by the store.
    await expect(activities.insertOne({ ...made!, _id: 'act_01jd3k00000000000000000000' })).rejects.toMatchObject({ code: 11000 });
  });

  test('when until is reached, then the series ends', async () => {
    const a = await create({ type: 'task', title: 'Semanal', due_date: '2027-01-01', recurrence: { frequency: 'weekly', until: '2027-01-10' } });
    await call('PUT', `/v1/activities/${a.id}/complete`, {});
    const b = (await seriesOf('Semanal')).find((x: { status: string }) => x.status === 'pending');
    expect(b.due_date).toBe('2027-01-08');
    await call('PUT', `/v1/activities/${b.id}/complete`, {});
    expect((await seriesOf('Semanal')).map((x: { status: string }) => x.status)).toEqual(['completed', 'completed']);
  });
});

describe('internal endpoints', () => {
  test('when cases ask for a case\'s activities and counts, then a page with the case item shape and the counts come back', async () => {
    const team = identity(ZONE);
    const k = sut.world.addCase(team.teamId, 'Contado');
    const d = sut.world.addDeal(team.teamId);
    const a = await create({ type: 'task', title: 'Um', case_id: k.id, deal_id: d, due_date: '2027-01-01' }, team);
    await create({ type: 'task', title: 'Dois', case_id: k.id }, team);
    await call('PUT', `/v1/activities/${a.id}/complete`, {}, team);
    const page = (await call('GET', `/internal/cases/${k.id}/activities?page=1&limit=1`, undefined, team)).json();
    expect(page.pagination).toEqual({ page: 1, limit: 1, total: 2, pages: 2 });
    expect(page.data).toEqual([
      { id: a.id, type: 'task', title: 'Um', status: 'completed', priority: 'media', due_date: '2027-01-01', completed_at: expect.stringMatching(ISO_MS), created_at: expect.stringMatching(ISO_MS) },
    ]);
    expect((await call('GET', `/internal/cases/${k.id}/activities/count`, undefined, team)).json().data).toEqual({ count: 2, open: 1, overdue: 0 });
    expect((await call('GET', `/internal/deals/${d}/activities/count`, undefined, team)).json().data).toEqual({ count: 1, open: 0, overdue: 0 });
    await create({ type: 'call', title: 'Atrasada', deal_id: d, due_date: '2020-01-01' }, team);
    await create({ type: 'call', title: 'Em dia', deal_id: d, due_date: '2099-01-01' }, team);
    expect((await call('GET', `/internal/deals/${d}/activities/count`, undefined, team)).json().data).toEqual({ count: 3, open: 2, overdue: 1 });
    expect((await call('GET', `/internal/deals/${d}/activities/count`, undefined, other)).json().data).toEqual({ count: 0, open: 0, overdue: 0 });
    expect((await call('POST', '/internal/activity-counts', { kind: 'deal', ids: [d, 'deal_x'] }, team)).json().data).toEqual({ [d]: 3, deal_x: 0 });
  });
});
