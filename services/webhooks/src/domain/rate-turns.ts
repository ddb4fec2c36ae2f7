// Turns of webhooks with a `rate_limit`: an attempt reserves its webhook's next
// turn (across replicas, data/rate-reservations.ts) and waits for it, in the delay
// queues while it is a second or more away, then here. A webhook without a limit
// asks nothing. A turn Redis cannot give now is asked again a second later: an
// attempt waits, it is never dropped.
//
// An attempt that reaches its POST more than one turn's spacing after its turn (a
// busy process, a late queue) would be sent together with the attempts whose turns
// came next: it reserves a new turn instead, at most MAX_TURNS in all, so the
// receiver sees the spacing and a late attempt is still sent.
import type { WebhookRecord } from '../data/webhook-entity.ts';
import { tierAtMost } from './delay-tiers.ts';

/** A turn closer than this is waited for in process; farther, the job goes back to the queue. */
const HOLD_MS = 1000;
/** When Redis cannot give a turn: the job comes back after this long and asks again. */
const UNANSWERED_MS = 1000;
/** Turns an attempt reserves at most: after that it is sent however late its turn. */
const MAX_TURNS = 3;

export interface RateReserver {
  /** Ms from now until the webhook's reserved turn. */
  reserve(webhookId: string, perSecond: number): Promise<number>;
}

/** An attempt job, as far as turns go: `not_before` is its reserved turn (ms since the epoch). */
interface TurnJob {
  webhook_id: string;
  not_before?: number;
  /** Turns reserved so far (absent: one, when it holds a turn). */
  turns?: number;
}

export class RateTurns {
  private readonly reserver: RateReserver | undefined;

  constructor(reserver: RateReserver | undefined) {
    this.reserver = reserver;
  }

  /** Whether the job must reserve a turn before its attempt: its webhook has a limit, and it holds none. */
  owes(job: TurnJob, webhook: Pick<WebhookRecord, 'rate_limit'>): boolean {
    return this.reserver !== undefined && typeof webhook.rate_limit === 'number' && job.not_before === undefined;
  }

  /** Whether the job holds a turn that passed more than one spacing ago, and may reserve another. */
  late(job: TurnJob, webhook: Pick<WebhookRecord, 'rate_limit'>): boolean {
    return (
      this.reserver !== undefined &&
      typeof webhook.rate_limit === 'number' &&
      job.not_before !== undefined &&
      (job.turns ?? 1) < MAX_TURNS &&
      Date.now() - job.not_before > 1000 / webhook.rate_limit
    );
  }

  /** The job with its turn reserved, and how long until it (0: now); unchanged, and a second to wait, when Redis cannot tell. */
  async reserve<J extends TurnJob>(
    job: J,
    webhook: Pick<WebhookRecord, '_id' | 'rate_limit'>,
  ): Promise<{ job: J; waitMs: number }> {
    try {
      const waitMs = await this.reserver!.reserve(webhook._id, webhook.rate_limit!);
      const turns = job.not_before === undefined ? 1 : (job.turns ?? 1) + 1;
      return { job: { ...job, not_before: Date.now() + waitMs, turns }, waitMs };
    } catch {
      return { job, waitMs: UNANSWERED_MS };
    }
  }

  /** The delay to queue a job with for a wait: the largest delay tier within it (the rest is held in process). */
  queueDelay(waitMs: number): number {
    return tierAtMost(waitMs);
  }

  /**
   * For a job holding a turn: true once the turn has come (waited for here when it is
   * less than HOLD_MS away); false when it went back to the queue to wait there.
   */
  async arrived<J extends TurnJob>(job: J, push: (job: J, delayMs: number) => Promise<void>): Promise<boolean> {
    const left = (job.not_before ?? 0) - Date.now();
    if (left >= HOLD_MS) {
      await push(job, tierAtMost(left));
      return false;
    }
    if (left > 0) await new Promise((r) => setTimeout(r, left));
    return true;
  }
}
