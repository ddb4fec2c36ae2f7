// GET /v1/activities by day buckets of the due moment (shared/src/store/list-buckets.ts):
// the pages and totals the plain query gives, across days and the UTC day's edge,
// activities without a due date last, after writes that move, complete and delete
// activities, and for activities stored before the markers existed.
import { newId } from '@lpm/shared/ids';
import { bucketedListSuite } from '@lpm/test-kit/bucketed-list-suite';
import { expectSamePages, WINDOWS_OVER_FORTY, WINDOWS_OVER_TWENTY, type PageCheck } from '@lpm/test-kit/list-pages';
import type { ActivityRecord } from '../src/data/activity-entity.ts';
import { ActivitiesRepository } from '../src/data/activities-repository.ts';
import { day, identity } from '@lpm/test-kit/teams';
import { startActivities, type ActivitiesUnderTest } from './helper.ts';

const ZONE = 'America/Sao_Paulo';
const DAY = 86_400_000;

const { sut, call, create, put, listOf, expectBackfillKeepsPages } = bucketedListSuite<
  ActivitiesUnderTest,
  ActivityRecord
>({
  start: startActivities,
  collection: 'activities',
  path: '/v1/activities',
  sortKeys: ['due_missing', 'due_at'],
  repository: (db) => new ActivitiesRepository(db, { kick: () => {} }),
  defaults: { type: 'task', title: 'Protocolar petição' },
});

const CHECKS: PageCheck[] = [
  { query: '', equal: {}, direction: 1 },
  { query: 'sort=-due_date', equal: {}, direction: -1 },
  { query: 'status=pending', equal: { status: 'pending' }, direction: 1 },
  { query: 'type=call&priority=alta', equal: { type: 'call', priority: 'alta' }, direction: 1 },
  { query: 'sort=-due_date&status=in_progress', equal: { status: 'in_progress' }, direction: -1 },
];

describe('GET /v1/activities by day buckets', () => {
  it('when activities fall on several days (many on one, some at one instant, some past the UTC midnight, some with no due date), then every page in either order, filtered by type, status and priority, is the plain query page', async () => {
    const who = identity(ZONE);
    // 23:30 in São Paulo is the next UTC day; no due time is 23:59, the next UTC day too.
    const times = ['08:00', '23:30', null, '08:00', '12:15'];
    for (let i = 0; i < 44; i++) {
      const due = i % 11 === 10 ? {} : { due_date: day([0, 1, 1, 1, 4, -3][i % 6]), due_time: times[i % times.length] };
      const id = await create(who, {
        ...due,
        type: ['task', 'call'][i % 2],
        priority: ['alta', 'media', 'baixa'][i % 3],
      });
      if (i % 4 === 1) await put(who, id, { status: 'in_progress' });
    }
    await expectSamePages(listOf(who), who.teamId, CHECKS, WINDOWS_OVER_FORTY);
  });

  it('when activities are created, moved to other days, given or stripped of a due date, completed and deleted at once, then pages and totals are the plain query ones', async () => {
    const who = identity(ZONE);
    const ids = await Promise.all(
      Array.from({ length: 24 }, (_, i) =>
        create(
          who,
          i % 6 === 5 ? { type: 'call' } : { due_date: day(i % 3), due_time: i % 2 ? '09:00' : null, type: 'call' },
        ),
      ),
    );
    await Promise.all([
      ...ids.slice(0, 4).map((id) => call(who, 'DELETE', `/v1/activities/${id}`)),
      ...ids.slice(4, 9).map((id, i) => put(who, id, { due_date: day(7 + (i % 2)) })),
      put(who, ids[9], { due_date: null }),
      put(who, ids[11], { due_date: day(2), due_time: '23:45' }),
      put(who, ids[17], { due_date: day(-1) }),
      ...ids.slice(12, 16).map((id) => call(who, 'PUT', `/v1/activities/${id}/complete`, {})),
      ...ids.slice(18, 21).map((id) => put(who, id, { status: 'in_progress', priority: 'alta' })),
      ...Array.from({ length: 4 }, (_, i) =>
        create(who, { due_date: day(7), type: 'call', priority: i % 2 ? 'alta' : 'media' }),
      ),
    ]);
    // A second process writing the same days: its own counts coalescing, the same lock.
    const other = new ActivitiesRepository(sut().db, { kick: () => {} });
    await other.update(who.teamId, ids[21], async (current) => ({
      result: undefined,
      write: { set: { due_date: day(8), due_at: new Date(+current.due_at! + 6 * DAY) }, events: [] },
    }));
    await other.remove(who.teamId, ids[22], async () => ({ result: undefined, events: [] }));
    const checks: PageCheck[] = [
      ...CHECKS,
      { query: 'status=completed', equal: { status: 'completed' }, direction: 1 },
    ];
    await expectSamePages(listOf(who), who.teamId, checks, WINDOWS_OVER_TWENTY);
    expect((await listOf(who).api('')).total).toBe(23);
  });

  it('when activities were stored before the markers, then they are listed by the plain query until the backfill, and by day buckets after it, the same', async () => {
    const who = identity(ZONE);
    await expectBackfillKeepsPages(who, {
      direction: 1,
      count: 14,
      legacy: (fields, i) => {
        const dueAt = i % 5 === 4 ? null : new Date(Date.now() + Math.floor(i / 2) * 0.7 * DAY);
        return {
          ...fields,
          _id: newId('act'),
          due_date: dueAt && dueAt.toISOString().slice(0, 10),
          due_at: dueAt,
          due_missing: dueAt ? 0 : 1,
        };
      },
      equal: { status: 'pending' },
    });
  });
});
