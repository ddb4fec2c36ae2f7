// The poller's own records: where each watch's poll stands, and the teams'
// settings as the last poll read them.
import type { Collection, Db } from 'mongodb';
import type { PollStateRecord, PublicationTeamRecord } from './publication-entity.ts';
import type { WatchedTeam } from '@lpm/shared/publication-settings';

export class PollRepository {
  private readonly states: Collection<PollStateRecord>;
  private readonly teams: Collection<PublicationTeamRecord>;

  constructor(db: Db) {
    this.states = db.collection<PollStateRecord>('publication_poll_states');
    this.teams = db.collection<PublicationTeamRecord>('publication_teams');
  }

  state(teamId: string, watch: string): Promise<PollStateRecord | null> {
    return this.states.findOne({ _id: `${teamId}:${watch}` });
  }

  /** The state of a watch first seen: it reads from `since`. A state already there is kept (another poll made it). */
  async begin(teamId: string, watch: string, since: string): Promise<PollStateRecord> {
    const state: PollStateRecord = {
      _id: `${teamId}:${watch}`,
      team_id: teamId,
      watch,
      since,
      read_through: null,
      day: null,
      page: 1,
      updated_at: new Date(),
    };
    await this.states.insertOne(state).catch(() => {});
    return (await this.state(teamId, watch)) ?? state;
  }

  /** Where the poll of a watch stands now: only the poll, under its lease, writes it. */
  async save(state: PollStateRecord): Promise<void> {
    const { _id, ...fields } = state;
    await this.states.updateOne({ _id }, { $set: { ...fields, updated_at: new Date() } });
  }

  async saveTeam(t: WatchedTeam): Promise<void> {
    const doc = { user_id: t.user_id, settings: t.settings, publications: t.publications, updated_at: new Date() };
    const done = await this.teams.updateOne({ _id: t.team_id }, { $set: doc });
    if (done.matchedCount === 0) await this.teams.insertOne({ _id: t.team_id, ...doc }).catch(() => {});
  }

  team(teamId: string): Promise<PublicationTeamRecord | null> {
    return this.teams.findOne({ _id: teamId });
  }
}
