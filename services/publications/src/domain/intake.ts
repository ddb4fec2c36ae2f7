// A page of DJEN communications into the team's publications: each kept once per
// team (its id derived from the team and the DJEN id, so a page read again, by a
// retry, a restart or another watch, finds the record already there), matched to the
// team's case of the same number, dated and given its deadline by the team's mode.
import { newEvent } from '@lpm/shared/events';
import { derivedId } from '@lpm/shared/ids';
import type { PublicationRecord } from '../data/publication-entity.ts';
import type { PublicationsRepository } from '../data/publications-repository.ts';
import type { CaseNumbersRepository } from '../data/case-numbers-repository.ts';
import type { DjenItem } from '../upstream/djen-items.ts';
import { contentOf, viewOf } from './publication-shape.ts';
import type { DeadlinePlans } from './deadline-plans.ts';
import type { TeamContext } from './team-context.ts';

export interface IntakeDeps {
  publications: PublicationsRepository;
  caseNumbers: CaseNumbersRepository;
  plans: DeadlinePlans;
}

export interface IntakeResult {
  received: number;
  updated: number;
  /** New matched publications create mode owes an activity. */
  owed: PublicationRecord[];
}

/** The same for every read of one communication by one team; its time part is the day it was made available. */
export const publicationId = (teamId: string, item: DjenItem) =>
  derivedId('pub', Date.parse(item.made_available_date), `${teamId}:${item.id}`);

export async function intake(
  deps: IntakeDeps,
  ctx: TeamContext,
  watch: string,
  page: DjenItem[],
): Promise<IntakeResult> {
  const teamId = ctx.who.teamId;
  const items = [...new Map(page.map((i) => [i.id, i])).values()];
  const existing = await deps.publications.existing(
    teamId,
    items.map((i) => publicationId(teamId, i)),
  );
  const fresh = items.filter((i) => !existing.has(i.id));
  const cases = await deps.caseNumbers.casesOf(teamId, [
    ...new Set(fresh.map((i) => contentOf(i).case_digits).filter((d) => d !== null)),
  ]);
  const now = new Date();
  const records = await Promise.all(
    fresh.map(async (item): Promise<PublicationRecord> => {
      const content = contentOf(item);
      const caseId = content.case_digits ? (cases.get(content.case_digits) ?? null) : null;
      const dates = await deps.plans.datesOf(ctx.who, item.made_available_date, ctx.publications.deadline);
      const owes = ctx.publications.deadline.mode === 'create' && caseId !== null;
      return {
        _id: publicationId(teamId, item),
        team_id: teamId,
        ...content,
        ...dates,
        watches: [watch],
        case_id: caseId,
        unmatched: caseId ? 0 : 1,
        status: 'new',
        activity_id: null,
        activity_pending: owes ? 1 : 0,
        created_at: now,
        updated_at: now,
        version: 1,
      };
    }),
  );
  await Promise.all(
    records.map((r) => deps.publications.insert(r, [newEvent('publication.received', teamId, viewOf(r))])),
  );
  const updated = await Promise.all(
    items.filter((i) => existing.has(i.id)).map((i) => refresh(deps, existing.get(i.id)!, i, watch)),
  );
  return {
    received: records.length,
    updated: updated.filter(Boolean).length,
    owed: records.filter((r) => r.activity_pending === 1),
  };
}

/** A communication read again: its watch added, and its content when the court changed it (cancelled, replaced). */
async function refresh(deps: IntakeDeps, read: PublicationRecord, item: DjenItem, watch: string): Promise<boolean> {
  const content = contentOf(item);
  const changedContent = content.hash !== read.hash || content.active !== read.active || content.text !== read.text;
  if (!changedContent && read.watches.includes(watch)) return false;
  return deps.publications.updateRead(read, async (current) => {
    const watches = current.watches.includes(watch) ? current.watches : [...current.watches, watch];
    const contentNow =
      content.hash !== current.hash || content.active !== current.active || content.text !== current.text;
    if (!contentNow && watches === current.watches) return { result: false };
    const now = new Date();
    const { djen_id: _, made_available_date: __, case_digits: ___, ...kept } = content;
    const set: Partial<PublicationRecord> = contentNow ? { ...kept, watches, updated_at: now } : { watches };
    if (!contentNow) return { result: false, write: { set, events: [] } };
    const next = { ...current, ...set };
    const previous = { hash: current.hash, active: current.active, text: current.text };
    return {
      result: true,
      write: { set, events: [newEvent('publication.updated', current.team_id, viewOf(next), previous)] },
    };
  });
}
