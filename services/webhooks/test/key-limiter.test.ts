import { KeyLimiter } from '../src/domain/key-limiter.ts';

test('when a key has `limit` slots taken, then another acquire waits for a release or gives up after waitMs', async () => {
  const limiter = new KeyLimiter();
  const a = await limiter.acquire('wh_a', 10, 2);
  const b = await limiter.acquire('wh_a', 10, 2);
  expect(a && b).toBeTruthy();
  expect(await limiter.acquire('wh_a', 20, 2)).toBeNull();

  const waiting = limiter.acquire('wh_a', 1000, 2);
  a!();
  a!(); // releasing twice frees one slot only
  const c = await waiting;
  expect(c).not.toBeNull();
  expect(await limiter.acquire('wh_a', 20, 2)).toBeNull();

  // Other keys are not affected; a lower limit applies to the same key at once.
  expect(await limiter.acquire('wh_b', 10, 1)).not.toBeNull();
  expect(await limiter.acquire('wh_a', 10, 1)).toBeNull();
  b!();
  c!();
  expect(await limiter.acquire('wh_a', 10, 1)).not.toBeNull();
});

test('when keepWaiting says so as waitMs runs out, then the wait goes on, until a release or until it says no', async () => {
  const limiter = new KeyLimiter();
  const held = await limiter.acquire('wh_a', 10, 1);
  let asked = 0;
  const patient = limiter.acquire('wh_a', 10, 1, () => ++asked < 4);
  expect(await patient).toBeNull();
  expect(asked).toBe(4);

  asked = 0;
  const served = limiter.acquire('wh_a', 10, 1, () => ++asked > 0);
  await new Promise((r) => setTimeout(r, 60));
  held!();
  expect(await served).not.toBeNull();
  expect(asked).toBeGreaterThan(1);
});
