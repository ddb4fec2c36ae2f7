// Periodic work that one process at a time does across replicas: every `periodMs`
// each process tries to take the run lease of `key` (run-lease.ts), and the one that
// holds it does the work while the others skip that turn.
import type { Db } from 'mongodb';
import { RunLease } from './run-lease.ts';

/** Starts the turns; the timer does not keep the process alive. Clear it to stop. */
export function everyUnderLease(
  db: Db,
  key: string,
  periodMs: number,
  work: () => Promise<unknown>,
  failed: (err: unknown) => void,
): NodeJS.Timeout {
  const timer = setInterval(() => {
    void RunLease.take(db, key, periodMs)
      .then(async (lease) => {
        if (!lease) return;
        try {
          await work();
        } finally {
          await lease.release();
        }
      })
      .catch(failed);
  }, periodMs);
  timer.unref();
  return timer;
}
