// case.sla_warning and case.sla_overdue, the time-driven events of a case.
// Two replicas of the cases service as processes on one database and broker: each
// signal reaches the broker exactly once. Moments that lie ahead (a warning due at
// the end of today) are checked in process, by sweeping at a chosen instant.
import { zonedMoment } from '@lpm/shared/time';
import { signalReplicasForSuite, sweptInProcess } from '@lpm/test-kit/time-signal-checks';
import { slaSignals } from '../src/jobs/sla-signals.ts';
import { startCases } from './helper.ts';
import { day, TEAM_ZONE } from '@lpm/test-kit/teams';

const DAY = 86_400_000;
/** Where the signals are swept, and the records that carry them. */
const SIGNALS = { service: 'cases', collection: 'cases' } as const;

describe('two replicas of the cases service', () => {
  const { replicas, send, expectOneSignal, signalAgainOnMove } = signalReplicasForSuite({
    ...SIGNALS,
    name: 'casessla',
    events: ['case.sla_warning', 'case.sla_overdue'],
  });

  test('when a case has its SLA date yesterday, then exactly one case.sla_overdue reaches the broker and no warning', async () => {
    const k = (await send('POST', '/v1/cases', { title: 'Atrasado', sla_date: day(-1) })).body.data;
    await expectOneSignal('case.sla_overdue', { id: k.id, sla_date: day(-1), status: 'ativo' });
    expect(replicas().tap.of('case.sla_warning', k.id)).toHaveLength(0);
  });

  test("when a case's SLA ends within 24 hours, then exactly one case.sla_warning and, not yet, an overdue", async () => {
    const k = (await send('POST', '/v1/cases', { title: 'Vence hoje', sla_date: day(0) })).body.data;
    await expectOneSignal('case.sla_warning', { id: k.id, sla_date: day(0) });
    expect(replicas().tap.of('case.sla_overdue', k.id)).toHaveLength(0);
  });

  test('when the SLA date of an overdue case moves, then the signal is re-armed and fires once more', async () => {
    const id = await signalAgainOnMove('case.sla_overdue', '/v1/cases', 'sla_date', { title: 'Remarcado' });
    await replicas().settle();
    expect(replicas().tap.of('case.sla_overdue', id)).toHaveLength(2);
  });
});

describe('signals ahead in time (swept in process at chosen instants)', () => {
  const { team, sut, sweepAt, stored, outboxTypes } = sweptInProcess(startCases, (s) => slaSignals(s.cases), SIGNALS);
  const slaEvents = async (id: string) => (await outboxTypes(id)).filter((t) => t.startsWith('case.sla_'));
  const endOf = (date: string) => zonedMoment(date, TEAM_ZONE);

  test('when a case is due tomorrow, then its warning fires once at the end of today (24 h before), and its overdue once after tomorrow', async () => {
    const k = await sut().cases.create(team, { title: 'Amanhã', sla_date: day(1) });
    await sweepAt(new Date());
    expect(await slaEvents(k.id)).toEqual([]);
    const warnAt = new Date(endOf(day(1)).getTime() - DAY);
    await sweepAt(new Date(warnAt.getTime() - 1000));
    expect(await slaEvents(k.id)).toEqual([]);
    await sweepAt(warnAt);
    await sweepAt(new Date(warnAt.getTime() + 5000));
    expect(await slaEvents(k.id)).toEqual(['case.sla_warning']);
    await sweepAt(new Date(endOf(day(1)).getTime() + 1000));
    expect(await slaEvents(k.id)).toEqual(['case.sla_warning', 'case.sla_overdue']);
  });

  test('when a case is archived before its moments, then neither signal fires; restoring re-arms them', async () => {
    const k = await sut().cases.create(team, { title: 'Arquivado a tempo', sla_date: day(1) });
    await sut().cases.archive(team, k.id);
    const after = new Date(endOf(day(1)).getTime() + 1000);
    await sweepAt(after);
    expect(await slaEvents(k.id)).toEqual([]);
    const archived = await stored(k.id);
    expect([archived?.sla_warning_at, archived?.sla_overdue_at]).toEqual([null, null]);

    await sut().cases.update(team, k.id, { status: 'ativo' });
    await sweepAt(new Date(endOf(day(1)).getTime() - DAY + 1000));
    expect(await slaEvents(k.id)).toEqual(['case.sla_warning']);
  });

  test('when the SLA date moves after the warning, then the warning is re-armed for the new date', async () => {
    const k = await sut().cases.create(team, { title: 'Adiado', sla_date: day(0) });
    await sweepAt(new Date());
    expect(await slaEvents(k.id)).toEqual(['case.sla_warning']);
    await sut().cases.update(team, k.id, { sla_date: day(5) });
    await sweepAt(new Date(Date.now() + DAY));
    expect(await slaEvents(k.id)).toEqual(['case.sla_warning']);
    await sweepAt(new Date(endOf(day(5)).getTime() - DAY));
    expect(await slaEvents(k.id)).toEqual(['case.sla_warning', 'case.sla_warning']);
  });
});
