// Section `lists`: the default page of GET /v1/clients and of GET /v1/financial on one
// team with BENCH_LIST_RECORDS records of each (default 100,000), unfiltered and
// filtered by counted fields, straight to each service; the clients' search through
// the gateway (search.ts). The records are stored straight into the services'
// collections with their list markers and day counts (list-seed.ts), as the cases
// section seeds cases. On this checkout's system; the seeded records stay in the
// store, so it runs near the end.
import { MongoClient } from 'mongodb';
import { measureList, type ListRun } from './cases.ts';
import {
  DAY_MS,
  clientDerivedFields,
  clientsLists,
  financialDerivedFields,
  financialLists,
  identityHeaders,
  newId,
  type ClientRecord,
  type FinancialRecord,
} from './internals.ts';
import { seedListed } from './list-seed.ts';
import { measureSearch, type SearchTerms } from './search.ts';
import { recordRun, type Bench, type Figures } from './support.ts';
import { createTeams, identityOf } from './teams.ts';

export const LIST_RECORDS = Number(process.env.BENCH_LIST_RECORDS ?? 100_000);
const SEGMENTS = ['vip', 'premium', 'regular', 'occasional', null] as const;
const CATEGORIES = ['honorarios', 'custas', 'aluguel', 'pericia'];

/** Client number i of a team, built the way Clients.create stores it (its cases counted: the list asks nothing of the cases service). */
function seededClient(teamId: string, i: number, now: number): ClientRecord {
  const created = new Date(
    now - Math.floor((((i * 7919) % LIST_RECORDS) / LIST_RECORDS) * 365 * DAY_MS) - (i % 1000) * 1000,
  );
  const type: ClientRecord['type'] = i % 4 === 0 ? 'PJ' : 'PF';
  const base = {
    _id: newId('cli'),
    team_id: teamId,
    type,
    name: `${type === 'PJ' ? 'Empresa' : 'Cliente'} ${10_000 + i}`,
    // Three in ten at another domain: a term that matches 30% of the clients.
    email: `cliente${i}@${i % 10 < 3 ? 'advocacia' : 'bench'}.example`,
    phone: null,
    whatsapp: null,
    segment: SEGMENTS[i % SEGMENTS.length],
    status: i % 10 === 9 ? ('inactive' as const) : ('active' as const),
    address: null,
    notes: null,
    tags: [],
    metadata: {},
    cpf: null,
    rg: null,
    birth_date: null,
    gender: null,
    marital_status: null,
    nationality: null,
    profession: null,
    legal_name: null,
    trade_name: null,
    cnpj: null,
    state_registration: null,
    contact_person: null,
    deactivated_at: i % 10 === 9 ? created : null,
    created_at: created,
    updated_at: created,
    version: 1,
    cases_count: 0,
    cases_counted_at: created,
  };
  return { ...base, ...clientDerivedFields(base) };
}

/** Financial record number i of a team, dated over the past year, built the way Financial.create stores it. */
function seededRecord(teamId: string, i: number, now: number): FinancialRecord {
  const type = (['revenue', 'expense', 'cost'] as const)[i % 3];
  const date = new Date(now - ((i * 7919) % 365) * DAY_MS).toISOString().slice(0, 10);
  const status = i % 10 < 7 ? 'paid' : i % 10 < 9 ? 'pending' : 'cancelled';
  const created = new Date(now - (i % 1000) * 1000);
  const base = {
    _id: newId('fin'),
    team_id: teamId,
    type,
    category: CATEGORIES[i % CATEGORIES.length],
    description: `Lançamento ${i}`,
    amount_cents: 1 + ((i * 7919) % 500_000),
    currency: 'BRL',
    date,
    due_date: null,
    paid_date: status === 'paid' ? date : null,
    status,
    case_id: null,
    client_id: null,
    payment_method: null,
    invoice_number: null,
    notes: null,
    metadata: {},
    cancelled_at: status === 'cancelled' ? created : null,
    created_at: created,
    updated_at: created,
    version: 1,
    overdue_at: null,
  } as const;
  return { ...base, ...financialDerivedFields(base) };
}

interface ListScenario {
  /** The service, and its database's name. */
  service: 'clients' | 'financial';
  collection: string;
  lists: typeof clientsLists;
  make(teamId: string, i: number, now: number): { team_id: string };
  /** A page filtered by counted fields (key `<service>.list_100k_filtered`), measured after the default page (`<service>.list_100k`). */
  filtered: ListRun;
  /** Terms of its search through the gateway (`<service>.search_100k`), if it has one. */
  search?: SearchTerms;
}

const SCENARIOS: ListScenario[] = [
  {
    service: 'clients',
    collection: 'clients',
    lists: clientsLists,
    make: seededClient,
    filtered: { label: 'status and segment', path: '/v1/clients?limit=20&status=active&segment=vip' },
    // "10@" ends 1.0% of the e-mails; "advocacia" is the domain of 30%.
    search: { rare: '10@', common: 'advocacia' },
  },
  {
    service: 'financial',
    collection: 'financial_records',
    lists: financialLists,
    make: seededRecord,
    filtered: { label: 'type and status', path: '/v1/financial?limit=20&type=revenue&status=pending' },
  },
];

export async function listsSection(b: Bench): Promise<void> {
  const sys = await b.system();
  const client = await MongoClient.connect(b.store.url);
  const figures: Figures[] = [];
  try {
    for (const s of SCENARIOS) {
      const url = sys.serviceUrls[s.service];
      const defaultPage: ListRun = { label: 'no filter', path: `/v1/${s.service}?limit=20` };
      const [team] = await createTeams(b, sys.tree, [`Bench ${s.service} list`]);
      const headers = identityHeaders(identityOf(team), b.token);
      // The service is up once it answers: its indexes and its backfill's cursor exist before the seed.
      const probe = await fetch(`${url}${defaultPage.path}`, { headers });
      if (probe.status !== 200)
        throw new Error(`GET ${defaultPage.path} answered ${probe.status}: ${await probe.text()}`);
      const db = client.db(`${sys.tree.dbPrefix}${s.service}`);
      const now = Date.now();
      const seeded = await seedListed(db, s.collection, s.lists(db), LIST_RECORDS, (i) => s.make(team.team.id, i, now));
      console.log(
        `seeded ${LIST_RECORDS.toLocaleString('en')} ${s.collection} of one team with insertMany (batches of 1,000) in ${seeded.seconds.toFixed(1)} s, ` +
          `counted their ${seeded.days} days (list_counts) in ${seeded.countSeconds.toFixed(1)} s`,
      );
      console.log(
        `\nGET ${defaultPage.path.split('?')[0]}, ${LIST_RECORDS.toLocaleString('en')} records of one team, 20 per page:`,
      );
      for (const [run, key] of [
        [defaultPage, 'list_100k'],
        [s.filtered, 'list_100k_filtered'],
      ] as const) {
        const f = await measureList(`GET ${run.path.split('?')[0]} ${run.label} direct`, url, run, headers);
        recordRun(b, `${s.service}.${key}.direct`, f);
        b.record(`${s.service}.${key}.p50_ms`, f.p50);
        figures.push(f);
      }
      if (s.search)
        figures.push(...(await measureSearch(b, 'clients', sys.gatewayUrl, team.api_key, LIST_RECORDS, s.search)));
    }
  } finally {
    await client.close();
  }
  b.figures.push(...figures);
}
