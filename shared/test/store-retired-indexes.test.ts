import { defineEntity, p } from '@mikro-orm/mongodb';
import type { Db } from 'mongodb';
import { openStore } from '../src/store/orm.ts';
import { scratchDatabase } from '@lpm/test-kit/scratch-database';

const ThingEntity = defineEntity({
  name: 'Thing',
  collection: 'things',
  properties: { _id: p.string().primary(), a: p.string(), b: p.boolean() },
  indexes: [{ properties: ['b', 'a'] }],
});

const dbName = `${process.env.MONGO_DB_PREFIX}retired_indexes`;
let db: Db;

scratchDatabase('retired_indexes', (opened) => (db = opened));

const indexNames = async () =>
  (await db.collection('things').listIndexes().toArray()).map((i) => i.name as string).sort();

test('when a store opens with retired indexes, then those no entity declares any more are dropped beside the declared ones, and those already gone are no error', async () => {
  // An index no entity declares any more, on (a, b).
  await db.collection('things').createIndex({ a: 1, b: 1 });
  expect(await indexNames()).toContain('a_1_b_1');
  const retiredIndexes = [
    { collection: 'things', name: 'a_1_b_1' },
    { collection: 'never_made', name: 'x_1' },
  ];
  for (let run = 0; run < 2; run++) {
    const store = await openStore({ url: process.env.MONGO_URL!, dbName, entities: [ThingEntity], retiredIndexes });
    await store.close();
    expect(await indexNames()).toEqual(['_id_', 'b_1_a_1']);
  }
});
