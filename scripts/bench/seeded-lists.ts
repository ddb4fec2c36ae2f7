// The start of a section on one service's lists: a team of its own, its records
// seeded straight into the service's store, and the service's list pages measured
// on them (the section then sets the raw driver's time beside them).
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
  seed: (mongoUrl: string, database: string, teamId: string) => Promise<number>;
  runs: ListRun[];
}

/** The runs' figures, in their order, and where the records are. */
export async function measureSeededLists(
  b: Bench,
  lists: SeededLists,
): Promise<{ database: string; teamId: string; figures: Figures[] }> {
  const { service, noun, count } = lists;
  const sys = await b.system();
  const database = `${sys.tree.dbPrefix}${service}`;
  const url = sys.serviceUrls[service];
  const [team] = await createTeams(b, sys.tree, [`Bench ${service}`]);
  const teamId = team.team.id;
  const headers = identityHeaders(identityOf(team), b.token);
  const probe = await fetch(`${url}${lists.probe}`, { headers });
  if (probe.status !== 200)
    throw new Error(`GET ${lists.probe.split('?')[0]} answered ${probe.status}: ${await probe.text()}`);
  const seconds = await lists.seed(b.store.url, database, teamId);
  console.log(
    `seeded ${count.toLocaleString('en')} ${noun} of one team with insertMany (batches of 1,000) in ${seconds.toFixed(1)} s (${(count / seconds).toFixed(0)} ${noun}/s)`,
  );

  console.log(`\n${count.toLocaleString('en')} ${noun} of one team, straight to the ${service} service:`);
  const figures: Figures[] = [];
  for (const r of lists.runs) figures.push(await measureList(`GET /v1/${service} ${r.label} direct`, url, r, headers));
  return { database, teamId, figures };
}
