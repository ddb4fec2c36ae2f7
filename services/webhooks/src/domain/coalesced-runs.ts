// One run of a piece of work per key at a time in this process: a call while a run
// is under way is served by the one run queued behind it, shared by every call
// meanwhile. Each call is served by a run that starts after it, so work that picks
// up "everything so far" (the counters over attempts) still covers the caller's.
const ignore = () => {};

interface Runs {
  /** The run under way, settled either way. */
  settled: Promise<void>;
  queued: Promise<void> | null;
}

export class CoalescedRuns {
  private readonly byKey = new Map<string, Runs>();

  run(key: string, work: () => Promise<unknown>): Promise<void> {
    const runs = this.byKey.get(key);
    if (!runs) return this.begin(key, work);
    runs.queued ??= runs.settled.then(() => this.begin(key, work));
    return runs.queued;
  }

  private begin(key: string, work: () => Promise<unknown>): Promise<void> {
    const done = Promise.resolve().then(work).then(ignore);
    const runs: Runs = { settled: done.then(ignore, ignore), queued: null };
    this.byKey.set(key, runs);
    // Registered before any queued run's start, so it sees whether one follows.
    void runs.settled.then(() => {
      if (this.byKey.get(key) === runs && !runs.queued) this.byKey.delete(key);
    });
    return done;
  }
}
