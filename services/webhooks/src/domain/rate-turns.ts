// Turns of webhooks with a `rate_limit`, in two steps (data/rate-reservations.ts). An
// attempt first reserves its webhook's next turn, across replicas, and waits for it:
// in the delay queues while it is a second or more away, then here. That spaces the
// attempts out. Then, just before its POST, after the store reads that a busy machine
// can make slow, it is admitted: the webhook's last POST was a spacing (1000 /
// rate_limit ms) ago or more, or it waits here until it was. Attempts that reach their
// POST late, and together, are held there, so no second ever holds more than the limit
// from the sender's side. A webhook without a limit asks nothing; a turn Redis cannot
// give now is asked again a second later: an attempt waits, it is never dropped.
import type { WebhookRecord } from '../data/webhook-entity.ts';
import { tierAtMost } from './delay-tiers.ts';

/** A turn closer than this is waited for in process; farther, the job goes back to the queue. */
const HOLD_MS = 1000;
/** When Redis cannot give a turn: the job comes back after this long and asks again. */
const UNANSWERED_MS = 1000;

export interface RateReserver {
  /** Ms from now until the webhook's reserved turn. */
  reserve(webhookId: string, perSecond: number): Promise<number>;
  /** 0 when a POST to the webhook may go now (it is then its last); else ms until it may. */
  admit(webhookId: string, perSecond: number): Promise<number>;
}

/** An attempt job, as far as turns go: `not_before` is its reserved turn (ms since the epoch). */
interface TurnJob {
  webhook_id: string;
  not_before?: number;
}

type Limited = Pick<WebhookRecord, '_id' | 'rate_limit'>;

export class RateTurns {
  private readonly reserver: RateReserver | undefined;

  constructor(reserver: RateReserver | undefined) {
    this.reserver = reserver;
  }

  /** Whether attempts to the webhook are paced (it has a limit and limits are kept). */
  paces(webhook: Pick<WebhookRecord, 'rate_limit'>): boolean {
    return this.reserver !== undefined && typeof webhook.rate_limit === 'number';
  }

  /** Whether the job must reserve a turn before its attempt: its webhook has a limit, and it holds none. */
  owes(job: TurnJob, webhook: Pick<WebhookRecord, 'rate_limit'>): boolean {
    return this.paces(webhook) && job.not_before === undefined;
  }

  /** The job with its turn reserved, and how long until it (0: now); unchanged, and a second to wait, when Redis cannot tell. */
  async reserve<J extends TurnJob>(job: J, webhook: Limited): Promise<{ job: J; waitMs: number }> {
    try {
      const waitMs = await this.reserver!.reserve(webhook._id, webhook.rate_limit!);
      return { job: { ...job, not_before: Date.now() + waitMs }, waitMs };
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
    if (left > 0) await sleep(left);
    return true;
  }

  /**
   * A POST to a paced webhook, `post` asking `admit` (see WebhookSlots.post) just before
   * it: waited for here and asked again while the spacing ends before `latest`
   * (ms since the epoch). Resolves with the POST's result, or with how long the attempt
   * should wait elsewhere (ms; a second when Redis cannot tell).
   */
  async admitted<R extends object>(
    webhook: Limited,
    latest: number,
    post: (admit: () => Promise<number>) => Promise<R | number>,
  ): Promise<R | number> {
    const admit = () => this.reserver!.admit(webhook._id, webhook.rate_limit!).catch(() => UNANSWERED_MS);
    for (;;) {
      const result = await post(admit);
      if (typeof result !== 'number' || Date.now() + result > latest) return result;
      await sleep(result);
    }
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
