// Cases stored straight into the cases service's collection, built as the service
// builds them, and how the store runs the queries on them (cases.ts measures the API).
import { MongoClient } from 'mongodb';
import { DEFAULT_CASE_PHASES, derivedFields, newId, type CasePriority, type CaseRecord, type CaseStatus } from './internals.ts';

export const CASES = Number(process.env.BENCH_CASES ?? 100_000);

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
const FAMILY = ['Silva', 'Santos', 'Oliveira', 'Souza', 'Lima', 'Pereira', 'Ferreira', 'Costa', 'Rodrigues', 'Almeida', 'Nascimento', 'Araújo', 'Melo', 'Barbosa', 'Ribeiro', 'Carvalho', 'Gomes', 'Martins', 'Rocha', 'Guimarães'];
const AREAS = ['Cível', 'Trabalhista', 'Tributário', 'Família', 'Empresarial', null];
const PRIORITIES: CasePriority[] = ['alta', 'media', 'baixa'];
const DAY_MS = 86_400_000;

/** Case number i of a team, built the way Cases.create stores a case (timeline and outbox left empty). */
function seededCase(teamId: string, i: number, clientIds: string[], now: number): CaseRecord {
  const who = `${GIVEN[i % GIVEN.length]} ${FAMILY[Math.floor(i / GIVEN.length) % FAMILY.length]}`;
  const title = TITLES[i % TITLES.length](10_000 + i, who);
  const created = new Date(now - Math.floor(((i * 7919) % CASES) / CASES * 365 * DAY_MS) - (i % 1000) * 1000);
  const status: CaseStatus = i % 10 === 9 ? 'arquivado' : 'ativo';
  const updated = new Date(Math.min(now, created.getTime() + (i % 30) * DAY_MS));
  const slaDate = i % 5 < 2 ? null : new Date(created.getTime() + (30 + (i % 120)) * DAY_MS).toISOString().slice(0, 10);
  const record = {
    _id: newId('case'),
    team_id: teamId,
    title,
    // CNJ-like, unique per team (the unique index on team_id + number_key); some cases have none.
    number: i % 10 === 3 ? null : `${String(i).padStart(7, '0')}-${String(i % 97).padStart(2, '0')}.${created.getUTCFullYear()}.8.26.0100`,
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
  Object.assign(record, derivedFields(record), { sla_warning_at: null, sla_overdue_at: null, timeline: [] });
  return record;
}

/** Inserts CASES cases of one team straight into the cases service's collection (in `database`); returns seconds taken. */
export async function seedCases(mongoUrl: string, database: string, teamId: string, clientIds: string[]): Promise<number> {
  const client = await MongoClient.connect(mongoUrl);
  try {
    const cases = client.db(database).collection<CaseRecord>('cases');
    const now = Date.now();
    const started = Date.now();
    for (let from = 0; from < CASES; from += 1000) {
      const batch = Array.from({ length: Math.min(1000, CASES - from) }, (_, k) => seededCase(teamId, from + k, clientIds, now));
      await cases.insertMany(batch, { ordered: false });
    }
    return (Date.now() - started) / 1000;
  } finally {
    await client.close();
  }
}

/** The cases collection's indexes (created by the service at start) and how the store runs the list queries. */
export async function describeCasesStore(mongoUrl: string, database: string, queries: { label: string; filter: Record<string, unknown> }[]) {
  const client = await MongoClient.connect(mongoUrl);
  try {
    const cases = client.db(database).collection('cases');
    console.log(`indexes of ${database}.cases:`);
    for (const ix of await cases.listIndexes().toArray()) console.log(`  ${ix.name} ${JSON.stringify(ix.key)}${ix.unique ? ' unique' : ''}`);
    for (const q of queries) {
      const plan = (await cases.find(q.filter, { sort: { created_at: -1, _id: -1 }, limit: 20, projection: { outbox: 0, timeline: 0 } }).explain()) as Record<string, unknown>;
      const flags = ['filterPushdown', 'sortPushdown', 'limitPushdown'].filter((k) => k in plan).map((k) => `${k}=${String(plan[k])}`);
      const winning = (plan.queryPlanner as { winningPlan?: unknown } | undefined)?.winningPlan;
      console.log(`  explain ${q.label}: ${flags.length ? flags.join(', ') : JSON.stringify(winning ?? plan).slice(0, 200)}`);
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
