// Section `calendar`: a team's court calendar change moving all of its BENCH_DEADLINES
// (5,000) open rule-based deadline activities, through the whole system: from the
// PUT /v1/settings that adds a closure inside every deadline's count to the activities
// service's run of that change done (every page rewritten, its list days counted again;
// shared/src/jobs/team-syncs.ts). The deadlines are stored straight into the activities
// collection as Activities.create stores them (list-seed.ts), then checked moved.
import { MongoClient } from 'mongodb';
import {
  activitiesLists,
  activityDerivedFields,
  deadlineOf,
  defaultCourtCalendar,
  identityHeaders,
  newId,
  storedDeadline,
  type ActivityRecord,
} from './internals.ts';
import { unsetFields } from './activities.ts';
import { seedListed } from './list-seed.ts';
import type { Bench } from './support.ts';
import { createTeams, identityOf } from './teams.ts';

export const DEADLINES = Number(process.env.BENCH_DEADLINES ?? 5000);
const ZONE = 'America/Sao_Paulo';
/** Published 1 to 8 March 2030, 30 business days: Monday 1 April 2030 falls inside every count. */
const CLOSURE = { date: '2030-04-01', name: 'Expediente suspenso' };
const PATIENCE_MS = 10 * 60_000;

/** Deadline number i of a team, stored as Activities.create stores one from a rule (signals disarmed, outbox empty). */
function seededDeadline(teamId: string, i: number, now: Date): ActivityRecord {
  const rule = { start: { published: `2030-03-0${1 + (i % 8)}` }, days: 30 };
  const deadline = deadlineOf(rule, defaultCourtCalendar());
  const _id = newId('act');
  const base = {
    _id,
    team_id: teamId,
    type: 'deadline' as const,
    title: `Prazo ${10_000 + i}`,
    description: null,
    status: 'pending' as const,
    priority: 'media' as const,
    due_date: deadline.due_date,
    due_time: null,
    ...unsetFields(),
    created_at: now,
    updated_at: now,
    version: 1,
    series_id: null,
    series_start: null,
    occurrence: 1,
    occurrence_key: _id,
    next_occurrence: null,
    next_pending: 0,
    deadline_rule: rule,
    deadline: storedDeadline(deadline),
    calendar_at: null,
    rule_based: 1,
    due_soon_at: null,
    overdue_at: null,
    reminder_at: null,
  };
  return { ...base, ...activityDerivedFields(base, ZONE) };
}

interface SyncRun {
  _id: string;
  pending: number;
  changed: number;
  done_at: Date | null;
}

export async function calendarSection(b: Bench): Promise<void> {
  const sys = await b.system();
  const database = `${sys.tree.dbPrefix}activities`;
  const [team] = await createTeams(b, sys.tree, ['Bench calendar']);
  const teamId = team.team.id;
  const probe = await fetch(`${sys.serviceUrls.activities}/v1/activities?limit=1`, {
    headers: identityHeaders(identityOf(team), b.token),
  });
  if (probe.status !== 200) throw new Error(`GET /v1/activities answered ${probe.status}: ${await probe.text()}`);
  const client = await MongoClient.connect(b.store.url);
  try {
    const db = client.db(database);
    const now = new Date();
    const seeded = await seedListed(db, 'activities', activitiesLists(db), DEADLINES, (i) =>
      seededDeadline(teamId, i, now),
    );
    console.log(
      `seeded ${DEADLINES.toLocaleString('en')} rule-based deadlines of one team in ${seeded.seconds.toFixed(1)} s`,
    );

    const started = Date.now();
    const res = await fetch(`${sys.gatewayUrl}/v1/settings`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${team.api_key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ court_calendar: { closures: [CLOSURE] } }),
    });
    if (res.status !== 200) throw new Error(`PUT /v1/settings answered ${res.status}: ${await res.text()}`);
    const runs = db.collection<SyncRun>('team_syncs');
    let run: SyncRun | null = null;
    while (!run || run.pending !== 0) {
      if (Date.now() - started > PATIENCE_MS)
        throw new Error(
          `the calendar run of ${DEADLINES} deadlines was not done within ${PATIENCE_MS / 1000} s (${run?.changed ?? 0} moved)`,
        );
      await new Promise((r) => setTimeout(r, 250));
      run = await runs.findOne({ _id: `court-calendar:${teamId}` });
    }
    const ms = run.done_at!.getTime() - started;
    const moved = await db
      .collection('activities')
      .countDocuments({ team_id: teamId, rule_based: 1, calendar_at: { $ne: null } });
    console.log(
      `court calendar change over ${DEADLINES.toLocaleString('en')} deadlines: ${run.changed} moved (${moved} stored moved) in ${(ms / 1000).toFixed(1)} s`,
    );
    b.record('activities.calendar_sync_5k.ms', ms);
    b.record('activities.calendar_sync_5k.moved', moved);
  } finally {
    await client.close();
  }
}
