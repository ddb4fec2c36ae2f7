// A team's time-zone change re-arms the instants stored from the old
// zone: cases' SLA signals, activities' due moment and signals, financial records'
// overdue moment. Each service in process, told as the gateway tells it (POST
// /internal/time-zone, the new zone in the settings header); then the stored
// instants are those of the new zone. A signal already emitted is armed again only
// when its new instant is still ahead. Each service answers 202 while its run rewrites
// the team's records a page at a time (shared/src/jobs/team-syncs.ts), and 200 once done.
import type { Identity } from '@lpm/shared/identity';
import { rearmed } from '@lpm/shared/jobs/time-signals';
import { zonedMoment } from '@lpm/shared/time';
import { askUntilDone } from '@lpm/test-kit/team-sync';
import { identity } from '@lpm/test-kit/teams';
import { startCases, type CasesUnderTest } from '../services/cases/test/helper.ts';
import { startActivities, type ActivitiesUnderTest } from '../services/activities/test/helper.ts';
import { startFinancial, type FinancialUnderTest } from '../services/financial/test/helper.ts';

const OLD = 'America/Sao_Paulo';
const NEW = 'Asia/Tokyo';
const DAY = 86_400_000;
const DUE = '2030-06-10';

let cases: CasesUnderTest;
let activities: ActivitiesUnderTest;
let financial: FinancialUnderTest;
let before: Identity;
let after: Identity;

beforeAll(async () => {
  [cases, activities, financial] = await Promise.all([startCases(), startActivities(), startFinancial()]);
  before = identity(OLD);
  after = { ...before, settings: { ...before.settings, timezone: NEW } };
});

afterAll(async () => {
  await Promise.all([cases?.close(), activities?.close(), financial?.close()]);
});

/** Told as the gateway tells it, asked again until done: how many records its run changed. */
const told = async (sut: { call: CasesUnderTest['call'] }, changedAt = new Date()) => {
  const { changed, statuses } = await askUntilDone(() =>
    sut.call(after, { method: 'POST', url: '/internal/time-zone', payload: { changed_at: changedAt.toISOString() } }),
  );
  expect(statuses.every((s) => s === 202 || s === 200)).toBe(true);
  return { changed };
};

test('when the zone changes, then an ativo case gets its SLA signals at the end of sla_date in the new zone', async () => {
  const res = await cases.call(before, {
    method: 'POST',
    url: '/v1/cases',
    payload: { title: 'Prazo', sla_date: DUE },
  });
  expect(res.statusCode).toBe(201);
  const id = res.json().data.id;
  const end = zonedMoment(DUE, NEW);
  expect(await told(cases)).toEqual({ changed: 1 });
  expect(await cases.db.collection('cases').findOne({ _id: id })).toMatchObject({
    sla_overdue_at: end,
    sla_warning_at: new Date(end.getTime() - DAY),
  });
  // A later change that leaves the zone as it is (the calendar changed, say) rewrites nothing.
  expect(await told(cases, new Date(Date.now() + 1000))).toEqual({ changed: 0 });
});

test('when the zone changes, then an open activity gets its due moment and signals in the new zone', async () => {
  const res = await activities.call(before, {
    method: 'POST',
    url: '/v1/activities',
    payload: { type: 'task', title: 'Audiência', due_date: DUE, due_time: '09:00' },
  });
  expect(res.statusCode).toBe(201);
  const id = res.json().data.id;
  const due = zonedMoment(DUE, NEW, '09:00');
  expect(await told(activities)).toEqual({ changed: 1 });
  expect(await activities.db.collection('activities').findOne({ _id: id })).toMatchObject({
    due_at: due,
    overdue_at: due,
    due_soon_at: new Date(due.getTime() - DAY),
  });
});

test('when the zone changes, then a pending record becomes overdue at the start of the day after its due date in the new zone', async () => {
  const res = await financial.call(before, {
    method: 'POST',
    url: '/v1/financial',
    payload: {
      type: 'revenue',
      category: 'honorários',
      description: 'Parcela',
      amount: 100,
      date: '2030-06-01',
      due_date: DUE,
    },
  });
  expect(res.statusCode).toBe(201);
  const id = res.json().data.id;
  expect(await told(financial)).toEqual({ changed: 1 });
  expect(await financial.db.collection('financial_records').findOne({ _id: id })).toMatchObject({
    overdue_at: zonedMoment('2030-06-11', NEW, '00:00:00'),
  });
});

test('rearmed: an armed signal moves; an emitted one is armed again only when its new instant is ahead', () => {
  const now = new Date('2030-01-01T00:00:00Z');
  const ahead = new Date('2030-01-02T00:00:00Z');
  const past = new Date('2029-12-31T00:00:00Z');
  const armedAt = new Date('2030-01-03T00:00:00Z');
  expect(rearmed({ a: armedAt, b: null, c: null }, { a: ahead, b: ahead, c: past }, now)).toEqual({
    a: ahead,
    b: ahead,
    c: null,
  });
});
