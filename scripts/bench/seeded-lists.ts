// A section on one service's lists: a team of its own, its records seeded straight
// into the service's store, the service's list pages measured on them, and beside
// them the raw driver's time for the same queries.
import { MongoClient, type Db } from 'mongodb';
import { measureList, type ListRun } from './cases.ts';
import { identityHeaders } from './internals.ts';
import type { Bench, Figures } from './support.ts';
import { createTeams, identityOf } from './teams.ts';

export interface SeededLists {
  service: 'activities' | 'deals';
  /** The records' plural, as printed. */
  noun: string;
  count: number;
  /** A page the service answers once it is up, and so has made its indexes, before the seed. */
  probe: string;
  /** Seeds `count` records of the team into the service's database: the seconds the inserts took. */
  seed: (db: Db, teamId: string) => Promise<number>;
  runs: ListRun[];
  /** After the runs: the repository's queries of the team sent through the raw driver, measured. */
  driver: (db: Db, teamId: string) => Promise<Figures[]>;
}

/** The runs' figures, in their order, then the driver's. */
export async function measureSeededLists(b: Bench, lists: SeededLists): Promise<Figures[]> {
  const { service, noun, count } = lists;
  const sys = await b.system();
  const url = sys.serviceUrls[service];
  const [team] = await createTeams(b, sys.tree, [`Bench ${service}`]);
  const teamId = team.team.id;
  const headers = identityHeaders(identityOf(team), b.token);
  const probe = await fetch(`${url}${lists.probe}`, { headers });
  if (probe.status !== 200)
    throw new Error(`GET ${lists.probe.split('?')[0]} answered ${probe.status}: ${await probe.text()}`);
  const client = await MongoClient.connect(b.store.url);
  try {
    const db = client.db(`${sys.tree.dbPrefix}${service}`);
    const seconds = await lists.seed(db, teamId);
    console.log(
      `seeded ${count.toLocaleString('en')} ${noun} of one team with insertMany (batches of 1,000) in ${seconds.toFixed(1)} s (${(count / seconds).toFixed(0)} ${noun}/s)`,
    );

    console.log(`\n${count.toLocaleString('en')} ${noun} of one team, straight to the ${service} service:`);
    const figures: Figures[] = [];
    for (const r of lists.runs)
      figures.push(await measureList(`GET /v1/${service} ${r.label} direct`, url, r, headers));
    return [...figures, ...(await lists.driver(db, teamId))];
  } finally {
    await client.close();
  }
}
