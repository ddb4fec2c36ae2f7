// How long the launcher waits before it starts a process that died again: compose's
// restart policy and Kubernetes' CrashLoopBackOff, 1 s doubling up to 30 s.
import { backoffDelayMs } from '../shared/src/backoff.ts';

const FIRST_RESTART_DELAY_MS = 1000;
const MAX_RESTART_DELAY_MS = 30_000;

/** A process that ran this long before it died counts as stable: its next death waits the first delay again. */
export const STABLE_AFTER_MS = 60_000;

/** The delay after a death that follows `deathsInARow` earlier ones, each within STABLE_AFTER_MS of its start. */
export function restartDelayMs(deathsInARow: number): number {
  return backoffDelayMs(deathsInARow, { firstMs: FIRST_RESTART_DELAY_MS, maxMs: MAX_RESTART_DELAY_MS });
}
