// financial.overdue, the time-driven event of a record. Two replicas of the financial
// service as processes on one database and broker: the signal reaches the broker
// exactly once. Re-arming and disarming are checked in process by sweeping at
// chosen instants.
import { zonedMoment } from '@lpm/shared/time';
import { signalReplicasForSuite, sweptInProcess } from '@lpm/test-kit/time-signal-checks';
import { overdueSignals } from '../src/jobs/overdue-signals.ts';
import { startFinancial } from './helper.ts';
import { day, TEAM_ZONE } from '@lpm/test-kit/teams';

/** Where the signals are swept, and the records that carry them. */
const SIGNALS = { service: 'financial', collection: 'financial_records' } as const;
const record = { type: 'revenue', category: 'honorarios', description: 'Parcela', amount: 250.75, date: '2026-01-10' };

describe('two replicas of the financial service', () => {
  const { team, replicas, send, signalAgainOnMove } = signalReplicasForSuite({
    ...SIGNALS,
    name: 'finoverdue',
    events: ['financial.overdue', 'financial.created', 'financial.paid'],
  });

  test('when the service is up, then /health answers 200', async () => {
    expect((await fetch(`http://127.0.0.1:${replicas().base}/health`)).status).toBe(200);
  });

  test('when a pending record is due yesterday, then exactly one financial.overdue reaches the broker; a paid one gives none', async () => {
    const pending = await send('POST', '/v1/financial', { ...record, due_date: day(-1) });
    const paid = await send('POST', '/v1/financial', { ...record, due_date: day(-1), status: 'paid' });
    expect([pending.status, paid.status]).toEqual([201, 201]);
    const [event] = await replicas().tap.waitFor('financial.overdue', pending.body.data.id);
    expect(event).toMatchObject({
      team_id: team.teamId,
      actor_id: null,
      data: {
        previous_attributes: null,
        object: { id: pending.body.data.id, status: 'pending', due_date: day(-1), amount: 250.75 },
      },
    });
    await replicas().tap.waitFor('financial.created', paid.body.data.id);
    await replicas().settle();
    expect(replicas().tap.of('financial.overdue', pending.body.data.id)).toHaveLength(1);
    expect(replicas().tap.of('financial.overdue', paid.body.data.id)).toHaveLength(0);
  });

  test('when an overdue record gets a new past due date, then the signal is re-armed and fires once more; paying it then emits financial.paid', async () => {
    const id = await signalAgainOnMove('financial.overdue', '/v1/financial', 'due_date', record);
    expect((await send('PUT', `/v1/financial/${id}`, { status: 'paid' })).status).toBe(200);
    await replicas().tap.waitFor('financial.paid', id);
    await replicas().settle();
    expect(replicas().tap.of('financial.overdue', id)).toHaveLength(2);
    expect(replicas().tap.of('financial.paid', id)).toHaveLength(1);
  });
});

describe('signals ahead in time (swept in process at chosen instants)', () => {
  const { team, sut, sweepAt, stored, outboxTypes } = sweptInProcess(
    startFinancial,
    (s) => overdueSignals(s.financial),
    SIGNALS,
  );
  const overdueEvents = async (id: string) => (await outboxTypes(id)).filter((t) => t === 'financial.overdue').length;
  const startOfDayAfter = (date: string) => zonedMoment(day(1, date), TEAM_ZONE, '00:00:00');

  test('when a record is due tomorrow, then nothing fires until the day after it begins in the team zone, then exactly once for both sweepers', async () => {
    const r = await sut().financial.create(team, { ...record, type: 'revenue', due_date: day(1) });
    const at = startOfDayAfter(day(1));
    await sweepAt(new Date());
    await sweepAt(new Date(at.getTime() - 1000));
    expect(await overdueEvents(r.id)).toBe(0);
    await sweepAt(at);
    await sweepAt(new Date(at.getTime() + 5000));
    expect(await overdueEvents(r.id)).toBe(1);
    expect((await stored(r.id))?.overdue_at).toBeNull();
  });

  test('when a record is paid or cancelled before its due date passes, then no signal fires and it is disarmed', async () => {
    const paid = await sut().financial.create(team, { ...record, type: 'revenue', due_date: day(1) });
    const cancelled = await sut().financial.create(team, { ...record, type: 'revenue', due_date: day(1) });
    await sut().financial.update(team, paid.id, { status: 'paid' });
    await sut().financial.cancel(team, cancelled.id);
    await sweepAt(new Date(startOfDayAfter(day(1)).getTime() + 1000));
    expect([await overdueEvents(paid.id), await overdueEvents(cancelled.id)]).toEqual([0, 0]);
    expect([(await stored(paid.id))?.overdue_at, (await stored(cancelled.id))?.overdue_at]).toEqual([null, null]);
  });

  test('when the due date moves later, then the signal follows the new date', async () => {
    const r = await sut().financial.create(team, { ...record, type: 'revenue', due_date: day(1) });
    await sut().financial.update(team, r.id, { due_date: day(5) });
    await sweepAt(new Date(startOfDayAfter(day(1)).getTime() + 1000));
    expect(await overdueEvents(r.id)).toBe(0);
    await sweepAt(new Date(startOfDayAfter(day(5)).getTime() + 1000));
    expect(await overdueEvents(r.id)).toBe(1);
  });
});
