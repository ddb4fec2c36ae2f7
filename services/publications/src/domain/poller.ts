// The poll of the DJEN: for each team's watch, each day from where its last poll
// stopped to today, every page of 100. Where it stands is stored after every page, so
// a poll stopped anywhere (an outage, a restart, a lost lease) resumes at that page:
// pages read again find their publications already kept. A day read in full is not
// asked again, except yesterday and today, which courts may still add to.
import { dayIn, nextDay } from '@lpm/shared/time';
import type { Logger } from '@lpm/shared/logger';
import { MAX_BACKFILL_DAYS, watchKey, type Watch } from '@lpm/shared/publication-settings';
import type { PollRepository } from '../data/poll-repository.ts';
import type { PollStateRecord } from '../data/publication-entity.ts';
import { PAGE_SIZE, type DjenClient } from '../upstream/djen-client.ts';
import type { WatchSource } from '../upstream/gateway-watches.ts';
import { intake, type IntakeDeps } from './intake.ts';
import type { Publications } from './publications.ts';
import { contextOf, type TeamContext } from './team-context.ts';

/** The DJEN's days are Brasília's. */
const DJEN_ZONE = 'America/Sao_Paulo';

export interface PollerDeps extends Omit<IntakeDeps, 'plans'> {
  source: WatchSource;
  djen: DjenClient;
  poll: PollRepository;
  domain: Publications;
  logger?: Logger;
  now?: () => Date;
}

export interface PollSummary {
  requests: number;
  received: number;
  updated: number;
}

/** Asked before every request: false when the poll must stop (its lease lost, the process stopping). */
export type KeepGoing = () => Promise<boolean>;

const addDays = (day: string, n: number) =>
  new Date(Date.parse(`${day}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);

export class Poller {
  private readonly deps: PollerDeps;

  constructor(deps: PollerDeps) {
    this.deps = deps;
  }

  /** One poll of every team's watches; stops early (its place kept) when `keepGoing` says so or the API does not answer. */
  async run(keepGoing: KeepGoing = async () => true): Promise<PollSummary> {
    const summary: PollSummary = { requests: 0, received: 0, updated: 0 };
    const teams = await this.deps.source.teams();
    for (const team of teams) await this.deps.poll.saveTeam(team);
    const today = dayIn(DJEN_ZONE, this.deps.now?.() ?? new Date());
    for (const team of teams) {
      const ctx = contextOf(team);
      for (const watch of team.publications.watches) {
        if (!(await this.pollWatch(ctx, watch, today, summary, keepGoing))) return summary;
      }
    }
    await this.deps.domain.settleOwedActivities();
    return summary;
  }

  /** False when the poll stopped before the end of this watch. */
  private async pollWatch(
    ctx: TeamContext,
    watch: Watch,
    today: string,
    summary: PollSummary,
    keepGoing: KeepGoing,
  ): Promise<boolean> {
    const key = watchKey(watch);
    const backfill = Math.min(ctx.publications.backfill_days, MAX_BACKFILL_DAYS);
    const state =
      (await this.deps.poll.state(ctx.who.teamId, key)) ??
      (await this.deps.poll.begin(ctx.who.teamId, key, addDays(today, -backfill)));
    const yesterday = addDays(today, -1);
    let day = state.day ?? (state.read_through ? nextDay(state.read_through) : state.since);
    if (state.day === null && day > yesterday) day = yesterday;
    for (; day <= today; day = nextDay(day)) {
      if (!(await this.pollDay(ctx, watch, state, day, summary, keepGoing))) return false;
      // A day is read in full for good once it is before yesterday.
      const doneThrough =
        day < yesterday && (state.read_through === null || state.read_through < day) ? day : state.read_through;
      Object.assign(state, { read_through: doneThrough, day: null, page: 1 });
      await this.deps.poll.save(state);
    }
    return true;
  }

  private async pollDay(
    ctx: TeamContext,
    watch: Watch,
    state: PollStateRecord,
    day: string,
    summary: PollSummary,
    keepGoing: KeepGoing,
  ): Promise<boolean> {
    for (let page = state.day === day ? state.page : 1; ; page++) {
      if (!(await keepGoing())) return false;
      const answer = await this.deps.djen
        .page({ oab_number: watch.oab_number, oab_uf: watch.oab_uf, day, page })
        .catch((err: unknown) => {
          this.deps.logger?.warn(
            { err, team: ctx.who.teamId, watch: watchKey(watch), day, page },
            'DJEN poll stopped; it resumes at this page',
          );
          return null;
        });
      if (!answer) return false;
      summary.requests++;
      const done = await intake({ ...this.deps, plans: this.deps.domain.plans }, ctx, watchKey(watch), answer.items);
      summary.received += done.received;
      summary.updated += done.updated;
      for (const owed of done.owed) await this.deps.domain.settleActivity(ctx, owed).catch(() => {});
      const last = answer.items.length + answer.unreadable < PAGE_SIZE || page * PAGE_SIZE >= answer.count;
      Object.assign(state, { day, page: page + 1 });
      await this.deps.poll.save(state);
      if (last) return true;
    }
  }
}
