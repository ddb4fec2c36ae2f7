// activity.due_soon, activity.overdue and the e-mail reminder, the time-driven work of an activity.
// Two replicas of the activities service as processes on one database and broker,
// with a real SMTP listener and a stand-in for the gateway's user directory: each
// signal reaches the broker exactly once and the reminder one inbox once. Moments
// that lie further ahead are checked in process by sweeping at chosen instants.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { newId } from '@lpm/shared/ids';
import { zonedMoment } from '@lpm/shared/time';
import { signalReplicasForSuite, sweptInProcess } from '@lpm/test-kit/time-signal-checks';
import { startSmtpListener, type SmtpListener } from '@lpm/test-kit/smtp-listener';
import { dueSignals } from '../src/jobs/due-signals.ts';
import { startActivities } from './helper.ts';
import { day, TEAM_ZONE } from '@lpm/test-kit/teams';
import { sleep } from '@lpm/test-kit/wait';

const DAY = 86_400_000;
/** Where the signals are swept, and the records that carry them. */
const SIGNALS = { service: 'activities', collection: 'activities' } as const;

/** Wall-clock date and HH:mm of an instant in the team's zone. */
const wall = (at: Date) => {
  const p = Object.fromEntries(
    new Intl.DateTimeFormat('en-CA', {
      timeZone: TEAM_ZONE,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
    })
      .formatToParts(at)
      .map(({ type, value }) => [type, value]),
  );
  return { date: `${p.year}-${p.month}-${p.day}`, time: `${p.hour}:${p.minute}` };
};

describe('two replicas of the activities service', () => {
  let smtp: SmtpListener;
  let directory: Server;
  const assignee = { id: newId('user'), name: 'Beatriz Souza', email: 'bia@silva.adv.br' };

  beforeAll(async () => {
    smtp = await startSmtpListener();
    // The gateway's user directory, as the activities service asks it (GET /internal/users?ids=...).
    directory = createServer((req, res) => {
      const ids = new URL(req.url ?? '/', 'http://x').searchParams.get('ids')?.split(',') ?? [];
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          success: true,
          data: req.headers['x-lpm-team-id'] === team.teamId ? [assignee].filter((u) => ids.includes(u.id)) : [],
        }),
      );
    });
    await new Promise<void>((r) => directory.listen(0, '127.0.0.1', r));
  });
  const { team, replicas, send, expectOneSignal, signalAgainOnMove } = signalReplicasForSuite({
    ...SIGNALS,
    name: 'actsignals',
    events: ['activity.due_soon', 'activity.overdue', 'activity.reminder_due'],
    env: () => ({ GATEWAY_URL: `http://127.0.0.1:${(directory.address() as AddressInfo).port}`, SMTP_URL: smtp.url }),
  });

  afterAll(async () => {
    await smtp?.close();
    await new Promise((r) => directory?.close(r));
  });

  test('when an activity was due yesterday, then exactly one activity.overdue reaches the broker and no due_soon', async () => {
    const a = (await send('POST', '/v1/activities', { type: 'deadline', title: 'Atrasada', due_date: day(-1) })).body
      .data;
    await expectOneSignal('activity.overdue', { id: a.id, due_date: day(-1), status: 'pending' });
    expect(replicas().tap.of('activity.due_soon', a.id)).toHaveLength(0);
  });

  test('when an activity is due in 3 hours, then exactly one activity.due_soon at once and no overdue', async () => {
    const due = wall(new Date(Date.now() + 3 * 3_600_000));
    const a = (
      await send('POST', '/v1/activities', {
        type: 'task',
        title: 'Em 3 horas',
        due_date: due.date,
        due_time: due.time,
      })
    ).body.data;
    await expectOneSignal('activity.due_soon', { id: a.id, due_date: due.date, due_time: due.time });
    expect(replicas().tap.of('activity.overdue', a.id)).toHaveLength(0);
  });

  test('when the due date of an overdue activity moves, then the signal is re-armed and fires once more', async () => {
    const body = { type: 'task', title: 'Remarcada' };
    const id = await signalAgainOnMove('activity.overdue', '/v1/activities', 'due_date', body);
    await replicas().settle();
    expect(replicas().tap.of('activity.overdue', id)).toHaveLength(2);
  });

  test('when a reminder with before_minutes 1 is set on an activity due in 2 minutes, then one e-mail reaches the assignee', async () => {
    // Due at the start of the minute two minutes ahead: the reminder falls at the start of the next minute.
    if (new Date().getSeconds() > 50) await sleep((61 - new Date().getSeconds()) * 1000);
    const due = wall(new Date(Date.now() + 120_000));
    const a = await send('POST', '/v1/activities', {
      type: 'meeting',
      title: 'Audiência de conciliação',
      due_date: due.date,
      due_time: due.time,
      assigned_to: assignee.id,
      reminder: { enabled: true, before_minutes: 1, channels: ['email', 'push'] },
    });
    expect(a).toMatchObject({ status: 201, body: { data: { id: expect.stringMatching(/^act_/) } } });
    const [mail] = await smtp.waitFor(1, 75_000);
    expect(mail).toMatchObject({ to: [assignee.email], subject: 'Reminder: Audiência de conciliação' });
    expect(mail.text).toContain(`${due.date} ${due.time}`);
    await replicas().settle();
    expect(replicas().tap.of('activity.reminder_due')).toHaveLength(1);
    expect(smtp.messages).toHaveLength(1);
  }, 90_000);
});

describe('signals ahead in time (swept in process at chosen instants)', () => {
  const { team, sut, sweepAt, stored, outboxTypes } = sweptInProcess(
    startActivities,
    (s) => dueSignals(s.activities),
    SIGNALS,
  );
  /** The outbox's events but the writes' own. */
  const signalEvents = async (id: string) =>
    (await outboxTypes(id)).filter(
      (t) => t !== 'activity.created' && t !== 'activity.updated' && t !== 'activity.completed',
    );

  test('when an activity is due in two days at 10:00, then due_soon fires once 24 h before and overdue once after', async () => {
    const a = await sut().activities.create(team, {
      type: 'task',
      title: 'Depois de amanhã',
      due_date: day(2),
      due_time: '10:00',
    });
    const due = zonedMoment(day(2), TEAM_ZONE, '10:00');
    await sweepAt(new Date());
    expect(await signalEvents(a.id)).toEqual([]);
    await sweepAt(new Date(due.getTime() - DAY - 1000));
    expect(await signalEvents(a.id)).toEqual([]);
    await sweepAt(new Date(due.getTime() - DAY));
    await sweepAt(new Date(due.getTime() - DAY + 5000));
    expect(await signalEvents(a.id)).toEqual(['activity.due_soon']);
    await sweepAt(new Date(due.getTime() + 1000));
    expect(await signalEvents(a.id)).toEqual(['activity.due_soon', 'activity.overdue']);
  });

  test('when there is no due time, then the due moment is 23:59 in the team zone', async () => {
    const a = await sut().activities.create(team, { type: 'task', title: 'Sem hora', due_date: day(3) });
    expect((await stored(a.id))?.overdue_at).toEqual(zonedMoment(day(3), TEAM_ZONE, '23:59'));
  });

  test('when an activity is completed or cancelled before its moments, then nothing fires; reopening re-arms', async () => {
    const a = await sut().activities.create(team, { type: 'task', title: 'Concluída', due_date: day(1) });
    const b = await sut().activities.create(team, { type: 'task', title: 'Cancelada', due_date: day(1) });
    await sut().activities.complete(team, a.id, null);
    await sut().activities.update(team, b.id, { status: 'cancelled' });
    await sweepAt(new Date(Date.now() + 3 * DAY));
    expect(await signalEvents(a.id)).toEqual([]);
    expect(await signalEvents(b.id)).toEqual([]);
    const c = await sut().activities.create(team, { type: 'task', title: 'Reaberta', due_date: day(1) });
    await sut().activities.update(team, c.id, { status: 'in_progress' });
    await sut().activities.update(team, c.id, { status: 'pending' });
    await sweepAt(new Date(zonedMoment(day(1), TEAM_ZONE, '23:59').getTime() - DAY + 1000));
    expect(await signalEvents(c.id)).toEqual(['activity.due_soon']);
  });

  test("when a reminder's moment has passed when it is set, or it has no e-mail channel, then no reminder is armed", async () => {
    const u = sut().world.addUser(team.teamId, 'Ana', 'ana@x.br');
    const soon = wall(new Date(Date.now() + 5 * 60_000));
    const passed = await sut().activities.create(team, {
      type: 'call',
      title: 'Já passou',
      due_date: soon.date,
      due_time: soon.time,
      assigned_to: u.id,
      reminder: { before_minutes: 60 },
    });
    const pushOnly = await sut().activities.create(team, {
      type: 'call',
      title: 'Só push',
      due_date: day(2),
      assigned_to: u.id,
      reminder: { before_minutes: 60, channels: ['push', 'sms'] },
    });
    const armed = await sut().activities.create(team, {
      type: 'call',
      title: 'Armado',
      due_date: day(2),
      due_time: '10:00',
      assigned_to: u.id,
      reminder: { before_minutes: 30 },
    });
    expect((await stored(passed.id))?.reminder_at).toBeNull();
    expect((await stored(pushOnly.id))?.reminder_at).toBeNull();
    expect((await stored(armed.id))?.reminder_at).toEqual(
      new Date(zonedMoment(day(2), TEAM_ZONE, '10:00').getTime() - 30 * 60_000),
    );
    await sweepAt(new Date(zonedMoment(day(2), TEAM_ZONE, '10:00').getTime() - 29 * 60_000));
    expect((await signalEvents(armed.id)).filter((t) => t === 'activity.reminder_due')).toHaveLength(1);
  });
});
