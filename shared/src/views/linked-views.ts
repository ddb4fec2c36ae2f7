// Records of another service that records here link to (a client, a case): whether
// one exists is asked of its owner at the moment of a write, and its facts are kept
// in a local view (names, titles shown beside records) that the owner's events keep
// current (view-consumer.ts). Projections are for display only.
import type { AppError } from '../errors.ts';
import { isId, type IdKind } from '../ids.ts';
import type { Caller } from '../upstream/service-client.ts';
import type { View, ViewsRepository } from './views-repository.ts';

export interface FactsLookup<F> {
  facts(who: Caller, id: string): Promise<F | null>;
}

interface LinkedViewsOptions<F, V extends View> {
  /** Ids not of this kind name no record: not found without asking. */
  idKind: IdKind;
  lookup: FactsLookup<F>;
  views: ViewsRepository<V>;
  viewOf(teamId: string, facts: F): V;
  notFound(): AppError;
}

export class LinkedViews<F, V extends View> {
  private readonly opts: LinkedViewsOptions<F, V>;

  constructor(opts: LinkedViewsOptions<F, V>) {
    this.opts = opts;
  }

  /** The record as its owner has it now, kept as the view, which it resolves with; the not-found error when it is not the team's. */
  async require(who: Caller, id: string): Promise<V> {
    if (!isId(this.opts.idKind, id)) throw this.opts.notFound();
    const facts = await this.opts.lookup.facts(who, id);
    if (!facts) throw this.opts.notFound();
    const view = this.opts.viewOf(who.teamId, facts);
    await this.opts.views.record(view);
    return view;
  }

  /** The view of facts another service's check found just now (passed on with its answer); not stored here. */
  viewOf(teamId: string, facts: F): V {
    return this.opts.viewOf(teamId, facts);
  }

  find(teamId: string, ids: (string | null | undefined)[]): Promise<Map<string, V>> {
    return this.opts.views.find(teamId, ids);
  }

  /** An owner's event's news (events may arrive out of order: newer facts win). */
  record(teamId: string, facts: F): Promise<void> {
    return this.opts.views.record(this.opts.viewOf(teamId, facts));
  }
}
