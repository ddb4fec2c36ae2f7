// The service's collections: publications (with their outbox), the poller's resume
// state per watch and day, the teams' settings as last read, and the local view of
// the cases' numbers that matching reads.
import { p } from '@mikro-orm/mongodb';
import { idEntity, storedEntity, teamEntity, viewEntity } from '@lpm/shared/store/entities';
import type { RecordOf } from '@lpm/shared/store/orm';
import { PUBLICATION_STATUSES } from '../contract/publication-schemas.ts';
import type { PublicationSettings } from '@lpm/shared/publication-settings';
import type { TeamSettings } from '@lpm/shared/identity';
import type { TrailDay } from '../upstream/activities-service.ts';

/**
 * A deadline as stored: its trail (a day for every calendar day it spans) as one JSON
 * string, which the local store decodes as one value; as an array of objects it cost
 * the store three times as much on every read of a publication (docs/ferretdb.md).
 * Records stored before hold the array.
 */
export interface StoredDeadline {
  start_date: string;
  due_date: string;
  days: number;
  counting: string;
  trail: string | TrailDay[];
}

export const PublicationEntity = storedEntity('Publication', 'publications', {
  properties: {
    djen_id: p.integer(),
    hash: p.string(),
    made_available_date: p.string(),
    publication_date: p.string().strictNullable(),
    court: p.string(),
    organ: p.string().strictNullable(),
    kind: p.string().strictNullable(),
    document_type: p.string().strictNullable(),
    class: p.json<{ code: string | null; name: string | null }>().strictNullable(),
    case_number: p.string().strictNullable(),
    /** The case number's 20 digits (null when it has not 20): what matching compares. */
    case_digits: p.string().strictNullable(),
    text: p.string(),
    text_plain: p.string(),
    /** text_plain folded (lower case, no accents) for the search filter: FerretDB has no collation. */
    search_text: p.string(),
    link: p.string().strictNullable(),
    active: p.boolean(),
    recipients: p.json<{ name: string; side: string | null }[]>(),
    lawyers: p.json<{ name: string; oab_number: string; oab_uf: string }[]>(),
    /** The team's watches (`<uf>:<number>`) that found it. */
    watches: p.json<string[]>(),
    case_id: p.string().strictNullable(),
    /** 1 while unmatched: the equality marker a case's number finds its publications by. */
    unmatched: p.integer(),
    status: p.enum(PUBLICATION_STATUSES),
    deadline: p.json<StoredDeadline>().strictNullable(),
    activity_id: p.string().strictNullable(),
    /** 1 while create mode owes this matched publication its deadline activity (the repair settles it). */
    activity_pending: p.integer(),
  },
  indexes: [
    { properties: ['team_id', 'made_available_date', '_id'] },
    { properties: ['team_id', 'status', 'made_available_date', '_id'] },
    { properties: ['team_id', 'case_id', 'made_available_date', '_id'] },
    { properties: ['team_id', 'unmatched', 'case_digits'] },
    { properties: ['activity_pending'] },
  ],
  uniques: [{ properties: ['team_id', 'djen_id'] }],
});

export type PublicationRecord = RecordOf<typeof PublicationEntity>;

/** Where the poll of one watch of a team stands: the days read in full and the page reached in the day under way. */
export const PollStateEntity = teamEntity('PublicationPollState', 'publication_poll_states', {
  properties: {
    watch: p.string(),
    /** The first day this watch reads (its backfill's start). */
    since: p.string(),
    /** Every day up to it read in full (null: none yet). */
    read_through: p.string().strictNullable(),
    /** The day under way and its next page: a poll stopped in the middle resumes here. */
    day: p.string().strictNullable(),
    page: p.integer(),
    updated_at: p.datetime(),
  },
  indexes: [{ properties: ['team_id'] }],
});

export type PollStateRecord = RecordOf<typeof PollStateEntity>;

/** A team's settings as the last poll read them from the gateway: a write of the API counts its deadlines with them. */
export const PublicationTeamEntity = idEntity('PublicationTeam', 'publication_teams', {
  properties: {
    /** Whom the service acts for in other services on the team's behalf (its owner). */
    user_id: p.string(),
    settings: p.json<TeamSettings>(),
    publications: p.json<PublicationSettings>(),
    updated_at: p.datetime(),
  },
});

export type PublicationTeamRecord = RecordOf<typeof PublicationTeamEntity>;

/** The local view of the cases' numbers, fed by case events: only what matching needs. */
export const CaseNumberEntity = viewEntity('PublicationCaseNumber', 'publication_case_numbers', {
  properties: {
    digits: p.string().strictNullable(),
  },
  // The number first: the local store serves an equality from an index on the first field only
  // (docs/ferretdb.md), and a team's own index would match every case it has.
  indexes: [{ properties: ['digits', 'team_id'] }],
});

export type CaseNumberRecord = RecordOf<typeof CaseNumberEntity>;
