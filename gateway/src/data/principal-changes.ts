// One counter in the gateway's store, bumped after every write that changes what a
// key's principal holds: a key revoked, a team's plan or settings changed. Gateways
// poll it (auth/principal-changes.ts) to keep serving the principals they cached
// while it stays the same. Keys, users and teams created need no bump: a cached
// "not found" lasts at most the key cache's second.
import type { Collection, Db } from 'mongodb';
import { isDuplicateKey } from '@lpm/shared/store/duplicate-key';

interface ChangeCounter {
  _id: 'principals';
  version: number;
}

const ID = 'principals';

export class PrincipalChangesRepository {
  private readonly counters: Collection<ChangeCounter>;

  constructor(db: Db) {
    this.counters = db.collection<ChangeCounter>('principal_changes');
  }

  /** Call after the write it announces has completed. */
  async bump(): Promise<void> {
    const inc = () => this.counters.updateOne({ _id: ID }, { $inc: { version: 1 } }, { upsert: true });
    try {
      await inc();
    } catch (e) {
      // Concurrent first bumps each found no counter and inserted one: it exists now.
      if (!isDuplicateKey(e)) throw e;
      await inc();
    }
  }

  /** The counter; 0 before the first change. */
  async version(): Promise<number> {
    return (await this.counters.findOne({ _id: ID }))?.version ?? 0;
  }
}
