// Section `publications`: one poll of the DJEN for one watch whose day holds
// BENCH_PUBLICATIONS (1,000) publications, from the publications service's stand-in
// of the Comunica API (pages of 100), matched against the team's BENCH_PUBLICATION_CASES
// (100,000) case numbers and stored, with the dates and suggested deadlines the
// running system's activities service computes. The poller runs in this process on
// the run's store, as the service runs it; the time is the poll's, seeding excluded.
import type { MongoClient } from 'mongodb';
import {
  CaseNumberEntity,
  CaseNumbersRepository,
  DjenClient,
  DjenStandIn,
  PollRepository,
  PollStateEntity,
  Poller,
  PublicationActivities,
  PublicationEntity,
  PublicationTeamEntity,
  Publications,
  PublicationsRepository,
  ServiceClient,
  defaultTeamSettings,
  newId,
} from './internals.ts';
import { openScratchStore } from './scratch-store.ts';
import type { Bench } from './support.ts';

const PUBLICATIONS = Number(process.env.BENCH_PUBLICATIONS ?? 1000);
const CASES = Number(process.env.BENCH_PUBLICATION_CASES ?? 100_000);
const DATABASE = 'bench_publications';
const cnj = (n: number) => `${String(n).padStart(7, '0')}-12.2025.8.26.0100`;

/** CASES case numbers of team `teamId` in the service's view of them, 1,000 an insert. */
async function seedCaseNumbers(raw: MongoClient, teamId: string): Promise<void> {
  const asOf = new Date();
  for (let from = 0; from < CASES; from += 1000) {
    const batch = Array.from({ length: Math.min(1000, CASES - from) }, (_, k) => ({
      _id: newId('case'),
      team_id: teamId,
      digits: cnj(from + k).replace(/\D/g, ''),
      as_of: asOf,
    }));
    await raw
      .db(DATABASE)
      .collection<{ _id: string }>('publication_case_numbers')
      .insertMany(batch, { ordered: false });
  }
}

/** The team's publications stored, and those matched; without the service's time budget, as the local store decodes each it counts. */
async function keptOf(raw: MongoClient, teamId: string) {
  const kept = raw.db(DATABASE).collection('publications');
  return {
    stored: await kept.countDocuments({ team_id: teamId }),
    matched: await kept.countDocuments({ team_id: teamId, unmatched: 0 }),
  };
}

export async function publicationsSection(b: Bench): Promise<void> {
  const system = await b.system();
  const djen = new DjenStandIn();
  await djen.start();
  const { store, raw, drop } = await openScratchStore(b, DATABASE, [
    PublicationEntity,
    PollStateEntity,
    PublicationTeamEntity,
    CaseNumberEntity,
  ]);
  try {
    const teamId = newId('team');
    await seedCaseNumbers(raw, teamId);
    const day = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    // Every other one names a case of the team; the rest match none.
    djen.add(
      ...Array.from({ length: PUBLICATIONS }, (_, i) => ({
        id: 1_000_000 + i,
        day,
        lawyers: [{ number: '123456', uf: 'SP' }],
        number: cnj(i % 2 ? CASES + i : i * 97),
        masked: i % 3 > 0,
      })),
    );
    const who = {
      teamId,
      userId: newId('user'),
      scopes: ['read', 'write'] as ('read' | 'write')[],
      settings: defaultTeamSettings(),
    };
    const repository = new PublicationsRepository(store.db, { kick: () => {} });
    const caseNumbers = new CaseNumbersRepository(store.db);
    const poll = new PollRepository(store.db);
    const activities = new PublicationActivities(
      new ServiceClient({ name: 'activities', baseUrl: system.serviceUrls.activities, internalToken: b.token }),
    );
    const domain = new Publications({
      publications: repository,
      caseNumbers,
      poll,
      deadlines: activities,
      cases: { facts: async () => null },
    });
    const team = {
      team_id: teamId,
      user_id: who.userId,
      settings: who.settings,
      publications: {
        watches: [{ oab_number: '123456', oab_uf: 'SP', name: null }],
        deadline: { mode: 'suggest' as const, days: 15, counting: 'business' as const },
        backfill_days: 2,
      },
    };
    const poller = new Poller({
      source: { teams: async () => [team] },
      djen: new DjenClient({ baseUrl: djen.url, userAgent: 'lpm-bench (bench@example.com)' }),
      poll,
      publications: repository,
      caseNumbers,
      domain,
    });
    const started = performance.now();
    const summary = await poller.run();
    const ms = performance.now() - started;
    const { stored, matched } = await keptOf(raw, teamId);
    console.log(
      `publications: ${stored} of ${PUBLICATIONS} stored (${matched} matched among ${CASES.toLocaleString('en')} cases) in ${summary.requests} requests, ${ms.toFixed(0)} ms`,
    );
    if (stored !== PUBLICATIONS) throw new Error(`publications: ${stored} stored, ${PUBLICATIONS} expected`);
    b.record(`publications.poll_${PUBLICATIONS}.ms`, ms);
  } finally {
    await drop();
    await djen.stop();
  }
}
