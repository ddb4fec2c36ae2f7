// Time-driven domain events (case.sla_warning, activity.overdue, ...). A record holds,
// per signal, the instant the signal is due in a field (null: disarmed or already
// emitted); its service sets it in the same write as the change that arms, re-arms
// or disarms it. A periodic sweep emits each due signal and nulls its field in one
// update under the document lock, the event going into the record's outbox, so a
// crash loses nothing and no signal goes out twice.
//
// The sweep finds due records by an equality marker (store/markers.ts): beside each
// due field `f`, the record store writes `f_slot`, the hour of the due instant (or
// of the write, when the instant is already past). A sweep asks slot by slot, from
// its cursor (the first slot that may still hold a due record) to the current one;
// it always re-reads the previous hour too, so a write landing late in a slot (a
// slow request, clocks apart by less than an hour) is still found.
//
// agenda only drives the sweep: its job lock is not exclusive on FerretDB (two
// replicas both run the job), so exactly-once rests on withDocumentLock and the
// re-read under it.
import { once } from 'node:events';
import { hostname } from 'node:os';
import { Agenda } from 'agenda';
import { MongoBackend } from '@agendajs/mongo-backend';
import type { Db, Document, Filter } from 'mongodb';
import type { Logger } from '../logger.ts';
import { DAY_MS } from '../time.ts';
import { newEvent, type DomainEvent, type EventType } from '../events.ts';
import { outboxUpdate } from '../outbox/fields.ts';
import { withDocumentLock } from '../store/lock.ts';
import {
  MAX_BUCKETS_BEHIND,
  SIGNAL_SLOT_MS,
  advanceCursor,
  bucketOf,
  readCursor,
  signalSlots,
  slotField,
} from '../store/markers.ts';
import { SWEEP } from '../store/time-budgets.ts';

export { signalSlots };

export interface SignalDefinition<R extends { _id: string } = SignalRecord> {
  /**
   * The event's type: one of the API's (EVENT_TYPES), or an internal one (e.g.
   * activity.reminder_due) only a consumer of the platform binds to.
   */
  type: EventType | (string & {});
  /** Collection holding the records (an outbox collection). */
  collection: string;
  /** Field with the instant the signal is due, e.g. 'sla_warning_at'. */
  dueField: string;
  /**
   * Called with the record whose moment has come (not under its lock: it may ask
   * other services); what it returns is written only if the record has not changed
   * since (its `version`). Returns the event to emit, or null to just disarm.
   */
  event(record: R, now: Date): Promise<DomainEvent | null>;
}

/**
 * The signals of one collection whose events carry the record in a read shape
 * (`shapeOf`, e.g. its detail): `signal(type, dueField, when)` emits `type` for a
 * record whose moment has come if `when` holds for it then, and else only disarms.
 */
export function recordSignals<R extends { _id: string; team_id: string }, S extends Record<string, unknown>>(
  collection: string,
  shapeOf: (record: R) => Promise<S>,
) {
  return (
    type: SignalDefinition['type'],
    dueField: keyof R & string,
    when: (record: R, now: Date) => boolean,
  ): SignalDefinition<R> => ({
    type,
    collection,
    dueField,
    event: async (r, now) => (when(r, now) ? newEvent(type, r.team_id, await shapeOf(r)) : null),
  });
}

export interface TimeSignalsOptions {
  /** The service's database: records, document locks and agenda's own collection live here. */
  db: Db;
  /** How often the sweep runs (SCHEDULER_INTERVAL). */
  intervalMs: number;
  signals: SignalDefinition[];
  /** Given the event just written, to publish it from memory (outbox/relay.ts). */
  relay: { kick(collection: string, id: string, events: DomainEvent[]): void };
  logger: Logger;
  /** Job-name prefix, e.g. 'cases'. */
  name: string;
  /** Records per signal per query. Default 100. */
  batchSize?: number;
}

type SignalRecord = Document & { _id: string; version?: number };

/** agenda's collection (MongoBackend's default), in the service's database. */
const AGENDA_JOBS = 'agendaJobs';

export class TimeSignals {
  private readonly opts: TimeSignalsOptions;
  private readonly jobName: string;
  private readonly batchSize: number;
  private agenda: Agenda | null = null;
  private backend: MongoBackend | null = null;
  private runningJobs = 0;

  constructor(opts: TimeSignalsOptions) {
    this.opts = opts;
    this.jobName = `${opts.name}:time-signals`;
    this.batchSize = opts.batchSize ?? 100;
  }

  async start(): Promise<void> {
    if (this.agenda) return;
    const { db, intervalMs, logger } = this.opts;
    this.backend = new MongoBackend({ mongo: db });
    const agenda = new Agenda({
      backend: this.backend,
      processEvery: intervalMs,
      name: `${this.opts.name}@${hostname()}:${process.pid}`,
    });
    this.agenda = agenda;
    agenda.on('error', (err) => logger.error({ err, job: this.jobName }, 'time signals scheduler error'));
    agenda.on(`fail:${this.jobName}`, (err) => logger.error({ err }, 'time signals sweep failed'));
    // Counted from agenda's events (not the sweep's promise) so that stop() also waits
    // for agenda to record the run and release the job.
    agenda.on(`start:${this.jobName}`, () => this.runningJobs++);
    agenda.on(`complete:${this.jobName}`, () => this.runningJobs--);
    agenda.define(this.jobName, async () => {
      const emitted = await this.sweep();
      if (emitted > 0) logger.info({ emitted }, 'time signals emitted');
    });
    try {
      await this.createIndexes();
      await agenda.start();
      await agenda.every(intervalMs, this.jobName);
      await this.rescheduleWithin(intervalMs);
    } catch (e) {
      // Left as before, so that a start tried again (the store gone meanwhile) does it all.
      await this.stop().catch(() => {});
      throw e;
    }
  }

  /**
   * agenda keeps a stored job's nextRunAt when every() is called again, so after a
   * restart with a shorter interval the first run would still come at the old one
   * (a minute late at 1m -> 1s): a run set further off than the interval is moved to now.
   */
  private async rescheduleWithin(intervalMs: number): Promise<void> {
    const now = new Date();
    await this.opts.db
      .collection(AGENDA_JOBS)
      .updateOne(
        { name: this.jobName, type: 'single', nextRunAt: { $gt: new Date(now.getTime() + intervalMs) } },
        { $set: { nextRunAt: now } },
      );
  }

  /** The index of each signal's slot marker (start() declares them; a caller of sweep() alone, such as the bench, calls this). */
  async createIndexes(): Promise<void> {
    for (const s of this.opts.signals)
      await this.opts.db.collection(s.collection).createIndex({ [slotField(s.dueField)]: 1, [s.dueField]: 1 }, SWEEP);
  }

  async stop(): Promise<void> {
    const { agenda, backend } = this;
    if (!agenda || !backend) return;
    this.agenda = this.backend = null;
    // stop(false) releases the job if it is only queued here, but leaves a running
    // one alone; then the running sweep finishes. The connection is the service's.
    await agenda.stop(false);
    while (this.runningJobs > 0) await once(agenda, `complete:${this.jobName}`).catch(() => {});
    await backend.disconnect();
  }

  /** One pass over every signal; resolves with the number of events emitted. Safe to run concurrently from several replicas. */
  async sweep(now = new Date()): Promise<number> {
    let emitted = 0;
    for (const signal of this.opts.signals) emitted += await this.sweepSignal(signal, now);
    return emitted;
  }

  private async sweepSignal(signal: SignalDefinition, now: Date): Promise<number> {
    const key = `signal:${signal.collection}:${signal.dueField}`;
    const current = bucketOf(now, SIGNAL_SLOT_MS);
    const cursor = await readCursor(this.opts.db, key);
    if (cursor === null || cursor < current - MAX_BUCKETS_BEHIND) return this.catchUp(signal, now, key);
    let emitted = 0;
    let firstFailed: number | null = null;
    for (let slot = Math.min(cursor, current - 1); slot <= current; slot++) {
      const pass = await this.emitDue(signal, now, { [slotField(signal.dueField)]: slot });
      emitted += pass.emitted;
      if (pass.failed > 0 && firstFailed === null) firstFailed = slot;
    }
    const next = Math.min(firstFailed ?? current, current - 1);
    if (next > cursor) await advanceCursor(this.opts.db, key, next);
    return emitted;
  }

  /**
   * A signal's first sweep (or one whose cursor is too far behind, or deleted): the
   * range query over the whole collection emits whatever is due, whatever its slot,
   * and armed records written without a right slot get theirs. The cursor is stored
   * once both went through without a failure.
   */
  private async catchUp(signal: SignalDefinition, now: Date, key: string): Promise<number> {
    const pass = await this.emitDue(signal, now, {});
    const unrepaired = await this.repairSlots(signal, now);
    if (pass.failed === 0 && unrepaired === 0)
      await advanceCursor(this.opts.db, key, bucketOf(now, SIGNAL_SLOT_MS) - 1);
    return pass.emitted;
  }

  /** Emits the signal of every record of `scope` due at `now`, batch after batch, so a backlog drains in one run; records that fail are left for the next sweep. */
  private async emitDue(
    signal: SignalDefinition,
    now: Date,
    scope: Filter<SignalRecord>,
  ): Promise<{ emitted: number; failed: number }> {
    const col = this.opts.db.collection<SignalRecord>(signal.collection);
    const failed: string[] = [];
    let emitted = 0;
    for (;;) {
      const batch = await col
        .find({ ...scope, [signal.dueField]: { $lte: now }, _id: { $nin: failed } }, { projection: { _id: 1 } })
        .sort({ [signal.dueField]: 1 })
        .limit(this.batchSize)
        .toArray();
      for (const { _id } of batch) {
        try {
          if (await this.fire(signal, _id, now)) emitted++;
        } catch (err) {
          failed.push(_id);
          this.opts.logger.warn(
            { err, type: signal.type, collection: signal.collection, id: _id },
            'time signal not emitted; retried at the next sweep',
          );
        }
      }
      if (batch.length < this.batchSize) return { emitted, failed: failed.length };
    }
  }

  /**
   * Gives its slot, under its lock (the record store writes under it too), to each
   * armed record whose slot cannot be its due instant's: none, null, or an hour
   * before it (written before slots existed, or re-armed by a process that did not
   * write them). Resolves with the number left unrepaired.
   */
  private async repairSlots(signal: SignalDefinition, now: Date): Promise<number> {
    const { db, logger } = this.opts;
    const col = db.collection<SignalRecord>(signal.collection);
    const [field, slot] = [signal.dueField, slotField(signal.dueField)];
    const projection = { [field]: 1, [slot]: 1 };
    const wrong = (r: Document) => typeof r[slot] !== 'number' || r[slot] < bucketOf(r[field] as Date, SIGNAL_SLOT_MS);
    const armed = { [field]: { $ne: null } };
    let left = 0;
    for (const { _id } of (await col.find(armed, { projection }).toArray()).filter(wrong)) {
      try {
        await withDocumentLock(db, signal.collection, _id, async () => {
          const fresh = await col.findOne({ _id, ...armed }, { projection });
          if (fresh && wrong(fresh))
            await col.updateOne({ _id }, { $set: signalSlots({ [field]: fresh[field] as Date }, now) });
        });
      } catch (err) {
        left++;
        logger.warn(
          { err, type: signal.type, collection: signal.collection, id: _id },
          'time signal slot not written; retried at the next sweep',
        );
      }
    }
    return left;
  }

  /**
   * Emits (or disarms) one record's signal; true when an event was written. The
   * event is built from a read before the lock (building it may ask other services:
   * no lock is held across that), and written under the lock only if the record is
   * still due and unchanged (same version); a record changed in between is read again.
   */
  private async fire(signal: SignalDefinition, id: string, now: Date): Promise<boolean> {
    const { db, relay } = this.opts;
    const col = db.collection<SignalRecord>(signal.collection);
    const due = { _id: id, [signal.dueField]: { $lte: now } };
    for (let round = 0; round < 3; round++) {
      const snapshot = await col.findOne(due);
      if (!snapshot) return false; // emitted by another replica meanwhile, or re-armed or disarmed
      const event = await signal.event(snapshot, now);
      const outcome = await withDocumentLock(db, signal.collection, id, async (lease) => {
        const fresh = await col.findOne(due, { projection: { version: 1 } });
        if (!fresh) return 'gone';
        if (fresh.version !== snapshot.version) return 'changed';
        lease.check();
        const unchanged = snapshot.version === undefined ? {} : { version: snapshot.version };
        const r = await col.updateOne(
          { ...due, ...unchanged },
          outboxUpdate({ $set: { [signal.dueField]: null, [slotField(signal.dueField)]: null } }, event ? [event] : []),
        );
        if (event === null || r.matchedCount !== 1) return 'disarmed';
        // Under the lock, as every writer does: the relay must hear of the event before any drain can read it.
        relay.kick(signal.collection, id, [event]);
        return 'written';
      });
      if (outcome === 'changed') continue;
      return outcome === 'written';
    }
    throw new Error(`${signal.type} of ${signal.collection}/${id}: the record kept changing; left for the next sweep`);
  }
}

/**
 * Arming for a deadline pair: the warning `warnBeforeMs` before, the overdue signal at
 * the deadline. A deadline already passed at `now` gets only the overdue signal; a
 * warning instant in the past fires at the next sweep.
 */
export function armDeadline(
  deadline: Date | null,
  now = new Date(),
  warnBeforeMs = DAY_MS,
): { warnAt: Date | null; overdueAt: Date | null } {
  if (!deadline) return { warnAt: null, overdueAt: null };
  if (deadline.getTime() <= now.getTime()) return { warnAt: null, overdueAt: deadline };
  return { warnAt: new Date(deadline.getTime() - warnBeforeMs), overdueAt: deadline };
}

/**
 * A team's time zone changed: its signals' instants from the new zone (`fresh`). A
 * signal still armed moves to its new instant; one already emitted (null) is armed
 * again only when its new instant is still ahead, so nothing is emitted twice.
 */
export function rearmed<F extends Record<string, Date | null>>(current: F, fresh: F, now: Date): F {
  const out = { ...fresh };
  for (const k of Object.keys(fresh) as (keyof F)[]) {
    const at = fresh[k];
    if (current[k] === null && !(at && at.getTime() > now.getTime())) out[k] = null as F[keyof F];
  }
  return out;
}
