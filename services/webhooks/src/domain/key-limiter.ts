// At most `limit` deliveries in flight to one webhook, so a receiver that is slow
// or down holds a bounded share of the consumer's prefetch window and the other
// webhooks keep flowing.
//
// A caller may wait a while for a slot of a webhook whose slots turn over, which
// saves a trip through the delay queue; it does not wait for a webhook whose slots
// are all held and none was given back for `stalledAfterMs` (a receiver that hangs
// until the timeout): that wait would only hold the caller's message (an event of
// the fan-out, with other webhooks' first attempts behind it in the prefetch
// window) for nothing, so the caller defers the work at once.
export class KeyLimiter {
  private readonly inFlight = new Map<string, number>();
  private readonly waiters = new Map<string, (() => void)[]>();
  /** When a slot of each key in use was last taken free or given back. */
  private readonly turnedOver = new Map<string, number>();
  private readonly stalledAfterMs: number;

  constructor(opts: { stalledAfterMs?: number } = {}) {
    this.stalledAfterMs = opts.stalledAfterMs ?? 1000;
  }

  /** A slot for `key` within `waitMs` (its release function, idempotent), or null: the caller defers the work. */
  async acquire(key: string, waitMs: number, limit: number): Promise<(() => void) | null> {
    const used = this.inFlight.get(key) ?? 0;
    if (used < limit) {
      this.inFlight.set(key, used + 1);
      this.turnedOver.set(key, Date.now());
      return this.releaser(key);
    }
    if (this.stalled(key)) return null;
    // A released slot is handed straight to the first waiter, so the count never overshoots.
    const handed = await new Promise<boolean>((resolve) => {
      const queue = this.waiters.get(key) ?? [];
      this.waiters.set(key, queue);
      const wake = () => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        queue.splice(queue.indexOf(wake), 1);
        if (queue.length === 0 && this.waiters.get(key) === queue) this.waiters.delete(key);
        resolve(false);
      }, waitMs);
      queue.push(wake);
    });
    return handed ? this.releaser(key) : null;
  }

  /** Every slot of `key` held, and none taken or given back for stalledAfterMs. */
  private stalled(key: string): boolean {
    return Date.now() - (this.turnedOver.get(key) ?? 0) >= this.stalledAfterMs;
  }

  private releaser(key: string): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.turnedOver.set(key, Date.now());
      const queue = this.waiters.get(key);
      const next = queue?.shift();
      if (queue?.length === 0) this.waiters.delete(key);
      if (next) return next();
      const left = (this.inFlight.get(key) ?? 1) - 1;
      if (left <= 0) {
        this.inFlight.delete(key);
        this.turnedOver.delete(key);
      } else this.inFlight.set(key, left);
    };
  }
}
