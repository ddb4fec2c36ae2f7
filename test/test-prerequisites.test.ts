// `npm test` installs the Debian packages its tests need, or says in one line which it lacks.
import { ensurePrerequisites, PREREQUISITES, type Prerequisite } from '../scripts/test/prerequisites.ts';

const missing = (pkg: string): Prerequisite => ({ pkg, neededBy: `test/${pkg}.test.ts`, present: () => false });
const present = (pkg: string): Prerequisite => ({ pkg, neededBy: `test/${pkg}.test.ts`, present: () => true });

test('when a package is missing and cannot be installed, then one line names it and the command that installs it', () => {
  const line = ensurePrerequisites([present('chromium'), missing('prometheus')], false);
  expect(line).toBe(
    "npm test needs Debian's prometheus (test/prometheus.test.ts): run `apt-get install --no-install-recommends prometheus` as root",
  );
});

test('when everything is present, then nothing is installed and nothing is said', () => {
  expect(ensurePrerequisites([present('chromium'), present('prometheus')], false)).toBeNull();
});

test('when the tests run, then chromium and promtool are there (npm test installed them)', () => {
  expect(PREREQUISITES.filter((p) => !p.present()).map((p) => p.pkg)).toEqual([]);
});
