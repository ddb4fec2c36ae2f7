// Cases stored straight into the cases service's collection, built as the service
// builds them, and how the store runs the queries on them (cases.ts measures the API).
import { MongoClient, type Db } from 'mongodb';
import {
  DAY_MS,
  DEFAULT_CASE_PHASES,
  armDeadline,
  casesLists,
  derivedFields,
  identityHeaders,
  newId,
  PRIORITIES,
  signalSlots,
  zonedMoment,
  type CaseRecord,
  type CaseStatus,
} from './internals.ts';
import { seedListed } from './list-seed.ts';
import type { Bench, System } from './support.ts';
import { createTeams, identityOf, type IssuedTeam } from './teams.ts';

export const CASES = Number(process.env.BENCH_CASES ?? 100_000);
/** The seeded team's zone (identityOf gives it the default settings). */
const ZONE = 'America/Sao_Paulo';
/** One case in this many has its SLA date two days ago (past in any zone): a handful overdue at the next sweep. */
const DUE_NOW_EVERY = 20_000;
const dueNowDate = (now: number) => new Date(now - 2 * DAY_MS).toISOString().slice(0, 10);

const TITLES: ((n: number, who: string) => string)[] = [
  (n) => `Ação de cobrança ${n}`,
  (_, who) => `Reclamação trabalhista - ${who}`,
  (n) => `Execução fiscal ${n}`,
  (_, who) => `Divórcio consensual ${who}`,
  (_, who) => `Inventário de ${who}`,
  (n) => `Mandado de segurança ${n}`,
  (_, who) => `Revisão contratual - ${who}`,
  (_, who) => `Indenização por danos morais - ${who}`,
];
const GIVEN = ['Ana', 'João', 'Maria', 'José', 'Francisca', 'Antônio', 'Luíza', 'Paulo', 'Carla', 'Márcio'];
const FAMILY = [
  'Silva',
  'Santos',
  'Oliveira',
  'Souza',
  'Lima',
  'Pereira',
  'Ferreira',
  'Costa',
  'Rodrigues',
  'Almeida',
  'Nascimento',
  'Araújo',
  'Melo',
  'Barbosa',
  'Ribeiro',
  'Carvalho',
  'Gomes',
  'Martins',
  'Rocha',
  'Guimarães',
];
const AREAS = ['Cível', 'Trabalhista', 'Tributário', 'Família', 'Empresarial', null];

/** The end of an SLA date in the team's zone (about 60 dates in all, each computed once). */
const deadlines = new Map<string, Date>();
function deadlineOf(slaDate: string): Date {
  let at = deadlines.get(slaDate);
  if (!at) deadlines.set(slaDate, (at = zonedMoment(slaDate, ZONE)));
  return at;
}

/** Case number i of a team, built the way Cases.create stores a case (timeline and outbox left empty). */
function seededCase(teamId: string, i: number, clientIds: string[], now: number): CaseRecord {
  const who = `${GIVEN[i % GIVEN.length]} ${FAMILY[Math.floor(i / GIVEN.length) % FAMILY.length]}`;
  const title = TITLES[i % TITLES.length](10_000 + i, who);
  const created = new Date(now - Math.floor((((i * 7919) % CASES) / CASES) * 365 * DAY_MS) - (i % 1000) * 1000);
  const status: CaseStatus = i % 10 === 9 ? 'arquivado' : 'ativo';
  const updated = new Date(Math.min(now, created.getTime() + (i % 30) * DAY_MS));
  // Three in five have an SLA date: one to 60 days ahead, or past for a handful.
  const slaDate =
    i % 5 < 2
      ? null
      : i % DUE_NOW_EVERY === 7
        ? dueNowDate(now)
        : new Date(now + (1 + (i % 60)) * DAY_MS).toISOString().slice(0, 10);
  const record = {
    _id: newId('case'),
    team_id: teamId,
    title,
    // CNJ-like, unique per team (the unique index on team_id + number_key); some cases have none.
    number:
      i % 10 === 3
        ? null
        : `${String(i).padStart(7, '0')}-${String(i % 97).padStart(2, '0')}.${created.getUTCFullYear()}.8.26.0100`,
    area: AREAS[i % AREAS.length],
    subject: i % 3 === 0 ? null : `Assunto ${i % 50}`,
    phase: DEFAULT_CASE_PHASES[i % DEFAULT_CASE_PHASES.length],
    priority: PRIORITIES[i % PRIORITIES.length],
    status,
    client_id: i % 4 === 0 ? clientIds[i % clientIds.length] : null,
    responsible_id: null,
    sla_date: slaDate,
    description: null,
    labels: [],
    metadata: {},
    activities_count: 0,
    documents_count: 0,
    archived_at: status === 'arquivado' ? updated : null,
    created_at: created,
    updated_at: updated,
    version: 1,
  } as unknown as CaseRecord;
  // As Cases arms them: the end of the SLA date in the team's zone, for ativo cases only.
  const { warnAt, overdueAt } = armDeadline(status === 'ativo' && slaDate ? deadlineOf(slaDate) : null, new Date(now));
  const signals = { sla_warning_at: warnAt, sla_overdue_at: overdueAt };
  Object.assign(record, derivedFields(record), signals, signalSlots(signals, new Date(now)), { timeline: [] });
  return record;
}

/** The team whose CASES cases are stored, with the headers of a request straight to the cases service. */
export interface CaseTeam {
  team: IssuedTeam;
  headers: Record<string, string>;
  database: string;
  /** Seconds the seeding took. */
  seconds: number;
  /** The cases seeded with their overdue signal due now. */
  dueNow: string[];
}

const seeded = new WeakMap<System, Promise<CaseTeam>>();

/** True once a scenario has asked for `sys`'s seeded cases. */
export const casesSeeded = (sys: System) => seeded.has(sys);

/**
 * One team of `sys` with 5 clients and CASES cases (deadlines over the coming 60 days,
 * a handful due now), seeded once for every scenario that reads them.
 */
export function seededCaseTeam(b: Bench, sys: System): Promise<CaseTeam> {
  let team = seeded.get(sys);
  if (!team) seeded.set(sys, (team = seedCaseTeam(b, sys)));
  return team;
}

async function seedCaseTeam(b: Bench, sys: System): Promise<CaseTeam> {
  const database = `${sys.tree.dbPrefix}cases`;
  const [team] = await createTeams(b, sys.tree, ['Bench cases']);
  const headers = identityHeaders(identityOf(team), b.token);
  const clientIds: string[] = [];
  for (let n = 0; n < 5; n++) {
    const res = await fetch(`${sys.serviceUrls.clients}/v1/clients`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ type: 'PJ', name: `Cliente dos casos ${n}`, segment: 'regular' }),
    });
    if (res.status !== 201) throw new Error(`POST /v1/clients answered ${res.status}: ${await res.text()}`);
    clientIds.push(((await res.json()) as { data: { id: string } }).data.id);
  }
  // The cases service is up once it answers: its indexes exist before the seed.
  const probe = await fetch(`${sys.serviceUrls.cases}/v1/cases?limit=1`, { headers });
  if (probe.status !== 200) throw new Error(`GET /v1/cases answered ${probe.status}: ${await probe.text()}`);
  const { seconds, dueNow } = await seedCases(b.store.url, database, team.team.id, clientIds);
  console.log(
    `seeded ${CASES.toLocaleString('en')} cases of one team with insertMany (batches of 1,000) in ${seconds.toFixed(1)} s (${(CASES / seconds).toFixed(0)} cases/s), ` +
      `${dueNow.length} of them overdue now`,
  );
  b.record('cases.seed.cases_per_s', CASES / seconds);
  return { team, headers, database, seconds, dueNow };
}

/**
 * Inserts CASES cases of one team straight into the cases service's collection (in
 * `database`), each with its list marker, then counts each of their days as the
 * service's writes do: seconds the inserts took, and the cases due now.
 */
async function seedCases(
  mongoUrl: string,
  database: string,
  teamId: string,
  clientIds: string[],
): Promise<{ seconds: number; dueNow: string[] }> {
  const client = await MongoClient.connect(mongoUrl);
  try {
    const db = client.db(database);
    const now = Date.now();
    const dueNow: string[] = [];
    const seeded = await seedListed(
      db,
      'cases',
      casesLists(db),
      CASES,
      (i) => seededCase(teamId, i, clientIds, now),
      (c) => {
        if (c.sla_overdue_at && c.sla_overdue_at.getTime() <= now) dueNow.push(c._id);
      },
    );
    console.log(
      `counted the ${seeded.days} days of the seeded cases (list_counts) in ${seeded.countSeconds.toFixed(1)} s`,
    );
    return { seconds: seeded.seconds, dueNow };
  } finally {
    await client.close();
  }
}

/**
 * Arms the overdue signal of the cases due now again (in the current slot), as a write
 * of Cases would, so that each timed sweep has them to emit.
 */
export async function rearmDueNow(db: Db, ids: string[]): Promise<void> {
  const due = { sla_overdue_at: deadlineOf(dueNowDate(Date.now())) };
  await db.collection<CaseRecord>('cases').updateMany({ _id: { $in: ids } }, { $set: { ...due, ...signalSlots(due) } });
}

/** The cases collection's indexes (created by the service at start) and how the store runs the list queries. */
export async function describeCasesStore(
  mongoUrl: string,
  database: string,
  queries: { label: string; filter: Record<string, unknown> }[],
) {
  const client = await MongoClient.connect(mongoUrl);
  try {
    const cases = client.db(database).collection('cases');
    console.log(`indexes of ${database}.cases:`);
    for (const ix of await cases.indexes())
      console.log(`  ${ix.name} ${JSON.stringify(ix.key)}${ix.unique ? ' unique' : ''}`);
    for (const q of queries) {
      const plan = (await cases
        .find(q.filter, { sort: { created_at: -1, _id: -1 }, limit: 20, projection: { outbox: 0, timeline: 0 } })
        .explain()) as Record<string, unknown>;
      const flags = ['filterPushdown', 'sortPushdown', 'limitPushdown']
        .filter((k) => k in plan)
        .map((k) => `${k}=${String(plan[k])}`);
      const winning = (plan.queryPlanner as { winningPlan?: unknown } | undefined)?.winningPlan;
      console.log(
        `  explain ${q.label}: ${flags.length ? flags.join(', ') : JSON.stringify(winning ?? plan).slice(0, 200)}`,
      );
    }
    // The periodic queries of the cases service that read this collection besides the lists.
    const now = new Date();
    const background: [string, Record<string, unknown>, Record<string, 1>][] = [
      ['outbox relay scan (every 30 s)', { outbox_pending: true }, {}],
      ['SLA warning sweep (every minute)', { sla_warning_at: { $lte: now } }, { sla_warning_at: 1 }],
      ['SLA overdue sweep (every minute)', { sla_overdue_at: { $lte: now } }, { sla_overdue_at: 1 }],
    ];
    for (const [label, filter, sort] of background) {
      const started = Date.now();
      await cases.find(filter, { projection: { _id: 1 }, sort, limit: 100 }).toArray();
      console.log(`  ${label}: ${Date.now() - started} ms`);
    }
  } finally {
    await client.close();
  }
}
