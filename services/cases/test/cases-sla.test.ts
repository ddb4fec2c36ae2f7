// case.sla_warning and case.sla_overdue (decisions §5, time-driven events).
// Two replicas of the cases service as processes on one database and broker: each
// signal reaches the broker exactly once. Moments that lie ahead (a warning due at
// the end of today) are checked in process, by sweeping at a chosen instant.
import { replicasOf, type Replicas } from '@lpm/test-kit/replicas';
import { defaultTeamSettings, type Identity } from '@lpm/shared/identity';
import { newId } from '@lpm/shared/ids';
import { TimeSignals } from '@lpm/shared/jobs/time-signals';
import { zonedMoment } from '@lpm/shared/time';
import { tapEvents, type EventTap } from '@lpm/test-kit/event-tap';
import { quietLogger } from '@lpm/test-kit/wait';
import type { CaseRecord } from '../src/data/case-entity.ts';
import { slaSignals } from '../src/jobs/sla-signals.ts';
import { startCases, type CasesUnderTest } from './helper.ts';

const ZONE = 'America/Sao_Paulo';
const DAY = 86_400_000;

/** The calendar day `offset` days from today in the team's zone. */
const day = (offset: number, from = new Date()) => {
  const today = new Intl.DateTimeFormat('en-CA', { timeZone: ZONE }).format(from);
  return new Date(Date.parse(`${today}T12:00:00Z`) + offset * DAY).toISOString().slice(0, 10);
};
const who = (): Identity => ({ teamId: newId('team'), userId: newId('user'), scopes: ['read', 'write'], settings: defaultTeamSettings(ZONE) });

describe('two replicas of the cases service', () => {
  let replicas: Replicas;
  let tap: EventTap;
  const team = who();
  const send = (method: string, path: string, body?: unknown) => replicas.send(team, method, path, body);
  const settle = () => new Promise((r) => setTimeout(r, 1500));

  beforeAll(async () => {
    const started = await replicasOf('cases', 'casessla');
    replicas = started;
    tap = await tapEvents(started.exchange, ['case.sla_warning', 'case.sla_overdue']);
    await started.start();
  }, 40_000);

  afterAll(async () => {
    await replicas?.stop();
    await tap?.close();
  });

  test('when a case has its SLA date yesterday, then exactly one case.sla_overdue reaches the broker and no warning', async () => {
    const k = (await send('POST', '/v1/cases', { title: 'Atrasado', sla_date: day(-1) })).body.data;
    const [event] = await tap.waitFor('case.sla_overdue', k.id);
    expect(event).toMatchObject({ team_id: team.teamId, actor_id: null, data: { previous_attributes: null, object: { id: k.id, sla_date: day(-1), status: 'ativo' } } });
    await settle();
    expect(tap.of('case.sla_overdue', k.id)).toHaveLength(1);
    expect(tap.of('case.sla_warning', k.id)).toHaveLength(0);
  });

  test('when a case\'s SLA ends within 24 hours, then exactly one case.sla_warning and, not yet, an overdue', async () => {
    const k = (await send('POST', '/v1/cases', { title: 'Vence hoje', sla_date: day(0) })).body.data;
    await tap.waitFor('case.sla_warning', k.id);
    await settle();
    expect(tap.of('case.sla_warning', k.id)).toHaveLength(1);
    expect(tap.of('case.sla_overdue', k.id)).toHaveLength(0);
  });

  test('when the SLA date of an overdue case moves, then the signal is re-armed and fires once more', async () => {
    const k = (await send('POST', '/v1/cases', { title: 'Remarcado', sla_date: day(-3) })).body.data;
    await tap.waitFor('case.sla_overdue', k.id);
    expect((await send('PUT', `/v1/cases/${k.id}`, { sla_date: day(-2) })).status).toBe(200);
    await tap.waitFor('case.sla_overdue', k.id, 2);
    await settle();
    expect(tap.of('case.sla_overdue', k.id)).toHaveLength(2);
  });
});

describe('signals ahead in time (swept in process at chosen instants)', () => {
  let sut: CasesUnderTest;
  let signals: TimeSignals[];
  const team = who();

  beforeAll(async () => {
    sut = await startCases();
    // Two replicas' worth of sweepers; only their sweep() is used, at instants the test picks.
    signals = [0, 1].map(
      () => new TimeSignals({ db: sut.db, intervalMs: 60_000, signals: slaSignals(sut.cases), relay: { kick: () => {} }, logger: quietLogger, name: 'cases' }),
    );
  });

  afterAll(async () => {
    await sut.close();
  });

  const stored = (id: string) => sut.db.collection<CaseRecord & { _id: string; outbox?: { type: string }[] }>('cases').findOne({ _id: id });
  const outboxTypes = async (id: string) => ((await stored(id))?.outbox ?? []).map((e) => e.type).filter((t) => t.startsWith('case.sla_'));
  const sweepAt = (at: Date) => Promise.all(signals.map((s) => s.sweep(at)));
  const endOf = (date: string) => zonedMoment(date, ZONE);

  test('when a case is due tomorrow, then its warning fires once at the end of today (24 h before), and its overdue once after tomorrow', async () => {
    const k = await sut.cases.create(team, { title: 'Amanhã', sla_date: day(1) });
    await sweepAt(new Date());
    expect(await outboxTypes(k.id)).toEqual([]);
    const warnAt = new Date(endOf(day(1)).getTime() - DAY);
    await sweepAt(new Date(warnAt.getTime() - 1000));
    expect(await outboxTypes(k.id)).toEqual([]);
    await sweepAt(warnAt);
    await sweepAt(new Date(warnAt.getTime() + 5000));
    expect(await outboxTypes(k.id)).toEqual(['case.sla_warning']);
    await sweepAt(new Date(endOf(day(1)).getTime() + 1000));
    expect(await outboxTypes(k.id)).toEqual(['case.sla_warning', 'case.sla_overdue']);
  });

  test('when a case is archived before its moments, then neither signal fires; restoring re-arms them', async () => {
    const k = await sut.cases.create(team, { title: 'Arquivado a tempo', sla_date: day(1) });
    await sut.cases.archive(team, k.id);
    const after = new Date(endOf(day(1)).getTime() + 1000);
    await sweepAt(after);
    expect(await outboxTypes(k.id)).toEqual([]);
    const archived = await stored(k.id);
    expect([archived?.sla_warning_at, archived?.sla_overdue_at]).toEqual([null, null]);

    await sut.cases.update(team, k.id, { status: 'ativo' });
    await sweepAt(new Date(endOf(day(1)).getTime() - DAY + 1000));
    expect(await outboxTypes(k.id)).toEqual(['case.sla_warning']);
  });

  test('when the SLA date moves after the warning, then the warning is re-armed for the new date', async () => {
    const k = await sut.cases.create(team, { title: 'Adiado', sla_date: day(0) });
    await sweepAt(new Date());
    expect(await outboxTypes(k.id)).toEqual(['case.sla_warning']);
    await sut.cases.update(team, k.id, { sla_date: day(5) });
    await sweepAt(new Date(Date.now() + DAY));
    expect(await outboxTypes(k.id)).toEqual(['case.sla_warning']);
    await sweepAt(new Date(endOf(day(5)).getTime() - DAY));
    expect(await outboxTypes(k.id)).toEqual(['case.sla_warning', 'case.sla_warning']);
  });
});
