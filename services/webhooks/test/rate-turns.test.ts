// Rate-limit turns (domain/rate-turns.ts) on the run's Redis: a turn reached more than
// one spacing late is taken again, a bounded number of times, so late attempts do not
// reach the receiver together with the ones whose turns came next.
import type { Redis } from 'ioredis';
import { closeRedis, createRedis, redisReady } from '@lpm/shared/redis';
import { RateReservations } from '../src/data/rate-reservations.ts';
import { RateTurns } from '../src/domain/rate-turns.ts';

let redis: Redis;
let turns: RateTurns;
const limited = { _id: 'wh_rate_turns_test', rate_limit: 5 };

/** An attempt job as far as turns go. */
type Job = { webhook_id: string; not_before?: number; turns?: number };

beforeAll(async () => {
  redis = createRedis(process.env.REDIS_URL!, 'lpm-test-rate-turns');
  expect(await redisReady(redis, 10_000)).toBe(true);
  turns = new RateTurns(new RateReservations(redis, `${process.env.REDIS_KEY_PREFIX}rate-turns-test:`));
});

afterAll(async () => {
  await closeRedis(redis);
});

test('when an attempt holds a turn that passed less than one spacing ago, then it is not late and is sent on it', () => {
  const job = { webhook_id: limited._id, not_before: Date.now() - 150 };
  expect(turns.late(job, limited)).toBe(false);
});

test('when an attempt reaches its POST more than one spacing after its turn, then it is late and reserves a new turn, its second', async () => {
  const job: Job = { webhook_id: limited._id, not_before: Date.now() - 1000 };
  expect(turns.late(job, limited)).toBe(true);
  const before = Date.now();
  const turn = await turns.reserve(job, limited);
  expect(turn.job.turns).toBe(2);
  expect(turn.job.not_before).toBeGreaterThanOrEqual(before);
  expect(turns.late(turn.job, limited)).toBe(false);
});

test('when late attempts reserve again, then their new turns are a spacing apart', async () => {
  const late = [1, 2, 3].map((): Job => ({ webhook_id: 'wh_rate_turns_spacing', not_before: Date.now() - 5000 }));
  const webhook = { _id: 'wh_rate_turns_spacing', rate_limit: 5 };
  const taken = await Promise.all(late.map((job) => turns.reserve(job, webhook)));
  const at = taken.map((t) => t.job.not_before!).sort((a, b) => a - b);
  expect(at[1] - at[0]).toBeGreaterThanOrEqual(190);
  expect(at[2] - at[1]).toBeGreaterThanOrEqual(190);
});

test('when an attempt has reserved three turns, then it is no longer late however late it is: it is sent', () => {
  const job = { webhook_id: limited._id, not_before: Date.now() - 60_000, turns: 3 };
  expect(turns.late(job, limited)).toBe(false);
});

test('when the webhook has no rate_limit, then an attempt is never late', () => {
  const job = { webhook_id: 'wh_free', not_before: Date.now() - 60_000 };
  expect(turns.late(job, { rate_limit: null })).toBe(false);
});
