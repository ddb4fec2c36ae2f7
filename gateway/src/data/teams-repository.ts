// Teams in the store. A team is stored without its settings until they are first
// changed; until then they read as the defaults (domain/accounts.ts).
import type { Collection, Db } from 'mongodb';
import type { CourtCalendarSettings } from '@lpm/shared/court-calendar';
import type { TeamSettings } from '@lpm/shared/identity';
import type { PublicationSettings } from '@lpm/shared/publication-settings';
import { withDocumentLock } from '@lpm/shared/store/lock';
import type { Plan } from '../contract/plans.ts';
import type { TeamRecord } from './entities.ts';
import type { PrincipalChangesRepository } from './principal-changes.ts';

type SettingsField =
  | 'case_phases'
  | 'deal_phases'
  | 'court_calendar'
  | 'cnj_check'
  | 'portal_allowed_origins'
  | 'publications'
  | 'settings_updated_at';

/** A team as written when it is created. */
export type NewTeam = Omit<TeamRecord, SettingsField>;

/** A team as read: its settings fields are absent until first changed. */
export type StoredTeam = NewTeam & Partial<Pick<TeamRecord, SettingsField>>;

/** A change of settings: the fields given, and of the court calendar the parts given. */
export type SettingsWrite = Omit<Partial<TeamSettings>, 'court_calendar'> & {
  court_calendar?: Partial<CourtCalendarSettings>;
  portal_allowed_origins?: string[];
  publications?: Partial<Omit<PublicationSettings, 'deadline'>> & {
    deadline?: Partial<PublicationSettings['deadline']>;
  };
};

const COLLECTION = 'teams';

export class TeamsRepository {
  private readonly db: Db;
  private readonly teams: Collection<StoredTeam>;
  private readonly changes: PrincipalChangesRepository;

  constructor(db: Db, changes: PrincipalChangesRepository) {
    this.db = db;
    this.teams = db.collection<StoredTeam>(COLLECTION);
    this.changes = changes;
  }

  async insert(team: NewTeam): Promise<void> {
    await this.teams.insertOne(team);
  }

  get(id: string): Promise<StoredTeam | null> {
    return this.teams.findOne({ _id: id });
  }

  async setPlan(id: string, plan: Plan): Promise<void> {
    await this.set(id, { plan });
    await this.changes.bump();
  }

  /** Sets the settings fields given, each part of the court calendar given on its own (the rest keeps its values), and when they changed. */
  async setSettings(id: string, settings: SettingsWrite, changedAt: Date): Promise<void> {
    const { court_calendar: calendar, publications, ...fields } = settings;
    const parts: Record<string, unknown> = {};
    for (const [part, value] of Object.entries(calendar ?? {})) parts[`court_calendar.${part}`] = value;
    const { deadline, ...watching } = publications ?? {};
    for (const [part, value] of Object.entries(watching)) parts[`publications.${part}`] = value;
    for (const [part, value] of Object.entries(deadline ?? {})) parts[`publications.deadline.${part}`] = value;
    await this.set(id, { ...fields, ...parts, settings_updated_at: changedAt });
    await this.changes.bump();
  }

  /**
   * A $set under the team's document lock: FerretDB applies an update as a read, a
   * change in Go and a write of the whole document, so two unlocked updates of one
   * team, even of different fields, can lose one (docs/ferretdb.md).
   */
  /** The teams that watch at least one lawyer on the DJEN, for the publications service's poll. */
  watching(): Promise<StoredTeam[]> {
    return this.teams.find({ 'publications.watches.0': { $exists: true } }).toArray();
  }

  private async set(id: string, fields: Record<string, unknown>): Promise<void> {
    await withDocumentLock(this.db, COLLECTION, id, async (lease) => {
      lease.check();
      await this.teams.updateOne({ _id: id }, { $set: fields });
    });
  }
}
