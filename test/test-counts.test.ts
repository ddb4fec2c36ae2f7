// The closing line of `npm test` counts what really ran, even when a failing test's
// error object cannot be serialised (Jest's --json output then writes nothing).
import { join } from 'node:path';
import { failuresOf, runJest } from '../scripts/test/jest-counts.ts';

const FIXTURE_CONFIG = join(import.meta.dirname, 'fixtures/counts/jest.config.js');

test('when a suite fails with a circular error object, then the run still counts every passed test and the one failure', () => {
  const run = runJest(['--config', FIXTURE_CONFIG], { stdio: 'pipe' });
  expect(run).toMatchObject({ completed: true, passed: 4, failed: 1, brokenSuites: 0, status: 1 });
  expect(failuresOf(run)).toBe(1);
});

test('when jest ends before its run completes, then the run counts one failure', () => {
  const run = runJest(['--config', join(import.meta.dirname, 'fixtures/counts/no-such-config.js')], { stdio: 'pipe' });
  expect(run.completed).toBe(false);
  expect(failuresOf(run)).toBe(1);
});
