// The activity endpoints in process, the cases, clients, deals and users around the
// app faked: create, read and update (complete and delete: activities-complete,
// lists: activities-lists, recurrence and internal endpoints: activities-recurrence).
import { expectInvalid, expectNotFound, expectRefused } from '@lpm/test-kit/error-answers';
import { activitiesSuite, call, create, ISO_MS, other, sut, t } from './activities-suite.ts';

activitiesSuite();

/** POST /v1/activities with `body` is refused: 400 VALIDATION_ERROR with `message`. */
const refusedCreate = async (body: object, message: string) =>
  expectInvalid(await call('POST', '/v1/activities', body), message);

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
    expect(created).toMatchObject({
      ...body,
      status: 'pending',
      recurrence: { frequency: 'weekly', interval: 2, count: 4, until: null },
    });

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
    expect((await refusedCreate({ title: 'X' }, 'type is required')).details).toMatchObject({
      field: 'type',
      type: 'required',
    });
    await refusedCreate({ type: 'task' }, 'title is required');
  });

  test('when type or priority is outside its list, then 400 Invalid type / Invalid priority', async () => {
    await refusedCreate({ type: 'lunch', title: 'X' }, 'Invalid type');
    await refusedCreate({ type: 'task', title: 'X', priority: 'urgente' }, 'Invalid priority');
  });

  test('when due_date or due_time is malformed, then 400 with the field message', async () => {
    await refusedCreate({ type: 'task', title: 'X', due_date: '2027-02-30' }, 'due_date must be a date (YYYY-MM-DD)');
    await refusedCreate({ type: 'task', title: 'X', due_time: '24:00' }, 'due_time must be a time (HH:mm)');
  });

  test('when status or an unknown field is sent on create, then 400 Unknown field', async () => {
    await refusedCreate({ type: 'task', title: 'X', status: 'completed' }, 'Unknown field: status');
    await refusedCreate({ type: 'task', title: 'X', days_overdue: 1 }, 'Unknown field: days_overdue');
  });

  test("when a link is unknown, malformed or another team's, then 404 with its message", async () => {
    const foreignCase = sut.world.addCase(other.teamId, 'Alheio');
    for (const case_id of [foreignCase.id, 'case_01jd3k0000000000000000000', 'nope']) {
      expectNotFound(await call('POST', '/v1/activities', { type: 'task', title: 'X', case_id }), 'Case not found');
    }
    expectNotFound(
      await call('POST', '/v1/activities', {
        type: 'task',
        title: 'X',
        client_id: sut.world.addClient(other.teamId, 'Y').id,
      }),
      'Client not found',
    );
    expectNotFound(
      await call('POST', '/v1/activities', { type: 'task', title: 'X', deal_id: sut.world.addDeal(other.teamId) }),
      'Deal not found',
    );
    expectNotFound(
      await call('POST', '/v1/activities', {
        type: 'task',
        title: 'X',
        assigned_to: sut.world.addUser(other.teamId, 'Z', 'z@z.z').id,
      }),
      'User not found',
    );
  });
});

describe('GET /v1/activities/{id}', () => {
  test('when the id is unknown, of another team or of another kind, then 404 Activity not found', async () => {
    const mine = await create({ type: 'note', title: 'Nota' });
    expectNotFound(await call('GET', '/v1/activities/act_01jd3k0000000000000000000'), 'Activity not found');
    expectNotFound(await call('GET', `/v1/activities/${mine.id}`, undefined, other), 'Activity not found');
    expectNotFound(await call('GET', '/v1/activities/case_01jd3k0000000000000000000'), 'Activity not found');
  });
});

describe('PUT /v1/activities/{id}', () => {
  test('when fields change, then the response holds id, the fields sent and updated_at', async () => {
    const a = await create({ type: 'task', title: 'Rascunho' });
    const res = await call('PUT', `/v1/activities/${a.id}`, {
      title: ' Final ',
      due_date: '2027-05-01',
      status: 'in_progress',
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual({
      id: a.id,
      title: 'Final',
      due_date: '2027-05-01',
      status: 'in_progress',
      updated_at: expect.stringMatching(ISO_MS),
    });
    expect((await call('GET', `/v1/activities/${a.id}`)).json().data).toMatchObject({
      title: 'Final',
      status: 'in_progress',
      due_date: '2027-05-01',
    });
  });

  test('when the body is empty, then 400 No fields to update', async () => {
    const a = await create({ type: 'task', title: 'X' });
    expectInvalid(await call('PUT', `/v1/activities/${a.id}`, {}), 'No fields to update');
  });

  test('when status is outside the list, then 400 Invalid status', async () => {
    const a = await create({ type: 'task', title: 'X' });
    expectInvalid(await call('PUT', `/v1/activities/${a.id}`, { status: 'done' }), 'Invalid status');
  });

  test('when a move is not allowed, then 422 Invalid status transition; cancelled is final, completed may only be cancelled', async () => {
    const a = await create({ type: 'task', title: 'X' });
    expect((await call('PUT', `/v1/activities/${a.id}`, { status: 'completed' })).json().data).toMatchObject({
      status: 'completed',
      completed_at: expect.stringMatching(ISO_MS),
      completed_by: { id: t.userId, name: null },
    });
    const e = expectRefused(
      await call('PUT', `/v1/activities/${a.id}`, { status: 'pending' }),
      'Invalid status transition',
    );
    expect(e.details).toEqual({ reason: 'invalid_status_transition' });
    expect((await call('PUT', `/v1/activities/${a.id}`, { status: 'cancelled' })).statusCode).toBe(200);
    for (const status of ['pending', 'in_progress', 'completed']) {
      expectRefused(await call('PUT', `/v1/activities/${a.id}`, { status }), 'Invalid status transition');
    }
  });

  test('when a link is set it is checked; null unlinks', async () => {
    const a = await create({ type: 'task', title: 'X' });
    expectNotFound(
      await call('PUT', `/v1/activities/${a.id}`, { case_id: 'case_01jd3k0000000000000000000' }),
      'Case not found',
    );
    const k = sut.world.addCase(t.teamId, 'Vinculado');
    expect((await call('PUT', `/v1/activities/${a.id}`, { case_id: k.id })).json().data.case_id).toBe(k.id);
    expect((await call('PUT', `/v1/activities/${a.id}`, { case_id: null })).json().data.case_id).toBeNull();
    expect((await call('GET', `/v1/activities/${a.id}`)).json().data.case).toBeNull();
  });

  test('when the activity is unknown, then 404 Activity not found', async () => {
    expectNotFound(
      await call('PUT', '/v1/activities/act_01jd3k0000000000000000000', { title: 'X' }),
      'Activity not found',
    );
  });
});
