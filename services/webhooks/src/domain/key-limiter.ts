// At most `limit` deliveries in flight to one webhook, so a receiver that is slow
// or down holds a bounded share of the consumer's prefetch window and the other
// webhooks keep flowing.
export class KeyLimiter {
  private readonly inFlight = new Map<string, number>();
  private readonly waiters = new Map<string, (() => void)[]>();

  /**
   * A slot for `key` within `waitMs` (its release function, idempotent), or null: the
   * caller defers the work. Each time `waitMs` runs out, `keepWaiting` may grant another.
   */
  async acquire(
    key: string,
    waitMs: number,
    limit: number,
    keepWaiting: () => boolean = () => false,
  ): Promise<(() => void) | null> {
    const used = this.inFlight.get(key) ?? 0;
    if (used < limit) {
      this.inFlight.set(key, used + 1);
      return this.releaser(key);
    }
    // A released slot is handed straight to the first waiter, so the count never overshoots.
    const handed = await new Promise<boolean>((resolve) => {
      const queue = this.waiters.get(key) ?? [];
      this.waiters.set(key, queue);
      const wake = () => {
        clearTimeout(timer);
        resolve(true);
      };
      const expire = () => {
        if (keepWaiting()) {
          timer = setTimeout(expire, waitMs);
          return;
        }
        queue.splice(queue.indexOf(wake), 1);
        if (queue.length === 0 && this.waiters.get(key) === queue) this.waiters.delete(key);
        resolve(false);
      };
      let timer = setTimeout(expire, waitMs);
      queue.push(wake);
    });
    return handed ? this.releaser(key) : null;
  }

  private releaser(key: string): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const queue = this.waiters.get(key);
      const next = queue?.shift();
      if (queue?.length === 0) this.waiters.delete(key);
      if (next) return next();
      const left = (this.inFlight.get(key) ?? 1) - 1;
      if (left <= 0) this.inFlight.delete(key);
      else this.inFlight.set(key, left);
    };
  }
}
