// A Jest reporter that writes the run's counts, and nothing else, to the file named
// by LPM_TEST_COUNTS_FILE. Jest's own --json output serialises every failure's error
// object and crashes on one that is circular, leaving no results at all; these five
// numbers always serialise.
import { writeFileSync } from 'node:fs';

/** What `npm test` reads back: the counts of one Jest run. */
export interface RunCounts {
  passed: number;
  failed: number;
  /** Suites that failed outside any test (an import error, a throwing beforeAll with no test run). */
  brokenSuites: number;
  skipped: number;
}

interface AggregatedCounts {
  numPassedTests: number;
  numFailedTests: number;
  numRuntimeErrorTestSuites: number;
  numPendingTests: number;
  numTodoTests: number;
}

export default class CountReporter {
  private readonly file: string;

  constructor() {
    const file = process.env.LPM_TEST_COUNTS_FILE;
    if (!file) throw new Error('CountReporter needs LPM_TEST_COUNTS_FILE');
    this.file = file;
  }

  onRunComplete(_contexts: unknown, results: AggregatedCounts): void {
    const counts: RunCounts = {
      passed: results.numPassedTests,
      failed: results.numFailedTests,
      brokenSuites: results.numRuntimeErrorTestSuites,
      skipped: results.numPendingTests + results.numTodoTests,
    };
    writeFileSync(this.file, JSON.stringify(counts));
  }
}
