// Credentials in the store found by the digest of their secret (unique): API keys and
// webhooks portal sessions. A revocation bumps the principal changes, so that every
// gateway drops the principal it cached for the credential.
import type { Collection, Db, Filter, OptionalUnlessRequiredId } from 'mongodb';
import type { PrincipalChangesRepository } from './principal-changes.ts';

export interface DigestCredential {
  _id: string;
  digest: string;
  revoked_at: Date | null;
}

export class DigestCredentials<R extends DigestCredential> {
  protected readonly records: Collection<R>;
  private readonly changes: PrincipalChangesRepository;

  constructor(db: Db, collection: string, changes: PrincipalChangesRepository) {
    this.records = db.collection<R>(collection);
    this.changes = changes;
  }

  async insert(record: R): Promise<void> {
    await this.records.insertOne(record as OptionalUnlessRequiredId<R>);
  }

  findByDigest(digest: string): Promise<R | null> {
    return this.records.findOne({ digest } as Filter<R>) as Promise<R | null>;
  }

  /** Marks the credential `filter` finds revoked at `at`, unless it already is (its first revocation time stays). */
  protected async revokeWhere(filter: Filter<R>, at: Date): Promise<void> {
    await this.records.updateOne(
      { ...filter, revoked_at: null },
      {
        $set: { revoked_at: at } as Partial<R>,
      },
    );
    await this.changes.bump();
  }
}
