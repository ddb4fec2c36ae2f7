// Teams in the store. A team is stored without its settings until they are first
// changed; until then they read as the defaults (domain/accounts.ts).
import type { Collection, Db } from 'mongodb';
import type { TeamSettings } from '@lpm/shared/identity';
import type { Plan } from '../contract/plans.ts';
import type { TeamRecord } from './entities.ts';
import type { PrincipalChangesRepository } from './principal-changes.ts';

type SettingsField = 'case_phases' | 'deal_phases' | 'court_calendar' | 'cnj_check' | 'settings_updated_at';

/** A team as written when it is created. */
export type NewTeam = Omit<TeamRecord, SettingsField>;

/** A team as read: its settings fields are absent until first changed. */
export type StoredTeam = NewTeam & Partial<Pick<TeamRecord, SettingsField>>;

export class TeamsRepository {
  private readonly teams: Collection<StoredTeam>;
  private readonly changes: PrincipalChangesRepository;

  constructor(db: Db, changes: PrincipalChangesRepository) {
    this.teams = db.collection<StoredTeam>('teams');
    this.changes = changes;
  }

  async insert(team: NewTeam): Promise<void> {
    await this.teams.insertOne(team);
  }

  get(id: string): Promise<StoredTeam | null> {
    return this.teams.findOne({ _id: id });
  }

  async setPlan(id: string, plan: Plan): Promise<void> {
    await this.teams.updateOne({ _id: id }, { $set: { plan } });
    await this.changes.bump();
  }

  /** Sets the settings fields given (the others keep their values) and when they changed. */
  async setSettings(id: string, settings: Partial<TeamSettings>, changedAt: Date): Promise<void> {
    await this.teams.updateOne({ _id: id }, { $set: { ...settings, settings_updated_at: changedAt } });
    await this.changes.bump();
  }
}
