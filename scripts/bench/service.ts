// Scenario `service`: what a service costs over the raw driver on the same store and
// collection, in turns (driver, service, driver, service) so drift favours neither.
// - GET /v1/clients/{id} straight to the clients service (internal credential),
//   autocannon with SERVICE_CONCURRENCY connections, against the driver's
//   findOne({ _id }) in this process with as many operations at once.
// - The GET /v1/cases page (no filter, the default 20 newest first) of the team with
//   CASES cases, one request at a time, against the repository's queries sent by the
//   driver one at a time: the team's day counts, then the newest days' cases with the
//   same sort, projection and limit (shared/src/store/list-buckets.ts).
import { MongoClient } from 'mongodb';
import { clientsState, measure } from './clients.ts';
import { CASES, seededCaseTeam } from './cases-store.ts';
import { consumersSettled } from './webhook-support.ts';
import {
  DURATION_S,
  drive,
  meanOfRounds,
  measureRaw,
  ms,
  quantile,
  ratioOf,
  recordRun,
  type Bench,
  type Figures,
  type System,
} from './support.ts';

const SERVICE_CONCURRENCY = Number(process.env.BENCH_SERVICE_CONCURRENCY ?? 8);
const ROUNDS = 2;
const WARM_UP = 200;

function compare(b: Bench, key: string, label: string, service: Figures[], driver: Figures[]): void {
  const [s, d] = [
    meanOfRounds(`${label} service (mean of ${ROUNDS})`, service),
    meanOfRounds(`${label} raw driver (mean of ${ROUNDS})`, driver),
  ];
  console.log(
    `${label}, service/raw driver: p50 ${ratioOf(s.p50, d.p50).toFixed(2)}x (${ms(s.p50)} / ${ms(d.p50)} ms), ` +
      `p99 ${ratioOf(s.p99, d.p99).toFixed(2)}x, throughput ${ratioOf(s.rps, d.rps).toFixed(2)}`,
  );
  recordRun(b, `service.${key}.service`, s);
  recordRun(b, `service.${key}.driver`, d);
  b.record(`service.${key}.p50_vs_driver`, ratioOf(s.p50, d.p50));
  b.record(`service.${key}.p99_vs_driver`, ratioOf(s.p99, d.p99));
  b.figures.push(s, d);
}

export async function serviceSection(b: Bench): Promise<void> {
  const sys = await b.system();
  const st = await clientsState(b, sys);
  await st.events.drained(st.created);
  // What the sections before wrote, worked off first: the raw driver and the service share the store with it otherwise.
  await consumersSettled(b.vhost, sys.tree.exchange);
  const client = await MongoClient.connect(b.store.url);
  try {
    await getById(b, sys, st, client);
    await caseList(b, sys, client);
  } finally {
    await client.close();
  }
}

/** GET /v1/clients/{id} straight to the service against the driver's findOne. */
async function getById(
  b: Bench,
  sys: System,
  st: Awaited<ReturnType<typeof clientsState>>,
  client: MongoClient,
): Promise<void> {
  const clients = client.db(`${sys.tree.dbPrefix}clients`).collection<{ _id: string }>('clients');
  const ids = st.teams.map((t) => t.clientId);
  const findById = {
    input: (i: number) => ids[i % ids.length],
    run: async (_id: string) => (await clients.findOne({ _id })) !== null,
  };
  console.log(
    `service: GET /v1/clients/{id} straight to the clients service (autocannon) against the driver's findOne({ _id }) in this process, ` +
      `${SERVICE_CONCURRENCY} at once, ${DURATION_S} s per run, both warmed up, then ${ROUNDS} rounds in alternating order; the same ${ids.length} clients`,
  );
  // Both sides warmed up, then the rounds in alternating order: neither always goes first.
  await drive(findById, SERVICE_CONCURRENCY, 60, WARM_UP);
  const serviceRun = (name = 'GET /v1/clients/{id} direct') =>
    measure(name, sys.serviceUrls.clients, 'GET', st.teams, false, b.token, SERVICE_CONCURRENCY);
  await serviceRun('GET /v1/clients/{id} direct, warm-up');
  const byId = { service: [] as Figures[], driver: [] as Figures[] };
  const driverRun = async (): Promise<Figures> => {
    const s = await drive(findById, SERVICE_CONCURRENCY, DURATION_S);
    return {
      name: 'findOne',
      rps: s.ops / s.seconds,
      p50: quantile(s.latencies, 0.5),
      p99: quantile(s.latencies, 0.99),
      errors: s.errors,
      created: 0,
    };
  };
  for (let round = 1; round <= ROUNDS; round++) {
    let d: Figures, f: Figures;
    if (round % 2 === 1) {
      d = await driverRun();
      f = await serviceRun();
    } else {
      f = await serviceRun();
      d = await driverRun();
    }
    byId.driver.push(d);
    byId.service.push(f);
    console.log(
      `  round ${round}: raw driver ${d.rps.toFixed(0)} ops/s, p50 ${ms(d.p50)} ms, p99 ${ms(d.p99)} ms${d.errors ? `, ${d.errors} errors` : ''}; ` +
        `service ${f.rps.toFixed(0)} req/s, p50 ${ms(f.p50)} ms, p99 ${ms(f.p99)} ms${f.errors ? `, ${f.errors} non-2xx or errors` : ''}`,
    );
  }
  compare(b, 'get_by_id', 'GET /v1/clients/{id}', byId.service, byId.driver);
}

/** GET /v1/cases (the default page) straight to the service against the driver's day counts and day reads. */
async function caseList(b: Bench, sys: System, client: MongoClient): Promise<void> {
  const { team, headers, database } = await seededCaseTeam(b, sys);
  const cases = client.db(database).collection('cases');
  const counts = client.db(database).collection<{ days: string }>('list_counts');
  // CasesRepository.list without a filter: the team's day counts (the total), then the newest days until the page is full.
  const page = async () => {
    const stored = await counts.find({ owner: `cases:${team.team.id}` }).toArray();
    const days = stored.flatMap((c) => JSON.parse(c.days) as { d: number; n: number }[]).sort((x, y) => y.d - x.d);
    const records: unknown[] = [];
    for (const day of days) {
      if (records.length >= 20) break;
      const filter = { list_bucket: `${team.team.id}:${day.d}` };
      records.push(
        ...(await cases
          .find(filter, {
            projection: { outbox: 0, outbox_pending: 0, timeline: 0 },
            sort: { created_at: -1, _id: -1 },
            limit: 20 - records.length,
          })
          .toArray()),
      );
    }
    return { records, total: days.reduce((sum, d) => sum + d.n, 0) };
  };
  const get = async () => {
    const res = await fetch(`${sys.serviceUrls.cases}/v1/cases`, { headers });
    const body = (await res.json()) as { data?: unknown[] };
    if (res.status !== 200 || body.data?.length !== 20)
      throw new Error(`GET /v1/cases answered ${res.status} with ${body.data?.length ?? 'no'} items`);
  };
  console.log(
    `\nGET /v1/cases (the default page: 20 newest first) on a team with ${CASES.toLocaleString('en')} cases, one request at a time, against the driver's day counts + day reads:`,
  );
  await page();
  await get();
  const list = { service: [] as Figures[], driver: [] as Figures[] };
  for (let round = 1; round <= ROUNDS; round++) {
    const driverRun = async () =>
      list.driver.push(await measureRaw(`round ${round}, raw driver day counts + day reads`, page));
    const serviceRun = async () => list.service.push(await measureRaw(`round ${round}, GET /v1/cases direct`, get));
    for (const run of round % 2 === 1 ? [driverRun, serviceRun] : [serviceRun, driverRun]) await run();
  }
  compare(b, 'case_list', 'GET /v1/cases page', list.service, list.driver);
  b.record('service.case_list.cases', CASES);
}
