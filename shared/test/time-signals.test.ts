// TimeSignals: each due signal goes out once across replicas, swept by slot markers
// (restarts, armDeadline and zonedMoment: time-signals-restart.test.ts).
import { newEvent } from '../src/events.ts';
import { type SignalDefinition } from '../src/jobs/time-signals.ts';
import { RecordStore } from '../src/store/record-store.ts';
import { notFound } from '../src/errors.ts';
import { newId } from '../src/ids.ts';
import { waitFor, sleep } from '@lpm/test-kit/wait';
import {
  armed,
  type CaseDoc,
  db,
  HOUR,
  insertCases,
  outboxes,
  replica,
  signal,
  start,
  timeSignalsSuite,
} from './time-signals-suite.ts';

timeSignalsSuite('timesignals');

describe('TimeSignals', () => {
  it('when two replicas run the sweep from agenda, then every due record gets its event exactly once and its field is nulled', async () => {
    const col = 'replicas';
    const past = Date.now() - HOUR;
    await insertCases(col, 20, (i) => ({
      sla_warning_at: new Date(past - i * 1000),
      sla_overdue_at: i < 10 ? new Date(past + i * 1000) : new Date(Date.now() + HOUR),
    }));
    const [a, b] = [replica(col), replica(col)];
    await start(a, b);
    const cases = db.collection<CaseDoc>(col);
    await waitFor(
      'all due signals emitted',
      async () =>
        (await cases.countDocuments({
          $or: [{ sla_warning_at: { $ne: null } }, { sla_overdue_at: { $lte: new Date() } }],
        })) === 0,
    );
    await sleep(1000); // five more intervals: nothing more goes out

    const events = await outboxes(col);
    for (let i = 0; i < 20; i++) {
      expect(events[`case_${i}`].sort()).toEqual(
        i < 10 ? ['case.sla_overdue', 'case.sla_warning'] : ['case.sla_warning'],
      );
    }
    expect(await cases.countDocuments({ sla_overdue_at: { $gt: new Date() } })).toBe(10);
    expect(await cases.countDocuments({ outbox_pending: true })).toBe(20);
    expect(a.kicks.length + b.kicks.length).toBe(30);
  });

  it('when two replicas call sweep() many times at once, then each signal is emitted exactly once', async () => {
    const col = 'concurrent';
    await insertCases(col, 20, (i) => ({
      sla_warning_at: new Date(Date.now() - i * 1000),
      sla_overdue_at: new Date(Date.now() - HOUR),
    }));
    const [a, b] = [replica(col, { batchSize: 3 }), replica(col)];
    const counts = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).signals.sweep()));

    expect(counts.reduce((x, y) => x + y, 0)).toBe(40);
    for (const types of Object.values(await outboxes(col)))
      expect(types.sort()).toEqual(['case.sla_overdue', 'case.sla_warning']);
    expect(
      await db
        .collection(col)
        .countDocuments({ $or: [{ sla_warning_at: { $ne: null } }, { sla_overdue_at: { $ne: null } }] }),
    ).toBe(0);
  });

  it('when a field is armed again, disarmed or set in the future, then a sweep emits again, nothing, and only once the moment passed', async () => {
    const col = 'rearm';
    const now = new Date();
    await insertCases(col, 2, (i) => ({
      sla_warning_at: i === 0 ? new Date(now.getTime() - 1000) : new Date(now.getTime() + HOUR),
    }));
    const { signals, kicks } = replica(col);
    const cases = db.collection<CaseDoc>(col);

    expect(await signals.sweep(now)).toBe(1);
    expect((await outboxes(col)).case_0).toEqual(['case.sla_warning']);

    // Re-armed with a new instant in the past: a second event.
    await cases.updateOne({ _id: 'case_0' }, { $set: armed({ sla_warning_at: new Date(now.getTime() - 500) }, now) });
    expect(await signals.sweep(now)).toBe(1);
    expect((await outboxes(col)).case_0).toEqual(['case.sla_warning', 'case.sla_warning']);

    // Re-armed for later: nothing until it passes.
    await cases.updateOne(
      { _id: 'case_0' },
      { $set: armed({ sla_warning_at: new Date(now.getTime() + 2 * HOUR) }, now) },
    );
    expect(await signals.sweep(now)).toBe(0);
    // Disarmed before its moment: never emitted.
    await cases.updateOne({ _id: 'case_1' }, { $set: armed({ sla_warning_at: null }, now) });
    expect(await signals.sweep(new Date(now.getTime() + 3 * HOUR))).toBe(1);

    expect(await outboxes(col)).toEqual({
      case_0: ['case.sla_warning', 'case.sla_warning', 'case.sla_warning'],
      case_1: [],
    });
    expect(kicks).toEqual([`${col}/case_0`, `${col}/case_0`, `${col}/case_0`]);
  });

  it('when event() returns null, then the field is disarmed without an event or a kick', async () => {
    const col = 'notapplicable';
    await insertCases(col, 1, () => ({ sla_warning_at: new Date(Date.now() - 1000) }));
    const { signals, kicks } = replica(col, {
      signals: [signal('case.sla_warning', col, 'sla_warning_at', async () => null)],
    });

    expect(await signals.sweep()).toBe(0);
    const doc = await db.collection<CaseDoc>(col).findOne({ _id: 'case_0' });
    expect(doc).toMatchObject({ sla_warning_at: null });
    expect(doc?.outbox).toBeUndefined();
    expect(kicks).toEqual([]);
  });

  it('when one record fails, then it is logged and left armed, the others (several batches) are emitted, and the next sweep retries it', async () => {
    const col = 'failing';
    await insertCases(col, 7, (i) => ({ sla_warning_at: new Date(Date.now() - (10 - i) * 1000) }));
    let broken = true;
    const type = 'case.sla_warning';
    const { signals, logger } = replica(col, {
      batchSize: 2,
      signals: [
        signal(type, col, 'sla_warning_at', async (r) => {
          if (broken && r._id === 'case_0') throw new Error('boom');
          return newEvent(type, r.team_id, { id: r._id });
        }),
      ],
    });

    expect(await signals.sweep()).toBe(6);
    expect(await db.collection<CaseDoc>(col).findOne({ _id: 'case_0' })).toMatchObject({
      sla_warning_at: expect.any(Date),
    });
    expect(logger.lines).toEqual([
      expect.objectContaining({ level: 'warn', obj: expect.objectContaining({ id: 'case_0', type }) }),
    ]);

    broken = false;
    expect(await signals.sweep()).toBe(1);
    for (const types of Object.values(await outboxes(col))) expect(types).toEqual([type]);
  });

  it('when started, then agenda runs the sweep: a record armed for 300 ms from now is emitted without calling sweep()', async () => {
    const col = 'driven';
    const r = replica(col);
    await start(r);
    const dueAt = new Date(Date.now() + 300);
    await insertCases(col, 1, () => ({ sla_overdue_at: dueAt }));

    await waitFor('the overdue event', async () => (await outboxes(col)).case_0.length > 0, 10_000);
    const doc = await db.collection<CaseDoc>(col).findOne({ _id: 'case_0' });
    expect(doc?.outbox?.map((e) => e.type)).toEqual(['case.sla_overdue']);
    expect(Date.parse(doc!.outbox![0].created_at)).toBeGreaterThanOrEqual(dueAt.getTime());
    // The relay is nudged once the write is done and the lock released, a moment after the event is visible.
    await waitFor('the relay nudged', () => r.kicks.length > 0, 5_000);
    expect(r.kicks).toEqual([`${col}/case_0`]);
  });

  it('when stop() is called during a sweep, then that sweep finishes first', async () => {
    const col = 'stopping';
    await insertCases(col, 1, () => ({ sla_warning_at: new Date(Date.now() - 1000) }));
    let entered = false;
    const type = 'case.sla_warning';
    const r = replica(col, {
      signals: [
        signal(type, col, 'sla_warning_at', async (rec) => {
          entered = true;
          await sleep(500);
          return newEvent(type, rec.team_id, { id: rec._id });
        }),
      ],
    });
    await r.signals.start();
    await waitFor('the sweep to reach the record', () => entered, 10_000);
    await r.signals.stop();

    expect(await db.collection<CaseDoc>(col).findOne({ _id: 'case_0' })).toMatchObject({
      sla_warning_at: null,
      outbox: [expect.objectContaining({ type })],
    });
  });
});

describe('TimeSignals by slot markers', () => {
  const slot = (at: number) => Math.floor(at / HOUR);
  const cursorOf = async (col: string, field: string) =>
    (await db.collection<{ _id: string; next: number }>('sweep_cursors').findOne({ _id: `signal:${col}:${field}` }))
      ?.next;
  const warningOnly = (col: string, event?: SignalDefinition<CaseDoc>['event']) =>
    replica(col, { signals: [signal('case.sla_warning', col, 'sla_warning_at', event)] });

  it('when the record store inserts and updates a record, then every due field it sets gets its slot (the hour due, or of the write when already past; null when disarmed), and the sweep clears it', async () => {
    const col = 'store_slots';
    type Rec = {
      _id: string;
      team_id: string;
      version: number;
      title: string;
      sla_warning_at: Date | null;
      sla_overdue_at: Date | null;
    };
    const store = new RecordStore<Rec>({
      db,
      collection: col,
      relay: { kick() {} },
      idKind: 'case',
      noun: 'case',
      notFound: () => notFound('Case not found'),
      signalFields: ['sla_warning_at', 'sla_overdue_at'],
    });
    const docs = db.collection<Rec & Record<string, unknown>>(col);
    const id = newId('case');
    const inTwoHours = new Date(Date.now() + 2 * HOUR);
    await store.insert(
      { _id: id, team_id: 'team_1', version: 1, title: 'a', sla_warning_at: inTwoHours, sla_overdue_at: null },
      [],
    );
    expect(await docs.findOne({ _id: id })).toMatchObject({
      sla_warning_at_slot: slot(inTwoHours.getTime()),
      sla_overdue_at_slot: null,
    });

    const before = Date.now();
    await store.update('team_1', id, async () => ({
      result: null,
      write: { set: { sla_overdue_at: new Date(before - 3 * HOUR) }, events: [] },
    }));
    const after = Date.now();
    const updated = await docs.findOne({ _id: id });
    expect([slot(before), slot(after)]).toContain(updated?.sla_overdue_at_slot);
    expect(updated?.sla_warning_at_slot).toBe(slot(inTwoHours.getTime()));
    await store.update('team_1', id, async () => ({ result: null, write: { set: { title: 'b' }, events: [] } }));
    expect(await docs.findOne({ _id: id })).toMatchObject({
      sla_overdue_at_slot: updated?.sla_overdue_at_slot,
      sla_warning_at_slot: slot(inTwoHours.getTime()),
    });

    const { signals } = replica(col);
    expect(await signals.sweep()).toBe(1);
    expect(await docs.findOne({ _id: id })).toMatchObject({
      sla_overdue_at: null,
      sla_overdue_at_slot: null,
      sla_warning_at_slot: slot(inTwoHours.getTime()),
    });
    await store.update('team_1', id, async () => ({
      result: null,
      write: { set: { sla_warning_at: null }, events: [] },
    }));
    expect(await docs.findOne({ _id: id })).toMatchObject({ sla_warning_at: null, sla_warning_at_slot: null });
  });

  it('when swept, then a record due now, one armed with an instant already past and one due in an hour the cursor passed while no sweep ran are each emitted once', async () => {
    const col = 'slots';
    const now = Date.now();
    const { signals } = warningOnly(col);
    expect(await signals.sweep(new Date(now))).toBe(0); // the first sweep stores the cursor
    expect(await cursorOf(col, 'sla_warning_at')).toBe(slot(now) - 1);

    await db.collection<CaseDoc>(col).insertMany([
      {
        _id: 'due_now',
        team_id: 'team_1',
        sla_overdue_at: null,
        ...armed({ sla_warning_at: new Date(now - 1) }, new Date(now)),
      },
      {
        _id: 'armed_late',
        team_id: 'team_1',
        sla_overdue_at: null,
        ...armed({ sla_warning_at: new Date(now - 30 * HOUR) }, new Date(now)),
      },
      {
        _id: 'later',
        team_id: 'team_1',
        sla_overdue_at: null,
        ...armed({ sla_warning_at: new Date(now + 2 * HOUR) }, new Date(now)),
      },
      // Found by its slot only: once the cursor is there, no sweep reads the whole collection.
      { _id: 'no_slot', team_id: 'team_1', sla_overdue_at: null, sla_warning_at: new Date(now - 1) },
    ]);
    expect(await signals.sweep(new Date(now))).toBe(2);
    expect(await signals.sweep(new Date(now))).toBe(0);
    // Five hours without a sweep: the next one reads every hour since its cursor.
    expect(await signals.sweep(new Date(now + 5 * HOUR))).toBe(1);
    expect(await cursorOf(col, 'sla_warning_at')).toBe(slot(now + 5 * HOUR) - 1);
    expect(await outboxes(col)).toEqual({
      due_now: ['case.sla_warning'],
      armed_late: ['case.sla_warning'],
      later: ['case.sla_warning'],
      no_slot: [],
    });
  });

  it('when a record fails in an hour the sweep passes, then the cursor stays at that hour and a sweep hours later still emits it', async () => {
    const col = 'slots_failing';
    const now = Date.now();
    let broken = true;
    const { signals } = warningOnly(col, async (r) => {
      if (broken) throw new Error('boom');
      return newEvent('case.sla_warning', r.team_id, { id: r._id });
    });
    expect(await signals.sweep(new Date(now))).toBe(0);
    await insertCases(col, 1, () => ({ sla_warning_at: new Date(now + HOUR) }));

    expect(await signals.sweep(new Date(now + 5 * HOUR))).toBe(0);
    expect(await cursorOf(col, 'sla_warning_at')).toBe(slot(now + HOUR));
    broken = false;
    expect(await signals.sweep(new Date(now + 10 * HOUR))).toBe(1);
    expect(await cursorOf(col, 'sla_warning_at')).toBe(slot(now + 10 * HOUR) - 1);
  });

  it('when records written without slots are there at the first sweep, then the due ones are emitted, the others get their slot and are emitted once due', async () => {
    const col = 'legacy';
    const now = Date.now();
    await insertCases(
      col,
      3,
      (i) => ({ sla_warning_at: [new Date(now - 2 * HOUR), new Date(now + 2 * HOUR), null][i] }),
      { slots: false },
    );
    // Re-armed by a process that did not write slots: the slot left by the last disarm, and one an hour before the due instant.
    await db.collection<CaseDoc & Record<string, unknown>>(col).insertMany([
      {
        _id: 'rearmed',
        team_id: 'team_1',
        sla_overdue_at: null,
        sla_warning_at: new Date(now + 2 * HOUR),
        sla_warning_at_slot: null,
      },
      {
        _id: 'moved',
        team_id: 'team_1',
        sla_overdue_at: null,
        sla_warning_at: new Date(now + 2 * HOUR),
        sla_warning_at_slot: slot(now + HOUR),
      },
    ]);
    const { signals } = warningOnly(col);

    expect(await signals.sweep(new Date(now))).toBe(1);
    const docs = db.collection<CaseDoc & Record<string, unknown>>(col);
    expect(await docs.findOne({ _id: 'case_0' })).toMatchObject({ sla_warning_at: null, sla_warning_at_slot: null });
    expect(await docs.findOne({ _id: 'case_1' })).toMatchObject({ sla_warning_at_slot: slot(now + 2 * HOUR) });
    expect(await docs.findOne({ _id: 'case_2' })).not.toHaveProperty('sla_warning_at_slot');
    expect(await docs.findOne({ _id: 'rearmed' })).toMatchObject({ sla_warning_at_slot: slot(now + 2 * HOUR) });
    expect(await docs.findOne({ _id: 'moved' })).toMatchObject({ sla_warning_at_slot: slot(now + 2 * HOUR) });
    expect(await cursorOf(col, 'sla_warning_at')).toBe(slot(now) - 1);

    expect(await signals.sweep(new Date(now + 3 * HOUR))).toBe(3);
    const emitted = ['case.sla_warning'];
    expect(await outboxes(col)).toEqual({
      case_0: emitted,
      case_1: emitted,
      case_2: [],
      rearmed: emitted,
      moved: emitted,
    });
  });
});
