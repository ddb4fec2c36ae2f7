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

test('when every slot of a key has been held past stalledAfterMs with none given back, then an acquire gives up at once instead of waiting, until a slot turns over', async () => {
  const limiter = new KeyLimiter({ stalledAfterMs: 200 });
  const held = [await limiter.acquire('wh_stuck', 10, 2), await limiter.acquire('wh_stuck', 10, 2)];
  const turning = await limiter.acquire('wh_turning', 10, 1);
  await new Promise((r) => setTimeout(r, 300));

  // Were it to wait, it would wait two minutes: the test's own timeout (one) would end it first.
  expect(await limiter.acquire('wh_stuck', 120_000, 2)).toBeNull();

  // A key whose slot was just given back is not stalled: its waiter gets the next release.
  turning!();
  const busy = await limiter.acquire('wh_turning', 10, 1);
  const waiting = limiter.acquire('wh_turning', 60_000, 1);
  setTimeout(() => busy!(), 50);
  expect(await waiting).not.toBeNull();

  // One slot given back: the stuck key turns over again, and waiting for it is worth it once more.
  held[0]!();
  const again = await limiter.acquire('wh_stuck', 10, 2);
  expect(again).not.toBeNull();
  const behind = limiter.acquire('wh_stuck', 60_000, 2);
  setTimeout(() => again!(), 50);
  expect(await behind).not.toBeNull();
});
