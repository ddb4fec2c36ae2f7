// Polls the store's principal change counter (data/principal-changes.ts), one read
// at a time, every pollMs. `latest` is the last poll that answered: the counter it
// read and when it started. The principal cache keeps serving an entry while a poll
// started less than its TTL ago still reads the counter the entry was looked up
// under (principal-cache.ts).
export interface ChangePoll {
  version: number;
  startedAt: number;
}

export interface PrincipalChangesOptions {
  read: () => Promise<number>;
  /** Between the end of a poll and the start of the next (default 250 ms). */
  pollMs?: number;
  now?: () => number;
}

export class PrincipalChanges {
  latest: ChangePoll | undefined;
  private readonly read: () => Promise<number>;
  private readonly pollMs: number;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | undefined;
  private stopped = true;

  constructor(opts: PrincipalChangesOptions) {
    this.read = opts.read;
    this.pollMs = opts.pollMs ?? 250;
    this.now = opts.now ?? Date.now;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    void this.poll();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.latest = undefined;
  }

  private async poll(): Promise<void> {
    const startedAt = this.now();
    try {
      const version = await this.read();
      if (!this.stopped) this.latest = { version, startedAt };
    } catch {
      // The store did not answer: `latest` ages, and the cache falls back to its TTL.
    }
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.poll(), this.pollMs);
    this.timer.unref();
  }
}
