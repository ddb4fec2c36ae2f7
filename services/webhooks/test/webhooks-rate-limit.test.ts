// A webhook's rate_limit kept across two replicas of the webhooks service (the
// launcher's --replicas, one Redis): deliveries above it wait their turn and are all
// delivered, never more than the limit in any second at the receiver (a real HTTPS
// one), while a webhook without a limit in the same team is not held back.
import { busiestSecond } from '@lpm/test-kit/arrivals';
import type { HttpsReceiver } from '@lpm/test-kit/https-receiver';
import type { IssuedTeam, RunningSystem } from '@lpm/test-kit/running-system';
import { waitFor } from '@lpm/test-kit/wait';
import { receivingSystemForSuite } from './receiving-system.ts';

const LIMIT = 5;
const EVENTS = 20;

let sys: RunningSystem;
let receiver: HttpsReceiver;

const call = (team: IssuedTeam, method: string, path: string, body?: unknown) =>
  sys.call(team.api_key, method, path, body);
const arrivals = (path: string) =>
  receiver.requests.filter((r) => r.path === path && JSON.parse(r.body).type === 'client.created').map((r) => r.at);

receivingSystemForSuite('webhooksrate', (started) => ({ sys, receiver } = started), {
  options: { replicas: 'webhooks=2', extraPorts: 1 },
  startMs: 180_000,
});

test('when events come faster than a webhook rate_limit, then both replicas keep it together: all are delivered, at most the limit a second', async () => {
  const team = sys.team('Limitado');
  for (const [path, extra] of [
    ['/limited', { rate_limit: LIMIT }],
    ['/free', {}],
  ] as const) {
    expect(
      (
        await call(team, 'POST', '/v1/webhooks', {
          url: `${receiver.url}${path}`,
          events: ['client.created'],
          ...extra,
        })
      ).status,
    ).toBe(201);
  }
  await Promise.all(
    Array.from({ length: EVENTS }, (_, i) => call(team, 'POST', '/v1/clients', { type: 'PF', name: `Cliente ${i}` })),
  );

  await waitFor('the deliveries to the free webhook', () => arrivals('/free').length === EVENTS, 20_000);
  const freeSpan = Math.max(...arrivals('/free')) - Math.min(...arrivals('/free'));
  await waitFor('the deliveries to the limited webhook', () => arrivals('/limited').length === EVENTS, 30_000);
  const limited = arrivals('/limited');
  const span = Math.max(...limited) - Math.min(...limited);
  // Turns are 200 ms apart; arrivals may bunch by the network's jitter and by this receiver's own event loop, which
  // takes requests in late on a busy machine (7 seen at load 20 in whole runs), not by a second's worth: the span says that.
  expect(busiestSecond(limited)).toBeLessThanOrEqual(LIMIT + 2);
  expect(span).toBeGreaterThanOrEqual((Math.ceil(EVENTS / (LIMIT + 1)) - 1) * 1000);
  expect(freeSpan).toBeLessThan(span / 2);
  // Each event once: nothing dropped, nothing sent twice.
  const ids = receiver.requests
    .filter((r) => r.path === '/limited' && JSON.parse(r.body).type === 'client.created')
    .map((r) => JSON.parse(r.body).id as string);
  expect(new Set(ids).size).toBe(EVENTS);
});
