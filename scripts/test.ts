// `npm test`: type-checks, lints, runs every Jest suite against real servers, and
// ends with the plain line "N passed, N failed" that CI reads.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';

/** The counts this summary reads from Jest's --json results. */
interface JestResults {
  numPassedTests: number;
  numFailedTests: number;
  numRuntimeErrorTestSuites: number;
  numPendingTests: number;
  numTodoTests: number;
}

const results = '.test-results.json';
rmSync(results, { force: true });

const tsc = spawnSync('tsc', ['--noEmit', '-p', 'tsconfig.json'], { stdio: 'inherit' });
const typeErrors = tsc.status === 0 ? 0 : 1;
if (typeErrors) console.error('type check failed');

// Any finding fails, a warning too (eslint.config.js sets none today).
const eslint = spawnSync('eslint', ['.', '--max-warnings', '0'], { stdio: 'inherit' });
const lintFindings = eslint.status === 0 ? 0 : 1;
if (lintFindings) console.error('lint failed');

const jest = spawnSync('jest', ['--json', `--outputFile=${results}`, ...process.argv.slice(2)], {
  stdio: 'inherit',
  env: { ...process.env, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --experimental-vm-modules --no-warnings`.trim() },
});

let passed = 0;
let failed = typeErrors + lintFindings;
let skipped = 0;
if (existsSync(results)) {
  const r = JSON.parse(readFileSync(results, 'utf8')) as JestResults;
  passed = r.numPassedTests;
  failed += r.numFailedTests + r.numRuntimeErrorTestSuites;
  skipped = r.numPendingTests + r.numTodoTests;
} else {
  failed += 1;
}
if (jest.status !== 0 && failed === 0) failed = 1;
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(failed === 0 ? 0 : 1);
