// armDeadline, zonedMoment, and TimeSignals after a restart (the sweeps:
// time-signals.test.ts).
import { TimeSignals, armDeadline } from '../src/jobs/time-signals.ts';
import { zonedMoment } from '../src/time.ts';
import { captureLogger, waitFor } from '@lpm/test-kit/wait';
import { db, HOUR, insertCases, outboxes, signal, started, timeSignalsSuite } from './time-signals-suite.ts';
import { NO_RELAY } from '@lpm/test-kit/service-parts';

timeSignalsSuite('timesignalsrestart');

describe('armDeadline', () => {
  const now = new Date('2026-05-10T12:00:00Z');

  it('when there is no deadline, then both are disarmed', () => {
    expect(armDeadline(null, now)).toEqual({ warnAt: null, overdueAt: null });
  });

  it('when the deadline is ahead, then the warning is 24 h (or warnBeforeMs) before it, even if that is already past', () => {
    const deadline = new Date('2026-05-12T12:00:00Z');
    expect(armDeadline(deadline, now)).toEqual({ warnAt: new Date('2026-05-11T12:00:00Z'), overdueAt: deadline });
    expect(armDeadline(deadline, now, HOUR)).toEqual({ warnAt: new Date('2026-05-12T11:00:00Z'), overdueAt: deadline });
    const soon = new Date('2026-05-10T13:00:00Z');
    expect(armDeadline(soon, now)).toEqual({ warnAt: new Date('2026-05-09T13:00:00Z'), overdueAt: soon });
  });

  it('when the deadline has passed (or is now), then only the overdue signal is armed', () => {
    const past = new Date('2026-05-01T00:00:00Z');
    expect(armDeadline(past, now)).toEqual({ warnAt: null, overdueAt: past });
    expect(armDeadline(now, now)).toEqual({ warnAt: null, overdueAt: now });
  });
});

describe('zonedMoment', () => {
  it('when the zone has a fixed offset, then the wall clock is shifted by it (default time 23:59:59)', () => {
    expect(zonedMoment('2026-11-22', 'America/Sao_Paulo').toISOString()).toBe('2026-11-23T02:59:59.000Z');
    expect(zonedMoment('2026-11-22', 'UTC').toISOString()).toBe('2026-11-22T23:59:59.000Z');
    expect(zonedMoment('2026-01-01', 'Asia/Kolkata', '00:00').toISOString()).toBe('2025-12-31T18:30:00.000Z');
  });

  it('when DST starts or ends that day, then the offset in force at that wall-clock time is used', () => {
    // New York: 2026-03-08 02:00 EST -> 03:00 EDT; 2026-11-01 02:00 EDT -> 01:00 EST.
    expect(zonedMoment('2026-03-08', 'America/New_York').toISOString()).toBe('2026-03-09T03:59:59.000Z');
    expect(zonedMoment('2026-03-08', 'America/New_York', '01:59:59').toISOString()).toBe('2026-03-08T06:59:59.000Z');
    expect(zonedMoment('2026-03-08', 'America/New_York', '03:00').toISOString()).toBe('2026-03-08T07:00:00.000Z');
    expect(zonedMoment('2026-11-01', 'America/New_York').toISOString()).toBe('2026-11-02T04:59:59.000Z');
    expect(zonedMoment('2026-10-31', 'America/New_York').toISOString()).toBe('2026-11-01T03:59:59.000Z');
    // Berlin: 2026-03-29 02:00 CET -> 03:00 CEST; 2026-10-25 03:00 CEST -> 02:00 CET.
    expect(zonedMoment('2026-03-29', 'Europe/Berlin').toISOString()).toBe('2026-03-29T21:59:59.000Z');
    expect(zonedMoment('2026-10-25', 'Europe/Berlin').toISOString()).toBe('2026-10-25T22:59:59.000Z');
  });

  it('when the time is skipped or repeated by a DST change, then a skipped one moves forward and a repeated one is the first', () => {
    expect(zonedMoment('2026-03-08', 'America/New_York', '02:30').toISOString()).toBe('2026-03-08T07:30:00.000Z');
    expect(zonedMoment('2026-11-01', 'America/New_York', '01:30').toISOString()).toBe('2026-11-01T05:30:00.000Z');
    expect(zonedMoment('2026-03-29', 'Europe/Berlin', '02:30').toISOString()).toBe('2026-03-29T01:30:00.000Z');
    expect(zonedMoment('2026-10-25', 'Europe/Berlin', '02:30').toISOString()).toBe('2026-10-25T00:30:00.000Z');
  });

  it('when the date, time or zone is not valid, then it throws', () => {
    expect(() => zonedMoment('2026-02-30', 'UTC')).toThrow(RangeError);
    expect(() => zonedMoment('2026-01-01', 'UTC', '24:00')).toThrow(RangeError);
    expect(() => zonedMoment('01/01/2026', 'UTC')).toThrow(RangeError);
    expect(() => zonedMoment('2026-01-01', 'Mars/Olympus')).toThrow(RangeError);
  });
});

describe('TimeSignals after a restart', () => {
  it('when restarted with a shorter interval, then the first sweep comes within the new interval, not at the run the old one stored', async () => {
    const col = 'restarted';
    const build = (intervalMs: number) =>
      new TimeSignals({
        db,
        intervalMs,
        signals: [signal('case.sla_overdue', col, 'sla_overdue_at')],
        relay: NO_RELAY,
        logger: captureLogger(),
        name: `test-${col}`,
      });
    // A run at a one-hour interval leaves the job's next run an hour after it (as agenda records a run).
    const slow = build(HOUR);
    await slow.start();
    await slow.stop();
    const job = { name: `test-${col}:time-signals`, type: 'single' };
    const ran = new Date();
    expect(
      (
        await db
          .collection('agendaJobs')
          .updateOne(job, { $set: { lastRunAt: ran, nextRunAt: new Date(ran.getTime() + HOUR) } })
      ).matchedCount,
    ).toBe(1);

    const fast = build(200);
    started.push(fast);
    await fast.start();
    await insertCases(col, 1, () => ({ sla_overdue_at: new Date(Date.now() - 1000) }));
    await waitFor(
      'the overdue event from the restarted scheduler',
      async () => (await outboxes(col)).case_0.length > 0,
      10_000,
    );
    expect((await outboxes(col)).case_0).toEqual(['case.sla_overdue']);
  });
});
