// Runs Jest with the count reporter beside its default one and reads the counts back.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RunCounts } from './count-reporter.ts';

const REPORTER = fileURLToPath(new URL('./count-reporter.ts', import.meta.url));

export interface JestRun extends RunCounts {
  /** Jest's exit code (null when it was killed). */
  status: number | null;
  /** False when Jest ended before its reporters saw the run complete (a global setup that threw, a crash). */
  completed: boolean;
}

/** Runs `jest ...args` with stdio inherited; the counts come from the reporter, never from Jest's --json file. */
export function runJest(args: readonly string[], options: { cwd?: string; stdio?: 'inherit' | 'pipe' } = {}): JestRun {
  const dir = mkdtempSync(join(tmpdir(), 'lpm-jest-counts-'));
  const file = join(dir, 'counts.json');
  try {
    const jest = spawnSync('jest', ['--reporters=default', `--reporters=${REPORTER}`, ...args], {
      cwd: options.cwd,
      stdio: options.stdio ?? 'inherit',
      env: {
        ...process.env,
        LPM_TEST_COUNTS_FILE: file,
        NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --experimental-vm-modules --no-warnings`.trim(),
      },
    });
    if (!existsSync(file))
      return { passed: 0, failed: 0, brokenSuites: 0, skipped: 0, status: jest.status, completed: false };
    const counts = JSON.parse(readFileSync(file, 'utf8')) as RunCounts;
    return { ...counts, status: jest.status, completed: true };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The failures a run adds to the closing line: at least one when Jest did not complete or exited non-zero. */
export function failuresOf(run: JestRun): number {
  const failed = run.failed + run.brokenSuites + (run.completed ? 0 : 1);
  return run.status !== 0 && failed === 0 ? 1 : failed;
}
