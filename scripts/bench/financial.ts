// The financial summary over one team's BENCH_FINANCIAL records (default 100,000)
// spread across a year, for each group_by: the service's summary (domain and
// repository: one $match/$unwind/$group round trip, then the buckets) beside the
// same pipeline sent by the raw driver. In process, on the run's store.
import {
  CaseLinks,
  CaseViewEntity,
  CASE_VIEWS,
  ClientLinks,
  ClientViewEntity,
  DAY_MS,
  Financial,
  FinancialEntity,
  FinancialRepository,
  ViewsRepository,
  defaultTeamSettings,
  financialDerivedFields,
  newId,
  type CaseView,
  type ClientView,
  type FinancialRecord,
} from './internals.ts';
import { openScratchStore } from './scratch-store.ts';
import { quantile, ratioOf, type Bench } from './support.ts';

const RECORDS = Number(process.env.BENCH_FINANCIAL ?? 100_000);
const RUNS = Number(process.env.BENCH_FINANCIAL_RUNS ?? 10);
const TYPES = ['revenue', 'expense', 'cost'] as const;
const CATEGORIES = {
  revenue: ['honorarios', 'sucumbencia', 'consultoria', 'exito'],
  expense: ['aluguel', 'pessoal', 'marketing', 'tecnologia'],
  cost: ['custas', 'pericia', 'diligencias', 'cartorio'],
};

function seeded(teamId: string, i: number, clients: string[]): FinancialRecord {
  const type = TYPES[i % 3];
  const date = new Date(Date.UTC(2026, 0, 1) + (i % 365) * DAY_MS).toISOString().slice(0, 10);
  const status = i % 10 < 7 ? 'paid' : i % 10 < 9 ? 'pending' : 'cancelled';
  const now = new Date();
  const base = {
    _id: newId('fin'),
    team_id: teamId,
    type,
    category: CATEGORIES[type][i % 4],
    description: `Lançamento ${i}`,
    amount_cents: 1 + ((i * 7919) % 500_000),
    currency: i % 20 === 0 ? 'USD' : 'BRL',
    date,
    due_date: null,
    paid_date: status === 'paid' ? date : null,
    status,
    case_id: null,
    client_id: type === 'revenue' ? clients[i % clients.length] : null,
    payment_method: null,
    invoice_number: null,
    notes: null,
    metadata: {},
    cancelled_at: status === 'cancelled' ? now : null,
    created_at: now,
    updated_at: now,
    version: 1,
    overdue_at: null,
  } as const;
  return { ...base, ...financialDerivedFields(base) };
}

async function timed(fn: () => Promise<unknown>): Promise<{ p50: number; p99: number }> {
  const ms: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    const started = performance.now();
    await fn();
    ms.push(performance.now() - started);
  }
  ms.sort((a, b) => a - b);
  return { p50: quantile(ms, 0.5), p99: quantile(ms, 0.99) };
}

export async function financialSection(b: Bench): Promise<void> {
  const dbName = `bench_financial_${Date.now()}`;
  const { store, raw, drop } = await openScratchStore(b, dbName, [FinancialEntity, ClientViewEntity, CaseViewEntity]);
  try {
    const teamId = newId('team');
    const clients = Array.from({ length: 50 }, () => newId('cli'));
    const col = raw.db(dbName).collection<FinancialRecord>('financial_records');
    const seedStart = Date.now();
    for (let from = 0; from < RECORDS; from += 1000) {
      await col.insertMany(
        Array.from({ length: Math.min(1000, RECORDS - from) }, (_, k) => seeded(teamId, from + k, clients)),
        { ordered: false },
      );
    }
    console.log(
      `seeded ${RECORDS} records of one team across 2026 in ${((Date.now() - seedStart) / 1000).toFixed(1)} s`,
    );
    const financial = new Financial({
      records: new FinancialRepository(store.db, { kick: () => {} }),
      clientLinks: new ClientLinks(
        { facts: async () => null },
        new ViewsRepository<ClientView>(store.db, 'client_views'),
      ),
      caseLinks: new CaseLinks({ facts: async () => null }, new ViewsRepository<CaseView>(store.db, CASE_VIEWS)),
    });
    const who = { teamId, userId: newId('user'), settings: defaultTeamSettings() };
    for (const groupBy of ['month', 'week', 'day'] as const) {
      const service = await timed(() =>
        financial.summary(who, { from: '2026-01-01', to: '2026-12-31', group_by: groupBy }),
      );
      const keys = `sum_${groupBy}`;
      const driver = await timed(() =>
        col
          .aggregate([
            { $match: { team_id: teamId, currency: 'BRL', date: { $gte: '2026-01-01', $lte: '2026-12-31' } } },
            { $unwind: `$${keys}` },
            { $group: { _id: `$${keys}.k`, cents: { $sum: `$${keys}.c` } } },
          ])
          .toArray(),
      );
      const line = `summary group_by=${groupBy}: service p50 ${service.p50.toFixed(0)} ms, p99 ${service.p99.toFixed(0)} ms; raw driver aggregation p50 ${driver.p50.toFixed(0)} ms, p99 ${driver.p99.toFixed(0)} ms (${RUNS} runs)`;
      console.log(line);
      b.closing.push(() => console.log(line));
      b.record(`financial.summary_${groupBy}.service_p50_ms`, service.p50);
      b.record(`financial.summary_${groupBy}.service_p99_ms`, service.p99);
      b.record(`financial.summary_${groupBy}.driver_p50_ms`, driver.p50);
      b.record(`financial.summary_${groupBy}.driver_p99_ms`, driver.p99);
      b.record(`financial.summary_${groupBy}.p50_vs_driver`, ratioOf(service.p50, driver.p50));
    }
  } finally {
    await drop();
  }
}
