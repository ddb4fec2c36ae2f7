// Webhooks portal sessions in the store, found by the digest of their token (unique).
import type { Db } from 'mongodb';
import { DigestCredentials } from './digest-credentials.ts';
import type { PortalSessionRecord } from './entities.ts';
import type { PrincipalChangesRepository } from './principal-changes.ts';

export class PortalSessionsRepository extends DigestCredentials<PortalSessionRecord> {
  constructor(db: Db, changes: PrincipalChangesRepository) {
    super(db, 'portal_sessions', changes);
  }

  get(teamId: string, id: string): Promise<PortalSessionRecord | null> {
    return this.records.findOne({ _id: id, team_id: teamId });
  }

  /** Any team's session by id: the portal page reads which origins may frame it. */
  byId(id: string): Promise<PortalSessionRecord | null> {
    return this.records.findOne({ _id: id });
  }

  /** Marks the session revoked at `at`, unless it already is; gateways drop its cached principal. */
  revoke(teamId: string, id: string, at: Date): Promise<void> {
    return this.revokeWhere({ _id: id, team_id: teamId }, at);
  }
}
