// How many deliveries of a webhook were created in each minute: what the delivery
// log's page needs to skip whole minutes and give its total without counting rows
// (FerretDB 1.24 counts and sorts in Go every row its equality filter matches, as
// dear as inserting them: docs/ferretdb.md). Each delivery carries two equality
// markers, `<webhook>:<minute>` and `<webhook>:<hour>` of its created_at, written with
// its insert. Nothing else is written on the send path: a delivery is counted by the
// counter fold (counters-repository.ts) from the tally of its first attempt (or of
// its skip), which the fold reads anyway. The fold keeps a webhook's minutes in its
// counters document and moves those of past hours into one document per webhook and
// hour here, so the counters document stays small.
//
// A move is merged once: it is named by the counters document's revision it was read
// from, and an hour document keeps the names of the last moves it took, so a fold that
// died between the move and its counters update repeats it harmlessly. Retention
// recounts the hours it purged, from their markers.
import { bucketOf, HOUR_MS, ownedBy } from '@lpm/shared/store/markers';
import { SWEEP } from '@lpm/shared/store/time-budgets';
import { WebhookData } from './collections.ts';

export const LOG_MINUTE_MS = 60_000;
/** The names of the last moves an hour document took (a repeated move is one of the last). */
const MERGES_KEPT = 20;

/** Deliveries per minute (minutes counted from the epoch). */
export type MinuteCounts = Map<number, number>;

export const minuteOf = (at: Date | number): number => bucketOf(at, LOG_MINUTE_MS);
export const hourOfMinute = (minute: number): number => Math.floor((minute * LOG_MINUTE_MS) / HOUR_MS);

/** The markers a delivery is stored with. */
export function logMarkers(webhookId: string, createdAt: Date): { log_minute: string; log_hour: string } {
  return {
    log_minute: `${webhookId}:${minuteOf(createdAt)}`,
    log_hour: `${webhookId}:${bucketOf(createdAt, HOUR_MS)}`,
  };
}

export const minuteMarker = (webhookId: string, minute: number): string => `${webhookId}:${minute}`;
const hourMarker = (webhookId: string, hour: number): string => `${webhookId}:${hour}`;

/** Minute counts as stored: one JSON string (FerretDB converts each nested value it reads; one string is one value). */
export const encodeMinutes = (m: MinuteCounts): string => JSON.stringify([...m]);

export function decodeMinutes(stored: string | null | undefined): MinuteCounts {
  return new Map(stored ? (JSON.parse(stored) as [number, number][]) : []);
}

/** Counts one delivery created `at` in its minute. */
export function countAt(into: MinuteCounts, at: Date): MinuteCounts {
  const minute = minuteOf(at);
  return into.set(minute, (into.get(minute) ?? 0) + 1);
}

export function addMinutes(into: MinuteCounts, from: MinuteCounts): MinuteCounts {
  for (const [minute, n] of from) into.set(minute, (into.get(minute) ?? 0) + n);
  return into;
}

/** Splits minute counts into those of hours before `hour` and the rest. */
export function splitBeforeHour(m: MinuteCounts, hour: number): { before: MinuteCounts; rest: MinuteCounts } {
  const before: MinuteCounts = new Map();
  const rest: MinuteCounts = new Map();
  for (const [minute, n] of m) (hourOfMinute(minute) < hour ? before : rest).set(minute, n);
  return { before, rest };
}

/** Minutes of a webhook to add to its hour documents once, under the name `id`. */
export interface LogMove {
  id: string;
  webhookId: string;
  minutes: MinuteCounts;
}

export class DeliveryLogCounts extends WebhookData {
  /**
   * A webhook's minute counts: its hour documents' and those its counters document
   * still holds; null while deliveries stored before the markers are not counted yet
   * (or no fold counted any of its deliveries).
   */
  async minutesOf(webhookId: string): Promise<MinuteCounts | null> {
    const counters = await this.collections.counters.findOne(
      { _id: webhookId },
      { projection: { log_minutes: 1, log_ready: 1 } },
    );
    if (!counters?.log_ready) return null;
    const minutes = decodeMinutes(counters.log_minutes);
    for (const h of await this.collections.logHours.find({ webhook_id: webhookId }).toArray())
      addMinutes(minutes, decodeMinutes(h.minutes));
    return minutes;
  }

  /** Adds each move to its webhook's hour documents, unless an hour document took it already. */
  async move(moves: LogMove[]): Promise<void> {
    const parts = new Map<string, { webhookId: string; hour: number; id: string; minutes: MinuteCounts }>();
    for (const move of moves) {
      for (const [minute, n] of move.minutes) {
        const hour = hourOfMinute(minute);
        const key = `${hourMarker(move.webhookId, hour)}|${move.id}`;
        const part = parts.get(key) ?? {
          webhookId: move.webhookId,
          hour,
          id: move.id,
          minutes: new Map<number, number>(),
        };
        part.minutes.set(minute, n);
        parts.set(key, part);
      }
    }
    if (parts.size === 0) return;
    const ids = [...new Set([...parts.values()].map((p) => hourMarker(p.webhookId, p.hour)))];
    const stored = new Map(
      (await this.collections.logHours.find({ _id: { $in: ids } }).toArray()).map((h) => [h._id, h]),
    );
    for (const part of parts.values()) {
      const _id = hourMarker(part.webhookId, part.hour);
      const current = stored.get(_id);
      if (current?.merged.includes(part.id)) continue;
      const next = {
        webhook_id: part.webhookId,
        hour: part.hour,
        minutes: encodeMinutes(addMinutes(decodeMinutes(current?.minutes), part.minutes)),
        merged: [...(current?.merged ?? []), part.id].slice(-MERGES_KEPT),
      };
      await this.collections.logHours.updateOne({ _id }, { $set: next }, { upsert: true });
      stored.set(_id, { _id, ...next });
    }
  }

  /**
   * Counts the hours of a webhook again from their deliveries' markers (after
   * retention purged some of them, or deliveries stored without a fold): reads their
   * created_at only, and drops an hour left empty. A delivery counts only when its
   * webhook and its team are those of the webhook's counters document; without one
   * (a webhook deleted midway, dropWebhookHistory) no page reads its hours.
   */
  async recount(webhookId: string, hours: Iterable<number>): Promise<void> {
    const counters = await this.collections.counters.findOne({ _id: webhookId }, { projection: { team_id: 1 } });
    if (!counters) return;
    const owned = { ...ownedBy('webhook_id', webhookId), ...ownedBy('team_id', counters.team_id) };
    const { deliveries } = this.collections;
    for (const hour of hours) {
      const _id = hourMarker(webhookId, hour);
      const rows = await deliveries
        .find({ log_hour: _id, ...owned }, { projection: { _id: 0, created_at: 1 }, ...SWEEP })
        .toArray();
      if (rows.length === 0) {
        await this.collections.logHours.deleteOne({ _id });
        continue;
      }
      const minutes: MinuteCounts = new Map();
      for (const r of rows) countAt(minutes, r.created_at);
      await this.collections.logHours.updateOne(
        { _id },
        { $set: { webhook_id: webhookId, hour, minutes: encodeMinutes(minutes), merged: [] } },
        { upsert: true },
      );
    }
  }

  /** The hour documents of hours before `hour`, by webhook (retention's recount). */
  async hoursBefore(hour: number): Promise<Map<string, number[]>> {
    const byWebhook = new Map<string, number[]>();
    for (const h of await this.collections.logHours
      .find({ hour: { $lt: hour } }, { projection: { webhook_id: 1, hour: 1 }, ...SWEEP })
      .toArray()) {
      byWebhook.set(h.webhook_id, [...(byWebhook.get(h.webhook_id) ?? []), h.hour]);
    }
    return byWebhook;
  }

  async dropWebhook(webhookId: string): Promise<void> {
    await this.collections.logHours.deleteMany({ webhook_id: webhookId }, SWEEP);
  }
}
