// Rate-limit turns (domain/rate-turns.ts) on the run's Redis, from two replicas' own
// connections: turns are a spacing apart, and just before its POST an attempt is
// admitted only when the webhook's last POST was a spacing ago, however late and
// together attempts come; it waits for that, or is told how long.
import type { Redis } from 'ioredis';
import { closeRedis, createRedis, redisReady } from '@lpm/shared/redis';
import { RateReservations } from '../src/data/rate-reservations.ts';
import { RateTurns } from '../src/domain/rate-turns.ts';

const LIMIT = 5;
let connections: Redis[];
let replicas: RateTurns[];
let run = 0;

/** A webhook of its own for each test, so no test sees another's turns. */
const webhook = (rate_limit: number | null = LIMIT) => ({ _id: `wh_rate_turns_${process.pid}_${++run}`, rate_limit });

beforeAll(async () => {
  connections = [1, 2].map((n) => createRedis(process.env.REDIS_URL!, `lpm-test-rate-turns-${n}`));
  for (const redis of connections) expect(await redisReady(redis, 10_000)).toBe(true);
  replicas = connections.map(
    (redis) => new RateTurns(new RateReservations(redis, `${process.env.REDIS_KEY_PREFIX}rate-turns-test:`)),
  );
});

afterAll(async () => {
  await Promise.all(connections.map(closeRedis));
});

test('when attempts reserve turns on two replicas, then their turns are a spacing apart', async () => {
  const limited = webhook();
  const asked = Date.now();
  const taken = await Promise.all(
    Array.from({ length: 6 }, (_, i) => replicas[i % 2].reserve({ webhook_id: limited._id }, limited)),
  );
  // Each wait is from its own script's instant, all within the calls' span.
  const span = Date.now() - asked;
  const waits = taken.map((t) => t.waitMs).sort((a, b) => a - b);
  expect(waits[0]).toBe(0);
  for (let i = 1; i < waits.length; i++) expect(waits[i] - waits[i - 1]).toBeGreaterThanOrEqual(200 - span - 1);
  expect(waits[5]).toBeGreaterThanOrEqual(1000 - span - 1);
  for (const t of taken) expect(t.job).toEqual({ webhook_id: limited._id, not_before: expect.any(Number) });
});

/** A POST as WebhookSlots.post makes it: `admit` asked first, and sent (when) only on a 0. */
const post = (admit: () => Promise<number>) => admit().then((waitMs) => (waitMs > 0 ? waitMs : { sentAt: Date.now() }));

test('when attempts reach their POST together on two replicas, then one is sent and the rest are told to wait a spacing at most', async () => {
  const limited = webhook();
  const asked = Date.now();
  const results = await Promise.all(
    Array.from({ length: LIMIT + 3 }, (_, i) => replicas[i % 2].admitted(limited, asked - 1, post)),
  );
  const answered = Date.now();
  expect(results.filter((r) => typeof r === 'object')).toHaveLength(1);
  const waits = results.filter((r) => typeof r === 'number');
  expect(waits).toHaveLength(LIMIT + 2);
  for (const w of waits) {
    expect(w).toBeLessThanOrEqual(1000 / LIMIT);
    expect(w).toBeGreaterThanOrEqual(1000 / LIMIT - (answered - asked) - 1);
  }
});

test('when attempts may wait here, then they are sent one a spacing apart, across replicas, never sooner', async () => {
  const limited = webhook();
  const sent = await Promise.all(
    Array.from({ length: 4 }, (_, i) => replicas[i % 2].admitted(limited, Date.now() + 5000, post)),
  );
  const at = sent.map((s) => (s as { sentAt: number }).sentAt).sort((a, b) => a - b);
  // Admitted on Redis's clock a spacing apart; this process notes each a little later, never earlier than the first.
  expect(at[3] - at[0]).toBeGreaterThanOrEqual(3 * (1000 / LIMIT) - 50);
  // Admitted means it was the last: the next one waits.
  expect(typeof (await replicas[0].admitted(limited, Date.now() - 1, post))).toBe('number');
});

test('when POSTs come more than a spacing apart, then each is sent at once', async () => {
  const limited = webhook(10);
  for (let i = 0; i < 8; i++) {
    expect(typeof (await replicas[i % 2].admitted(limited, Date.now() - 1, post))).toBe('object');
    await new Promise((r) => setTimeout(r, 200));
  }
});

test('when the webhook has no rate_limit, then its attempts are not paced and owe no turn', () => {
  const free = webhook(null);
  expect(replicas[0].paces(free)).toBe(false);
  expect(replicas[0].owes({ webhook_id: free._id }, free)).toBe(false);
  expect(replicas[0].paces(webhook())).toBe(true);
});

test('when Redis cannot answer, then an attempt is neither dropped nor sent: it is told to come back in a second', async () => {
  const gone = createRedis(process.env.REDIS_URL!, 'lpm-test-rate-turns-gone');
  expect(await redisReady(gone, 10_000)).toBe(true);
  await closeRedis(gone);
  const cut = new RateTurns(new RateReservations(gone, `${process.env.REDIS_KEY_PREFIX}rate-turns-test:`));
  const limited = webhook();
  expect(await cut.admitted(limited, Date.now() + 500, post)).toBe(1000);
  const turn = await cut.reserve({ webhook_id: limited._id }, limited);
  expect(turn).toEqual({ job: { webhook_id: limited._id }, waitMs: 1000 });
});
