// The write slots that keep a team's search entries fresh across replicas
// (search-index.ts): every write stores `written_slot`, `<team>:<10 s slot of the
// write>`, and a search reads the slots it has not settled yet.
import { bucketOf } from './markers.ts';

export const WRITTEN_SLOT_FIELD = 'written_slot';
/** The length of a write slot. */
export const WRITE_SLOT_MS = 10_000;
/**
 * A write that answers is in the store at most this long after the instant its
 * marker names: the store's 5 s budget of an operation (time-budgets.ts), time
 * queued before its command (a group commit), and replica clocks apart by less than
 * the document lock's 5 s (lock.ts).
 */
export const LATE_WRITE_MS = 15_000;

/** The slot of instant `at`. */
export const writeSlotOf = (at: number): number => bucketOf(at, WRITE_SLOT_MS);
export const slotMarker = (teamId: string, slot: number): string => `${teamId}:${slot}`;
/** The first slot that a read beginning at `at` does not settle. */
export const firstUnsettled = (at: number): number => Math.floor((at - LATE_WRITE_MS) / WRITE_SLOT_MS);

/** Runs `work` over `items`, `n` at a time; results in order. */
export async function inTurns<T, U>(items: readonly T[], n: number, work: (item: T) => Promise<U>): Promise<U[]> {
  const out: U[] = new Array<U>(items.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < items.length; i = next++) out[i] = await work(items[i]);
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, worker));
  return out;
}
