// Which teams get their search snapshot before their first search. A team written in
// bulk (a big firm's records imported) and searched only then would have that first
// search read every record, past the request's time-out (15 s at 100,000). Each
// process counts the writes it marks per team; the first time it has seen a team
// written `threshold` times, it asks for the team's snapshot, once. (The default, twice
// a snapshot's least size, leaves room for the updates among the writes counted.)

/** Teams counted at most; past it the counts start again (a team's writes are then counted anew). */
const MAX_TEAMS = 10_000;

export class WrittenTeams {
  private readonly threshold: number;
  private readonly snapshot: (teamId: string) => Promise<void>;
  private readonly counts = new Map<string, number>();
  private readonly asked = new Set<string>();

  /** `snapshot` makes the team's snapshot unless it has one; when it rejects, the team's writes are counted anew. */
  constructor(threshold: number, snapshot: (teamId: string) => Promise<void>) {
    this.threshold = threshold;
    this.snapshot = snapshot;
  }

  /** A write of the team was marked. */
  written(teamId: string): void {
    if (this.asked.has(teamId)) return;
    const n = (this.counts.get(teamId) ?? 0) + 1;
    if (n < this.threshold) {
      if (n === 1 && this.counts.size >= MAX_TEAMS) this.counts.clear();
      this.counts.set(teamId, n);
      return;
    }
    this.counts.delete(teamId);
    if (this.asked.size >= MAX_TEAMS) this.asked.clear();
    this.asked.add(teamId);
    this.snapshot(teamId).catch(() => this.asked.delete(teamId));
  }
}
