// The gateway's change counter in a real store: the first bumps of a new database
// may come at once (two settings changes of one team), and each upsert may then
// find no counter and insert its own.
import { expect, test } from '@jest/globals';
import type { Store } from '@lpm/shared/store/orm';
import { PrincipalChangesRepository } from '../src/data/principal-changes.ts';
import { storeForSuite } from './support.ts';

let store: Store;
storeForSuite('principal_changes_counter', (opened) => (store = opened));

test('when the first bumps of a database come at once, then none fails and the counter moves', async () => {
  for (let round = 0; round < 5; round++) {
    const counter = new PrincipalChangesRepository(store.db);
    await store.db.collection('principal_changes').deleteMany({});
    const outcomes = await Promise.allSettled(Array.from({ length: 8 }, () => counter.bump()));
    const refused = outcomes.flatMap((o) => (o.status === 'rejected' ? [String(o.reason)] : []));
    expect({ round, refused }).toEqual({ round, refused: [] });
    expect(await counter.version()).toBeGreaterThan(0);
  }
});
