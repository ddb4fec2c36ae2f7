// The cases service answering wrongly: a malformed or unexpected answer is a 503
// in the envelope, like no answer at all. The client is made one stored before
// counts were kept (no cases_count), so its reads ask the cases service.
import { ServiceClient } from '@lpm/shared/upstream/service-client';
import { startScriptedService, type ScriptedService } from '@lpm/test-kit/scripted-service';
import { expectError } from '@lpm/test-kit/api';
import { waitFor } from '@lpm/test-kit/wait';
import { ClientCasesService } from '../src/upstream/cases-service.ts';
import { INTERNAL_TOKEN } from '@lpm/test-kit/service-under-test';
import { identity } from '@lpm/test-kit/teams';
import { startClients, type ClientsUnderTest } from './helper.ts';

let cases: ScriptedService;
let sut: ClientsUnderTest;
const who = identity();
let clientId: string;

beforeAll(async () => {
  cases = await startScriptedService();
  sut = await startClients({
    cases: new ClientCasesService(
      new ServiceClient({ name: 'cases', baseUrl: cases.url, internalToken: INTERNAL_TOKEN, timeoutMs: 2000 }),
    ),
  });
  clientId = (await sut.call(who, { method: 'POST', url: '/v1/clients', payload: { type: 'PF', name: 'Ana' } })).json()
    .data.id;
});

afterAll(async () => {
  await sut.close();
  await cases.close();
});

beforeEach(async () => {
  await sut.db
    .collection('clients')
    .updateOne({ _id: clientId } as object, { $unset: { cases_count: '', cases_counted_at: '' } });
});

const getClient = () => sut.call(who, { method: 'GET', url: `/v1/clients/${clientId}` });

test('when it answers the counts, then the client shows its cases_count, keeps it, and the next read does not ask', async () => {
  cases.answer(200, { success: true, data: { [clientId]: 3 } });
  const res = await getClient();
  expect(res.statusCode).toBe(200);
  expect(res.json().data.cases_count).toBe(3);
  expect(cases.requests.at(-1)).toEqual({ method: 'POST', url: '/internal/case-counts' });
  const asked = cases.requests.length;
  cases.answer(200, { success: true, data: { [clientId]: 7 } });
  expect((await getClient()).json().data.cases_count).toBe(3);
  expect(cases.requests.length).toBe(asked);
});

test.each([
  ['counts that are not numbers', 200, { data: { x: 'three' } }],
  ['a list instead of counts', 200, { data: [1] }],
  ['a body that is not JSON', 200, 'not json'],
  ['404', 404, { success: false }],
])('when it answers %s, then 503 The cases service is unavailable', async (_what, status, body) => {
  cases.answer(status, body);
  expectError(await getClient(), 503, 'SERVICE_UNAVAILABLE', 'The cases service is unavailable');
});

test('when the active-cases check answers without `active`, then deactivating is 503 and the client stays active', async () => {
  cases.answer(200, { data: {} });
  expectError(
    await sut.call(who, { method: 'DELETE', url: `/v1/clients/${clientId}` }),
    503,
    'SERVICE_UNAVAILABLE',
    'The cases service is unavailable',
  );
  cases.answer(200, { data: { [clientId]: 0 } });
  expect((await getClient()).json().data.status).toBe('active');
});

test('when the cases service is slow to answer, then no lock is held on the client while it waits', async () => {
  const locksOfClient = () =>
    sut.db
      .collection<{ _id: string }>('document_locks')
      .countDocuments({ _id: { $regex: `^lock:clients:${clientId}:` } });
  cases.answer(200, { data: { [clientId]: 0 } }, 1500);
  const asked = cases.requests.length;
  const update = sut.call(who, { method: 'PUT', url: `/v1/clients/${clientId}`, payload: { name: 'Ana Souza' } });
  await waitFor('the question to the cases service', () => cases.requests.length > asked);
  expect(await locksOfClient()).toBe(0);
  const res = await update;
  expect(res.statusCode).toBe(200);
  expect(res.json().data.name).toBe('Ana Souza');
});
