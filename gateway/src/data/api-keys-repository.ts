// API keys in the store, found by the digest of the raw key (unique).
import type { Collection, Db } from 'mongodb';
import type { ApiKeyRecord } from './entities.ts';
import type { PrincipalChangesRepository } from './principal-changes.ts';

export class ApiKeysRepository {
  private readonly keys: Collection<ApiKeyRecord>;
  private readonly changes: PrincipalChangesRepository;

  constructor(db: Db, changes: PrincipalChangesRepository) {
    this.keys = db.collection<ApiKeyRecord>('api_keys');
    this.changes = changes;
  }

  async insert(key: ApiKeyRecord): Promise<void> {
    await this.keys.insertOne(key);
  }

  get(id: string): Promise<ApiKeyRecord | null> {
    return this.keys.findOne({ _id: id });
  }

  findByDigest(digest: string): Promise<ApiKeyRecord | null> {
    return this.keys.findOne({ digest });
  }

  /** Marks the key revoked at `at`, unless it already is (its first revocation time stays). */
  async revoke(id: string, at: Date): Promise<void> {
    await this.keys.updateOne({ _id: id, revoked_at: null }, { $set: { revoked_at: at } });
    await this.changes.bump();
  }
}
