// Webhooks portal sessions in the store, found by the digest of their token (unique).
import type { Collection, Db } from 'mongodb';
import type { PortalSessionRecord } from './entities.ts';
import type { PrincipalChangesRepository } from './principal-changes.ts';

export class PortalSessionsRepository {
  private readonly sessions: Collection<PortalSessionRecord>;
  private readonly changes: PrincipalChangesRepository;

  constructor(db: Db, changes: PrincipalChangesRepository) {
    this.sessions = db.collection<PortalSessionRecord>('portal_sessions');
    this.changes = changes;
  }

  async insert(session: PortalSessionRecord): Promise<void> {
    await this.sessions.insertOne(session);
  }

  get(teamId: string, id: string): Promise<PortalSessionRecord | null> {
    return this.sessions.findOne({ _id: id, team_id: teamId });
  }

  /** Any team's session by id: the portal page reads which origins may frame it. */
  byId(id: string): Promise<PortalSessionRecord | null> {
    return this.sessions.findOne({ _id: id });
  }

  findByDigest(digest: string): Promise<PortalSessionRecord | null> {
    return this.sessions.findOne({ digest });
  }

  /** Marks the session revoked at `at`, unless it already is; gateways drop its cached principal. */
  async revoke(teamId: string, id: string, at: Date): Promise<void> {
    await this.sessions.updateOne({ _id: id, team_id: teamId, revoked_at: null }, { $set: { revoked_at: at } });
    await this.changes.bump();
  }
}
