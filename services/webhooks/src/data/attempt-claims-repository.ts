// Claims of queued attempts: a queued attempt is claimed before it is sent, so it is
// sent once however many copies of its job run at the same moment.
import { randomUUID } from 'node:crypto';
import type { Db } from 'mongodb';
import { takeTimeSlots, type SlotDoc } from '@lpm/shared/store/lock';
import { sweepBuckets } from '@lpm/shared/store/markers';
import { SWEEP } from '@lpm/shared/store/time-budgets';
import { escapeRegex } from '@lpm/shared/text';
import { WebhookData } from './collections.ts';
import { ATTEMPT_CLAIMS, type AttemptClaimRecord } from './webhook-entity.ts';

/** Delivery ids per query when their attempt claims are dropped (one anchored regex over `_id` each). */
const CLAIM_BATCH = 200;

/** Attempt n of a delivery, held by one sender. */
export interface AttemptClaim {
  /** Until this instant (ms since the epoch) no other copy can claim the attempt: the holder's send and record must be done by then. */
  readonly exclusiveUntil: number;
  /** Gives the claim up (once the outcome is stored, or nothing was sent). */
  release(): Promise<void>;
}

/** Claims are `<delivery>:<attempt>:<slot>`: dropped by a prefix of their `_id`. */
export async function dropClaimsOf(db: Db, deliveryIds: string[]): Promise<void> {
  if (deliveryIds.length === 0) return;
  const claims = db.collection<AttemptClaimRecord>(ATTEMPT_CLAIMS);
  for (let i = 0; i < deliveryIds.length; i += CLAIM_BATCH) {
    const alternatives = deliveryIds
      .slice(i, i + CLAIM_BATCH)
      .map(escapeRegex)
      .join('|');
    await claims.deleteMany({ _id: { $regex: `^(?:${alternatives}):` } }, SWEEP);
  }
}

export class AttemptClaimsRepository extends WebhookData {
  private readonly claimMs: number;

  /**
   * `claimMs`: how long a claim on an attempt is exclusive at least (at most twice
   * this: the time slots below). A claim whose holder died is taken over after that.
   */
  constructor(db: Db, claimMs: number) {
    super(db);
    this.claimMs = claimMs;
  }

  /**
   * Claims attempt `attempt` of a delivery for this caller, or null when another
   * holds it. FerretDB makes only a unique insert atomic, so a claim is inserts, as
   * the document lock is (shared store/lock.ts): time slots of claimMs, the
   * current and the next, `<delivery>:<attempt>:<slot>`. Both inserts succeed for
   * one caller only, and holding both covers at least claimMs from now. A
   * holder that dies leaves them; they bar the attempt until the slots have passed
   * (at most twice claimMs), and no later claim reuses them, so a takeover
   * needs no delete or update.
   */
  async claimAttempt(deliveryId: string, attempt: number): Promise<AttemptClaim | null> {
    const period = this.claimMs;
    try {
      const taken = await takeTimeSlots(
        this.db.collection<SlotDoc>(ATTEMPT_CLAIMS),
        `${deliveryId}:${attempt}`,
        period,
        randomUUID(),
        (slot) => ({ slot }),
      );
      return taken && { exclusiveUntil: (taken.slot + 2) * period, release: () => taken.release() };
    } catch (e) {
      throw new Error(`claim of attempt ${attempt} of ${deliveryId} failed`, { cause: e });
    }
  }

  /**
   * Drops the claims of holders that died, a claim period after their slot ended
   * (no claim can take those ids again): slot by slot, by the `slot` marker.
   */
  async dropExpiredClaims(now = new Date()): Promise<number> {
    const period = this.claimMs;
    // Slot s ends at (s + 1) * period: over for a period when (s + 2) * period < now.
    const upto = Math.ceil(now.getTime() / period) - 2;
    const cutoff = new Date(now.getTime() - period);
    // A cursor per period: slot numbers of another period are other buckets.
    return sweepBuckets(this.db, `sweep:${ATTEMPT_CLAIMS}:slot:${period}`, upto, {
      bucket: async (slot) => (await this.collections.claims.deleteMany({ slot })).deletedCount,
      range: async () => (await this.collections.claims.deleteMany({ expires_at: { $lt: cutoff } })).deletedCount,
    });
  }
}
