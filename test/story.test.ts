// One story across every service, as an integrator lives it: a client, a deal won
// with a case, an activity on the case completed, a fee recorded and paid. Every
// webhook event of the story reaches a subscribed receiver in a valid signed
// payload that matches the OpenAPI document, none missing, and the summaries and
// counts reflect the story.
import { startHttpsReceiver, type HttpsReceiver } from '@lpm/test-kit/https-receiver';
import { waitFor } from '@lpm/test-kit/wait';
import { verifyServiceSignature } from '../services/webhooks/src/domain/signing.ts';
import { contract } from '@lpm/test-kit/contract';
import { startRunningSystem, type IssuedTeam, type RunningSystem } from '@lpm/test-kit/running-system';

let sys: RunningSystem;
let receiver: HttpsReceiver;
let t: IssuedTeam;

beforeAll(async () => {
  receiver = await startHttpsReceiver();
  sys = await startRunningSystem('story', { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });
  t = sys.team('Souza & Lima');
}, 120_000);

afterAll(async () => {
  await sys?.stop();
  await receiver?.close();
});

const call = async (method: string, path: string, body?: unknown) => {
  const res = await sys.call(t.api_key, method, path, body);
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
};

test('when a client, a deal won with a case, a completed activity and a paid fee make a story, then every event arrives signed and the summaries reflect it', async () => {
  const hook = (await call('POST', '/v1/webhooks', { url: `${receiver.url}/story`, events: ['*'] })).data;
  const today = new Intl.DateTimeFormat('en-CA', { timeZone: t.team.timezone }).format(new Date());

  const client = (await call('POST', '/v1/clients', { type: 'PF', name: 'Maria Souza', email: 'maria@example.com' }))
    .data;
  const deal = (
    await call('POST', '/v1/deals', {
      title: 'Ação revisional',
      value: 12000,
      client_id: client.id,
      responsible_id: t.user.id,
    })
  ).data;
  const won = (
    await call('PUT', `/v1/deals/${deal.id}/won`, {
      create_case: true,
      case_data: { title: 'Revisional de Maria', area: 'Cível' },
    })
  ).data;
  const kase = won.case_created;
  expect(kase).toEqual({ id: expect.stringMatching(/^case_/), title: 'Revisional de Maria' });
  const activity = (
    await call('POST', '/v1/activities', {
      type: 'task',
      title: 'Protocolar a inicial',
      case_id: kase.id,
      deal_id: deal.id,
      assigned_to: t.user.id,
      due_date: today,
    })
  ).data;
  await call('PUT', `/v1/activities/${activity.id}/complete`, { notes: 'Protocolada' });
  const fee = (
    await call('POST', '/v1/financial', {
      type: 'revenue',
      category: 'honorarios',
      description: 'Honorários iniciais',
      amount: 1500.5,
      date: today,
      case_id: kase.id,
      client_id: client.id,
    })
  ).data;
  await call('PUT', `/v1/financial/${fee.id}`, { status: 'paid' });

  const expected: [string, string][] = [
    ['client.created', client.id],
    ['deal.created', deal.id],
    ['case.created', kase.id],
    ['deal.won', deal.id],
    ['activity.created', activity.id],
    ['activity.completed', activity.id],
    ['financial.created', fee.id],
    ['financial.paid', fee.id],
  ];
  const arrived = () =>
    receiver.requests.filter((r) => r.path === '/story').map((r) => ({ req: r, body: JSON.parse(r.body) }));
  const has = ([type, id]: [string, string]) =>
    arrived().some((a) => a.body.type === type && a.body.data.object.id === id);
  await waitFor('every event of the story at the receiver', () => expected.every(has), 60_000);

  const undocumented: string[] = [];
  for (const { req, body } of arrived()) {
    const h = req.headers as Record<string, string>;
    expect(verifyServiceSignature(hook.secret, h['x-service-timestamp'], req.body, h['x-service-signature'])).toBe(
      true,
    );
    expect(h['x-service-event-id']).toBe(body.id);
    // The ping sent when the webhook was created, then the story's events.
    if (body.type === 'ping') continue;
    expect(body).toMatchObject({
      api_version: 'v1',
      team_id: t.team.id,
      webhook_id: hook.id,
      data: { object: { id: expect.any(String) } },
    });
    const problem = contract().checkEvent(body);
    if (problem) undocumented.push(problem);
  }
  // Each payload is what the document's webhooks section says of its event.
  expect(undocumented).toEqual([]);
  expect(arrived().find((a) => a.body.type === 'financial.paid')!.body.data.object).toMatchObject({
    status: 'paid',
    amount: 1500.5,
    paid_date: today,
  });

  const deals = (await call('GET', '/v1/deals/summary')).data;
  expect(deals.by_status.ganho).toEqual({ count: 1, value: 12000 });
  expect(deals.conversion_rate).toBe(100);
  const money = (await call('GET', '/v1/financial/summary')).data;
  expect(money.totals).toEqual({ revenue: 1500.5, expense: 0, cost: 0, profit: 1500.5 });
  expect(money.top_clients).toEqual([{ client_id: client.id, name: 'Maria Souza', total_revenue: 1500.5 }]);
  await waitFor(
    'the activity counted on the case',
    async () => (await call('GET', `/v1/cases/${kase.id}`)).data.activities_count === 1,
    5000,
  );
  const caseDetail = (await call('GET', `/v1/cases/${kase.id}`)).data;
  expect(caseDetail).toMatchObject({ client: { id: client.id }, responsible: { id: t.user.id }, area: 'Cível' });
  expect((await call('GET', `/v1/deals/${deal.id}`)).data.activities_count).toBe(1);
}, 180_000);
