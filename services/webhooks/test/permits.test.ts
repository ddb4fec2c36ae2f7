import { Permits } from '../src/domain/permits.ts';

test('when `limit` permits are held, then the next holders wait, in the order they came, for a release each', async () => {
  const permits = new Permits(2);
  const a = await permits.acquire();
  const b = await permits.acquire();
  const order: string[] = [];
  const c = permits.acquire().then((release) => (order.push('c'), release));
  const d = permits.acquire().then((release) => (order.push('d'), release));
  await new Promise((r) => setImmediate(r));
  expect(order).toEqual([]);
  a();
  a(); // a second release of one permit frees nothing more
  const releaseC = await c;
  await new Promise((r) => setImmediate(r));
  expect(order).toEqual(['c']);
  b();
  (await d)();
  releaseC();
  expect(order).toEqual(['c', 'd']);
  // Everything given back: two at once again, not more.
  const [x, y] = [await permits.acquire(), await permits.acquire()];
  let third = false;
  void permits.acquire().then(() => (third = true));
  await new Promise((r) => setImmediate(r));
  expect(third).toBe(false);
  x();
  await new Promise((r) => setImmediate(r));
  expect(third).toBe(true);
  y();
});
