// The store's round trips counted by the driver's command monitoring, served at
// /internal/metrics behind the internal credential only.
import { randomBytes } from 'node:crypto';
import { defineEntity, p } from '@mikro-orm/mongodb';
import { HEADER } from '../src/identity.ts';
import { createServiceApp } from '../src/http/service-app.ts';
import { openStore } from '../src/store/orm.ts';

const token = randomBytes(32).toString('hex');
const ThingEntity = defineEntity({ name: 'Thing', collection: 'things', properties: { _id: p.string().primary(), n: p.integer() } });

test('when the service sends commands to the store, then /internal/metrics counts them by collection and command, and refuses a caller without the credential', async () => {
  const store = await openStore({ url: process.env.MONGO_URL!, dbName: `${process.env.MONGO_DB_PREFIX}metrics_${randomBytes(4).toString('hex')}`, entities: [ThingEntity] });
  const app = createServiceApp({ name: 'metrics-test', db: store.db, internalToken: token, logger: false });
  try {
    const scrape = async () => {
      const res = await app.inject({ method: 'GET', url: '/internal/metrics', headers: { [HEADER.internalToken]: token, [HEADER.teamId]: 'team_x', [HEADER.userId]: 'user_x' } });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/plain/);
      const line = res.body.split('\n').find((l) => l.startsWith('store_commands_total{') && l.includes('collection="things"') && l.includes('command="find"'));
      return line ? Number(line.split(' ').pop()) : 0;
    };
    const before = await scrape();
    for (let i = 0; i < 3; i++) await store.db.collection('things').find({ n: i }).toArray();
    expect(await scrape()).toBe(before + 3);

    const refused = await app.inject({ method: 'GET', url: '/internal/metrics' });
    expect(refused.statusCode).toBe(401);
    expect(refused.body).not.toContain('store_commands_total');
  } finally {
    await app.close();
    await store.db.dropDatabase();
    await store.close();
  }
});
