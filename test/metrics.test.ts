// Each process's /metrics as an operator scrapes it from a running system: the
// gateway's on its internal listener (never its public port), each service's on
// its own port. After a short load that crosses every service, the event path and
// both a receiver that answers and one that fails, every family moves; no id or
// raw path reaches a label. Every metric the alert rules and the dashboard
// (deploy/monitoring) name is one the processes serve.
import { startHttpsReceiver, type HttpsReceiver } from '@lpm/test-kit/https-receiver';
import { waitFor } from '@lpm/test-kit/wait';
import { SERVICE_NAMES } from '../shared/src/service/names.ts';
import { internalPort, servicePort } from '../shared/src/service/port-layout.ts';
import { scrape, seriesNames, total, type Scrape } from '@lpm/test-kit/scrape';
import { alertRules, dashboardExpressions, seriesIn } from '@lpm/test-kit/monitoring-files';
import { teamCreateArgs } from '@lpm/test-kit/cli';
import { startRunningSystem, type IssuedTeam, type RunningSystem } from '@lpm/test-kit/running-system';

let sys: RunningSystem;
let receiver: HttpsReceiver;
let t: IssuedTeam;
/** Whether the receiver's /fail answers 500 (from after its webhook is made: the URL is checked then). */
let failing = false;

const PROCESSES = ['gateway', ...SERVICE_NAMES] as const;
type Process = (typeof PROCESSES)[number];
/** Where `npm start` serves each process's metrics (scripts/start.ts prints these). */
const metricsUrl = (p: Process) =>
  `http://127.0.0.1:${p === 'gateway' ? internalPort(sys.base) : servicePort(sys.base, p)}/metrics`;
const scrapeAll = async () =>
  Object.fromEntries(
    await Promise.all(PROCESSES.map(async (p) => [p, await scrape(metricsUrl(p))] as const)),
  ) as Record<Process, Scrape>;

beforeAll(async () => {
  receiver = await startHttpsReceiver();
  receiver.respond((req) =>
    failing && req.path === '/fail'
      ? { status: 500, body: 'down' }
      : { status: 200, body: '{"received":true}', headers: { 'content-type': 'application/json' } },
  );
  // Failed attempts are not retried within the test: the failing webhook's six come from six events.
  sys = await startRunningSystem('metrics', { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_RETRY_DELAYS: '1h' });
  t = sys.team('Metrics & Filhos');
}, 120_000);

afterAll(async () => {
  await sys?.stop();
  await receiver?.close();
});

const call = async (method: string, path: string, body?: unknown, key = t.api_key) => {
  const res = await sys.call(key, method, path, body);
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data;
};

test('the gateway serves no /metrics on its public port, with or without a key', async () => {
  expect((await sys.request('/metrics')).status).toBe(404);
  expect((await sys.request('/metrics', { key: t.api_key })).status).toBe(404);
  expect((await sys.request('/metrics/')).status).toBe(404);
  expect((await fetch(metricsUrl('gateway'))).status).toBe(200);
});

test('when requests, events and deliveries cross every process, then each one serves its families and they move', async () => {
  const before = await scrapeAll();
  const common = [
    'http_request_duration_seconds',
    'store_operation_duration_seconds',
    'store_commands_total',
    'process_cpu_user_seconds_total',
    'nodejs_eventloop_lag_seconds',
  ];
  const perProcess: Record<Process, string[]> = {
    gateway: [
      'gateway_rate_limit_refusals_total',
      'gateway_auth_failures_total',
      'gateway_auth_throttles_total',
      'gateway_upstream_duration_seconds',
    ],
    deals: ['outbox_pending_events', 'outbox_oldest_event_age_seconds', 'outbox_publish_duration_seconds'],
    clients: [
      'outbox_pending_events',
      'outbox_oldest_event_age_seconds',
      'outbox_publish_duration_seconds',
      'consumer_messages_total',
      'consumer_queue_messages',
      'consumer_queue_consumers',
    ],
    cases: [
      'outbox_publish_duration_seconds',
      'consumer_messages_total',
      'consumer_queue_messages',
      'consumer_queue_consumers',
    ],
    activities: [
      'outbox_publish_duration_seconds',
      'consumer_messages_total',
      'consumer_queue_messages',
      'consumer_queue_consumers',
    ],
    financial: [
      'outbox_publish_duration_seconds',
      'consumer_messages_total',
      'consumer_queue_messages',
      'consumer_queue_consumers',
    ],
    publications: [
      'outbox_publish_duration_seconds',
      'consumer_messages_total',
      'consumer_queue_messages',
      'consumer_queue_consumers',
    ],
    webhooks: [
      'webhook_delivery_latency_seconds',
      'webhook_delivery_attempts_total',
      'webhook_endpoints_disabled_total',
      'consumer_messages_total',
      'consumer_queue_messages',
      'consumer_queue_consumers',
    ],
  };
  for (const p of PROCESSES)
    for (const family of [...common, ...perProcess[p]]) expect([p, before[p].families.has(family)]).toEqual([p, true]);

  // The load: a webhook that answers and one that fails; a story through every service.
  await call('POST', '/v1/webhooks', { url: `${receiver.url}/ok`, events: ['*'] });
  const failingHook = await call('POST', '/v1/webhooks', { url: `${receiver.url}/fail`, events: ['client.created'] });
  failing = true;
  const today = new Intl.DateTimeFormat('en-CA', { timeZone: t.team.timezone }).format(new Date());
  const client = await call('POST', '/v1/clients', { type: 'PF', name: 'Maria Souza' });
  const deal = await call('POST', '/v1/deals', {
    title: 'Ação revisional',
    value: 12000,
    client_id: client.id,
    responsible_id: t.user.id,
  });
  const won = await call('PUT', `/v1/deals/${deal.id}/won`, {
    create_case: true,
    case_data: { title: 'Revisional de Maria', area: 'Cível' },
  });
  const activity = await call('POST', '/v1/activities', {
    type: 'task',
    title: 'Protocolar',
    case_id: won.case_created.id,
    assigned_to: t.user.id,
    due_date: today,
  });
  await call('PUT', `/v1/activities/${activity.id}/complete`, {});
  const fee = await call('POST', '/v1/financial', {
    type: 'revenue',
    category: 'honorarios',
    description: 'Honorários',
    amount: 100,
    date: today,
    client_id: client.id,
  });
  await call('GET', `/v1/clients/${client.id}`);
  await call('GET', '/v1/publications');
  // Updates: the events the other services' views consume.
  await call('PUT', `/v1/clients/${client.id}`, { name: 'Maria Souza Lima' });
  await call('PUT', `/v1/cases/${won.case_created.id}`, { title: 'Revisional de Maria Souza' });
  for (let i = 0; i < 5; i++) await call('POST', '/v1/clients', { type: 'PF', name: `Cliente ${i}` });
  // Refusals: a bad key, and a starter team past its 60 requests a minute.
  expect((await sys.request('/v1/clients', { key: 'lpk_0000000000000000000000000000000000000000' })).status).toBe(401);
  const starter = sys.admin(
    ...teamCreateArgs({ name: 'Starter', plan: 'starter', ownerName: 'S', ownerEmail: 'starter@metrics.example' }),
  );
  const statuses = [];
  for (let i = 0; i < 61; i++) statuses.push((await sys.request('/v1/clients', { key: starter.api_key })).status);
  expect(statuses).toContain(429);

  const arrived = (type: string, id: string) =>
    receiver.requests.some(
      (r) => r.path === '/ok' && JSON.parse(r.body).type === type && JSON.parse(r.body).data.object.id === id,
    );
  await waitFor(
    'the story at the receiver',
    () =>
      arrived('client.created', client.id) &&
      arrived('activity.completed', activity.id) &&
      arrived('financial.created', fee.id),
    60_000,
  );
  await waitFor(
    'the failing webhook deactivated',
    async () =>
      (await call('GET', '/v1/webhooks')).some(
        (w: { id: string; active: boolean }) => w.id === failingHook.id && !w.active,
      ),
    60_000,
  );

  // Each consumer acks its copy of the events on its own time.
  const consumers = ['clients', 'cases', 'activities', 'financial', 'webhooks'] as const;
  await waitFor(
    'every consumer acked a message',
    async () => {
      const now = await Promise.all(consumers.map((p) => scrape(metricsUrl(p))));
      return consumers.every(
        (p, i) =>
          total(now[i], 'consumer_messages_total', 'outcome="acked"') >
          total(before[p], 'consumer_messages_total', 'outcome="acked"'),
      );
    },
    60_000,
  );
  const after = await scrapeAll();
  const moved = (p: Process, name: string, ...labels: string[]) => [
    p,
    name,
    ...labels,
    total(after[p], name, ...labels) > total(before[p], name, ...labels),
  ];
  const expectMoved = (p: Process, name: string, ...labels: string[]) =>
    expect(moved(p, name, ...labels)).toEqual([p, name, ...labels, true]);

  for (const p of PROCESSES) {
    expectMoved(p, 'http_request_duration_seconds_count', `service="${p}"`);
    expectMoved(p, 'store_operation_duration_seconds_count');
    expectMoved(p, 'process_cpu_user_seconds_total');
    // Bounded labels: no record, team or key id, no raw path.
    for (const id of [t.team.id, client.id, deal.id, activity.id, fee.id, failingHook.id, starter.team.id])
      expect([p, after[p].text.includes(id)]).toEqual([p, false]);
  }
  expectMoved(
    'gateway',
    'http_request_duration_seconds_count',
    'route="/v1/clients"',
    'method="POST"',
    'status_class="2xx"',
  );
  expectMoved(
    'gateway',
    'http_request_duration_seconds_count',
    'route="/v1/clients/*"',
    'method="GET"',
    'status_class="2xx"',
  );
  expectMoved(
    'clients',
    'http_request_duration_seconds_count',
    'route="/v1/clients/:id"',
    'method="GET"',
    'status_class="2xx"',
  );
  expectMoved('gateway', 'gateway_upstream_duration_seconds_count', 'service="clients"');
  expectMoved('gateway', 'gateway_upstream_duration_seconds_count', 'service="webhooks"');
  expectMoved('gateway', 'gateway_auth_failures_total', 'reason="invalid"');
  expectMoved('gateway', 'gateway_rate_limit_refusals_total', 'plan="starter"');
  for (const p of ['deals', 'clients', 'cases', 'activities', 'financial'] as const)
    expectMoved(p, 'outbox_publish_duration_seconds_count', 'outcome="ok"');
  expectMoved('webhooks', 'webhook_delivery_attempts_total', 'outcome="succeeded"');
  expectMoved('webhooks', 'webhook_delivery_attempts_total', 'outcome="http_5xx"');
  expectMoved('webhooks', 'webhook_delivery_latency_seconds_count');
  expectMoved('webhooks', 'webhook_endpoints_disabled_total');

  // Read at the scrape: the outboxes by collection, each consumer's queues by kind and its consumers.
  const fanOut = `queue="${sys.env.AMQP_EXCHANGE}.webhooks.fan-out"`;
  expect(total(after.webhooks, 'consumer_queue_consumers', fanOut)).toBeGreaterThanOrEqual(1);
  for (const kind of ['main', 'retry', 'delay', 'dlq'])
    expect([
      kind,
      after.webhooks.samples.some(
        (s) => s.name === 'consumer_queue_messages' && s.labels.includes(fanOut) && s.labels.includes(`kind="${kind}"`),
      ),
    ]).toEqual([kind, true]);
  expect(
    after.clients.samples.filter((s) => s.name === 'outbox_oldest_event_age_seconds').map((s) => s.labels),
  ).toEqual([expect.stringContaining('collection="clients"')]);
  expect(
    after.clients.samples.some((s) => s.name === 'outbox_pending_events' && s.labels.includes('collection="clients"')),
  ).toBe(true);
}, 180_000);

test('every series the alert rules and the dashboard name is one a process serves', async () => {
  const served = new Set<string>(['up']); // Prometheus' own, of each scrape
  for (const s of Object.values(await scrapeAll()))
    for (const [family, type] of s.families) for (const name of seriesNames(family, type)) served.add(name);
  const named = new Set([...alertRules().map((r) => r.expr), ...dashboardExpressions()].flatMap(seriesIn));
  expect(named).toContain('consumer_queue_messages');
  expect([...named].filter((name) => !served.has(name))).toEqual([]);
});
