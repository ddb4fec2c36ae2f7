// Section `activities`: GET /v1/activities/overdue on one team with
// BENCH_ACTIVITIES activities (a third of them overdue), straight to the
// activities service, beside the raw driver's time for the same query (the
// repository's find + count on the open/due_at fields). On this checkout's system;
// the seeded activities stay in the store, so it runs near the end.
import { MongoClient } from 'mongodb';
import { measureList, type ListRun } from './cases.ts';
import { identityHeaders, newId } from './internals.ts';
import { DURATION_S, quantile, type Bench, type Figures } from './support.ts';
import { createTeams, identityOf } from './teams.ts';
// Activities stored straight into the activities service's collection as it stores them.
import type { ActivityRecord } from '../../services/activities/src/data/activity-entity.ts';
import { derivedFields } from '../../services/activities/src/domain/activities.ts';

export const ACTIVITIES = Number(process.env.BENCH_ACTIVITIES ?? 100_000);
const DAY_MS = 86_400_000;
const ZONE = 'America/Sao_Paulo';
const TYPES = ['task', 'deadline', 'meeting', 'call', 'email', 'note'] as const;
const PRIORITIES = ['alta', 'media', 'baixa'] as const;
const STATUSES = ['pending', 'pending', 'in_progress', 'completed', 'cancelled'] as const;

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
  return { ...base, ...derivedFields(base, ZONE) } as ActivityRecord;
}

async function seedActivities(mongoUrl: string, database: string, teamId: string): Promise<number> {
  const client = await MongoClient.connect(mongoUrl);
  try {
    const col = client.db(database).collection<ActivityRecord>('activities');
    const now = Date.now();
    const started = Date.now();
    for (let from = 0; from < ACTIVITIES; from += 1000) {
      await col.insertMany(Array.from({ length: Math.min(1000, ACTIVITIES - from) }, (_, k) => seededActivity(teamId, from + k, now)), { ordered: false });
    }
    return (Date.now() - started) / 1000;
  } finally {
    await client.close();
  }
}

/** One query through the driver, run one at a time for about the duration (at least twice): p50 and p99. */
async function measureRaw(name: string, run: () => Promise<unknown>): Promise<Figures> {
  const times: number[] = [];
  const until = Date.now() + DURATION_S * 1000;
  while (times.length < 2 || (Date.now() < until && times.length < 200)) {
    const started = performance.now();
    await run();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  const total = times.reduce((a, b) => a + b, 0);
  console.log(`  ${name}: ${times.length} runs, p50 ${quantile(times, 0.5).toFixed(0)} ms, p99 ${quantile(times, 0.99).toFixed(0)} ms`);
  return { name: `${name} (${times.length} runs)`, rps: (times.length * 1000) / total, p50: Math.round(quantile(times, 0.5)), p99: Math.round(quantile(times, 0.99)), errors: 0, created: 0 };
}

export async function activitiesSection(b: Bench): Promise<void> {
  const sys = await b.system();
  const database = `${sys.tree.dbPrefix}activities`;
  // The launcher puts the services after the gateway's port: activities +4.
  const activitiesUrl = `http://127.0.0.1:${Number(new URL(sys.gatewayUrl).port) + 4}`;
  const [team] = await createTeams(b, sys.tree, ['Bench activities']);
  const teamId = team.team.id;
  const headers = identityHeaders(identityOf(team), b.token);
  // The activities service is up once it answers: its indexes exist before the seed.
  const probe = await fetch(`${activitiesUrl}/v1/activities/overdue?limit=1`, { headers });
  if (probe.status !== 200) throw new Error(`GET /v1/activities/overdue answered ${probe.status}: ${await probe.text()}`);
  const seconds = await seedActivities(b.store.url, database, teamId);
  console.log(`seeded ${ACTIVITIES.toLocaleString('en')} activities of one team with insertMany (batches of 1,000) in ${seconds.toFixed(1)} s (${(ACTIVITIES / seconds).toFixed(0)} activities/s)`);

  const runs: ListRun[] = [{ label: 'overdue', path: '/v1/activities/overdue?limit=20' }];
  console.log(`\n${ACTIVITIES.toLocaleString('en')} activities of one team, straight to the activities service:`);
  const figures: Figures[] = [];
  for (const r of runs) figures.push(await measureList(`GET /v1/activities ${r.label} direct`, activitiesUrl, r, headers));

  // The same query as the repository sends it, through the raw driver.
  const client = await MongoClient.connect(b.store.url);
  try {
    const col = client.db(database).collection('activities');
    const filter = { team_id: teamId, open: 1, due_at: { $lt: new Date() } };
    console.log('\nthe same query through the raw driver:');
    figures.push(
      await measureRaw('driver find+count (overdue)', () =>
        Promise.all([
          col.find(filter, { projection: { outbox: 0, outbox_pending: 0 }, sort: { due_missing: 1, due_at: 1, _id: 1 }, limit: 20 }).toArray(),
          col.countDocuments(filter),
        ]),
      ),
    );
  } finally {
    await client.close();
  }
  b.figures.push(...figures);
}
