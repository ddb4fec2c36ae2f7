// `npm test`: installs the Debian packages some tests need, type-checks, lints, checks
// the formatting, runs every Jest suite against real servers, and ends with the plain
// line "N passed, N failed" that CI reads.
import { spawnSync } from 'node:child_process';
import { failuresOf, runJest } from './test/jest-counts.ts';
import { ensurePrerequisites } from './test/prerequisites.ts';

const missing = ensurePrerequisites();
if (missing) {
  console.error(missing);
  console.log('0 passed, 1 failed');
  process.exit(1);
}

const tsc = spawnSync('tsc', ['--noEmit', '-p', 'tsconfig.json'], { stdio: 'inherit' });
const typeErrors = tsc.status === 0 ? 0 : 1;
if (typeErrors) console.error('type check failed');

// Any finding fails, a warning too (eslint.config.js sets none today).
const eslint = spawnSync('eslint', ['.', '--max-warnings', '0'], { stdio: 'inherit' });
const lintFindings = eslint.status === 0 ? 0 : 1;
if (lintFindings) console.error('lint failed');

// Every file as Prettier writes it (.prettierrc; .prettierignore leaves out the generated ones).
const prettier = spawnSync('prettier', ['--check', '.', '--log-level', 'warn'], { stdio: 'inherit' });
const formatFindings = prettier.status === 0 ? 0 : 1;
if (formatFindings) console.error('format check failed: run `npx prettier --write .`');

const jest = runJest(process.argv.slice(2));
if (!jest.completed) console.error(`jest ended (exit ${jest.status}) before its run completed: counted as a failure`);
const failed = typeErrors + lintFindings + formatFindings + failuresOf(jest);
console.log(`${jest.passed} passed, ${failed} failed${jest.skipped ? `, ${jest.skipped} skipped` : ''}`);
process.exit(failed === 0 ? 0 : 1);
