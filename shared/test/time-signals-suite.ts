// Replicas of TimeSignals on a scratch database of cases with due fields, for the
// files of time-signals*.test.ts. Bindings are exported live: the suite sets them.
import type { Db } from 'mongodb';
import { newEvent, type DomainEvent, type EventType } from '../src/events.ts';
import { TimeSignals, signalSlots, type SignalDefinition } from '../src/jobs/time-signals.ts';
import { captureLogger } from '@lpm/test-kit/wait';
import { scratchDatabase } from '@lpm/test-kit/scratch-database';

export interface CaseDoc {
  _id: string;
  team_id: string;
  sla_warning_at: Date | null;
  sla_overdue_at: Date | null;
  outbox?: DomainEvent[];
}

export const HOUR = 3_600_000;

export let db: Db;
export let started: TimeSignals[] = [];

export function signal(
  type: EventType,
  collection: string,
  dueField: keyof CaseDoc,
  event?: SignalDefinition<CaseDoc>['event'],
): SignalDefinition<CaseDoc> {
  return {
    type,
    collection,
    dueField,
    event: event ?? (async (r, now) => newEvent(type, r.team_id, { id: r._id, at: now.toISOString() })),
  };
}

/** One "replica": its own TimeSignals, a relay that records kicks, a logger that records lines. */
export function replica(collection: string, opts: { signals?: SignalDefinition<CaseDoc>[]; batchSize?: number } = {}) {
  const kicks: string[] = [];
  const logger = captureLogger();
  const signals = new TimeSignals({
    db,
    intervalMs: 200,
    signals: opts.signals ?? [
      signal('case.sla_warning', collection, 'sla_warning_at'),
      signal('case.sla_overdue', collection, 'sla_overdue_at'),
    ],
    relay: { kick: (col, id) => void kicks.push(`${col}/${id}`) },
    logger,
    name: `test-${collection}`,
    batchSize: opts.batchSize,
  });
  return { signals, kicks, logger };
}

export async function start(...replicas: { signals: TimeSignals }[]): Promise<void> {
  for (const r of replicas) started.push(r.signals);
  await Promise.all(replicas.map((r) => r.signals.start()));
}

/** Due fields with their slot markers, as the record store writes them. */
export const armed = <F extends Record<string, Date | null>>(fields: F, now = new Date()) => ({
  ...fields,
  ...signalSlots(fields, now),
});

export type DueFields = Pick<CaseDoc, 'sla_warning_at' | 'sla_overdue_at'>;

export async function insertCases(
  collection: string,
  n: number,
  fields: (i: number) => Partial<DueFields>,
  opts: { slots?: boolean } = {},
): Promise<void> {
  await db.collection<{ _id: string }>(collection).insertMany(
    Array.from({ length: n }, (_, i) => {
      const due: DueFields = { sla_warning_at: null, sla_overdue_at: null, ...fields(i) };
      return { _id: `case_${i}`, team_id: 'team_1', ...due, ...(opts.slots === false ? {} : signalSlots(due)) };
    }),
  );
}

/** Events in each record's outbox, as `type` lists by record id. */
export async function outboxes(collection: string): Promise<Record<string, string[]>> {
  const docs = await db.collection<CaseDoc>(collection).find().toArray();
  return Object.fromEntries(docs.map((d) => [d._id, (d.outbox ?? []).map((e) => e.type)]));
}

/** A scratch database `name` for the file, and every replica started stopped after each test. */
export function timeSignalsSuite(name: string): void {
  scratchDatabase(name, (opened) => (db = opened));
  afterEach(async () => {
    await Promise.all(started.map((s) => s.stop()));
    started = [];
  });
}
