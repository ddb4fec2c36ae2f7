// The other side of the activity links: a case's activities_count
// and timeline follow activity events, and GET /v1/cases/{id}/activities pages the
// case's activities from the activities service. A running system: gateway,
// clients, cases, activities as processes on the run's FerretDB and RabbitMQ.
import { systemForSuite, type IssuedTeam, type RunningSystem } from '@lpm/test-kit/running-system';
import { waitFor } from '@lpm/test-kit/wait';
import { expectNotFound } from '@lpm/test-kit/error-answers';

let sys: RunningSystem;
let t: IssuedTeam;

const call = (method: string, path: string, body?: unknown, key = t.api_key) => sys.call(key, method, path, body);

systemForSuite('casesacts', {}, (started) => {
  sys = started;
  t = sys.team('Silva Advogados');
});

/**
 * Polls until `check` holds. It usually takes well under a second, but a timing
 * bound would flake on a busy machine (1.4 s seen under a full run): how fast the
 * count follows is a benchmark figure, not a test assertion.
 */
async function eventually(what: string, check: () => Promise<boolean>) {
  await waitFor(what, check, 10_000);
}

test('when an activity is added to a case and completed, then activities_count and the timeline show it once the activity events are handled', async () => {
  const k = (await call('POST', '/v1/cases', { title: 'Ação de cobrança' })).body.data;
  const created = await call('POST', '/v1/activities', {
    type: 'deadline',
    title: 'Contestação',
    case_id: k.id,
    due_date: '2027-03-10',
  });
  expect(created.status).toBe(201);
  const a = created.body.data;

  await eventually(
    'activities_count 1',
    async () => (await call('GET', `/v1/cases/${k.id}`)).body.data.activities_count === 1,
  );
  const listed = (await call('GET', '/v1/cases?limit=100')).body.data.find((c: { id: string }) => c.id === k.id);
  expect(listed.activities_count).toBe(1);
  const added = (await call('GET', `/v1/cases/${k.id}/timeline`)).body.data[0];
  expect(added).toMatchObject({
    type: 'activity_added',
    description: 'Activity added: Contestação',
    user: { id: t.user.id, name: t.user.name },
  });

  expect((await call('PUT', `/v1/activities/${a.id}/complete`, { notes: 'ok' })).status).toBe(200);
  await eventually(
    'activity_completed in the timeline',
    async () => (await call('GET', `/v1/cases/${k.id}/timeline`)).body.data[0].type === 'activity_completed',
  );
  const timeline = (await call('GET', `/v1/cases/${k.id}/timeline`)).body.data.map((e: { type: string }) => e.type);
  expect(timeline).toEqual(['activity_completed', 'activity_added', 'case_created']);
  expect((await call('GET', `/v1/cases/${k.id}`)).body.data.activities_count).toBe(1);
});

test('when an activity moves to another case or is deleted, then both counts follow', async () => {
  const from = (await call('POST', '/v1/cases', { title: 'Origem' })).body.data;
  const to = (await call('POST', '/v1/cases', { title: 'Destino' })).body.data;
  const a = (await call('POST', '/v1/activities', { type: 'task', title: 'Mover', case_id: from.id })).body.data;
  await waitFor(
    'counted on the first case',
    async () => (await call('GET', `/v1/cases/${from.id}`)).body.data.activities_count === 1,
    5000,
  );
  expect((await call('PUT', `/v1/activities/${a.id}`, { case_id: to.id })).status).toBe(200);
  await waitFor('moved', async () => (await call('GET', `/v1/cases/${to.id}`)).body.data.activities_count === 1, 5000);
  expect((await call('GET', `/v1/cases/${from.id}`)).body.data.activities_count).toBe(0);
  expect((await call('DELETE', `/v1/activities/${a.id}`)).status).toBe(200);
  await waitFor(
    'deleted',
    async () => (await call('GET', `/v1/cases/${to.id}`)).body.data.activities_count === 0,
    5000,
  );
});

test('when a case has activities, then GET /v1/cases/{id}/activities pages them by due date with completed_at', async () => {
  const k = (await call('POST', '/v1/cases', { title: 'Com atividades', number: '0009-99' })).body.data;
  const titles = ['Primeira', 'Segunda', 'Terceira'];
  const ids: string[] = [];
  for (const [i, title] of titles.entries())
    ids.push(
      (await call('POST', '/v1/activities', { type: 'task', title, case_id: k.id, due_date: `2027-01-0${i + 1}` })).body
        .data.id,
    );
  await call('PUT', `/v1/activities/${ids[0]}/complete`, {});

  const p1 = (await call('GET', `/v1/cases/${k.id}/activities?limit=2`)).body;
  expect(p1.pagination).toEqual({ page: 1, limit: 2, total: 3, pages: 2 });
  expect(p1.data.map((a: { title: string }) => a.title)).toEqual(['Primeira', 'Segunda']);
  expect(p1.data[0]).toEqual({
    id: ids[0],
    type: 'task',
    title: 'Primeira',
    status: 'completed',
    priority: 'media',
    due_date: '2027-01-01',
    completed_at: expect.stringMatching(/Z$/),
    created_at: expect.stringMatching(/Z$/),
  });
  expect(
    (await call('GET', `/v1/cases/${k.id}/activities?limit=2&page=2&sort=-due_date`)).body.data.map(
      (a: { title: string }) => a.title,
    ),
  ).toEqual(['Primeira']);

  // The activity's read shape shows the case's title and number from the cases service.
  expect((await call('GET', `/v1/activities/${ids[1]}`)).body.data.case).toEqual({
    id: k.id,
    title: 'Com atividades',
    number: '0009-99',
  });
});

test('when an activity names a case of another team, then 404 Case not found', async () => {
  const other = sys.team('Outro');
  const k = (await call('POST', '/v1/cases', { title: 'Alheio' }, other.api_key)).body.data;
  expectNotFound(await call('POST', '/v1/activities', { type: 'task', title: 'X', case_id: k.id }), 'Case not found');
});
