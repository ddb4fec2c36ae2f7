import { expect, test } from '@jest/globals';
import { identity, day } from '@lpm/test-kit/teams';
import { waitFor } from '@lpm/test-kit/wait';
import type { DjenStandIn, StandInItem } from './djen-stand-in.ts';
import { publicationsSuite, TEST_WAITS, watchedTeam, type PublicationsUnderTest } from './helper.ts';

let djen: DjenStandIn;
let svc: PublicationsUnderTest;

publicationsSuite((started) => ({ djen, svc } = started));

const lawyer = (n: number) => ({ number: String(n), uf: 'SP' });
const cnj = (n: number) => `${String(n).padStart(7, '0')}-12.2024.8.26.0100`;
const items = (
  from: number,
  count: number,
  d: string,
  lawyers = [lawyer(1)],
  extra: Partial<StandInItem> = {},
): StandInItem[] =>
  Array.from({ length: count }, (_, k) => ({
    id: from + k,
    day: d,
    lawyers,
    number: cnj(from + k),
    masked: k % 2 === 0,
    ...extra,
  }));

test('when a new watch is polled, then the backfill days are read page by page of 100 and a day read in full is asked again only if yesterday or today', async () => {
  const who = identity();
  svc.watchOnly(watchedTeam(who, [{ oab_number: '1', oab_uf: 'SP' }], {}, 3));
  djen.add(...items(1000, 150, day(-3)), ...items(2000, 2, day(-1)), ...items(3000, 1, day(-5)));
  const asked = djen.asked.length;
  const summary = await svc.poller().run();
  const first = djen.asked.slice(asked);
  expect(first.map((a) => `${a.day}:${a.page}`)).toEqual([
    `${day(-3)}:1`,
    `${day(-3)}:2`,
    `${day(-2)}:1`,
    `${day(-1)}:1`,
    `${day(0)}:1`,
  ]);
  expect(first.every((a) => a.size === 100 && a.userAgent?.includes('ops@example.com'))).toBe(true);
  expect(summary.received).toBe(152);
  const again = djen.asked.length;
  await svc.poller().run();
  expect(djen.asked.slice(again).map((a) => a.day)).toEqual([day(-1), day(0)]);
  const { total } = await svc.repository.list(who.teamId, {}, { page: 1, limit: 1 });
  expect(total).toBe(152);
});

test('when one publication names two watched lawyers and comes again on another page, then it is kept once listing both', async () => {
  const who = identity();
  svc.watchOnly(
    watchedTeam(
      who,
      [
        { oab_number: '7', oab_uf: 'SP' },
        { oab_number: '8', oab_uf: 'RJ' },
      ],
      {},
      0,
    ),
  );
  const both: StandInItem = {
    id: 5000,
    day: day(0),
    lawyers: [
      { number: '7', uf: 'SP' },
      { number: '8', uf: 'RJ' },
    ],
    number: '00012341220248260100',
  };
  djen.add(both, ...items(5001, 100, day(0), [{ number: '7', uf: 'SP' }]));
  djen.repeatOn('SP', '7', day(0), 2, both);
  await svc.poller().run();
  const stored = await svc.repository.collection.find({ team_id: who.teamId }).toArray();
  expect(stored).toHaveLength(101);
  const one = stored.find((r) => r.djen_id === 5000)!;
  expect(one.watches.sort()).toEqual(['RJ:8', 'SP:7']);
  expect(one.lawyers.map((l) => `${l.oab_uf}:${l.oab_number}`)).toEqual(['SP:7', 'RJ:8']);
  expect(one.case_number).toBe('0001234-12.2024.8.26.0100');
});

test('when numbers come masked and unmasked, then each matches the case of its 20 digits, one matching no case stays unmatched until a case takes its number', async () => {
  const who = identity();
  svc.watchOnly(watchedTeam(who, [{ oab_number: '11', oab_uf: 'SP' }], { mode: 'suggest', days: 5 }, 0));
  await svc.publications.recordCase({ teamId: who.teamId, caseId: 'case_a', number: cnj(6000), asOf: new Date() });
  await svc.publications.recordCase({
    teamId: who.teamId,
    caseId: 'case_b',
    number: cnj(6001).replace(/\D/g, ''),
    asOf: new Date(),
  });
  djen.add(...items(6000, 3, day(0), [lawyer(11)]));
  await svc.poller().run();
  const byId = async (id: number) => (await svc.repository.collection.findOne({ team_id: who.teamId, djen_id: id }))!;
  expect((await byId(6000)).case_id).toBe('case_a');
  expect((await byId(6001)).case_id).toBe('case_b');
  const lone = await byId(6002);
  expect(lone.case_id).toBeNull();
  expect(lone.deadline).toMatchObject({ days: 5, counting: 'business' });
  expect(lone.publication_date! > lone.made_available_date).toBe(true);
  expect(
    await svc.publications.recordCase({ teamId: who.teamId, caseId: 'case_c', number: cnj(6002), asOf: new Date() }),
  ).toBe(1);
  expect((await byId(6002)).case_id).toBe('case_c');
});

test('when the API answers 429 and then 0 remaining, then the poll waits the shortened minute and pauses before going on', async () => {
  const who = identity();
  svc.watchOnly(watchedTeam(who, [{ oab_number: '21', oab_uf: 'SP' }], {}, 0));
  djen.add(...items(7000, 2, day(-1), [lawyer(21)]));
  djen.then({ status: 429 }, { remaining: 0 });
  const asked = djen.asked.length;
  await svc.poller().run();
  const seen = djen.asked.slice(asked);
  expect(seen.map((a) => a.day)).toEqual([day(-1), day(-1), day(0)]);
  expect(seen[1].at - seen[0].at).toBeGreaterThanOrEqual(TEST_WAITS.afterRateLimitMs - 5);
  expect(seen[2].at - seen[1].at).toBeGreaterThanOrEqual(TEST_WAITS.remainingZeroMs - 5);
  expect(await svc.repository.collection.countDocuments({ team_id: who.teamId })).toBe(2);
});

test('when the API goes down in the middle of a day and the process restarts, then the next poll resumes at that page with nothing lost or doubled', async () => {
  const who = identity();
  svc.watchOnly(watchedTeam(who, [{ oab_number: '31', oab_uf: 'SP' }], {}, 2));
  djen.add(...items(8000, 250, day(-2), [lawyer(31)]));
  djen.then({ remaining: 50 }, { status: 503 }, { status: 502 }, { status: 500 });
  const asked = djen.asked.length;
  const stopped = await svc.poller().run();
  expect(stopped.received).toBe(100);
  expect(await svc.poll.state(who.teamId, 'SP:31')).toMatchObject({ day: day(-2), page: 2 });
  await svc.poller().run();
  const pages = djen.asked
    .slice(asked)
    .filter((a) => a.day === day(-2))
    .map((a) => a.page);
  expect(pages).toEqual([1, 2, 2, 2, 2, 3]);
  const stored = await svc.repository.collection.find({ team_id: who.teamId }).toArray();
  expect(stored).toHaveLength(250);
  expect(new Set(stored.map((r) => r.djen_id)).size).toBe(250);
});

test('when two replicas run the poll at once, then one polls and the other skips', async () => {
  const who = identity();
  svc.watchOnly(watchedTeam(who, [{ oab_number: '41', oab_uf: 'SP' }], {}, 1));
  djen.add(...items(9000, 3, day(-1), [lawyer(41)]));
  const asked = djen.asked.length;
  const [a, b] = await Promise.all([svc.job().runOnce(), svc.job().runOnce()]);
  expect([a, b].filter((s) => s === null)).toHaveLength(1);
  expect(djen.asked.slice(asked).map((x) => x.day)).toEqual([day(-1), day(0)]);
  expect(await svc.repository.collection.countDocuments({ team_id: who.teamId })).toBe(3);
});

test('when the process stops after a page (its lease lost, a shutdown), then a new process resumes at the next page with nothing doubled', async () => {
  const who = identity();
  svc.watchOnly(watchedTeam(who, [{ oab_number: '51', oab_uf: 'SP' }], {}, 3));
  djen.add(...items(9500, 230, day(-3), [lawyer(51)]));
  const asked = djen.asked.length;
  let allowed = 1;
  const first = await svc.poller().run(async () => allowed-- > 0);
  expect(first).toMatchObject({ requests: 1, received: 100 });
  const second = await svc.poller().run();
  expect(second.received).toBe(130);
  expect(
    djen.asked
      .slice(asked)
      .filter((a) => a.day === day(-3))
      .map((a) => a.page),
  ).toEqual([1, 2, 3]);
  expect(await svc.repository.collection.countDocuments({ team_id: who.teamId })).toBe(230);
});

test('when the poll job is started, then agenda runs the poll on its interval', async () => {
  const who = identity();
  svc.watchOnly(watchedTeam(who, [{ oab_number: '61', oab_uf: 'SP' }], {}, 0));
  djen.add(...items(9900, 2, day(0), [lawyer(61)]));
  const job = svc.job(300);
  await job.start();
  try {
    await waitFor(
      'the scheduled poll',
      async () => (await svc.repository.collection.countDocuments({ team_id: who.teamId })) === 2,
      15_000,
    );
  } finally {
    await job.stop();
  }
});

test('when the court cancels a publication already kept, then the next read of its day updates it once, with the new text', async () => {
  const who = identity();
  svc.watchOnly(watchedTeam(who, [{ oab_number: '71', oab_uf: 'SP' }], {}, 0));
  const [item] = items(9950, 1, day(-1), [lawyer(71)]);
  djen.add(item);
  await svc.poller().run();
  Object.assign(item, { active: false, hash: 'h9950-cancelled', text: '<p>Comunicação cancelada: erro material.</p>' });
  const second = await svc.poller().run();
  expect(second.updated).toBe(1);
  expect((await svc.poller().run()).updated).toBe(0);
  const stored = (await svc.repository.collection.findOne({ team_id: who.teamId, djen_id: 9950 }))!;
  expect(stored).toMatchObject({
    active: false,
    hash: 'h9950-cancelled',
    text_plain: 'Comunicação cancelada: erro material.',
    version: 2,
  });
});
