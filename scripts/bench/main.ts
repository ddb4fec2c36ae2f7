// `npm run bench [-- section ...]`: figures of the platform measured in one run on a
// private FerretDB, RabbitMQ vhost, Redis key prefix and test CA, all removed after.
// Prints figures; asserts nothing. Without arguments every section runs, in the order
// below; with names, only those (still in that order).
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { activitiesSection } from './activities.ts';
import { casesSection } from './cases.ts';
import { clientsSection } from './clients.ts';
import { dealsSection } from './deals.ts';
import { financialSection } from './financial.ts';
import { ormSection } from './orm.ts';
import { relaySection } from './relay.ts';
import { openBench, printTable, type Bench } from './support.ts';
import { webhooksSection } from './webhooks.ts';

interface Section {
  name: string;
  about: string;
  run(b: Bench): Promise<void>;
}

// The first two need no system and run before any is started; the cases and deals come
// last (their store load would slow everything after them).
const SECTIONS: Section[] = [
  { name: 'orm', about: 'MikroORM EntityManager against the driver: GET by id and insert, in process', run: ormSection },
  { name: 'relay', about: 'one outbox relay alone, 2,000 documents with one event each', run: relaySection },
  { name: 'clients', about: 'GET /v1/clients/{id} and POST /v1/clients, direct and through the gateway (BENCH_BASELINE: against another checkout)', run: clientsSection },
  { name: 'webhooks', about: 'client.created deliveries to HTTPS receivers, three scenarios', run: webhooksSection },
  { name: 'financial', about: 'GET /v1/financial/summary over one team with BENCH_FINANCIAL records across a year, per group_by, beside the raw driver', run: financialSection },
  { name: 'cases', about: "a client's rename seen on its case, and GET /v1/cases on one team with BENCH_CASES cases", run: casesSection },
  { name: 'deals', about: 'GET /v1/deals (filter and sort) and the summary on one team with BENCH_DEALS deals, beside the raw driver', run: dealsSection },
  { name: 'activities', about: 'GET /v1/activities/overdue on one team with BENCH_ACTIVITIES activities, beside the raw driver', run: activitiesSection },
];
const KNOWN = SECTIONS.map((s) => s.name);

function usage(): string {
  return [
    'Usage: npm run bench [-- section ...]   (no section: all of them)',
    '',
    'Sections, run in this order:',
    ...SECTIONS.map((s) => `  ${s.name.padEnd(9)} ${s.about}`),
  ].join('\n');
}

const args = process.argv.slice(2);
if (args.includes('--help') || args.includes('-h')) {
  console.log(usage());
  process.exit(0);
}
const unknown = args.filter((a) => !KNOWN.includes(a));
if (unknown.length) {
  console.error(`bench: unknown section${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}. Known sections: ${KNOWN.join(', ')}.\n\n${usage()}`);
  process.exit(2);
}
const selected = SECTIONS.filter((s) => args.length === 0 || args.includes(s.name));

const baseline = process.env.BENCH_BASELINE ? resolve(process.env.BENCH_BASELINE) : undefined;
if (baseline) {
  const needed = ['scripts/start.ts', 'gateway/src/cli/main.ts', 'node_modules'].filter((p) => !existsSync(resolve(baseline, p)));
  if (needed.length) {
    console.error(`bench: BENCH_BASELINE=${baseline} is not a checkout ready to start: no ${needed.join(', ')} there.`);
    process.exit(2);
  }
  if (!selected.some((s) => s.name === 'clients')) console.log('bench: BENCH_BASELINE applies to the clients section only, which is not selected.');
}

const { bench, cleanUp } = await openBench(baseline);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void cleanUp().finally(() => process.exit(130)));
}
try {
  console.log(`bench: sections ${selected.map((s) => s.name).join(', ')}; FerretDB over ${bench.store.backend}`);
  for (const s of selected) {
    console.log(`\n== ${s.name} ==`);
    const started = Date.now();
    await s.run(bench);
    console.log(`(${s.name}: ${((Date.now() - started) / 1000).toFixed(0)} s)`);
  }
  if (bench.figures.length || bench.closing.length) console.log('\n== summary ==');
  if (bench.figures.length) printTable(bench.figures);
  for (const print of bench.closing) print();
} finally {
  await cleanUp();
}
