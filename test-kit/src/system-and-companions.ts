// A running system (running-system.ts) and what it works with in a suite: listeners,
// stand-ins and receivers started before it (its settings point at them) and closed
// only once it has stopped.
import { afterAll, beforeAll } from '@jest/globals';
import { startRunningSystem, type RunningSystem, type SystemOptions } from './running-system.ts';

export interface SystemCompanions {
  /** Starts what the system works with; the settings that point the system at it. */
  start(): Promise<NodeJS.ProcessEnv>;
  /** Keeps the started system and issues what the tests share. */
  ready(sys: RunningSystem): void | Promise<void>;
  /** Closes what `start` (and `ready`) started; it may have started only part of it. */
  close(): Promise<void>;
  options?: SystemOptions;
  startMs?: number;
}

/** Before the suite's tests: the companions, then the system `name` with their settings; after them, the system stopped, then the companions closed. */
export function systemAndCompanionsForSuite(name: string, companions: SystemCompanions): void {
  let sys: RunningSystem | undefined;
  beforeAll(async () => {
    const env = await companions.start();
    sys = await startRunningSystem(name, env, companions.options);
    await companions.ready(sys);
  }, companions.startMs ?? 120_000);
  afterAll(async () => {
    await sys?.stop();
    await companions.close();
  });
}
