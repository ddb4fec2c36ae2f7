// A service's /metrics: Prometheus' text format without credentials (the service's
// port is internal), with the store's round trips and their durations by
// collection and command, and each route's requests by its template.
import { randomBytes } from 'node:crypto';
import { defineEntity, p } from '@mikro-orm/mongodb';
import { HEADER } from '../src/identity.ts';
import { createServiceApp } from '../src/http/service-app.ts';
import { openStore } from '../src/store/orm.ts';

const token = randomBytes(32).toString('hex');
const ThingEntity = defineEntity({
  name: 'Thing',
  collection: 'things',
  properties: { _id: p.string().primary(), n: p.integer() },
});

/** The value of the first series of `name` whose line has every one of `labels`, or 0. */
function valueOf(body: string, name: string, ...labels: string[]): number {
  const line = body.split('\n').find((l) => l.startsWith(`${name}{`) && labels.every((label) => l.includes(label)));
  return line ? Number(line.split(' ').pop()) : 0;
}

test('when the service sends commands to the store and answers requests, then /metrics counts and times them by collection and command, and by route template', async () => {
  const store = await openStore({
    url: process.env.MONGO_URL!,
    dbName: `${process.env.MONGO_DB_PREFIX}metrics_${randomBytes(4).toString('hex')}`,
    entities: [ThingEntity],
  });
  const app = createServiceApp({ name: 'metrics-test', db: store.db, internalToken: token, logger: false });
  app.get('/things/:id', async (req) => ({ id: (req.params as { id: string }).id }));
  try {
    const scrape = async () => {
      const res = await app.inject({ method: 'GET', url: '/metrics' });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/plain/);
      return res.body;
    };
    const before = await scrape();
    for (let i = 0; i < 3; i++) await store.db.collection('things').find({ n: i }).toArray();
    const identity = { [HEADER.internalToken]: token, [HEADER.teamId]: 'team_x', [HEADER.userId]: 'user_x' };
    for (const id of ['a1', 'b2'])
      expect((await app.inject({ method: 'GET', url: `/things/${id}`, headers: identity })).statusCode).toBe(200);
    const after = await scrape();

    const find = ['collection="things"', 'command="find"'];
    expect(valueOf(after, 'store_commands_total', ...find)).toBe(valueOf(before, 'store_commands_total', ...find) + 3);
    const timed = ['collection="things"', 'op="find"'];
    expect(valueOf(after, 'store_operation_duration_seconds_count', ...timed)).toBe(
      valueOf(before, 'store_operation_duration_seconds_count', ...timed) + 3,
    );
    const route = ['service="metrics-test"', 'route="/things/:id"', 'method="GET"', 'status_class="2xx"'];
    expect(valueOf(after, 'http_request_duration_seconds_count', ...route)).toBe(2);
    expect(after).not.toContain('/things/a1');
  } finally {
    await app.close();
    await store.db.dropDatabase();
    await store.close();
  }
});
