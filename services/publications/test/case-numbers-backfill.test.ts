// The first fill of the view of case numbers from the real cases app (over HTTP on
// loopback): cases made while no publications consumer was there are matched after
// it, news the consumer kept (from RabbitMQ) that is newer stays, a fill stopped part
// way resumes after the last page it stored, and a fill another process holds is left to it.
import type { ConsumerHandle } from '@lpm/shared/messaging/broker';
import { newEvent } from '@lpm/shared/events';
import { cnjDigits } from '../src/domain/cnj.ts';
import { ServiceClient } from '@lpm/shared/upstream/service-client';
import { RunLease } from '@lpm/shared/store/run-lease';
import { listenOnLoopback } from '@lpm/test-kit/listen';
import { scratchBroker, type ScratchBroker } from '@lpm/test-kit/scratch-broker';
import { identity, day } from '@lpm/test-kit/teams';
import { waitFor } from '@lpm/test-kit/wait';
import type { Identity } from '@lpm/shared/identity';
import { startCases, type CasesUnderTest } from '../../cases/test/helper.ts';
import { CaseNumbersRepository } from '../src/data/case-numbers-repository.ts';
import { consumeCaseEvents } from '../src/consumers/case-events.ts';
import { CaseNumbersBackfill } from '../src/jobs/case-numbers-backfill.ts';
import { CasesNumbers, type CaseNumbersSource } from '../src/upstream/cases-numbers.ts';
import { DjenStandIn } from './djen-stand-in.ts';
import { INTERNAL_TOKEN, startPublications, watchedTeam, type PublicationsUnderTest } from './helper.ts';

let djen: DjenStandIn;
let cases: CasesUnderTest;
let svc: PublicationsUnderTest;
let source: CasesNumbers;
let caseNumbers: CaseNumbersRepository;
let scratch: ScratchBroker;
let consumer: ConsumerHandle | undefined;

beforeAll(async () => {
  djen = new DjenStandIn();
  await djen.start();
  cases = await startCases();
  const port = await listenOnLoopback(cases.app.server, 'cases');
  source = new CasesNumbers(
    new ServiceClient({ name: 'cases', baseUrl: `http://127.0.0.1:${port}`, internalToken: INTERNAL_TOKEN }),
  );
  svc = await startPublications(djen.url);
  caseNumbers = new CaseNumbersRepository(svc.db);
  scratch = await scratchBroker('publications-backfill-test.events');
});

afterAll(async () => {
  await consumer?.cancel();
  await scratch?.close();
  await svc?.close();
  if (cases) {
    await new Promise<void>((resolve) => {
      cases.app.server.close(() => resolve());
      cases.app.server.closeAllConnections();
    });
    await cases.close();
  }
  await djen?.stop();
});

const cnj = (n: number) => `${String(n).padStart(7, '0')}-12.2024.8.26.0100`;
const lawyer = (n: number) => ({ number: String(n), uf: 'SP' });

const backfill = (from: CaseNumbersSource = source) =>
  new CaseNumbersBackfill({ db: svc.db, source: from, caseNumbers, publications: svc.publications, pageSize: 2 });

async function createCase(who: Identity, number: string | null) {
  const res = await cases.call(who, { method: 'POST', url: '/v1/cases', payload: { title: 'Caso', number } });
  expect(res.statusCode).toBe(201);
  return res.json().data as { id: string; number: string | null; updated_at: string };
}

/** Polls the team's watch `oab` for publications of `numbers`, today; each one's case id by number. */
async function pollFor(who: Identity, oab: number, numbers: number[]): Promise<(string | null)[]> {
  svc.watchOnly(watchedTeam(who, [{ oab_number: String(oab), oab_uf: 'SP' }], {}, 0));
  djen.add(...numbers.map((n) => ({ id: n, day: day(0), lawyers: [lawyer(oab)], number: cnj(n) })));
  await svc.poller().run();
  const stored = await Promise.all(
    numbers.map((n) => svc.repository.collection.findOne({ team_id: who.teamId, djen_id: n })),
  );
  return stored.map((p) => p!.case_id);
}

/** The cases service's pages, counting the `after` of each page asked, failing at page `failAt` (1-based) if given. */
function countingSource(failAt?: number) {
  const asked: (string | null)[] = [];
  return {
    asked,
    page: (after: string | null, limit: number) => {
      asked.push(after);
      if (asked.length === failAt) return Promise.reject(new Error('cases service gone'));
      return source.page(after, limit);
    },
  };
}

test('when cases were made while no publications consumer was there, then the backfill records them and a publication of such a case is matched to it; once done it asks nothing again', async () => {
  const [who, other] = [identity(), identity()];
  const a = await createCase(who, cnj(8000));
  const b = await createCase(who, cnj(8001).replace(/\D/g, ''));
  await createCase(who, null);
  await createCase(other, cnj(8000));
  expect(await backfill().runOnce()).toBe('done');
  expect(await caseNumbers.backfill()).toMatchObject({ done_at: expect.any(Date) });
  const again = countingSource();
  expect(await backfill(again).runOnce()).toBe('done');
  expect(again.asked).toEqual([]);
  expect(await pollFor(who, 31, [8000, 8001, 8002])).toEqual([a.id, b.id, null]);
});

test('when the consumer already kept newer news of a case, then the backfill leaves it and records the others', async () => {
  const queue = scratch.broker.queueName('publications.case-numbers');
  for (const q of [queue, `${queue}.retry`, `${queue}.dlq`]) scratch.declared.add(q);
  consumer = await consumeCaseEvents(scratch.broker, svc.publications);
  const who = identity();
  const renumbered = await createCase(who, cnj(8100));
  const untouched = await createCase(who, cnj(8102));
  const later = new Date(Date.parse(renumbered.updated_at) + 60_000);
  await scratch.broker.publish(
    newEvent('case.updated', who.teamId, {
      id: renumbered.id,
      title: 'Caso',
      number: cnj(8101),
      updated_at: later.toISOString(),
    }),
  );
  const views = svc.db.collection<{ _id: string; digits: string | null; as_of: Date }>('publication_case_numbers');
  await waitFor(
    'the consumer keeps the case event',
    async () => (await views.findOne({ _id: renumbered.id })) !== null,
  );
  await svc.db.collection('publication_backfills').deleteMany({});
  expect(await backfill().runOnce()).toBe('done');
  expect(await views.findOne({ _id: renumbered.id })).toMatchObject({ digits: cnjDigits(cnj(8101)), as_of: later });
  expect(await views.findOne({ _id: untouched.id })).toMatchObject({ digits: cnjDigits(cnj(8102)) });
  expect(await pollFor(who, 32, [8100, 8101, 8102])).toEqual([null, renumbered.id, untouched.id]);
});

test('when a case.updated names no number among its previous attributes, then the view of numbers is not written', async () => {
  consumer ??= await consumeCaseEvents(scratch.broker, svc.publications);
  const who = identity();
  const [retitled, created] = [await createCase(who, cnj(8200)), await createCase(who, cnj(8201))];
  const views = svc.db.collection<{ _id: string; digits: string | null; as_of: Date }>('publication_case_numbers');
  const asOf = new Date(Date.parse(retitled.updated_at) - 60_000);
  await views.insertOne({ _id: retitled.id, team_id: who.teamId, digits: cnjDigits(cnj(8200)), as_of: asOf } as never);
  const later = new Date(Date.now() + 60_000).toISOString();
  const object = { id: retitled.id, title: 'Caso novo', number: cnj(8200), updated_at: later };
  await scratch.broker.publish(newEvent('case.updated', who.teamId, object, { title: 'Caso' }));
  // Published after it on the same queue: once this one is kept, the one before was delivered.
  await scratch.broker.publish(newEvent('case.created', who.teamId, { ...created, updated_at: later }));
  await waitFor('the case created after it is kept', async () => (await views.findOne({ _id: created.id })) !== null);
  await consumer.cancel();
  consumer = undefined;
  expect(await views.findOne({ _id: retitled.id })).toMatchObject({ as_of: asOf });
});

test('when a backfill fails part way, then the next run resumes after the last page it stored', async () => {
  await svc.db.collection('publication_backfills').deleteMany({});
  const failing = countingSource(2);
  await expect(backfill(failing).runOnce()).rejects.toThrow('cases service gone');
  const stored = await caseNumbers.backfill();
  expect(stored).toMatchObject({ after: expect.any(String), done_at: null });
  const resumed = countingSource();
  expect(await backfill(resumed).runOnce()).toBe('done');
  expect(resumed.asked[0]).toBe(stored!.after);
});

test('when another process holds the backfill, then a run leaves it to that one, and the task started later does it', async () => {
  await svc.db.collection('publication_backfills').deleteMany({});
  const held = await RunLease.take(svc.db, 'publications:case-numbers-backfill', 60_000);
  try {
    const asked = countingSource();
    expect(await backfill(asked).runOnce()).toBe('held');
    expect(asked.asked).toEqual([]);
  } finally {
    await held!.release();
  }
  // As the service starts it: in the background, once the lease is free.
  const task = backfill();
  await task.start();
  await waitFor('the backfill is done', async () => (await caseNumbers.backfill())?.done_at != null);
  await task.stop();
});
