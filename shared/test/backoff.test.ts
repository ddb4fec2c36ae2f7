import { backoffDelayMs } from '../src/backoff.ts';

test('when failures follow one another, then the delay doubles from the first and stops at the cap', () => {
  const delays = [0, 1, 2, 3, 4, 5, 6, 1000].map((n) => backoffDelayMs(n, { firstMs: 1000, maxMs: 30_000 }));
  expect(delays).toEqual([1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000]);
});

test('when a jitter is asked for, then every delay stays within its spread and under the cap', () => {
  for (let n = 0; n < 200; n++) {
    const delay = backoffDelayMs(n % 8, { firstMs: 500, maxMs: 5000, jitter: 0.2 });
    const base = Math.min(5000, 500 * 2 ** (n % 8));
    expect(delay).toBeGreaterThanOrEqual(base * 0.8 - 1);
    expect(delay).toBeLessThanOrEqual(Math.min(5000, base * 1.2 + 1));
  }
});
