import { expect, test } from '@jest/globals';
import { expectError } from '@lpm/test-kit/api';
import { expectNotFound } from '@lpm/test-kit/error-answers';
import { identity, day } from '@lpm/test-kit/teams';
import type { DjenStandIn } from './djen-stand-in.ts';
import { publicationsSuite, watchedTeam, type PublicationsUnderTest } from './helper.ts';

let djen: DjenStandIn;
let svc: PublicationsUnderTest;

publicationsSuite((started) => ({ djen, svc } = started));

const number = (n: number) => `${String(n).padStart(7, '0')}-55.2025.8.26.0001`;

test('when create mode matches publications, then each gets one deadline activity on its case, linked both ways, whatever the retries', async () => {
  const who = identity();
  svc.watchOnly(watchedTeam(who, [{ oab_number: '501', oab_uf: 'SP' }], { mode: 'create', days: 10 }, 0));
  const kase = svc.activities.world.addCase(who.teamId, 'Silva v. Souza', number(1));
  await svc.publications.recordCase({ teamId: who.teamId, caseId: kase.id, number: kase.number, asOf: new Date() });
  djen.add(
    { id: 90001, day: day(0), lawyers: [{ number: '501', uf: 'SP' }], number: number(1), masked: true },
    { id: 90002, day: day(0), lawyers: [{ number: '501', uf: 'SP' }], number: number(1) },
    { id: 90003, day: day(0), lawyers: [{ number: '501', uf: 'SP' }], number: number(2) },
  );
  await svc.poller().run();
  await svc.poller().run();
  const stored = await svc.repository.collection.find({ team_id: who.teamId }).sort({ djen_id: 1 }).toArray();
  // The repair and a manual link racing for the same publication still make one activity.
  await Promise.all([svc.publications.settleOwedActivities(), svc.publications.settleOwedActivities()]);
  const activities = await svc.activities.repository.collection.find({ team_id: who.teamId }).toArray();
  expect(activities).toHaveLength(2);
  for (const p of stored.slice(0, 2)) {
    const made = activities.find((a) => a._id === p.activity_id)!;
    expect(made).toMatchObject({
      type: 'deadline',
      case_id: kase.id,
      title: `Despacho - ${number(1)}`,
      metadata: { publication_id: p._id },
    });
    expect(made.deadline_rule).toMatchObject({ start: { made_available: day(0) }, days: 10 });
    expect(made.deadline).not.toBeNull();
    expect(p.activity_pending).toBe(0);
  }
  expect(stored[2]).toMatchObject({ case_id: null, activity_id: null });
  // A case taking the third one's number later gets its activity too, once.
  const later = svc.activities.world.addCase(who.teamId, 'Outro', number(2));
  await svc.publications.recordCase({ teamId: who.teamId, caseId: later.id, number: later.number, asOf: new Date() });
  await svc.publications.recordCase({ teamId: who.teamId, caseId: later.id, number: later.number, asOf: new Date() });
  expect(await svc.activities.repository.collection.countDocuments({ team_id: who.teamId, case_id: later.id })).toBe(1);
});

test('when the API is asked, then it lists with filters and search, reads one, and a PUT treats, links and recomputes', async () => {
  const who = identity();
  svc.watchOnly(watchedTeam(who, [{ oab_number: '601', oab_uf: 'SP' }], { mode: 'suggest', days: 15 }, 1));
  djen.add(
    {
      id: 91001,
      day: day(-1),
      lawyers: [{ number: '601', uf: 'SP' }],
      number: number(10),
      text: '<p>Audiência de <b>CONCILIAÇÃO</b> designada.</p>',
    },
    { id: 91002, day: day(0), lawyers: [{ number: '601', uf: 'SP' }], number: number(11) },
  );
  await svc.poller().run();
  const list = await svc.call(who, { method: 'GET', url: '/v1/publications?limit=10' });
  expect(list.statusCode).toBe(200);
  expect(list.json().data.map((p: { djen_id: number }) => p.djen_id)).toEqual([91002, 91001]);
  const found = await svc.call(who, { method: 'GET', url: '/v1/publications?search=conciliacao&matched=false' });
  expect(found.json().data).toHaveLength(1);
  const pub = found.json().data[0];
  expect(pub.text_plain).toBe('Audiência de CONCILIAÇÃO designada.');
  expect(pub.deadline).toMatchObject({ days: 15, counting: 'business' });
  expect((await svc.call(who, { method: 'GET', url: `/v1/publications?from=${day(0)}` })).json().data).toHaveLength(1);

  const kase = svc.activities.world.addCase(who.teamId, 'Manual', number(99));
  const put = await svc.call(who, {
    method: 'PUT',
    url: `/v1/publications/${pub.id}`,
    payload: { case_id: kase.id, status: 'treated', deadline_days: 5 },
  });
  expect(put.statusCode).toBe(200);
  expect(put.json().data).toMatchObject({ case_id: kase.id, status: 'treated', deadline: { days: 5 } });
  expect(
    (await svc.call(who, { method: 'GET', url: `/v1/publications?case_id=${kase.id}&status=treated` })).json().data,
  ).toHaveLength(1);
  expectNotFound(
    await svc.call(who, {
      method: 'PUT',
      url: `/v1/publications/${pub.id}`,
      payload: { case_id: 'case_01jn0000000000000000000000' },
    }),
    'Case not found',
  );
  expectNotFound(
    await svc.call(identity(), { method: 'GET', url: `/v1/publications/${pub.id}` }),
    'Publication not found',
  );
  expectError(
    await svc.call({ ...who, scopes: ['read', 'write'] }, { method: 'POST', url: '/v1/publications/sync' }),
    403,
    'FORBIDDEN',
    'Insufficient permissions',
  );
  const sync = await svc.call(who, { method: 'POST', url: '/v1/publications/sync' });
  expect(sync.statusCode).toBe(202);
  expect(sync.json().data).toEqual({ started: true });
});

test('when a deadline is stored, then its trail is one string in the store and an array in the API, and a record stored with the array before reads and updates the same', async () => {
  const who = identity();
  svc.watchOnly(watchedTeam(who, [{ oab_number: '701', oab_uf: 'SP' }], { mode: 'suggest', days: 15 }, 0));
  djen.add(
    { id: 92001, day: day(0), lawyers: [{ number: '701', uf: 'SP' }], number: number(20) },
    { id: 92002, day: day(0), lawyers: [{ number: '701', uf: 'SP' }], number: number(21) },
  );
  await svc.poller().run();
  const [fresh, older] = await svc.repository.collection.find({ team_id: who.teamId }).sort({ djen_id: 1 }).toArray();
  expect(typeof fresh.deadline!.trail).toBe('string');
  const trail = JSON.parse(fresh.deadline!.trail as string);
  expect(trail.length).toBeGreaterThanOrEqual(15);
  expect(trail.filter((d: { counted: boolean }) => d.counted)).toHaveLength(15);
  await svc.repository.collection.updateOne({ _id: older._id }, { $set: { 'deadline.trail': trail } });

  const read = async (id: string) =>
    (await svc.call(who, { method: 'GET', url: `/v1/publications/${id}` })).json().data;
  expect((await read(fresh._id)).deadline.trail).toEqual(trail);
  expect((await read(older._id)).deadline).toEqual((await read(fresh._id)).deadline);
  const put = await svc.call(who, {
    method: 'PUT',
    url: `/v1/publications/${older._id}`,
    payload: { deadline_days: 15 },
  });
  expect(put.statusCode).toBe(200);
  // The same deadline again: nothing changed, so no write and no event.
  expect(put.json().data.updated_at).toBe(older.updated_at.toISOString());
  expect((await svc.repository.collection.findOne({ _id: older._id }))!.version).toBe(1);
  const five = await svc.call(who, {
    method: 'PUT',
    url: `/v1/publications/${older._id}`,
    payload: { deadline_days: 5 },
  });
  expect(five.json().data.deadline.trail.filter((d: { counted: boolean }) => d.counted)).toHaveLength(5);
  expect(typeof (await svc.repository.collection.findOne({ _id: older._id }))!.deadline!.trail).toBe('string');
});
