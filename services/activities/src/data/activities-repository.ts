// Activities in the store: the record store for writes (outbox, lock, version),
// the list queries on the fields derived for sorting (due moment, priority rank,
// "no due date" last), and the counts other services ask for. The list by due date,
// filtered by nothing but type, status and priority, is read by day buckets of the
// due moment (store/list-buckets.ts): a write that moves the due moment moves the
// record to its new day, and a delete recounts the day it leaves.
import type { Db, Filter } from 'mongodb';
import { findPage, sortOrder, type ListQuery, type RecordPage } from '@lpm/shared/http/pagination';
import type { Logger } from '@lpm/shared/logger';
import { ListedRecordStore } from '@lpm/shared/store/listed-record-store';
import { rangeOf, TIMESTAMP_SORTS } from '@lpm/shared/store/list-queries';
import type { Relay } from '@lpm/shared/store/record-store-types';
import { withDocumentLock } from '@lpm/shared/store/lock';
import { isDuplicateKey } from '@lpm/shared/store/duplicate-key';
import { outboxOnInsert } from '@lpm/shared/outbox/fields';
import type { DomainEvent } from '@lpm/shared/events';
import { isId } from '@lpm/shared/ids';
import { bucketOf, purgeByMarker } from '@lpm/shared/store/markers';
import { DAY_MS } from '@lpm/shared/time';
import { activityNotFound } from '../contract/activity-errors.ts';
import type { Priority } from '@lpm/shared/priority';
import type { ActivityRecord, ActivityStatus, ActivityType } from './activity-entity.ts';

export interface ActivityFilter {
  type?: ActivityType;
  status?: ActivityStatus;
  priority?: Priority;
  case_id?: string;
  client_id?: string;
  deal_id?: string;
  assigned_to?: string;
  /** due_date within [from, to], inclusive. */
  from?: string;
  to?: string;
  /** Only open activities whose due moment is before this instant. */
  overdueAt?: Date;
}

const SORT_KEYS: Record<string, (keyof ActivityRecord & string)[]> = {
  // Activities without a due date come last in either direction.
  due_date: ['due_missing', 'due_at'],
  priority: ['priority_rank'],
  ...TIMESTAMP_SORTS,
};

/** Deleted activities' last events wait here for the relay (an outbox collection). */
export const TOMBSTONES = 'activity_tombstones';

export const COUNT_KINDS = { case: 'case_id', client: 'client_id', deal: 'deal_id' } as const;
export type CountKind = keyof typeof COUNT_KINDS;

export class ActivitiesRepository extends ListedRecordStore<ActivityRecord> {
  private readonly db: Db;
  private readonly relay: Relay;

  constructor(db: Db, relay: Relay, logger?: Logger) {
    super({
      db,
      relay,
      collection: 'activities',
      idKind: 'act',
      noun: 'activity',
      notFound: activityNotFound,
      signalFields: ['due_soon_at', 'overdue_at', 'reminder_at'],
      lists: {
        order: { field: 'due_date', keys: SORT_KEYS.due_date },
        dayField: 'due_at',
        counted: ['type', 'status', 'priority'],
        logger,
      },
    });
    this.db = db;
    this.relay = relay;
  }

  async list(teamId: string, f: ActivityFilter, q: ListQuery): Promise<RecordPage<ActivityRecord>> {
    const bucketed = await this.bucketPage(teamId, f, q, 'due_date');
    if (bucketed) return bucketed;
    const filter: Filter<ActivityRecord> = { team_id: teamId };
    for (const k of ['type', 'status', 'priority', 'case_id', 'client_id', 'deal_id', 'assigned_to'] as const)
      if (f[k]) Object.assign(filter, { [k]: f[k] });
    if (f.from || f.to) filter.due_date = rangeOf({ $gte: f.from, $lte: f.to });
    if (f.overdueAt) Object.assign(filter, { open: 1, due_at: { $lt: f.overdueAt } });
    return this.page(filter, q);
  }

  private page(filter: Filter<ActivityRecord>, q: ListQuery): Promise<RecordPage<ActivityRecord>> {
    return findPage(this.collection, filter, q, {
      projection: this.projection(),
      sort: sortOrder(q.sort, 'due_date', SORT_KEYS),
    });
  }

  /** How many activities each id of `kind` has (every id asked for appears, 0 when none). */
  async countBy(teamId: string, kind: CountKind, ids: string[]): Promise<Record<string, number>> {
    const counts = Object.fromEntries(ids.map((id) => [id, 0]));
    if (ids.length === 0) return counts;
    const field = COUNT_KINDS[kind];
    const rows = await this.collection
      .aggregate<{ _id: string; n: number }>([
        { $match: { team_id: teamId, [field]: { $in: ids } } },
        { $group: { _id: `$${field}`, n: { $sum: 1 } } },
      ])
      .toArray();
    for (const r of rows) counts[r._id] = r.n;
    return counts;
  }

  /** Of one record's activities: how many are open (pending, in progress), and how many of those are past their due moment at `now`. */
  async openOf(teamId: string, kind: CountKind, id: string, now: Date): Promise<{ open: number; overdue: number }> {
    const open = { team_id: teamId, [COUNT_KINDS[kind]]: id, open: 1 } as Filter<ActivityRecord>;
    const [openCount, overdue] = await Promise.all([
      this.collection.countDocuments(open),
      this.collection.countDocuments({ ...open, due_at: { $lt: now } }),
    ]);
    return { open: openCount, overdue };
  }

  /** Stores an occurrence a completion owed; false when it is stored already (its occurrence_key, or its id, is taken). */
  async insertOccurrence(record: ActivityRecord, events: DomainEvent[]): Promise<boolean> {
    try {
      await this.insert(record, events);
      return true;
    } catch (e) {
      if (isDuplicateKey(e)) return false;
      throw e;
    }
  }

  /** Up to `limit` completed activities whose next occurrence is still owed (next_pending, an equality the local store's index serves). */
  owedOccurrences(
    limit: number,
  ): Promise<Pick<ActivityRecord, '_id' | 'team_id' | 'completed_by' | 'next_occurrence'>[]> {
    return this.collection
      .find<Pick<ActivityRecord, '_id' | 'team_id' | 'completed_by' | 'next_occurrence'>>(
        { next_pending: 1 } as Filter<ActivityRecord>,
        {
          projection: { _id: 1, team_id: 1, completed_by: 1, next_occurrence: 1 },
          limit,
        },
      )
      .toArray();
  }

  /** The occurrence the completion `id` owed is stored: it owes nothing any more. */
  settled(teamId: string, id: string): Promise<void> {
    return this.update(teamId, id, async (current) => ({
      result: undefined,
      write: current.next_pending ? { set: { next_pending: 0, next_occurrence: null }, events: [] } : undefined,
    }));
  }

  /**
   * Deletes the tombstones deleted before `before` whose events have all gone out
   * (a tombstone only carries them to the relay, and lets a delete retried after a
   * crash find it), day by day by their deleted_day. A delete: replicas running it
   * at once agree.
   */
  async purgeTombstones(before: Date): Promise<number> {
    const { deleted } = await purgeByMarker(this.db, {
      collection: TOMBSTONES,
      timeField: 'deleted_at',
      markerField: 'deleted_day',
      bucketMs: DAY_MS,
      before,
      only: { outbox_pending: { $ne: true } },
    });
    return deleted;
  }

  /**
   * Removes a record under its lock if `check` (given the current record) allows.
   * The record's events not known published yet (unpublishedEvents) and `events` move to a tombstone in
   * `activity_tombstones` (an outbox collection) first, so nothing pending is lost
   * with the record. A delete retried after its first attempt stored the tombstone
   * and failed before the removal finds the tombstone there: that attempt's events
   * are the delete's, and this attempt's `events` are dropped unpublished (a second
   * activity.deleted, with an id of its own, would count the case's activity down twice).
   */
  async remove<T>(
    teamId: string,
    id: string,
    check: (current: ActivityRecord) => Promise<{ result: T; events: DomainEvent[] }>,
  ): Promise<T> {
    if (!isId('act', id)) throw activityNotFound();
    const { result, removed } = await withDocumentLock(this.db, 'activities', id, async () => {
      const current = await this.get(teamId, id);
      const { result, events } = await check(current);
      const unpublished = await this.unpublishedEvents(id);
      const tombstones = this.db.collection<{ _id: string; team_id: string; deleted_at: Date; deleted_day: number }>(
        TOMBSTONES,
      );
      const now = new Date();
      let stored = events;
      try {
        await tombstones.insertOne({
          _id: id,
          team_id: teamId,
          deleted_at: now,
          deleted_day: bucketOf(now, DAY_MS),
          ...outboxOnInsert([...unpublished, ...events]),
        });
      } catch (e) {
        if (!isDuplicateKey(e)) throw e;
        stored = [];
      }
      await this.collection.deleteOne({ _id: id, team_id: teamId });
      // The moved events the drain leaves to their publish from memory under the activity's id;
      // an earlier attempt's tombstone is drained as it stands.
      this.relay.kick(TOMBSTONES, id, stored);
      return { result, removed: current };
    });
    // After the activity's lock is given back, as the record store recounts.
    await this.lists.recount(removed);
    return result;
  }
}
