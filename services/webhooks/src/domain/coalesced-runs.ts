// One run of a piece of work per key at a time in this process. A request while a
// run is under way returns at once, having made sure one more run follows it
// (shared by every request meanwhile): work that picks up "everything so far" (the
// counters over attempts) then covers the request's part too, without the
// requester waiting for two runs.
const ignore = () => {};

interface Runs {
  /** The run under way, settled either way. */
  settled: Promise<void>;
  followUp: boolean;
}

export class CoalescedRuns {
  private readonly byKey = new Map<string, Runs>();

  /**
   * Runs `work` now and resolves with it when no run for `key` is under way;
   * otherwise resolves at once. A follow-up run's failure is dropped: the work
   * must be repeated by something else too (for the counters, the maintenance sweep).
   */
  request(key: string, work: () => Promise<unknown>): Promise<void> {
    const runs = this.byKey.get(key);
    if (!runs) return this.begin(key, work);
    if (!runs.followUp) {
      runs.followUp = true;
      void runs.settled.then(() => this.begin(key, work).catch(ignore));
    }
    return Promise.resolve();
  }

  private begin(key: string, work: () => Promise<unknown>): Promise<void> {
    const done = Promise.resolve().then(work).then(ignore);
    const runs: Runs = { settled: done.then(ignore, ignore), followUp: false };
    this.byKey.set(key, runs);
    // Registered before a follow-up's start, so it sees whether one follows.
    void runs.settled.then(() => {
      if (this.byKey.get(key) === runs && !runs.followUp) this.byKey.delete(key);
    });
    return done;
  }
}
