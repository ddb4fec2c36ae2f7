// A section on one service's lists: a team of its own, its records seeded straight
// into the service's store, the service's list pages measured on them, and beside
// them the raw driver's time for the same queries.
import { MongoClient, type Collection, type Db, type Document, type Filter, type Sort } from 'mongodb';
import { measureList, type ListRun } from './cases.ts';
import { identityHeaders } from './internals.ts';
import { ratioOf, recordRun, type Bench, type Figures } from './support.ts';
import { createTeams, identityOf } from './teams.ts';

export interface SeededLists {
  /** The service, its database, and its records' plural as printed. */
  service: 'activities' | 'deals';
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
  const { service, count } = lists;
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
      `seeded ${count.toLocaleString('en')} ${service} of one team with insertMany (batches of 1,000) in ${seconds.toFixed(1)} s (${(count / seconds).toFixed(0)} ${service}/s)`,
    );

    console.log(`\n${count.toLocaleString('en')} ${service} of one team, straight to the ${service} service:`);
    const figures: Figures[] = [];
    for (const r of lists.runs)
      figures.push(await measureList(`GET /v1/${service} ${r.label} direct`, url, r, headers));
    return [...figures, ...(await lists.driver(db, teamId))];
  } finally {
    await client.close();
  }
}

/** The repository's list query sent through the raw driver: the first 20 of `filter` in `sort` order without their outboxes, and their count. */
export const driverListPage = (col: Collection, filter: Filter<Document>, sort: Sort) =>
  Promise.all([
    col.find(filter, { projection: { outbox: 0, outbox_pending: 0 }, sort, limit: 20 }).toArray(),
    col.countDocuments(filter),
  ]);

/** A query's figures through the service and through the driver, under `key`, and the ratio of their p50s. */
export function recordBesideDriver(b: Bench, key: string, service: Figures, driver: Figures): void {
  recordRun(b, `${key}.service`, service);
  recordRun(b, `${key}.driver`, driver);
  b.record(`${key}.p50_vs_driver`, ratioOf(service.p50, driver.p50));
}
