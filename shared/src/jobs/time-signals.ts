// Time-driven domain events (case.sla_warning, activity.overdue, ...). A record holds,
// per signal, the instant the signal is due in a field (null: disarmed or already
// emitted); its service sets it in the same write as the change that arms, re-arms
// or disarms it. A periodic sweep emits each due signal and nulls its field in one
// update under the document lock, the event going into the record's outbox, so a
// crash loses nothing and no signal goes out twice.
//
// agenda only drives the sweep: its job lock is not exclusive on FerretDB (two
// replicas both run the job), so exactly-once rests on withDocumentLock and the
// re-read under it.
import { once } from 'node:events';
import { hostname } from 'node:os';
import { Agenda } from 'agenda';
import { MongoBackend } from '@agendajs/mongo-backend';
import type { Db, Document } from 'mongodb';
import type { Logger } from '../logger.ts';
import { DAY_MS } from '../time.ts';
import type { DomainEvent, EventType } from '../events.ts';
import { outboxUpdate } from '../outbox/fields.ts';
import { withDocumentLock } from '../store/lock.ts';

export interface SignalDefinition<R extends { _id: string } = any> {
  /** The event's type: one of the spec's, or an internal one (e.g. activity.reminder_due) only a consumer of the platform binds to. */
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

export interface TimeSignalsOptions {
  /** The service's database: records, document locks and agenda's own collection live here. */
  db: Db;
  /** How often the sweep runs (SCHEDULER_INTERVAL). */
  intervalMs: number;
  signals: SignalDefinition[];
  relay: { kick(collection: string, id: string): void };
  logger: Logger;
  /** Job-name prefix, e.g. 'cases'. */
  name: string;
  /** Records per signal per query. Default 100. */
  batchSize?: number;
}

type SignalRecord = Document & { _id: string };

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
    const { db, signals, intervalMs, logger } = this.opts;
    this.backend = new MongoBackend({ mongo: db });
    const agenda = new Agenda({ backend: this.backend, processEvery: intervalMs, name: `${this.opts.name}@${hostname()}:${process.pid}` });
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
    for (const s of signals) await db.collection(s.collection).createIndex({ [s.dueField]: 1 });
    await agenda.start();
    await agenda.every(intervalMs, this.jobName);
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
    const col = this.opts.db.collection<SignalRecord>(signal.collection);
    const failed: string[] = [];
    let emitted = 0;
    // Batch after batch, so a backlog drains in one run; records that failed are left
    // for the next sweep.
    for (;;) {
      const batch = await col
        .find({ [signal.dueField]: { $lte: now }, _id: { $nin: failed } }, { projection: { _id: 1 } })
        .sort({ [signal.dueField]: 1 })
        .limit(this.batchSize)
        .toArray();
      for (const { _id } of batch) {
        try {
          if (await this.fire(signal, _id, now)) emitted++;
        } catch (err) {
          failed.push(_id);
          this.opts.logger.warn({ err, type: signal.type, collection: signal.collection, id: _id }, 'time signal not emitted; retried at the next sweep');
        }
      }
      if (batch.length < this.batchSize) return emitted;
    }
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
      const outcome = await withDocumentLock(db, signal.collection, id, async () => {
        const fresh = await col.findOne(due, { projection: { version: 1 } });
        if (!fresh) return 'gone';
        if (fresh.version !== snapshot.version) return 'changed';
        const unchanged = snapshot.version === undefined ? {} : { version: snapshot.version };
        const r = await col.updateOne({ ...due, ...unchanged }, outboxUpdate({ $set: { [signal.dueField]: null } }, event ? [event] : []));
        return event !== null && r.matchedCount === 1 ? 'written' : 'disarmed';
      });
      if (outcome === 'changed') continue;
      if (outcome === 'written') relay.kick(signal.collection, id);
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
