// Section `deals`: GET /v1/deals (a filter and a sort) and GET /v1/deals/summary on
// one team with BENCH_DEALS deals, straight to the deals service, beside the raw
// driver's time for the same queries (the repository's find + count, and the
// summary's one aggregation). On this checkout's system; the seeded deals stay in
// the store, so it runs last.
import type { Db, Document } from 'mongodb';
import {
  DAY_MS,
  DEFAULT_DEAL_PHASES,
  dealDerivedFields,
  dealsLists,
  newId,
  type DealRecord,
  type DealStatus,
} from './internals.ts';
import { seedListed } from './list-seed.ts';
import { driverListPage, measureSeededLists, recordBesideDriver } from './seeded-lists.ts';
import { measureRaw, type Bench } from './support.ts';

export const DEALS = Number(process.env.BENCH_DEALS ?? 100_000);
const SOURCES = ['site', 'indicacao', 'linkedin', 'evento', 'publicacao', 'parceiro', null];
const STATUSES: DealStatus[] = ['ativo', 'ativo', 'ativo', 'ganho', 'perdido', 'arquivado'];

/** Deal number i of a team, built the way Deals.create and the state moves store it (outbox left empty). */
function seededDeal(teamId: string, i: number, now: number): DealRecord {
  const phase = DEFAULT_DEAL_PHASES[i % DEFAULT_DEAL_PHASES.length];
  const status = STATUSES[i % STATUSES.length];
  const created = new Date(now - Math.floor((((i * 7919) % DEALS) / DEALS) * 365 * DAY_MS) - (i % 1000) * 1000);
  const closedAt = new Date(Math.min(now, created.getTime() + (5 + (i % 60)) * DAY_MS));
  const valueCents = i % 9 === 0 ? null : 50_000 + ((i * 104_729) % 50_000_000);
  const base = {
    _id: newId('deal'),
    team_id: teamId,
    title: `Oportunidade ${10_000 + i}`,
    value_cents: valueCents,
    currency: 'BRL',
    phase: phase.name,
    probability: phase.probability,
    status,
    expected_close_date:
      i % 4 === 0 ? null : new Date(created.getTime() + (30 + (i % 90)) * DAY_MS).toISOString().slice(0, 10),
    client_id: null,
    responsible_id: null,
    source: SOURCES[i % SOURCES.length],
    description: null,
    labels: [],
    metadata: {},
    activities_count: 0,
    final_value_cents: status === 'ganho' ? valueCents : null,
    won_at: status === 'ganho' ? closedAt : null,
    loss_reason: null,
    competitor: null,
    lost_at: status === 'perdido' ? closedAt : null,
    close_notes: null,
    phase_notes: null,
    archived_at: status === 'arquivado' ? closedAt : null,
    previous_phase: null,
    phase_changed_at: null,
    phase_entered_at: created,
    phase_stints: status === 'ganho' ? [{ phase: phase.name, ms: closedAt.getTime() - created.getTime() }] : [],
    case_created: null,
    case_archive_pending: 0,
    case_archive_by: null,
    created_at: created,
    updated_at: closedAt,
    version: 1,
  };
  return { ...base, ...dealDerivedFields(base) };
}

/** Inserts the deals with their list markers, then counts each of their days as the service's writes do: seconds the inserts took. */
async function seedDeals(db: Db, teamId: string): Promise<number> {
  const now = Date.now();
  return (await seedListed(db, 'deals', dealsLists(db), DEALS, (i) => seededDeal(teamId, i, now))).seconds;
}

export async function dealsSection(b: Bench): Promise<void> {
  const figures = await measureSeededLists(b, {
    service: 'deals',
    count: DEALS,
    probe: '/v1/deals?limit=1',
    seed: seedDeals,
    runs: [
      { label: 'list filter+sort', path: '/v1/deals?limit=20&status=ativo&sort=-value' },
      { label: 'summary', path: '/v1/deals/summary' },
    ],
    // The same queries as the repository sends them, through the raw driver.
    driver: async (db, teamId) => {
      const deals = db.collection('deals');
      const filter = { team_id: teamId, status: 'ativo' };
      const sort: Document = { value_missing: 1, value_cents: -1, _id: -1 };
      console.log('\nthe same queries through the raw driver:');
      return [
        await measureRaw('driver find+count (list filter+sort)', () => driverListPage(deals, filter, sort)),
        await measureRaw('driver aggregate (summary)', () =>
          deals
            .aggregate([
              { $match: { team_id: teamId, status: { $ne: 'arquivado' } } },
              { $unwind: '$summary_parts' },
              { $group: { _id: '$summary_parts.k', v: { $sum: '$summary_parts.v' } } },
            ])
            .toArray(),
        ),
      ];
    },
  });
  b.figures.push(...figures);
  const [list, summary, listDriver, summaryDriver] = figures;
  for (const [key, service, driver] of [
    ['list_filter_sort', list, listDriver],
    ['summary', summary, summaryDriver],
  ] as const)
    recordBesideDriver(b, `deals.${key}`, service, driver);
}
