// Through the whole system: a team court calendar set at the gateway, a
// deadline activity computed from a rule, a closure added that moves it (with the
// activity.updated event on the broker), CNJ numbers on cases, and the OpenAPI document.
import { tapEvents, type EventTap } from '@lpm/test-kit/event-tap';
import { startRunningSystem, type IssuedTeam, type RunningSystem } from '@lpm/test-kit/running-system';
import type { JsonAnswer } from '@lpm/test-kit/json';

let sys: RunningSystem;
let tap: EventTap;
let t: IssuedTeam;

const call = (method: string, path: string, body?: unknown) => sys.call(t.api_key, method, path, body);

beforeAll(async () => {
  sys = await startRunningSystem('deadlines');
  tap = await tapEvents(sys.env.AMQP_EXCHANGE!, ['activity.*']);
  t = sys.team('Silva Advogados');
}, 120_000);

afterAll(async () => {
  await tap?.close();
  await sys?.stop();
});

test('when a closure is added to the team calendar, then the rule-based deadline moves, with activity.updated', async () => {
  // Published Fri 1 Aug 2025, 5 business days, state court: Mon 4 (1), Tue 5 (2),
  // Wed 6 (3), Thu 7 (4), Fri 8 Aug 2025 (5).
  const rule = { start: { published: '2025-08-01' }, days: 5 };
  const computed = await call('POST', '/v1/deadlines/compute', rule);
  expect(computed.status).toBe(200);
  expect(computed.body.data.due_date).toBe('2025-08-08');
  const created = await call('POST', '/v1/activities', { type: 'deadline', title: 'Contestação', deadline_rule: rule });
  expect(created.status).toBe(201);
  const id = created.body.data.id;
  expect(created.body.data.due_date).toBe('2025-08-08');

  // The court's system down on Tue 5 Aug (CPC art. 224 §1): Mon 4 (1), Wed 6 (2),
  // Thu 7 (3), Fri 8 (4), Mon 11 Aug 2025 (5).
  const closures = [{ date: '2025-08-05', name: 'PJe indisponível' }];
  const settings = await call('PUT', '/v1/settings', {
    court_calendar: { jurisdiction: { uf: 'SP', branch: 'state' }, closures },
  });
  expect(settings.status).toBe(200);
  const [updated] = await tap.waitFor('activity.updated', id);
  expect(updated.data.object).toMatchObject({ id, due_date: '2025-08-11', deadline: { due_date: '2025-08-11' } });
  expect(updated.data.previous_attributes).toEqual({ due_date: '2025-08-08' });
  expect(updated.actor_id).toBe(t.user.id);
  const detail = await call('GET', `/v1/activities/${id}`);
  expect(detail.body.data).toMatchObject({ due_date: '2025-08-11', deadline_rule: rule });
  expect(detail.body.data.deadline.trail).toContainEqual({
    date: '2025-08-05',
    counted: false,
    reason: 'team closure: PJe indisponível',
  });
  // The calculator sees the same calendar now.
  expect((await call('POST', '/v1/deadlines/compute', rule)).body.data.due_date).toBe('2025-08-11');
});

test('when the team rejects bad CNJ numbers, then a wrong one is 422 and a right one is explained', async () => {
  expect((await call('PUT', '/v1/settings', { cnj_check: 'reject' })).status).toBe(200);
  // 10001232024502000100 mod 97 = 39, so DD = 98 - 39 = 59.
  const bad = await call('POST', '/v1/cases', { title: 'Reclamação', number: '1000123-58.2024.5.02.0001' });
  expect([bad.status, bad.body.error.message]).toEqual([422, 'Invalid CNJ number']);
  const good = await call('POST', '/v1/cases', { title: 'Reclamação', number: '10001235920245020001' });
  expect(good.status).toBe(201);
  const detail = await call('GET', `/v1/cases/${good.body.data.id}`);
  expect(detail.body.data).toMatchObject({
    number: '1000123-59.2024.5.02.0001',
    number_info: { format: 'cnj', valid: true, year: 2024, justice: 'labour', court: 'TRT2', origin: '0001' },
  });
});

test('when the OpenAPI document is read, then it describes the calculator, the deadline rule, the settings and number_info, with examples', async () => {
  const doc = (await (await sys.request('/v1/openapi.json')).json()) as {
    paths: Record<string, JsonAnswer>;
    components: { schemas: Record<string, JsonAnswer> };
  };
  // Named schemas are written once, in components.schemas.
  const deref = (schema: JsonAnswer) => (schema.$ref ? doc.components.schemas[schema.$ref.split('/').pop()] : schema);
  const media = (path: string, method: string) => doc.paths[path][method].requestBody.content['application/json'];
  const body = (path: string, method: string) => deref(media(path, method).schema);
  const data = (path: string, method: string, status: string) =>
    deref(doc.paths[path][method].responses[status].content['application/json'].schema.properties.data);
  expect(body('/v1/deadlines/compute', 'post').properties).toHaveProperty('start');
  expect(media('/v1/deadlines/compute', 'post').examples.example1.value).toEqual({
    start: { made_available: '2025-11-13' },
    days: 5,
  });
  expect(data('/v1/deadlines/compute', 'post', '200').properties.trail.items.properties).toHaveProperty('reason');
  expect(data('/v1/deadlines/compute', 'post', '200').examples[0]).toMatchObject({ due_date: '2025-11-24' });
  expect(body('/v1/activities', 'post').properties).toHaveProperty('deadline_rule');
  expect(media('/v1/activities', 'post').examples.example2.value).toHaveProperty('deadline_rule');
  expect(data('/v1/activities/{id}', 'get', '200').properties).toHaveProperty('deadline');
  expect(body('/v1/settings', 'put').properties).toHaveProperty('court_calendar');
  expect(media('/v1/settings', 'put').examples.example2.value).toHaveProperty('court_calendar');
  expect(deref(data('/v1/cases/{id}', 'get', '200').properties.number_info).examples[0]).toMatchObject({
    format: 'cnj',
    court: 'TJSP',
  });
});
