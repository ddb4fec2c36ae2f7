// A service's background tasks start once its store is set up; one that fails to
// start (the store gone again meanwhile) is tried again after a backoff. Stopping the
// service halts the starter: a wait between attempts is cut short, so the stop is not
// held by it, and nothing more starts.
import { taskStarter, type BackgroundTask } from '../src/service/runner.ts';
import { captureLogger, waitFor } from '@lpm/test-kit/wait';

/** A task that fails its first `failures` starts; counts its attempts. */
function flakyTask(failures: number) {
  const state = { attempts: 0, started: false };
  const task: BackgroundTask = {
    start: async () => {
      if (++state.attempts <= failures) throw new Error('store down');
      state.started = true;
    },
    stop: async () => {},
  };
  return { task, state };
}

test('when a task fails to start, then it is tried again after the backoff until it starts, each failure logged, and the next task starts after it', async () => {
  const logger = captureLogger();
  const first = flakyTask(2);
  const second = flakyTask(0);
  const starter = taskStarter([first.task, second.task], logger, { firstMs: 5, maxMs: 20 });
  expect(await starter.start()).toBe(true);
  expect([first.state, second.state]).toEqual([
    { attempts: 3, started: true },
    { attempts: 1, started: true },
  ]);
  expect(logger.lines.map((l) => l.msg)).toEqual(
    Array(2).fill('a background task failed to start; tried again shortly'),
  );
});

test('when halted while a failed task waits a minute for its next attempt, then halt resolves at once, start answers false, and nothing more is tried or started', async () => {
  const logger = captureLogger();
  const failing = flakyTask(Infinity);
  const next = flakyTask(0);
  const starter = taskStarter([failing.task, next.task], logger, { firstMs: 60_000, maxMs: 60_000 });
  const started = starter.start();
  await waitFor('the first attempt failed', () => logger.lines.length === 1);

  const order: string[] = [];
  const haltedAt = Date.now();
  await Promise.all([
    starter.halt().then(() => order.push('halted')),
    started.then((all) => order.push(`start answered ${all}`)),
  ]);
  // Generous: the wait it cut was 60 s.
  expect(Date.now() - haltedAt).toBeLessThan(2000);
  expect(order).toEqual(['start answered false', 'halted']);
  expect([failing.state.attempts, next.state.attempts]).toEqual([1, 0]);
});

test('when halted before the store was ever set up, then start answers false at once and starts nothing', async () => {
  const task = flakyTask(0);
  const starter = taskStarter([task.task], captureLogger());
  await starter.halt();
  expect(await starter.start()).toBe(false);
  expect(task.state.attempts).toBe(0);
});
