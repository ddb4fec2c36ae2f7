// Section `activities`: GET /v1/activities/overdue and the default page of GET
// /v1/activities (by due date, read by day buckets) on one team with
// BENCH_ACTIVITIES activities (a third of them overdue), straight to the
// activities service, beside the raw driver's time for the overdue query (the
// repository's find + count on the open/due_at fields). The activities are stored
// with their list markers and day counts (list-seed.ts). On this checkout's system;
// the seeded activities stay in the store, so it runs near the end.
import type { Db } from 'mongodb';
import { DAY_MS, PRIORITIES, activitiesLists, activityDerivedFields, newId, type ActivityRecord } from './internals.ts';
import { seedListed } from './list-seed.ts';
import { driverListPage, measureSeededLists, recordBesideDriver } from './seeded-lists.ts';
import { measureRaw, recordRun, type Bench } from './support.ts';

export const ACTIVITIES = Number(process.env.BENCH_ACTIVITIES ?? 100_000);
const ZONE = 'America/Sao_Paulo';
const TYPES = ['task', 'deadline', 'meeting', 'call', 'email', 'note'] as const;
const STATUSES = ['pending', 'pending', 'in_progress', 'completed', 'cancelled'] as const;

/** What a seeded activity leaves unset: no links, reminder, recurrence or completion. */
export function unsetFields() {
  return {
    case_id: null,
    client_id: null,
    deal_id: null,
    assigned_to: null,
    created_by: null,
    reminder: null,
    recurrence: null,
    metadata: {},
    completed_at: null,
    completed_by: null,
    completion_notes: null,
  };
}

/** Activity number i of a team, built the way Activities.create stores it (signals disarmed, outbox left empty). */
function seededActivity(teamId: string, i: number, now: number): ActivityRecord {
  // Due dates from a year ago to a year ahead; every fifth has none.
  const due = i % 5 === 4 ? null : new Date(now + (((i * 7919) % 730) - 365) * DAY_MS).toISOString().slice(0, 10);
  const created = new Date(now - ((i * 104_729) % 365) * DAY_MS);
  const base = {
    _id: newId('act'),
    team_id: teamId,
    type: TYPES[i % TYPES.length],
    title: `Atividade ${10_000 + i}`,
    description: null,
    status: STATUSES[i % STATUSES.length],
    priority: PRIORITIES[i % PRIORITIES.length],
    due_date: due,
    due_time: i % 2 ? '10:00' : null,
    ...unsetFields(),
    created_at: created,
    updated_at: created,
    version: 1,
    series_id: null,
    series_start: null,
    occurrence: 1,
    due_soon_at: null,
    overdue_at: null,
    reminder_at: null,
  };
  return { ...base, ...activityDerivedFields(base, ZONE) } as ActivityRecord;
}

async function seedActivities(db: Db, teamId: string): Promise<number> {
  const now = Date.now();
  const seeded = await seedListed(db, 'activities', activitiesLists(db), ACTIVITIES, (i) =>
    seededActivity(teamId, i, now),
  );
  console.log(
    `counted the ${seeded.days} days of the seeded activities (list_counts) in ${seeded.countSeconds.toFixed(1)} s`,
  );
  return seeded.seconds;
}

export async function activitiesSection(b: Bench): Promise<void> {
  const figures = await measureSeededLists(b, {
    service: 'activities',
    count: ACTIVITIES,
    probe: '/v1/activities/overdue?limit=1',
    seed: seedActivities,
    runs: [
      { label: 'overdue', path: '/v1/activities/overdue?limit=20' },
      { label: 'default page', path: '/v1/activities?limit=20' },
    ],
    // The same query as the repository sends it, through the raw driver.
    driver: async (db, teamId) => {
      const col = db.collection('activities');
      const filter = { team_id: teamId, open: 1, due_at: { $lt: new Date() } };
      console.log('\nthe same query through the raw driver:');
      return [
        await measureRaw('driver find+count (overdue)', () =>
          driverListPage(col, filter, { due_missing: 1, due_at: 1, _id: 1 }),
        ),
      ];
    },
  });
  b.figures.push(...figures);
  const [service, list, driver] = figures;
  recordBesideDriver(b, 'activities.overdue', service, driver);
  recordRun(b, 'activities.list_100k.direct', list);
  b.record('activities.list_100k.p50_ms', list.p50);
}
