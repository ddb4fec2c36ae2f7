// The team's court calendar and CNJ check in GET/PUT /v1/settings, and
// how a calendar change reaches the activities service: recorded first, sent at
// once, sent again by the retry pass until the service answers.
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import { MongoClient, type Db } from 'mongodb';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from '@jest/globals';
import { readIdentity } from '@lpm/shared/identity';
import { waitFor } from '@lpm/test-kit/wait';
import { expectError } from '@lpm/test-kit/api';
import type { Store } from '@lpm/shared/store/orm';
import { CalendarSyncsRepository } from '../src/data/calendar-syncs-repository.ts';
import {
  allUpstreams,
  call,
  INTERNAL_TOKEN,
  newTeam,
  openTestStore,
  startEchoUpstream,
  startGateway,
  testDbPrefix,
  type EchoUpstream,
  type TestGateway,
} from './support.ts';

/**
 * How old a recorded change must be before the retry pass sends it: above what a
 * settings request takes on a busy machine, or the pass sends it beside the request.
 */
const GRACE_MS = 2000;

/**
 * Stands in for the activities service: records each court calendar it is told,
 * answering `failWith` while set, and 202 (its run still going) while `running`.
 */
async function startActivitiesStandIn() {
  const app: FastifyInstance = Fastify({ logger: false });
  const state = {
    failWith: 0,
    running: false,
    told: [] as { teamId: string | undefined; userId: string | undefined; body: unknown }[],
    zones: [] as (string | undefined)[],
  };
  const answer = (reply: FastifyReply) =>
    state.running
      ? reply.status(202).send({ success: true, data: { done: false, changed: 0 } })
      : { success: true, data: { done: true, changed: 0 } };
  app.post('/internal/court-calendar', async (req, reply) => {
    if (state.failWith) return reply.status(state.failWith).send({ success: false });
    const who = readIdentity(req.headers, INTERNAL_TOKEN);
    state.told.push({ teamId: who?.teamId, userId: who?.userId, body: req.body });
    return answer(reply);
  });
  app.post('/internal/time-zone', async (req, reply) => {
    state.zones.push(readIdentity(req.headers, INTERNAL_TOKEN)?.settings.timezone);
    return answer(reply);
  });
  app.all('/*', async (req) => ({
    success: true,
    data: { path: req.url, identity: readIdentity(req.headers, INTERNAL_TOKEN) },
  }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, app, state };
}

let activities: Awaited<ReturnType<typeof startActivitiesStandIn>>;
let echo: EchoUpstream;
let gw: TestGateway;
let store: Store;

/** The gateway's record of a team's change still to reach the services. */
const syncRecord = (teamId: string) => store.db.collection<{ _id: string }>('calendar_syncs').findOne({ _id: teamId });

beforeAll(async () => {
  activities = await startActivitiesStandIn();
  echo = await startEchoUpstream('others');
  store = await openTestStore('court_calendar');
  gw = await startGateway(
    'court_calendar',
    { ...allUpstreams(echo.url), activities: activities.url },
    { store, calendarSyncIntervalMs: 200, calendarSyncGraceMs: GRACE_MS },
  );
});

afterAll(async () => {
  await gw?.close();
  await activities?.app.close();
  await echo?.app.close();
});

beforeEach(() => {
  activities.state.failWith = 0;
  activities.state.running = false;
  activities.state.told = [];
  activities.state.zones = [];
});

describe('a time zone change reaching the services', () => {
  test('when only the time zone changes, then the services owning due moments are told, with the new zone in the settings header, and not the calendar', async () => {
    const team = await newTeam(gw.accounts);
    expect((await put(team.apiKey, { timezone: 'Asia/Tokyo' })).status).toBe(200);
    await waitFor('the activities service told', () => activities.state.zones.length > 0, 5000);
    await waitFor('the change cleared', async () => (await syncRecord(team.team.id)) === null, 5000);
    expect(activities.state.zones).toEqual(['Asia/Tokyo']);
    expect(activities.state.told).toEqual([]);
  });

  test('when the zone changes while its runs go and then the calendar changes, then both are told until done, the zone included', async () => {
    const team = await newTeam(gw.accounts);
    activities.state.running = true;
    expect((await put(team.apiKey, { timezone: 'Asia/Tokyo' })).status).toBe(200);
    await waitFor('the zone told', () => activities.state.zones.length > 0, 5000);
    expect((await put(team.apiKey, { court_calendar: CALENDAR })).status).toBe(200);
    await waitFor('the calendar told', () => activities.state.told.length > 0, 5000);
    const zonesBefore = activities.state.zones.length;
    await waitFor(
      'the zone asked again with the calendar',
      () => activities.state.zones.length > zonesBefore,
      GRACE_MS + 5000,
    );
    activities.state.running = false;
    await waitFor('the change cleared', async () => (await syncRecord(team.team.id)) === null, GRACE_MS + 5000);
  });
});

const put = (key: string, body: unknown) =>
  call(gw.url, '/v1/settings', { method: 'PUT', key, body: JSON.stringify(body) });
const CALENDAR = {
  jurisdiction: { uf: 'SP', branch: 'state' },
  closures: [
    { date: '2025-03-06', name: 'Fórum sem energia' },
    { date: '2025-01-25', name: 'Aniversário de São Paulo' },
  ],
};
const SORTED = { jurisdiction: CALENDAR.jurisdiction, closures: [CALENDAR.closures[1], CALENDAR.closures[0]] };

describe('court_calendar and cnj_check in /v1/settings', () => {
  test('when they are set, then GET shows them (closures in date order) and services receive them', async () => {
    const team = await newTeam(gw.accounts);
    const res = await put(team.apiKey, { court_calendar: CALENDAR, cnj_check: 'reject' });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ court_calendar: SORTED, cnj_check: 'reject' });
    expect((await call(gw.url, '/v1/settings', { key: team.apiKey })).body.data).toMatchObject({
      court_calendar: SORTED,
      cnj_check: 'reject',
    });
    const seen = await call(gw.url, '/v1/activities', { key: team.apiKey });
    expect(seen.body.data.identity.settings).toMatchObject({ court_calendar: SORTED, cnj_check: 'reject' });
  });

  test('when only closures are sent, then the jurisdiction keeps its value, and GET shows both', async () => {
    const team = await newTeam(gw.accounts);
    expect((await put(team.apiKey, { court_calendar: CALENDAR })).status).toBe(200);
    const closures = [{ date: '2025-08-05', name: 'PJe indisponível' }];
    const res = await put(team.apiKey, { court_calendar: { closures } });
    expect(res.status).toBe(200);
    expect(res.body.data.court_calendar).toEqual({ jurisdiction: CALENDAR.jurisdiction, closures });
    expect((await call(gw.url, '/v1/settings', { key: team.apiKey })).body.data.court_calendar).toEqual({
      jurisdiction: CALENDAR.jurisdiction,
      closures,
    });
  });

  test('when only a jurisdiction is sent, then the closures keep theirs, and GET shows both', async () => {
    const team = await newTeam(gw.accounts);
    expect((await put(team.apiKey, { court_calendar: CALENDAR })).status).toBe(200);
    const jurisdiction = { uf: 'RJ', branch: 'federal' };
    const res = await put(team.apiKey, { court_calendar: { jurisdiction } });
    expect(res.status).toBe(200);
    expect(res.body.data.court_calendar).toEqual({ jurisdiction, closures: SORTED.closures });
    expect((await call(gw.url, '/v1/settings', { key: team.apiKey })).body.data.court_calendar).toEqual({
      jurisdiction,
      closures: SORTED.closures,
    });
  });

  test('when one request sends only a jurisdiction and another only closures at the same moment, then both parts are kept, pair after pair', async () => {
    const teams = await Promise.all(Array.from({ length: 8 }, () => newTeam(gw.accounts)));
    const jurisdictions = [
      { uf: 'RJ', branch: 'federal' },
      { uf: 'MG', branch: 'labour' },
      { uf: 'SP', branch: 'state' },
    ];
    const lost: unknown[] = [];
    for (const [round, jurisdiction] of jurisdictions.entries()) {
      const closures = [{ date: `2025-0${round + 1}-1${round}`, name: `Fechamento ${round}` }];
      await Promise.all(
        teams.map(async (team) => {
          const answers = await Promise.all([
            put(team.apiKey, { court_calendar: { jurisdiction } }),
            put(team.apiKey, { court_calendar: { closures } }),
          ]);
          expect(answers.map((a) => (a.status === 200 ? 200 : a.body))).toEqual([200, 200]);
          const kept = (await call(gw.url, '/v1/settings', { key: team.apiKey })).body.data.court_calendar;
          if (JSON.stringify(kept) !== JSON.stringify({ jurisdiction, closures }))
            lost.push({ round, team: team.team.id, kept });
        }),
      );
    }
    expect(lost).toEqual([]);
  });

  test('when a team that never named a jurisdiction sends closures, then it counts the national calendar only, as services are told', async () => {
    const team = await newTeam(gw.accounts);
    const closures = [{ date: '2025-08-05', name: 'PJe indisponível' }];
    const national = { jurisdiction: { uf: null, branch: 'state' }, closures };
    const res = await put(team.apiKey, { court_calendar: { closures } });
    expect(res.status).toBe(200);
    expect(res.body.data.court_calendar).toEqual(national);
    await waitFor('the activities service told', () => activities.state.told.length === 1);
    expect(activities.state.told[0].body).toMatchObject({ court_calendar: national });
    const seen = await call(gw.url, '/v1/activities', { key: team.apiKey });
    expect(seen.body.data.identity.settings.court_calendar).toEqual(national);
  });

  test('when a field is wrong, then 400 with its message', async () => {
    const team = await newTeam(gw.accounts);
    expectError(
      await put(team.apiKey, { court_calendar: { jurisdiction: { uf: 'XX' }, closures: [] } }),
      400,
      'VALIDATION_ERROR',
      'Invalid uf',
    );
    expectError(
      await put(team.apiKey, { court_calendar: { jurisdiction: { branch: 'civil' }, closures: [] } }),
      400,
      'VALIDATION_ERROR',
      'Invalid branch',
    );
    expectError(
      await put(team.apiKey, { court_calendar: { jurisdiction: {}, closures: [{ date: '2025-13-01', name: 'x' }] } }),
      400,
      'VALIDATION_ERROR',
      'court_calendar.closures.0.date must be a date (YYYY-MM-DD)',
    );
    const twice = {
      jurisdiction: {},
      closures: [
        { date: '2025-03-06', name: 'a' },
        { date: '2025-03-06', name: 'b' },
      ],
    };
    expectError(await put(team.apiKey, { court_calendar: twice }), 400, 'VALIDATION_ERROR', 'Duplicate closure date');
    expectError(
      await put(team.apiKey, { court_calendar: {} }),
      400,
      'VALIDATION_ERROR',
      'court_calendar must be an object with jurisdiction, closures or both',
    );
    expectError(
      await put(team.apiKey, { court_calendar: [] }),
      400,
      'VALIDATION_ERROR',
      'court_calendar must be an object with jurisdiction, closures or both',
    );
    expectError(await put(team.apiKey, { cnj_check: 'block' }), 400, 'VALIDATION_ERROR', 'Invalid cnj_check');
    expect(activities.state.told).toEqual([]);
  });
});

describe('a court calendar change reaching the activities service', () => {
  test('when the calendar changes, then the activities service is told the new calendar with the change instant, once', async () => {
    const team = await newTeam(gw.accounts);
    const res = await put(team.apiKey, { court_calendar: CALENDAR });
    await waitFor('the activities service told', () => activities.state.told.length === 1);
    await waitFor('the change cleared', async () => (await syncRecord(team.team.id)) === null, 5000);
    // The time zone did not change: no service re-arms its due moments.
    expect(activities.state.zones).toEqual([]);
    // On behalf of the user who changed it: the events it causes name them.
    expect(activities.state.told[0]).toEqual({
      teamId: team.team.id,
      userId: team.user.id,
      body: { court_calendar: SORTED, changed_at: res.body.data.updated_at },
    });
    // Nothing left to retry, and the same calendar again (or another field) is no change.
    await put(team.apiKey, { court_calendar: CALENDAR, cnj_check: 'reject' });
    await new Promise((r) => setTimeout(r, GRACE_MS + 600));
    expect(activities.state.told).toHaveLength(1);
  });

  test('when the activities service is unavailable, then the change is sent again until it answers', async () => {
    const team = await newTeam(gw.accounts);
    activities.state.failWith = 503;
    await put(team.apiKey, { court_calendar: { jurisdiction: { uf: null, branch: 'federal' }, closures: [] } });
    await new Promise((r) => setTimeout(r, 700));
    expect(activities.state.told).toEqual([]);
    activities.state.failWith = 0;
    await waitFor('the retried change', () => activities.state.told.length > 0, GRACE_MS + 5000);
    expect(activities.state.told[0]).toMatchObject({
      userId: team.user.id,
      body: { court_calendar: { jurisdiction: { uf: null, branch: 'federal' }, closures: [] } },
    });
    // Told once it answered: the retry pass stops.
    const count = activities.state.told.length;
    await new Promise((r) => setTimeout(r, GRACE_MS + 600));
    expect(activities.state.told).toHaveLength(count);
  });
});

describe('a change whose runs take a while, and teams whose services fail', () => {
  test('when the services answer 202 (their runs going), then the gateway asks again and clears the change only once they answer done', async () => {
    const team = await newTeam(gw.accounts);
    activities.state.running = true;
    expect((await put(team.apiKey, { court_calendar: CALENDAR })).status).toBe(200);
    // Asked again by the retry pass once the grace has passed, the same change each time.
    await waitFor('asked again', () => activities.state.told.length >= 2, GRACE_MS + 5000);
    expect(new Set(activities.state.told.map((t) => JSON.stringify(t.body))).size).toBe(1);
    expect(await syncRecord(team.team.id)).not.toBeNull();
    activities.state.running = false;
    await waitFor('the change cleared', async () => (await syncRecord(team.team.id)) === null, GRACE_MS + 5000);
    const count = activities.state.told.length;
    await new Promise((r) => setTimeout(r, 800));
    expect(activities.state.told).toHaveLength(count);
  });

  test('when older teams keep failing, then they back off, doubling, and a newer team is told first', async () => {
    // A store of its own: the gateway's retry pass does not see these teams.
    const client = await MongoClient.connect(process.env.MONGO_URL!);
    const db = client.db(`${testDbPrefix('court_calendar_backoff')}gateway`);
    try {
      await pendingAndBackoff(new CalendarSyncsRepository(db), db);
    } finally {
      await db.dropDatabase();
      await client.close();
    }
  });
});

/** The order a retry pass takes teams in, and the wait a failing team's next ask gets. */
async function pendingAndBackoff(repo: CalendarSyncsRepository, db: Db): Promise<void> {
  const t0 = new Date(Date.now() - 60_000);
  const failing = ['team_failing_a', 'team_failing_b', 'team_failing_c'];
  for (const [i, id] of failing.entries())
    await repo.mark(id, new Date(t0.getTime() + i), 'user_x', t0, ['court_calendar']);
  await repo.mark('team_newer', new Date(), 'user_y', new Date(), ['timezone']);
  // One pass of two, the oldest first: the failing teams fill it.
  expect((await repo.pending(new Date(), 2)).map((p) => p.teamId)).toEqual(['team_failing_a', 'team_failing_b']);
  for (const id of failing) await repo.failed(id, new Date(t0.getTime() + failing.indexOf(id)), 1000, 8000);
  expect((await repo.pending(new Date(), 2)).map((p) => p.teamId)).toEqual(['team_newer']);
  // Each failure in a row doubles the wait, up to the cap.
  const waits: number[] = [];
  for (let n = 0; n < 5; n++) {
    const before = Date.now();
    await repo.failed('team_failing_a', t0, 1000, 8000);
    const row = await db
      .collection<{ _id: string; next_at: Date }>('calendar_syncs')
      .findOne({ _id: 'team_failing_a' });
    waits.push(Math.floor((row!.next_at.getTime() - before) / 1000));
  }
  expect(waits).toEqual([2, 4, 8, 8, 8]);
}

describe('POST /v1/deadlines/compute at the gateway', () => {
  test('when a read-only key calls it, then it reaches the activities service; a write to activities needs write', async () => {
    const team = await newTeam(gw.accounts);
    const readOnly = await gw.accounts.createKey({ teamId: team.team.id, userId: team.user.id, scopes: ['read'] });
    const res = await call(gw.url, '/v1/deadlines/compute', {
      method: 'POST',
      key: readOnly.apiKey,
      body: JSON.stringify({ start: { published: '2025-02-27' }, days: 5 }),
    });
    expect(res.status).toBe(200);
    expect(res.body.data.path).toBe('/v1/deadlines/compute');
    const write = await call(gw.url, '/v1/activities', {
      method: 'POST',
      key: readOnly.apiKey,
      body: JSON.stringify({ type: 'task', title: 'x' }),
    });
    expectError(write, 403, 'FORBIDDEN', 'Insufficient permissions');
  });
});
