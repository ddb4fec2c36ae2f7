import { periodicTask } from '../src/service/runner.ts';
import { captureLogger, waitFor, sleep } from '@lpm/test-kit/wait';

test('when a run outlasts the interval, then runs never overlap, and stop waits for the one in flight', async () => {
  let inFlight = 0;
  let most = 0;
  let runs = 0;
  const task = periodicTask({
    name: 'slow',
    intervalMs: 10,
    logger: captureLogger(),
    run: async () => {
      most = Math.max(most, ++inFlight);
      await sleep(40);
      inFlight--;
      runs++;
    },
  });
  await task.start();
  await waitFor('three runs', () => runs >= 3);
  await task.stop();
  expect(most).toBe(1);
  expect(inFlight).toBe(0);
});

test('when a run fails, then it is logged and tried again at the next tick; a success holds off runs for atMostEveryMs', async () => {
  const logger = captureLogger();
  let calls = 0;
  const task = periodicTask({
    name: 'flaky',
    intervalMs: 10,
    atMostEveryMs: 60_000,
    logger,
    run: async () => {
      if (++calls === 1) throw new Error('store down');
    },
  });
  await task.start();
  await waitFor('the retry', () => calls >= 2);
  await sleep(100);
  await task.stop();
  expect(calls).toBe(2);
  expect(logger.lines.filter((l) => l.msg === 'flaky failed; retried at the next interval')).toHaveLength(1);
});
