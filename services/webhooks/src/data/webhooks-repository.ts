// Webhook subscriptions in the store. Writes that must not interleave hold a
// document lock (store/lock.ts): a team's lock while its limit is checked and a
// webhook inserted (with its counters, CountersRepository), a webhook's lock for
// updates and automatic deactivation. Deleting a webhook deletes its history,
// and leaves a tombstone so retention deletes it again (purgeDeleted).
//
// The fan-out asks for a team's subscribed webhooks at every event. With team
// versions in Redis (team-versions.ts), this replica keeps a copy of each team's
// webhooks (active or not) and reads the store again only when the team's version is no
// longer the one the copy was read under: every write of a webhook sets a new
// version after it is stored, so an event created after a change's answer sees
// the change on every replica. While Redis cannot tell, the copies are dropped and
// an event is served by a read of the store that began after it was created (with
// room for the clocks), which any change answered before the event was created
// preceded: a backlog worked off then costs a read per team, not per event. A change
// whose version Redis missed is seen once the copies are COPY_MAX_AGE_MS old.
import type { Db } from 'mongodb';
import { isId } from '@lpm/shared/ids';
import { isDuplicateKey } from '@lpm/shared/store/duplicate-key';
import { withDocumentLock } from '@lpm/shared/store/lock';
import { urlAlreadyRegistered, webhookLimitReached, webhookNotFound } from '../contract/webhook-errors.ts';
import { WebhookData } from './collections.ts';
import { dropWebhookHistory, type Purged } from './deliveries-repository.ts';
import type { TeamVersions } from './team-versions.ts';
import type { DeactivationReason, WebhookRecord } from './webhook-entity.ts';

/** How long a copy of a team's webhooks is used at most, whatever its version says. */
const COPY_MAX_AGE_MS = 10_000;
/** Teams whose copies are kept; the oldest goes first. */
const COPIES_KEPT = 10_000;
/** How far apart the writers' and this replica's clocks may be. */
const CLOCKS_APART_MS = 5_000;

/** A team's webhooks as read under `version`, at `at`. */
interface TeamCopy {
  version: string;
  at: number;
  webhooks: Promise<WebhookRecord[]>;
}

export interface WebhooksRepositoryOptions {
  /** Without them, copies are never kept: an event reads the store, unless the last read began well after it was created. */
  versions?: TeamVersions;
}

export class WebhooksRepository extends WebhookData {
  private readonly versions: TeamVersions | undefined;
  /** By team, in the order they were read (the oldest first). */
  private readonly copies = new Map<string, TeamCopy>();
  /** By team, the last read made while Redis could not tell (`version` unused), kept the same way. */
  private readonly unversioned = new Map<string, TeamCopy>();

  constructor(db: Db, opts: WebhooksRepositoryOptions = {}) {
    super(db);
    this.versions = opts.versions;
  }

  /** The team's webhook, or 404 `Webhook not found`. */
  async get(teamId: string, id: string): Promise<WebhookRecord> {
    if (!isId('wh', id)) throw webhookNotFound();
    const found = await this.collections.webhooks.findOne({ _id: id, team_id: teamId });
    if (!found) throw webhookNotFound();
    return found;
  }

  byId(id: string): Promise<WebhookRecord | null> {
    return this.collections.webhooks.findOne({ _id: id });
  }

  async urlTaken(teamId: string, urlKey: string, exceptId: string): Promise<boolean> {
    return (
      (await this.collections.webhooks.findOne(
        { team_id: teamId, url_key: urlKey, _id: { $ne: exceptId } },
        { projection: { _id: 1 } },
      )) !== null
    );
  }

  count(teamId: string): Promise<number> {
    return this.collections.webhooks.countDocuments({ team_id: teamId });
  }

  /** Inserts the webhook under its team's lock unless the team has `limit` already (422) or the URL is taken (409). */
  async insertWithin(record: WebhookRecord, limit: number): Promise<void> {
    await withDocumentLock(this.db, 'webhook_teams', record.team_id, async () => {
      if ((await this.count(record.team_id)) >= limit) throw webhookLimitReached(limit);
      try {
        await this.collections.webhooks.insertOne(record);
      } catch (e) {
        throw isDuplicateKey(e) ? urlAlreadyRegistered() : e;
      }
      // A new webhook has no delivery stored before the log's markers: its log is counted from the start.
      const counters = {
        total_deliveries: 0,
        failed_deliveries: 0,
        last_triggered_at: null,
        last_counted: [],
        log_minutes: '[]',
        log_rev: 0,
        log_ready: true,
      };
      await this.collections.counters.insertOne({ _id: record._id, team_id: record.team_id, ...counters });
    });
    await this.changed(record.team_id);
  }

  listForTeam(teamId: string): Promise<WebhookRecord[]> {
    return this.collections.webhooks.find({ team_id: teamId }).sort({ created_at: 1, _id: 1 }).toArray();
  }

  /** Sets what `change` returns for the fresh record, under the lock automatic deactivation takes. */
  async update(teamId: string, id: string, change: (fresh: WebhookRecord) => Partial<WebhookRecord>): Promise<void> {
    await withDocumentLock(this.db, 'webhooks', id, async () => {
      const set = change(await this.get(teamId, id));
      try {
        await this.collections.webhooks.updateOne({ _id: id, team_id: teamId }, { $set: set });
      } catch (e) {
        throw isDuplicateKey(e) ? urlAlreadyRegistered() : e;
      }
    });
    await this.changed(teamId);
  }

  /**
   * Deletes the webhook, then its deliveries, attempts and attempt claims; its
   * tombstone first, so what a crash in between leaves goes with retention.
   */
  async remove(teamId: string, id: string): Promise<void> {
    try {
      await this.collections.tombstones.insertOne({ _id: id, team_id: teamId, deleted_at: new Date() });
    } catch (e) {
      if (!isDuplicateKey(e)) throw e;
    }
    const res = await this.collections.webhooks.deleteOne({ _id: id, team_id: teamId });
    if (res.deletedCount !== 1) return;
    await this.changed(teamId);
    await dropWebhookHistory(this.db, id);
  }

  /**
   * Drops again the history of every deleted webhook (a crash between its delete and
   * its history's, an attempt recorded as it was deleted), by its id; tombstones
   * written before `keptAfter` go afterwards. The tombstones are few: deletes of the
   * last hours. A tombstone whose webhook still exists (its delete named another
   * team's webhook, or is under way) drops nothing.
   */
  async purgeDeleted(keptAfter: Date): Promise<Purged> {
    const purged: Purged = { deliveries: 0, attempts: 0 };
    for (const t of await this.collections.tombstones.find({}).toArray()) {
      if (!(await this.byId(t._id))) {
        const dropped = await dropWebhookHistory(this.db, t._id);
        purged.deliveries += dropped.deliveries;
        purged.attempts += dropped.attempts;
      }
      if (t.deleted_at < keptAfter) await this.collections.tombstones.deleteOne({ _id: t._id });
    }
    return purged;
  }

  /** Every webhook's id (retention's search for orphans: the history of any other webhook is one). */
  async allIds(): Promise<string[]> {
    return (await this.collections.webhooks.find({}, { projection: { _id: 1 } }).toArray()).map((r) => r._id);
  }

  /**
   * The team's active webhooks subscribed to `type` (or to every event, `all`): whole,
   * so their first attempts read them no more. Shared records: not to be changed.
   */
  async subscribed(teamId: string, type: string, all: string, createdAt?: string): Promise<WebhookRecord[]> {
    return (await this.subscribedAll(teamId, type, all, createdAt)).filter((w) => w.active);
  }

  /**
   * As `subscribed`, with the inactive ones too (the fan-out keeps their deliveries,
   * skipped), for an event created at `createdAt` (ISO; unknown: now).
   */
  async subscribedAll(teamId: string, type: string, all: string, createdAt?: string): Promise<WebhookRecord[]> {
    const webhooks = await this.teamOf(teamId, createdAt ? Date.parse(createdAt) : Date.now());
    return webhooks.filter((w) => w.events.includes(type) || w.events.includes(all));
  }

  /**
   * The team's webhooks, active or not: this replica's copy while the team's version is the
   * one it was read under and it is young, else read again. Callers that find the
   * same version while a read is under way share it: it began after that version
   * was set, so after the change that set it was stored. While Redis cannot tell, the
   * team's last read serves an event it began well after (`createdAt`).
   */
  private async teamOf(teamId: string, createdAt: number): Promise<WebhookRecord[]> {
    const version = this.versions ? await this.versions.current(teamId) : null;
    const now = Date.now();
    if (version === null) {
      // Changes made while Redis cannot tell may be missing from every copy.
      this.copies.clear();
      const read = this.unversioned.get(teamId);
      if (read && read.at >= createdAt + CLOCKS_APART_MS) return read.webhooks;
      return this.readInto(this.unversioned, teamId, '', now);
    }
    this.unversioned.clear();
    const copy = this.copies.get(teamId);
    if (copy && copy.version === version && now - copy.at < COPY_MAX_AGE_MS) return copy.webhooks;
    return this.readInto(this.copies, teamId, version, now);
  }

  /** Reads the team's webhooks from the store, kept in `kept` as read at `at` (dropped again if the read fails). */
  private readInto(kept: Map<string, TeamCopy>, teamId: string, version: string, at: number): Promise<WebhookRecord[]> {
    const webhooks = this.collections.webhooks.find({ team_id: teamId }).toArray();
    kept.delete(teamId); // set again last: the map stays in the order of reads
    kept.set(teamId, { version, at, webhooks });
    if (kept.size > COPIES_KEPT) kept.delete(kept.keys().next().value!);
    webhooks.catch(() => {
      if (kept.get(teamId)?.webhooks === webhooks) kept.delete(teamId);
    });
    return webhooks;
  }

  /** After a change of the team's webhooks is stored: a new version, so every replica reads them again. */
  private async changed(teamId: string): Promise<void> {
    this.copies.delete(teamId);
    this.unversioned.delete(teamId);
    await this.versions?.changed(teamId);
  }

  /** Makes the webhook inactive and owing an alert, unless it was re-activated or deactivated meanwhile; true when this call did it. */
  async deactivate(
    webhook: Pick<WebhookRecord, '_id' | 'team_id' | 'active_since'>,
    reason: DeactivationReason,
  ): Promise<boolean> {
    const done = await withDocumentLock(this.db, 'webhooks', webhook._id, async () => {
      const res = await this.collections.webhooks.updateOne(
        { _id: webhook._id, active: true, active_since: webhook.active_since },
        { $set: { active: false, alert_pending: true, deactivated_reason: reason, updated_at: new Date() } },
      );
      return res.modifiedCount === 1;
    });
    if (done) await this.changed(webhook.team_id);
    return done;
  }

  owingAlert(id: string): Promise<WebhookRecord | null> {
    return this.collections.webhooks.findOne({ _id: id, alert_pending: true });
  }

  async alertSent(id: string): Promise<void> {
    await this.collections.webhooks.updateOne({ _id: id }, { $set: { alert_pending: false } });
  }

  async owingAlerts(limit: number): Promise<string[]> {
    return (
      await this.collections.webhooks
        .find({ alert_pending: true }, { projection: { _id: 1 } })
        .limit(limit)
        .toArray()
    ).map((r) => r._id);
  }
}
