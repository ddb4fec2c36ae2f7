// The services cases asks (clients, activities) answering wrongly: a malformed or
// unexpected answer is a 503 in the envelope, like no answer at all.
import { ServiceClient } from '@lpm/shared/upstream/service-client';
import { startScriptedService, type ScriptedService } from '@lpm/test-kit/scripted-service';
import { expectError } from '@lpm/test-kit/api';
import { expectNotFound } from '@lpm/test-kit/error-answers';
import { ActivitiesService } from '../src/upstream/activities-service.ts';
import { ClientsService } from '@lpm/shared/upstream/clients-service';
import { INTERNAL_TOKEN } from '@lpm/test-kit/service-under-test';
import { identity } from '@lpm/test-kit/teams';
import { startCases, type CasesUnderTest } from './helper.ts';

let clients: ScriptedService;
let activities: ScriptedService;
let sut: CasesUnderTest;
const who = identity();
const CLIENT = 'cli_01jd3k00000000000000000000';

beforeAll(async () => {
  [clients, activities] = await Promise.all([startScriptedService(), startScriptedService()]);
  const client = (name: string, baseUrl: string) =>
    new ServiceClient({ name, baseUrl, internalToken: INTERNAL_TOKEN, timeoutMs: 2000 });
  sut = await startCases({
    clients: new ClientsService(client('clients', clients.url)),
    activities: new ActivitiesService(client('activities', activities.url)),
  });
});

afterAll(async () => {
  await sut.close();
  await Promise.all([clients.close(), activities.close()]);
});

const createWithClient = () =>
  sut.call(who, { method: 'POST', url: '/v1/cases', payload: { title: 'Vínculo', client_id: CLIENT } });

describe('the clients service', () => {
  test('when it answers a client, then the case is created with it', async () => {
    clients.answer(200, {
      data: {
        id: CLIENT,
        name: 'Ana',
        type: 'PF',
        email: null,
        phone: null,
        status: 'active',
        updated_at: new Date().toISOString(),
      },
    });
    const res = await createWithClient();
    expect(res.statusCode).toBe(201);
    expect(res.json().data.client_id).toBe(CLIENT);
    expect(clients.requests.at(-1)).toEqual({ method: 'GET', url: `/internal/clients/${CLIENT}` });
  });

  test('when it answers 404, then 404 Client not found', async () => {
    clients.answer(404, { success: false, error: { code: 'NOT_FOUND', message: 'Client not found', details: {} } });
    expectNotFound(await createWithClient(), 'Client not found');
  });

  test.each([
    ['data of the wrong shape', 200, { data: { id: 1 } }],
    ['no data', 200, { success: true }],
    ['a body that is not JSON', 200, '<html>oops</html>'],
    ['an unexpected status', 409, { success: false }],
    ['a server error', 500, { success: false }],
  ])('when it answers %s, then 503 The clients service is unavailable', async (_what, status, body) => {
    clients.answer(status, body);
    expectError(await createWithClient(), 503, 'SERVICE_UNAVAILABLE', 'The clients service is unavailable');
  });
});

describe('the activities service', () => {
  let caseId: string;
  beforeAll(async () => {
    caseId = (await sut.call(who, { method: 'POST', url: '/v1/cases', payload: { title: 'Com atividades' } })).json()
      .data.id;
  });
  const listActivities = () => sut.call(who, { method: 'GET', url: `/v1/cases/${caseId}/activities?limit=5` });

  test('when it answers a page, then the case lists it', async () => {
    const item = {
      id: 'act_1',
      type: 'tarefa',
      title: 'Ligar',
      status: 'pending',
      priority: 'media',
      due_date: null,
      completed_at: null,
      created_at: new Date().toISOString(),
    };
    activities.answer(200, { success: true, data: [item], pagination: { page: 1, limit: 5, total: 1, pages: 1 } });
    const res = await listActivities();
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ success: true, data: [item], pagination: { page: 1, limit: 5, total: 1, pages: 1 } });
  });

  test.each([
    ['data that is not a list', { data: 'x', pagination: { total: 1 } }],
    ['no total', { data: [] }],
  ])('when it answers %s, then 503 The activities service is unavailable', async (_what, body) => {
    activities.answer(200, body);
    expectError(await listActivities(), 503, 'SERVICE_UNAVAILABLE', 'The activities service is unavailable');
  });
});
