// GET /v1/clients by day buckets of the creation instant (shared/src/store/list-buckets.ts):
// the pages and totals the plain query gives, across days and with many clients on one
// day, after creates, deactivations, reactivations and segment changes, and for
// clients stored before the markers existed.
import { newId } from '@lpm/shared/ids';
import { DAY_MS } from '@lpm/shared/time';
import { bucketedListSuite } from '@lpm/test-kit/bucketed-list-suite';
import {
  createdApart,
  expectSamePages,
  WINDOWS_OVER_FORTY,
  WINDOWS_OVER_TWENTY,
  type PageCheck,
} from '@lpm/test-kit/list-pages';
import type { ClientRecord } from '../src/data/client-entity.ts';
import { ClientsRepository } from '../src/data/clients-repository.ts';
import { identity } from '@lpm/test-kit/teams';
import { startClients, type ClientsUnderTest } from './helper.ts';

const { sut, call, create, put, listOf, stored, expectBackfillKeepsPages } = bucketedListSuite<
  ClientsUnderTest,
  ClientRecord
>({
  start: startClients,
  collection: 'clients',
  path: '/v1/clients',
  sortKeys: ['created_at'],
  repository: (db) => new ClientsRepository(db, { kick: () => {} }),
  defaults: { type: 'PF', name: 'Ana Souza' },
});

const CHECKS: PageCheck[] = [
  { query: '', equal: {}, direction: -1 },
  { query: 'sort=created_at', equal: {}, direction: 1 },
  { query: 'status=active', equal: { status: 'active' }, direction: -1 },
  { query: 'type=PJ&segment=vip', equal: { type: 'PJ', segment: 'vip' }, direction: -1 },
  { query: 'sort=created_at&status=inactive&type=PF', equal: { status: 'inactive', type: 'PF' }, direction: 1 },
];

describe('GET /v1/clients by day buckets', () => {
  it('when clients were created on several days (many on one, some at one instant, some at the edges of a day), then every page in either order, filtered by type, status and segment, is the plain query page', async () => {
    const who = identity();
    const template = await stored(await create(who));
    const midnight = Math.floor(Date.now() / DAY_MS) * DAY_MS;
    for (let i = 0; i < 44; i++) {
      const _id = newId('cli');
      const at = midnight - [0, 1, 1, 1, 30, 400][i % 6] * DAY_MS + (i % 4 === 3 ? -1 : i % 2 ? 0 : 60_000 * i);
      const type = i % 3 ? 'PF' : 'PJ';
      const record = {
        ...template,
        _id,
        document_key: `none:${_id}`,
        type,
        segment: ['vip', 'regular', null][i % 3],
        status: i % 5 ? 'active' : 'inactive',
        created_at: new Date(at),
      };
      await sut().repository.insert(record as ClientRecord, []);
    }
    await call(who, 'DELETE', `/v1/clients/${template._id}`);
    await expectSamePages(listOf(who), who.teamId, CHECKS, WINDOWS_OVER_FORTY);
  });

  it('when clients are created, deactivated, reactivated and moved between segments at once, then pages and totals are the plain query ones', async () => {
    const who = identity();
    const ids = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        create(who, { type: i % 2 ? 'PF' : 'PJ', name: `Cliente ${i}`, segment: 'vip' }),
      ),
    );
    await Promise.all([
      ...ids.slice(0, 6).map((id) => call(who, 'DELETE', `/v1/clients/${id}`)),
      ...ids.slice(6, 10).map((id) => put(who, id, { segment: 'regular' })),
      ...Array.from({ length: 4 }, (_, i) => create(who, { type: 'PJ', name: `Nova ${i}`, segment: 'vip' })),
    ]);
    await Promise.all(ids.slice(0, 2).map((id) => put(who, id, { status: 'active' })));
    // A second process writing the same day: its own counts coalescing, the same lock.
    const other = new ClientsRepository(sut().db, { kick: () => {} });
    await other.update(who.teamId, ids[12], async () => ({
      result: undefined,
      write: { set: { status: 'inactive' }, events: [] },
    }));
    await expectSamePages(listOf(who), who.teamId, CHECKS, WINDOWS_OVER_TWENTY);
    expect((await listOf(who).api('')).total).toBe(24);
    expect((await listOf(who).api('status=inactive')).total).toBe(5);
  });

  it('when clients were stored before the markers, then they are listed by the plain query until the backfill, and by day buckets after it, the same', async () => {
    const who = identity();
    await expectBackfillKeepsPages(who, {
      direction: -1,
      count: 14,
      legacy: createdApart('cli', ['document_key']),
      equal: { status: 'active' },
    });
  });
});
