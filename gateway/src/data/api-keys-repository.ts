// API keys in the store, found by the digest of the raw key (unique).
import type { Db } from 'mongodb';
import { DigestCredentials } from './digest-credentials.ts';
import type { ApiKeyRecord } from './entities.ts';
import type { PrincipalChangesRepository } from './principal-changes.ts';

export class ApiKeysRepository extends DigestCredentials<ApiKeyRecord> {
  constructor(db: Db, changes: PrincipalChangesRepository) {
    super(db, 'api_keys', changes);
  }

  get(id: string): Promise<ApiKeyRecord | null> {
    return this.records.findOne({ _id: id });
  }

  /** Marks the key revoked at `at`, unless it already is (its first revocation time stays). */
  revoke(id: string, at: Date): Promise<void> {
    return this.revokeWhere({ _id: id }, at);
  }
}
