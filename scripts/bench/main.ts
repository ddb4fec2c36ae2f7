// `npm run bench [-- --only NAME[,NAME]] [-- --json FILE]`: figures of the platform
// measured in one run on a private FerretDB, RabbitMQ vhost, Redis key prefix and test
// CA, all removed after. Prints figures, and with --json writes every one of them by
// its dotted key; asserts nothing. Without names every scenario runs, in the order
// below; with names, only those (still in that order).
import { existsSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { activitiesSection } from './activities.ts';
import { calendarSection } from './calendar.ts';
import { publicationsSection } from './publications.ts';
import { parseBenchArgs } from './args.ts';
import { casesSection } from './cases.ts';
import { clientsSection } from './clients.ts';
import { dealsSection } from './deals.ts';
import { financialSection } from './financial.ts';
import { gatewaySection } from './gateway.ts';
import { listsSection } from './lists.ts';
import { ormSection } from './orm.ts';
import { relaySection } from './relay.ts';
import { roundtripsSection } from './roundtrips.ts';
import { rssSection } from './rss.ts';
import { serviceSection } from './service.ts';
import { storeSection } from './store.ts';
import { machineSection } from './machine.ts';
import { openBench } from './bench-run.ts';
import { printTable, type Bench } from './support.ts';
import { webhooksSection } from './webhooks.ts';
import { webhooksClusterSection } from './webhooks-cluster.ts';
import { writesSection } from './writes.ts';

interface Section {
  name: string;
  about: string;
  run(b: Bench): Promise<void>;
}

// machine first (how fast this machine is, alone); the next three need no system and
// run before any is started; rss right after the
// system starts (idle); the scenarios that leave cases, deals and activities in the
// service's store come last (their store load would slow everything after them).
const SECTIONS: Section[] = [
  {
    name: 'machine',
    about: "one trivial Fastify route: this machine's speed against the reference machine's",
    run: machineSection,
  },
  {
    name: 'orm',
    about: 'MikroORM EntityManager against the driver: GET by id and insert, in process',
    run: ormSection,
  },
  { name: 'relay', about: 'one outbox relay alone, 2,000 documents with one event each', run: relaySection },
  {
    name: 'store',
    about: 'raw driver findOne by _id among BENCH_STORE_DOCS documents of the local store',
    run: storeSection,
  },
  { name: 'rss', about: 'idle resident memory of the launcher, the gateway and each service', run: rssSection },
  {
    name: 'clients',
    about:
      'GET /v1/clients/{id} and POST /v1/clients, direct and through the gateway (BENCH_BASELINE: against another checkout)',
    run: clientsSection,
  },
  {
    name: 'gateway',
    about:
      'GET /v1/openapi.yaml warm; GET and POST /v1/clients through the gateway against a bare @fastify/http-proxy, interleaved',
    run: gatewaySection,
  },
  {
    name: 'webhooks',
    about:
      'client.created deliveries to HTTPS receivers at a steady write rate: at once, in 50 ms, beside a timing-out webhook',
    run: webhooksSection,
  },
  {
    name: 'webhooks-cluster3',
    about: 'the webhooks fanout and capacity scenarios again on a RabbitMQ cluster of 3 nodes, against the single node',
    run: webhooksClusterSection,
  },
  {
    name: 'writes',
    about:
      'POST /v1/clients through the gateway, open loop, in steps of 200 to 800 a second: capacity, latency, CPU of the whole system and store commands a write; PUT /v1/cases/{id} and POST /v1/activities at 200/s',
    run: writesSection,
  },
  {
    name: 'financial',
    about:
      'GET /v1/financial/summary over one team with BENCH_FINANCIAL records across a year, per group_by, beside the raw driver',
    run: financialSection,
  },
  {
    name: 'service',
    about: 'GET /v1/clients/{id} and the GET /v1/cases page against the raw driver, same concurrency',
    run: serviceSection,
  },
  {
    name: 'cases',
    about: "a client's rename seen on its case, and GET /v1/cases on one team with BENCH_CASES cases",
    run: casesSection,
  },
  {
    name: 'deals',
    about: 'GET /v1/deals (filter and sort) and the summary on one team with BENCH_DEALS deals, beside the raw driver',
    run: dealsSection,
  },
  {
    name: 'calendar',
    about:
      "a court calendar change moving one team's BENCH_DEADLINES (5,000) rule-based deadlines, from PUT /v1/settings to the run done",
    run: calendarSection,
  },
  {
    name: 'activities',
    about:
      'GET /v1/activities/overdue and the default page on one team with BENCH_ACTIVITIES activities, beside the raw driver',
    run: activitiesSection,
  },
  {
    name: 'lists',
    about:
      'the default page of GET /v1/clients and GET /v1/financial on one team with BENCH_LIST_RECORDS records of each',
    run: listsSection,
  },
  {
    name: 'publications',
    about:
      'one DJEN poll of one watch: BENCH_PUBLICATIONS (1,000) publications from the stand-in, matched against BENCH_PUBLICATION_CASES (100,000) cases and stored',
    run: publicationsSection,
  },
  {
    name: 'roundtrips',
    about: 'store commands of every process before the answer of PUT /v1/deals/{id}/won with create_case',
    run: roundtripsSection,
  },
];
const KNOWN = SECTIONS.map((s) => s.name);

function usage(): string {
  return [
    'Usage: npm run bench [-- --only NAME[,NAME]] [-- --json FILE]   (no name: every scenario; names alone work too)',
    '',
    'Scenarios, run in this order:',
    ...SECTIONS.map((s) => `  ${s.name.padEnd(12)} ${s.about}`),
  ].join('\n');
}

const parsed = parseBenchArgs(process.argv.slice(2), KNOWN);
if (!parsed.ok) {
  console.error(`bench: ${parsed.error}\n\n${usage()}`);
  process.exit(2);
}
const { names, json, help } = parsed.args;
if (help) {
  console.log(usage());
  process.exit(0);
}
const selected = SECTIONS.filter((s) => names.length === 0 || names.includes(s.name));

const baseline = process.env.BENCH_BASELINE ? resolve(process.env.BENCH_BASELINE) : undefined;
if (baseline) {
  const needed = ['scripts/start.ts', 'gateway/src/cli/main.ts', 'node_modules'].filter(
    (p) => !existsSync(resolve(baseline, p)),
  );
  if (needed.length) {
    console.error(`bench: BENCH_BASELINE=${baseline} is not a checkout ready to start: no ${needed.join(', ')} there.`);
    process.exit(2);
  }
  if (!selected.some((s) => s.name === 'clients'))
    console.log('bench: BENCH_BASELINE applies to the clients section only, which is not selected.');
}

/** Every figure by key, as --json writes them. */
function printValues(b: Bench): void {
  const keys = Object.keys(b.values);
  if (!keys.length) return;
  console.log('\n| figure | value |\n|---|---:|');
  for (const k of keys) console.log(`| ${k} | ${Number(b.values[k].toPrecision(4))} |`);
}

/** --json: the figures so far, also when a scenario failed or the run was interrupted. */
function writeFigures(b: Bench): void {
  if (!json) return;
  writeFileSync(json, `${JSON.stringify(b.values, null, 2)}\n`);
  console.log(`\nfigures written to ${resolve(json)}`);
}

const { bench, cleanUp } = await openBench(baseline);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    writeFigures(bench);
    void cleanUp().finally(() => process.exit(130));
  });
}
try {
  console.log(`bench: scenarios ${selected.map((s) => s.name).join(', ')}; FerretDB over ${bench.store.backend}`);
  for (const s of selected) {
    console.log(`\n== ${s.name} ==`);
    const started = Date.now();
    await s.run(bench);
    console.log(`(${s.name}: ${((Date.now() - started) / 1000).toFixed(0)} s)`);
  }
  if (bench.figures.length || bench.closing.length) console.log('\n== summary ==');
  if (bench.figures.length) printTable(bench.figures);
  for (const print of bench.closing) print();
  printValues(bench);
  writeFigures(bench);
} catch (e) {
  writeFigures(bench);
  throw e;
} finally {
  await cleanUp();
}
