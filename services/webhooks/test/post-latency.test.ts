// The bar a POST must pass to make its webhook slow or hanging: the floor while
// receivers answer quickly, and a multiple of the typical answer when every POST of
// the process is slow (a busy process, not a hanging receiver).
import { PostLatency } from '../src/domain/post-latency.ts';

describe('PostLatency', () => {
  test('when no POST has answered yet, then the bar is the floor', () => {
    expect(new PostLatency(1000, 8).slowAfterMs).toBe(1000);
  });

  test('when receivers answer in tens of ms, then the bar stays at the floor', () => {
    const latency = new PostLatency(1000, 8);
    for (let i = 0; i < 200; i++) latency.answered(10 + (i % 40));
    expect(latency.slowAfterMs).toBe(1000);
  });

  test('when every POST takes 300 ms (a busy process), then the bar rises to 8 typical POSTs', () => {
    const latency = new PostLatency(1000, 8);
    for (let i = 0; i < 200; i++) latency.answered(300);
    expect(latency.slowAfterMs).toBe(2400);
  });

  test('when a few receivers are slow among quick ones, then the median keeps the bar at the floor', () => {
    const latency = new PostLatency(1000, 8);
    for (let i = 0; i < 200; i++) latency.answered(i % 10 === 0 ? 4000 : 20);
    expect(latency.slowAfterMs).toBe(1000);
  });

  test('when the process gets busy and then quiet again, then the bar follows the last answers', () => {
    const latency = new PostLatency(1000, 8);
    for (let i = 0; i < 200; i++) latency.answered(500);
    expect(latency.slowAfterMs).toBe(4000);
    for (let i = 0; i < 128; i++) latency.answered(15);
    expect(latency.slowAfterMs).toBe(1000);
  });

  test('when the first answers come in, then the bar reflects them at once', () => {
    const latency = new PostLatency(1000, 8);
    for (let i = 0; i < 5; i++) latency.answered(250);
    expect(latency.slowAfterMs).toBe(2000);
  });
});
