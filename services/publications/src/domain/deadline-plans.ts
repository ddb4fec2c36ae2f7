// What a publication's dates and deadline come to: the activities service computes
// them on the team's court calendar (the rule starts at the day the text was made
// available: publication on the next business day, counting from the one after). A
// poll asks once per team, day and rule, however many publications the day has.
import type { Identity } from '@lpm/shared/identity';
import type { StoredDeadline } from '../data/publication-entity.ts';
import type { DeadlineSettings } from '@lpm/shared/publication-settings';
import type { ComputedDeadline, PublicationDeadlines } from '../upstream/activities-service.ts';

export interface Dates {
  publication_date: string | null;
  /** The deadline the publication carries (null in mode off). */
  deadline: StoredDeadline | null;
}

const KEPT = 2000;

export class DeadlinePlans {
  private readonly deadlines: PublicationDeadlines;
  private readonly computed = new Map<string, Promise<ComputedDeadline>>();

  constructor(deadlines: PublicationDeadlines) {
    this.deadlines = deadlines;
  }

  /** The dates of a publication made available on `day`, by the team's deadline settings. */
  async datesOf(who: Identity, day: string, d: DeadlineSettings): Promise<Dates> {
    const days = d.mode === 'off' ? 1 : d.days;
    const computed = await this.compute(who, day, days, d.counting);
    const deadline =
      d.mode === 'off'
        ? null
        : {
            start_date: computed.start_date,
            due_date: computed.due_date,
            days,
            counting: d.counting,
            trail: JSON.stringify(computed.trail),
          };
    return { publication_date: computed.publication_date, deadline };
  }

  private compute(
    who: Identity,
    day: string,
    days: number,
    counting: DeadlineSettings['counting'],
  ): Promise<ComputedDeadline> {
    const key = JSON.stringify([who.teamId, who.settings.court_calendar, day, days, counting]);
    let found = this.computed.get(key);
    if (!found) {
      if (this.computed.size >= KEPT) this.computed.clear();
      found = this.deadlines.compute(who, { start: { made_available: day }, days, counting });
      this.computed.set(key, found);
      found.catch(() => this.computed.delete(key));
    }
    return found;
  }
}
