// `npm start -- --replicas cases=2,webhooks=2` runs two processes each of
// cases and webhooks behind the gateway. Under a steady load of case writes (each
// with its SLA already past, so each fires one case.sla_overdue time signal), one
// replica of each is SIGKILLed. The launcher starts them again; the work continues
// (writes retried with their Idempotency-Key on a 503); every case.created and
// case.sla_overdue reaches the webhook receiver; no signal fires twice; and a
// delivery reaches the receiver twice only if its first POST was in flight at the
// kill (the at-least-once duplicate, told by its event id). A call from one
// service to another that a killed replica refuses goes to the next replica, so 200
// deals won with their case, while one cases replica is SIGKILLed, all answer 200.
import { startHttpsReceiver, type HttpsReceiver, type ReceivedRequest } from '@lpm/test-kit/https-receiver';
import { waitFor, sleep } from '@lpm/test-kit/wait';
import { startRunningSystem, type RunningSystem } from '@lpm/test-kit/running-system';
import { firstExtraPort, servicePort } from '../shared/src/service/port-layout.ts';

const CASES = 40;
const KILL_AFTER = 15;
const WORKERS = 2;
const DAY = 86_400_000;

let sys: RunningSystem;
let receiver: HttpsReceiver;

beforeAll(async () => {
  receiver = await startHttpsReceiver();
  sys = await startRunningSystem(
    'replicas',
    { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', SCHEDULER_INTERVAL: '500ms' },
    { replicas: 'cases=2,webhooks=2', extraPorts: 2 },
  );
}, 120_000);

afterAll(async () => {
  await sys?.stop();
  await receiver?.close();
});

/**
 * Creates case `i` as a careful client does: a 503 or a lost connection is retried with
 * the same Idempotency-Key, and so is a 409 "in progress" (the key's request was in the
 * killed replica: it is taken over once abandoned, after a minute).
 */
async function createCase(key: string, i: number): Promise<string> {
  const slaDate = new Date(Date.now() - 2 * DAY).toISOString().slice(0, 10);
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      const res = await sys.request('/v1/cases', {
        method: 'POST',
        key,
        headers: { 'idempotency-key': `replicas-case-${i}` },
        body: JSON.stringify({ title: `Caso ${i}`, sla_date: slaDate }),
      });
      const body = (await res.json()) as { data: { id: string }; error?: { details?: { reason?: string } } };
      if (res.status === 201) return body.data.id;
      const retried =
        res.status === 503 || (res.status === 409 && body.error?.details?.reason === 'idempotency_request_in_progress');
      if (!retried || Date.now() > deadline) throw new Error(`case ${i}: ${res.status} ${JSON.stringify(body)}`);
    } catch (e) {
      if (Date.now() > deadline || !(e instanceof TypeError)) throw e;
    }
    await sleep(500);
  }
}

const payloadOf = (r: ReceivedRequest) => JSON.parse(r.body) as { type: string; data: { object: { id: string } } };

test('when one replica each of cases and webhooks is SIGKILLed under load, then the work goes on and every event arrives, no signal twice, no delivery twice but one in flight at the kill', async () => {
  const key = sys.team('Réplicas').api_key;
  const hook = await sys.call(key, 'POST', '/v1/webhooks', {
    url: `${receiver.url}/replicas`,
    events: ['case.created', 'case.sla_overdue'],
  });
  expect(hook.status).toBe(201);
  for (const name of ['cases', 'cases-2', 'webhooks', 'webhooks-2']) sys.pidOf(name);

  const ids: string[] = [];
  let next = 0;
  let killedAt = Infinity;
  const killed = { cases: sys.pidOf('cases-2'), webhooks: sys.pidOf('webhooks-2') };
  const worker = async () => {
    while (next < CASES) {
      const i = next++;
      ids.push(await createCase(key, i));
      if (ids.length === KILL_AFTER && killedAt === Infinity) {
        process.kill(killed.cases, 'SIGKILL');
        process.kill(killed.webhooks, 'SIGKILL');
        killedAt = Date.now();
      }
      await sleep(100);
    }
  };
  await Promise.all(Array.from({ length: WORKERS }, worker));
  expect(new Set(ids).size).toBe(CASES);

  // The launcher started both again.
  await waitFor(
    'both replicas started again',
    () => sys.pidOf('cases-2') !== killed.cases && sys.pidOf('webhooks-2') !== killed.webhooks,
    30_000,
  );

  const arrived = () => receiver.requests.filter((r) => r.path === '/replicas');
  const eventsOf = (type: string) => {
    const byCase = new Map<string, Set<string>>();
    for (const r of arrived()) {
      const p = payloadOf(r);
      if (p.type !== type) continue;
      const set = byCase.get(p.data.object.id) ?? new Set<string>();
      set.add(String(r.headers['webhook-id']));
      byCase.set(p.data.object.id, set);
    }
    return byCase;
  };
  await waitFor(
    'every case.created and case.sla_overdue delivered',
    () => ids.every((id) => eventsOf('case.created').has(id) && eventsOf('case.sla_overdue').has(id)),
    120_000,
  );
  // Let any late duplicate arrive before counting.
  await sleep(3000);

  for (const type of ['case.created', 'case.sla_overdue']) {
    const byCase = eventsOf(type);
    // No event lost, none made twice (a time signal that fired twice would be a second event id).
    expect(ids.filter((id) => byCase.get(id)?.size !== 1)).toEqual([]);
    expect([...byCase.keys()].filter((id) => !ids.includes(id))).toEqual([]);
  }
  // A delivery POSTed twice (the same event id) is one the killed replica had in flight:
  // its first POST reached the receiver before the kill (give or take a second of I/O).
  const firstAt = new Map<string, number>();
  const duplicates: { id: string; first: number }[] = [];
  for (const r of arrived()) {
    const id = String(r.headers['webhook-id']);
    if (firstAt.has(id)) duplicates.push({ id, first: firstAt.get(id)! });
    else firstAt.set(id, r.at);
  }
  expect(duplicates.filter((d) => d.first > killedAt + 1000)).toEqual([]);
}, 300_000);

test('when a cases replica is SIGKILLed during 200 deals won with their case, then every won answers 200 with its case', async () => {
  const key = sys.team('Ganhos').api_key;
  const WON = 200;
  const deals: string[] = [];
  for (let i = 0; i < WON; i++) {
    const created = await sys.call(key, 'POST', '/v1/deals', { title: `Negócio ${i}` });
    expect(created.status).toBe(201);
    deals.push(created.body.data.id as string);
  }
  // Both replicas serve before the kill: the first test may have just restarted one.
  await waitFor(
    'both cases replicas ready',
    async () =>
      (
        await Promise.all(
          [servicePort(sys.base, 'cases'), firstExtraPort(sys.base)].map((port) =>
            fetch(`http://127.0.0.1:${port}/health/ready`).then(
              (r) => r.status,
              () => 0,
            ),
          ),
        )
      ).every((s) => s === 200),
    60_000,
  );
  const victim = sys.pidOf('cases');
  const answers: { status: number; caseId?: string }[] = [];
  let next = 0;
  const worker = async () => {
    while (next < WON) {
      const i = next++;
      if (i === 50) process.kill(victim, 'SIGKILL');
      const won = await sys.call(key, 'PUT', `/v1/deals/${deals[i]}/won`, {
        final_value: 1000,
        create_case: true,
        case_data: { title: `Caso ${i}`, area: 'civel' },
      });
      answers[i] = {
        status: won.status,
        caseId: (won.body.data as { case_created?: { id?: string } } | undefined)?.case_created?.id,
      };
    }
  };
  await Promise.all(Array.from({ length: 4 }, worker));
  expect(answers.filter((a) => a.status !== 200 || !a.caseId)).toEqual([]);
  expect(new Set(answers.map((a) => a.caseId)).size).toBe(WON);
  expect(sys.pidOf('cases')).not.toBe(victim);
}, 300_000);
