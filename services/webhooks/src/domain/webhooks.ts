// Webhook subscriptions (decisions §5 "Webhooks"): https URLs that resolve to public
// addresses and answer a signed ping, unique per team, at most 25 a team; the
// secret is shown once and kept sealed.
import type { Db } from 'mongodb';
import { EVENT_TYPES } from '@lpm/shared/events';
import { badRequest, businessRule, conflict, invalidField, notFound } from '@lpm/shared/errors';
import { newId, isId } from '@lpm/shared/ids';
import { withDocumentLock } from '@lpm/shared/store/lock';
import { isDuplicateKey } from '@lpm/shared/store/duplicate-key';
import type { Identity } from '@lpm/shared/identity';
import { generateSecret, signatureHeaders } from '../delivery/signing.ts';
import type { SendResult } from '../delivery/sender.ts';
import { payloadBody } from './payload.ts';
import type { SecretBox } from './secret-box.ts';
import type { AttemptRecord, WebhookRecord } from '../data/webhook-entity.ts';

export const MAX_WEBHOOKS_PER_TEAM = 25;
export const ALL_EVENTS = '*';

export interface WebhooksDeps {
  db: Db;
  guard: { check(url: string): Promise<{ url: URL }> };
  sender: { send(url: string, body: string, headers: Record<string, string>): Promise<SendResult> };
  box: SecretBox;
}

type Who = Pick<Identity, 'teamId' | 'userId'>;
type Body = Record<string, unknown>;

export const webhookNotFound = () => notFound('Webhook not found');
const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);

function checkEvents(events: unknown): string[] {
  const list = events as string[];
  const known = (e: string) => e === ALL_EVENTS || (EVENT_TYPES as readonly string[]).includes(e);
  if (!Array.isArray(list) || list.length === 0 || !list.every(known)) throw invalidField('events', 'Invalid events');
  return [...new Set(list)];
}

export interface WebhookStats {
  last_triggered_at: string | null;
  success_rate: number;
  total_deliveries: number;
  failed_deliveries: number;
}

export class Webhooks {
  private readonly deps: WebhooksDeps;

  constructor(deps: WebhooksDeps) {
    this.deps = deps;
  }

  private get webhooks() {
    return this.deps.db.collection<WebhookRecord>('webhooks');
  }

  private get attempts() {
    return this.deps.db.collection<AttemptRecord>('attempts');
  }

  async load(teamId: string, id: string): Promise<WebhookRecord> {
    if (!isId('wh', id)) throw webhookNotFound();
    const found = await this.webhooks.findOne({ _id: id, team_id: teamId });
    if (!found) throw webhookNotFound();
    return found;
  }

  /** A URL for this team: https to a public address (400), not yet registered (409), answering a signed ping (422). */
  private async acceptUrl(who: Who, raw: string, webhookId: string, secret: string): Promise<{ url: string; url_key: string }> {
    const { url } = await this.deps.guard.check(raw);
    const taken = await this.webhooks.findOne({ team_id: who.teamId, url_key: url.href, _id: { $ne: webhookId } }, { projection: { _id: 1 } });
    if (taken) throw conflict('URL already registered', 'url_already_registered');
    await this.ping(who, webhookId, url.href, secret);
    return { url: raw, url_key: url.href };
  }

  private async ping(who: Who, webhookId: string, url: string, secret: string): Promise<void> {
    const event = { id: newId('evt'), type: 'ping', api_version: 'v1', created_at: new Date().toISOString(), data: { object: { webhook_id: webhookId }, previous_attributes: null }, team_id: who.teamId };
    const body = payloadBody(event, webhookId);
    const result = await this.deps.sender.send(url, body, signatureHeaders(secret, event.id, body));
    if (!result.ok) {
      throw businessRule('URL not reachable', 'url_not_reachable', { status_code: result.statusCode, error_class: result.errorClass });
    }
  }

  async create(who: Who, body: Body) {
    const events = checkEvents(body.events);
    const id = newId('wh');
    const secret = generateSecret();
    await this.refuseOverLimit(who.teamId);
    const { url, url_key } = await this.acceptUrl(who, body.url as string, id, secret);
    const now = new Date();
    const record: WebhookRecord = {
      _id: id,
      team_id: who.teamId,
      url,
      url_key,
      description: (body.description as string | null | undefined) ?? null,
      events,
      active: true,
      secret_sealed: this.deps.box.seal(secret),
      active_since: now,
      alert_pending: false,
      created_at: now,
      updated_at: now,
    };
    // The limit is checked again under a team lock (the ping ran outside it: it may take seconds).
    await withDocumentLock(this.deps.db, 'webhook_teams', who.teamId, async () => {
      await this.refuseOverLimit(who.teamId);
      try {
        await this.webhooks.insertOne(record);
      } catch (e) {
        if (isDuplicateKey(e)) throw conflict('URL already registered', 'url_already_registered');
        throw e;
      }
    });
    return { id, url, events, description: record.description, active: true, secret, created_at: iso(now), updated_at: iso(now) };
  }

  private async refuseOverLimit(teamId: string) {
    if ((await this.webhooks.countDocuments({ team_id: teamId })) >= MAX_WEBHOOKS_PER_TEAM) {
      throw businessRule('Webhook limit reached', 'webhook_limit_reached', { limit: MAX_WEBHOOKS_PER_TEAM });
    }
  }

  async list(who: Who) {
    const rows = await this.webhooks.find({ team_id: who.teamId }).sort({ created_at: 1, _id: 1 }).toArray();
    return Promise.all(rows.map(async (r) => ({ ...this.shape(r), ...(await this.stats(r._id)) })));
  }

  async update(who: Who, id: string, body: Body) {
    if (Object.keys(body).length === 0) throw badRequest('No fields to update');
    const current = await this.load(who.teamId, id);
    const set: Partial<WebhookRecord> = {};
    const sent: Body = {};
    if (body.events !== undefined) sent.events = set.events = checkEvents(body.events);
    if (body.description !== undefined) sent.description = set.description = body.description as string | null;
    if (body.url !== undefined) {
      const accepted = await this.acceptUrl(who, body.url as string, id, this.deps.box.open(current.secret_sealed));
      Object.assign(set, accepted);
      sent.url = accepted.url;
    }
    const now = new Date();
    if (body.active !== undefined) sent.active = set.active = body.active as boolean;
    set.updated_at = now;
    // Under the lock automatic deactivation takes, and with a fresh read: the ping above may have taken seconds.
    await withDocumentLock(this.deps.db, 'webhooks', id, async () => {
      const fresh = await this.load(who.teamId, id);
      // Re-activation starts the count of consecutive failures afresh.
      if (body.active === true && !fresh.active) set.active_since = now;
      try {
        await this.webhooks.updateOne({ _id: id, team_id: who.teamId }, { $set: set });
      } catch (e) {
        if (isDuplicateKey(e)) throw conflict('URL already registered', 'url_already_registered');
        throw e;
      }
    });
    return { id, ...sent, updated_at: iso(now) };
  }

  async remove(who: Who, id: string) {
    await this.load(who.teamId, id);
    await this.webhooks.deleteOne({ _id: id, team_id: who.teamId });
    return { id, deleted: true };
  }

  /** Counters over delivery attempts (the signed ping is not one). */
  async stats(webhookId: string): Promise<WebhookStats> {
    const [total, failed, last] = await Promise.all([
      this.attempts.countDocuments({ webhook_id: webhookId }),
      this.attempts.countDocuments({ webhook_id: webhookId, ok: false }),
      this.attempts.find({ webhook_id: webhookId }, { projection: { at: 1 } }).sort({ at: -1 }).limit(1).next(),
    ]);
    return {
      last_triggered_at: iso(last?.at),
      success_rate: total === 0 ? 100 : Math.round(((total - failed) / total) * 1000) / 10,
      total_deliveries: total,
      failed_deliveries: failed,
    };
  }

  private shape(r: WebhookRecord) {
    return { id: r._id, url: r.url, events: r.events, description: r.description, active: r.active, created_at: iso(r.created_at), updated_at: iso(r.updated_at) };
  }
}
