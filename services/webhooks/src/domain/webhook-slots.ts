// Flow control of the attempts (Deliveries): each webhook's slots, the process's POST
// permits, and what the last answers of each webhook say about the next attempts'
// wait (struggling: one slot, at once back to the queue; slow or hanging: a short
// wait). A struggling or slow receiver holds its own slots, never the others'.
import type { SendResult } from '../upstream/webhook-sender.ts';
import type { KeyLimiter } from './key-limiter.ts';
import { Permits } from './permits.ts';
import { PostLatency } from './post-latency.ts';
import {
  DEFER_MS,
  QUICK_SLOT_WAIT_MS,
  SLOT_CHECK_MS,
  SLOT_WAIT_MS,
  SLOW_POST_FACTOR,
  SLOW_POST_MS,
  STRUGGLING_DEFER_MS,
  STRUGGLING_SLOT_WAIT_MS,
} from './slot-timing.ts';

export interface WebhookSlotsOptions {
  limiter: KeyLimiter;
  /** Attempts in flight to one webhook; one while its last attempt failed. */
  perWebhook: number;
  /** POSTs in flight in this process, whatever path they take. */
  concurrency: number;
}

export class WebhookSlots {
  private readonly opts: WebhookSlotsOptions;
  /** Webhooks whose last attempt here failed: they get one slot, so a receiver that times out holds one, not `perWebhook`. */
  private readonly struggling = new Set<string>();
  /** Webhooks whose last attempt here succeeded slowly (SLOW_POST_MS). */
  private readonly slow = new Set<string>();
  private readonly sending: Permits;
  /** When each POST in flight to a webhook began, by webhook. */
  private readonly postsSince = new Map<string, number[]>();
  private readonly postLatency = new PostLatency(SLOW_POST_MS, SLOW_POST_FACTOR);

  constructor(opts: WebhookSlotsOptions) {
    this.opts = opts;
    this.sending = new Permits(opts.concurrency);
  }

  /**
   * A slot of the webhook's within SLOT_WAIT_MS, or within QUICK_SLOT_WAIT_MS while it
   * answers quickly (its only one, within STRUGGLING_SLOT_WAIT_MS, while it struggles), or null,
   * at once when one of its POSTs hangs.
   */
  slot(webhookId: string): Promise<(() => void) | null> {
    if (this.struggling.has(webhookId)) return this.opts.limiter.acquire(webhookId, STRUGGLING_SLOT_WAIT_MS, 1);
    const now = Date.now();
    const waitUntil = now + SLOT_WAIT_MS;
    const giveUpAt = now + QUICK_SLOT_WAIT_MS;
    const worthWaiting = () => {
      if (this.struggling.has(webhookId) || this.hanging(webhookId)) return false;
      const t = Date.now();
      return t < waitUntil || (!this.slow.has(webhookId) && t < giveUpAt);
    };
    return this.opts.limiter.acquire(webhookId, SLOT_CHECK_MS, this.opts.perWebhook, worthWaiting);
  }

  /** Whether a POST to the webhook has been in flight for longer than a slow one lasts. */
  private hanging(webhookId: string): boolean {
    const since = this.postsSince.get(webhookId);
    return since !== undefined && Date.now() - Math.min(...since) > this.postLatency.slowAfterMs;
  }

  /** How long an attempt that found no free slot of the webhook waits in the queue. */
  deferMs(webhookId: string): number {
    return this.struggling.has(webhookId) ? STRUGGLING_DEFER_MS : DEFER_MS;
  }

  /**
   * Runs a POST to the webhook within a permit of the process, and notes what its
   * answer says of the webhook. With `admit` (a rate limit's, rate-turns.ts), asked
   * within the permit so that nothing stands between an admission and its POST (the
   * permits are as many as the connections to an origin): when it answers a wait,
   * the permit is given back and that wait (ms) is the result, nothing sent.
   */
  post(webhookId: string, send: () => Promise<SendResult>): Promise<SendResult>;
  post(webhookId: string, send: () => Promise<SendResult>, admit: () => Promise<number>): Promise<SendResult | number>;
  async post(webhookId: string, send: () => Promise<SendResult>, admit?: () => Promise<number>) {
    const permit = await this.sending.acquire();
    if (admit) {
      const waitMs = await admit().catch((e: unknown) => {
        permit();
        throw e;
      });
      if (waitMs > 0) {
        permit();
        return waitMs;
      }
    }
    const since = this.postsSince.get(webhookId) ?? [];
    const began = Date.now();
    since.push(began);
    this.postsSince.set(webhookId, since);
    let result: SendResult;
    try {
      result = await send();
    } finally {
      permit();
      since.splice(since.indexOf(began), 1);
      if (since.length === 0) this.postsSince.delete(webhookId);
    }
    if (result.ok) this.struggling.delete(webhookId);
    else this.struggling.add(webhookId);
    if (result.ok && result.latencyMs > this.postLatency.slowAfterMs) this.slow.add(webhookId);
    else this.slow.delete(webhookId);
    if (result.statusCode !== null) this.postLatency.answered(result.latencyMs);
    return result;
  }
}
