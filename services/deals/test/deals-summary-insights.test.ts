// GET /v1/deals/summary against figures computed by hand, and ai_insights against
// the formula of services/deals/README.md for a team with a known history.
import { DAY_MS, dayIn } from '@lpm/shared/time';
import type { Identity } from '@lpm/shared/identity';
import { expectInvalid } from '@lpm/test-kit/error-answers';
import { identity } from '@lpm/test-kit/teams';
import { startDeals, type DealsUnderTest } from './helper.ts';

const activityCounts = new Map<string, { count: number; open: number; overdue: number }>();
let sut: DealsUnderTest;

const call = (who: Identity, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object) =>
  sut.call(who, { method, url, payload });
const create = async (who: Identity, body: Record<string, unknown>) => {
  const res = await call(who, 'POST', '/v1/deals', body);
  expect(res.statusCode).toBe(201);
  return res.json().data.id as string;
};
/** Moves a stored instant of a deal into the past, as if that much time had gone by. */
const backdate = (id: string, field: 'created_at' | 'phase_entered_at', ms: number) =>
  sut.db.collection('deals').updateOne({ _id: id as never }, { $set: { [field]: new Date(Date.now() - ms) } });
const won = async (who: Identity, id: string, body: object = {}) =>
  expect((await call(who, 'PUT', `/v1/deals/${id}/won`, body)).statusCode).toBe(200);
const lost = async (who: Identity, id: string) =>
  expect((await call(who, 'PUT', `/v1/deals/${id}/lost`, {})).statusCode).toBe(200);

beforeAll(async () => {
  // The activities service's counts per deal; a deal not named has one open activity, none overdue.
  sut = await startDeals({
    activities: {
      countsFor: async (_caller, dealId) => activityCounts.get(dealId) ?? { count: 1, open: 1, overdue: 0 },
    },
  });
});

afterAll(async () => {
  await sut?.close();
});

describe('GET /v1/deals/summary', () => {
  test('when a team has open, won, lost and archived deals, then the figures are those computed by hand, archived deals left out', async () => {
    const who = identity();
    await create(who, { title: 'A', value: 1000.1 }); // lead, probability 10
    await create(who, { title: 'B', value: 2500.55, phase: 'proposta' }); // 50
    await create(who, { title: 'C', phase: 'proposta' }); // no value
    const d = await create(who, { title: 'D', value: 3000 });
    await backdate(d, 'created_at', 10 * DAY_MS);
    await won(who, d, { final_value: 2800.4 });
    const e = await create(who, { title: 'E', value: 500 });
    await backdate(e, 'created_at', 5.2 * DAY_MS);
    await won(who, e);
    await lost(who, await create(who, { title: 'F', value: 700 }));
    await call(who, 'DELETE', `/v1/deals/${await create(who, { title: 'G', value: 99999 })}`);
    const h = await create(who, { title: 'H', value: 88888 });
    await won(who, h);
    await call(who, 'DELETE', `/v1/deals/${h}`);
    await create(identity(), { title: 'Outro time', value: 1 });

    const res = await call(who, 'GET', '/v1/deals/summary');
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual({
      currency: 'BRL',
      total_deals: 6,
      // 1000.10 + 2500.55 + 3000 + 500 + 700
      total_value: 7700.65,
      // ativo only: 1000.10 x 10% = 100.01; 2500.55 x 50% = 1250.275, 1250.28 to the cent
      weighted_value: 1350.29,
      by_phase: {
        lead: { count: 1, value: 1000.1 },
        qualificado: { count: 0, value: 0 },
        proposta: { count: 2, value: 2500.55 },
        negociacao: { count: 0, value: 0 },
        fechamento: { count: 0, value: 0 },
      },
      by_status: {
        ativo: { count: 3, value: 3500.65 },
        // final values: 2800.40 + 500
        ganho: { count: 2, value: 3300.4 },
        perdido: { count: 1, value: 700 },
      },
      // 2 / (2 + 1)
      conversion_rate: 66.67,
      average_deal_size: 1650.2,
      // (10 + 5.2) / 2
      average_sales_cycle_days: 7.6,
    });
  });

  test('when a team has no deals, then every figure is 0 and every pipeline phase is present', async () => {
    const who = identity();
    who.settings.deal_phases = [{ name: 'contato', probability: 20 }];
    const res = await call(who, 'GET', '/v1/deals/summary');
    expect(res.json().data).toEqual({
      currency: 'BRL',
      total_deals: 0,
      total_value: 0,
      weighted_value: 0,
      by_phase: { contato: { count: 0, value: 0 } },
      by_status: { ativo: { count: 0, value: 0 }, ganho: { count: 0, value: 0 }, perdido: { count: 0, value: 0 } },
      conversion_rate: 0,
      average_deal_size: 0,
      average_sales_cycle_days: 0,
    });
  });

  test('when a team has deals in BRL and USD, then each currency is summed on its own: BRL by default, USD when asked', async () => {
    const who = identity();
    await create(who, { title: 'Real', value: 1000 });
    const dollar = await create(who, { title: 'Dólar', value: 1000000, currency: 'USD', phase: 'proposta' });
    await won(who, await create(who, { title: 'Dólar ganho', value: 500, currency: 'usd' }));
    await lost(who, await create(who, { title: 'Euro perdido', value: 70, currency: 'EUR' }));

    const brl = (await call(who, 'GET', '/v1/deals/summary')).json().data;
    expect(brl).toMatchObject({
      currency: 'BRL',
      total_deals: 1,
      total_value: 1000,
      weighted_value: 100,
      conversion_rate: 0,
    });
    expect(brl.by_phase).toMatchObject({ lead: { count: 1, value: 1000 }, proposta: { count: 0, value: 0 } });

    const usd = (await call(who, 'GET', '/v1/deals/summary?currency=usd')).json().data;
    expect(usd).toMatchObject({
      currency: 'USD',
      total_deals: 2,
      total_value: 1000500,
      weighted_value: 500000,
      by_status: {
        ativo: { count: 1, value: 1000000 },
        ganho: { count: 1, value: 500 },
        perdido: { count: 0, value: 0 },
      },
      conversion_rate: 100,
      average_deal_size: 500,
    });
    expect(usd.by_phase.proposta).toEqual({ count: 1, value: 1000000 });
    expect((await call(who, 'GET', `/v1/deals/${dollar}`)).json().data.currency).toBe('USD');
    expect((await call(who, 'GET', '/v1/deals/summary?currency=JPY')).json().data).toMatchObject({
      currency: 'JPY',
      total_deals: 0,
      total_value: 0,
    });
  });

  test('when the currency is not a 3-letter code, then 400 with the message of the deal field', async () => {
    const who = identity();
    for (const bad of ['US', 'DOLLAR', '12$']) {
      const e = expectInvalid(
        await call(who, 'GET', `/v1/deals/summary?currency=${encodeURIComponent(bad)}`),
        'currency must be a 3-letter code',
      );
      expect(e.details).toMatchObject({ field: 'currency', type: 'invalid' });
    }
  });
});

describe('ai_insights', () => {
  const who = identity();
  const days = (n: number) => n * DAY_MS;
  const insights = async (id: string) => (await call(who, 'GET', `/v1/deals/${id}`)).json().data.ai_insights;

  beforeAll(async () => {
    // History: indicacao deals of R$ 20,000 (band 10k-50k): 6 won after 4, 6, 8, 10, 12 and 14 days in proposta, 2 lost.
    for (const inPhase of [4, 6, 8, 10, 12, 14]) {
      const id = await create(who, { title: `Ganho ${inPhase}`, value: 20000, source: 'indicacao', phase: 'proposta' });
      await backdate(id, 'phase_entered_at', days(inPhase));
      await won(who, id);
    }
    for (let i = 0; i < 2; i++)
      await lost(who, await create(who, { title: `Perdido ${i}`, value: 20000, source: 'indicacao' }));
    // Thin history: 2 linkedin deals, both won.
    for (let i = 0; i < 2; i++)
      await won(who, await create(who, { title: `LinkedIn ${i}`, value: 20000, source: 'linkedin' }));
  });

  test('when the segment has enough closed deals, then win_probability blends its win rate with the phase probability: (6 + 10 x 0.5) / (8 + 10)', async () => {
    const id = await create(who, { title: 'Alvo', value: 30000, source: 'indicacao', phase: 'proposta' });
    await backdate(id, 'phase_entered_at', days(3));
    expect(await insights(id)).toEqual({
      win_probability: 61.1,
      health: 'good',
      risk_factors: [],
      basis: {
        phase_probability: 50,
        segment: { source: 'indicacao', value_band: '10k-50k' },
        closed: 8,
        won: 6,
        prior_weight: 10,
        min_sample: 5,
        days_in_phase: 3,
        median_days_in_phase: 9,
        won_deals_through_phase: 6,
        days_past_expected_close: null,
        open_activities: 1,
        overdue_activities: 0,
      },
    });
  });

  test('when the value band has no history, then the source alone is used', async () => {
    const id = await create(who, { title: 'Pequeno', value: 500, source: 'indicacao', phase: 'negociacao' });
    const got = await insights(id);
    // (6 + 10 x 0.75) / (8 + 10) = 0.75
    expect(got.win_probability).toBe(75);
    expect(got.basis).toMatchObject({
      phase_probability: 75,
      segment: { source: 'indicacao', value_band: null },
      closed: 8,
      won: 6,
    });
  });

  test('when the history is thinner than the minimum sample, then win_probability is the phase probability', async () => {
    const thin = await create(who, { title: 'Fino', value: 20000, source: 'linkedin', phase: 'qualificado' });
    expect(await insights(thin)).toMatchObject({ win_probability: 25, basis: { segment: null, closed: 0, won: 0 } });
    const none = await create(who, { title: 'Sem origem', value: 20000 });
    expect((await insights(none)).win_probability).toBe(10);
  });

  test('when the deal sits in its phase past the median of won deals and its close date passed, then it is at risk or stalled with each reason named', async () => {
    const expected = dayIn(who.settings.timezone, new Date(Date.now() - days(12)));
    const stalled = await create(who, {
      title: 'Parado',
      value: 20000,
      source: 'indicacao',
      phase: 'proposta',
      expected_close_date: expected,
    });
    await backdate(stalled, 'phase_entered_at', days(30));
    expect(await insights(stalled)).toMatchObject({
      health: 'stalled',
      risk_factors: [
        '30 days in phase proposta; won deals of this team spend a median of 9',
        'expected close date passed 12 days ago',
      ],
      basis: { days_in_phase: 30, median_days_in_phase: 9, days_past_expected_close: 12 },
    });
    const slow = await create(who, { title: 'Lento', value: 20000, source: 'indicacao', phase: 'proposta' });
    await backdate(slow, 'phase_entered_at', days(12));
    expect(await insights(slow)).toMatchObject({
      health: 'at_risk',
      risk_factors: ['12 days in phase proposta; won deals of this team spend a median of 9'],
    });
    const late = await create(who, {
      title: 'Atrasado',
      phase: 'lead',
      expected_close_date: dayIn(who.settings.timezone, new Date(Date.now() - days(1))),
    });
    // Fewer than 3 won deals went through lead (the 2 linkedin ones): only the date counts.
    expect(await insights(late)).toMatchObject({
      health: 'at_risk',
      risk_factors: ['expected close date passed 1 day ago'],
      basis: { median_days_in_phase: null },
    });
  });

  test('when the deal has no open activity, or an overdue one, then it is at risk with each reason named', async () => {
    const idle = await create(who, { title: 'Sem atividade', phase: 'lead' });
    activityCounts.set(idle, { count: 2, open: 0, overdue: 0 });
    expect(await insights(idle)).toMatchObject({
      health: 'at_risk',
      risk_factors: ['no open activity'],
      basis: { open_activities: 0, overdue_activities: 0 },
    });
    const behind = await create(who, { title: 'Atrasada', phase: 'lead' });
    activityCounts.set(behind, { count: 3, open: 3, overdue: 2 });
    expect(await insights(behind)).toMatchObject({
      health: 'at_risk',
      risk_factors: ['2 overdue activities'],
      basis: { open_activities: 3, overdue_activities: 2 },
    });
    const one = await create(who, { title: 'Uma atrasada', phase: 'lead' });
    activityCounts.set(one, { count: 1, open: 1, overdue: 1 });
    expect((await insights(one)).risk_factors).toEqual(['1 overdue activity']);
  });

  test('when the deal is closed, then win_probability is 100 for won and 0 for lost, with no risk factors', async () => {
    const w = await create(who, { title: 'Fechado ganho', expected_close_date: '2020-01-01' });
    await won(who, w);
    expect(await insights(w)).toMatchObject({ win_probability: 100, health: 'good', risk_factors: [] });
    const l = await create(who, { title: 'Fechado perdido' });
    await lost(who, l);
    expect(await insights(l)).toMatchObject({ win_probability: 0, health: 'good', risk_factors: [] });
  });
});
