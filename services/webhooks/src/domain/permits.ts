// At most `limit` holders at once in this process; the others wait their turn,
// first come first served. Bounds the POSTs in flight whatever path they take (a
// fan-out holds many events, each with many webhooks), and so the connections they
// open: a burst then reuses connections rather than setting up a TLS session each.
export class Permits {
  private free: number;
  private readonly waiting: (() => void)[] = [];

  constructor(limit: number) {
    this.free = limit;
  }

  /** A permit (its release function, idempotent), once one is free. */
  async acquire(): Promise<() => void> {
    if (this.free > 0) this.free--;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    let released = false;
    return () => {
      if (released) return;
      released = true;
      // Handed straight to the first waiter, so the count never overshoots.
      const next = this.waiting.shift();
      if (next) next();
      else this.free++;
    };
  }
}
