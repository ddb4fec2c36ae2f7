// Webhook subscriptions (docs/decisions.md §5 "Webhooks"): https URLs that resolve to public
// addresses and answer a signed ping, unique per team, at most 25 a team; the
// secret is shown once and kept sealed.
import { EVENT_TYPES } from '@lpm/shared/events';
import { badRequest, invalidField } from '@lpm/shared/errors';
import type { Identity } from '@lpm/shared/identity';
import { newId } from '@lpm/shared/ids';
import type { Logger } from '@lpm/shared/logger';
import { exact } from '@lpm/shared/http/schemas';
import { iso } from '@lpm/shared/time';
import type { DeliveriesRepository } from '../data/deliveries-repository.ts';
import type { WebhookRecord } from '../data/webhook-entity.ts';
import type { CountersRepository, WebhookCounters } from '../data/counters-repository.ts';
import type { WebhooksRepository } from '../data/webhooks-repository.ts';
import {
  DEFAULT_PREVIOUS_EXPIRES_IN_HOURS,
  type CreateWebhookBody,
  type RotateSecretBody,
  type UpdateWebhookBody,
  type WebhookCreated,
  type WebhookDeleted,
  type WebhookListItem,
  type WebhookSecretRotated,
} from '../contract/webhook-schemas.ts';
import type { SendResult } from '../upstream/webhook-sender.ts';
import { payloadBody } from './payload.ts';
import type { SecretBox } from './secret-box.ts';
import { liveSecrets, previousExpiresAt, retire } from './secret-rotation.ts';
import { shownUrl } from './shown-url.ts';
import { generateSecret, signatureHeaders, signingKeys } from './signing.ts';
import { urlAlreadyRegistered, urlNotReachable, webhookLimitReached } from '../contract/webhook-errors.ts';

export const MAX_WEBHOOKS_PER_TEAM = 25;
export const ALL_EVENTS = '*';

export interface WebhooksDeps {
  webhooks: WebhooksRepository;
  counters: CountersRepository;
  deliveries: DeliveriesRepository;
  guard: { check(url: string): Promise<{ url: URL }> };
  sender: { send(url: string, body: string, headers: Record<string, string>): Promise<SendResult> };
  box: SecretBox;
  logger: Logger;
}

type Who = Pick<Identity, 'teamId' | 'userId'>;

function checkEvents(events: string[]): string[] {
  const known = (e: string) => e === ALL_EVENTS || (EVENT_TYPES as readonly string[]).includes(e);
  if (events.length === 0 || !events.every(known)) throw invalidField('events', 'Invalid events');
  return [...new Set(events)];
}

export interface WebhookStats {
  last_triggered_at: string | null;
  success_rate: number;
  total_deliveries: number;
  failed_deliveries: number;
  test_deliveries: number;
  test_failed_deliveries: number;
}

export class Webhooks {
  private readonly deps: WebhooksDeps;

  constructor(deps: WebhooksDeps) {
    this.deps = deps;
  }

  load(teamId: string, id: string): Promise<WebhookRecord> {
    return this.deps.webhooks.get(teamId, id);
  }

  /** A URL for this team: https to a public address and an allowed port (400), not yet registered (409), answering a signed ping (422). */
  private async acceptUrl(
    who: Who,
    raw: string,
    webhookId: string,
    secret: string,
  ): Promise<{ url: string; url_key: string }> {
    const { url } = await this.deps.guard.check(raw);
    if (await this.deps.webhooks.urlTaken(who.teamId, url.href, webhookId)) throw urlAlreadyRegistered();
    await this.ping(who, webhookId, url.href, secret);
    return { url: raw, url_key: url.href };
  }

  private async ping(who: Who, webhookId: string, url: string, secret: string): Promise<void> {
    const event = {
      id: newId('evt'),
      type: 'ping',
      api_version: 'v1',
      created_at: new Date().toISOString(),
      data: { object: { webhook_id: webhookId }, previous_attributes: null },
      team_id: who.teamId,
    };
    const body = payloadBody(event, webhookId);
    const result = await this.deps.sender.send(url, body, signatureHeaders(signingKeys(secret), event.id, body));
    if (!result.ok) {
      // Why, for the operator only (the 422 says no more than "not reachable").
      this.deps.logger.debug(
        {
          team_id: who.teamId,
          webhook_id: webhookId,
          url: shownUrl(url),
          status_code: result.statusCode,
          error_class: result.errorClass,
        },
        'webhook ping failed',
      );
      throw urlNotReachable();
    }
  }

  async create(who: Who, body: CreateWebhookBody) {
    const events = checkEvents(body.events);
    const id = newId('wh');
    const secret = generateSecret();
    await this.refuseOverLimit(who.teamId);
    const { url, url_key } = await this.acceptUrl(who, body.url, id, secret);
    const now = new Date();
    const record: WebhookRecord = {
      _id: id,
      team_id: who.teamId,
      url,
      url_key,
      description: body.description ?? null,
      events,
      active: true,
      secret_sealed: this.deps.box.seal(secret),
      active_since: now,
      alert_pending: false,
      rate_limit: body.rate_limit ?? null,
      created_at: now,
      updated_at: now,
    };
    // The limit is checked again with the insert (the ping ran apart from it: it may take seconds).
    await this.deps.webhooks.insertWithin(record, MAX_WEBHOOKS_PER_TEAM);
    const shown = {
      id,
      url,
      events,
      description: record.description,
      active: true,
      rate_limit: record.rate_limit ?? null,
      secret,
    };
    return exact<WebhookCreated>()({ ...shown, created_at: iso(now), updated_at: iso(now) });
  }

  private async refuseOverLimit(teamId: string) {
    if ((await this.deps.webhooks.count(teamId)) >= MAX_WEBHOOKS_PER_TEAM)
      throw webhookLimitReached(MAX_WEBHOOKS_PER_TEAM);
  }

  async list(who: Who): Promise<WebhookListItem[]> {
    return this.withStats(who.teamId, await this.deps.webhooks.listForTeam(who.teamId));
  }

  async get(who: Who, id: string): Promise<WebhookListItem> {
    const [one] = await this.withStats(who.teamId, [await this.load(who.teamId, id)]);
    return one;
  }

  private async withStats(teamId: string, rows: WebhookRecord[]): Promise<WebhookListItem[]> {
    const counters = await this.deps.counters.ofTeam(teamId, rows);
    const now = new Date();
    return rows.map((r) =>
      exact<WebhookListItem>()({ ...this.shape(r), ...rotationOf(r, now), ...stats(counters.get(r._id)!) }),
    );
  }

  /**
   * A new secret, shown only in this answer. The one it replaces keeps signing beside
   * it for `previous_expires_in_hours` (secret-rotation.ts), computed from the record
   * read under the webhook's lock, so rotations at once each retire the secret before them.
   */
  async rotateSecret(who: Who, id: string, body: RotateSecretBody): Promise<WebhookSecretRotated> {
    const hours = body.previous_expires_in_hours ?? DEFAULT_PREVIOUS_EXPIRES_IN_HOURS;
    const secret = generateSecret();
    const sealed = this.deps.box.seal(secret);
    const now = new Date();
    let expiresAt: Date | null = null;
    await this.deps.webhooks.update(who.teamId, id, (fresh) => {
      const previous = retire(fresh.secret_sealed, fresh.previous_secrets, hours, now);
      expiresAt = previousExpiresAt({ previous_secrets: previous }, now);
      return { secret_sealed: sealed, previous_secrets: previous, secret_rotated_at: now, updated_at: now };
    });
    return exact<WebhookSecretRotated>()({
      id,
      secret,
      secret_rotated_at: iso(now),
      previous_secret_expires_at: iso(expiresAt),
    });
  }

  async update(who: Who, id: string, body: UpdateWebhookBody) {
    if (Object.keys(body).length === 0) throw badRequest('No fields to update');
    const current = await this.load(who.teamId, id);
    const set: Partial<WebhookRecord> = {};
    const sent: Record<string, unknown> = {};
    if (body.events !== undefined) sent.events = set.events = checkEvents(body.events);
    if (body.description !== undefined) sent.description = set.description = body.description;
    if (body.rate_limit !== undefined) sent.rate_limit = set.rate_limit = body.rate_limit;
    if (body.url !== undefined) {
      const accepted = await this.acceptUrl(who, body.url, id, this.deps.box.open(current.secret_sealed));
      Object.assign(set, accepted);
      sent.url = accepted.url;
    }
    const now = new Date();
    if (body.active !== undefined) sent.active = set.active = body.active;
    set.updated_at = now;
    // With a fresh read under the webhook's lock: the ping above may have taken seconds.
    await this.deps.webhooks.update(who.teamId, id, (fresh) => ({
      ...set,
      // Re-activation starts the count of consecutive failures afresh.
      ...(body.active === true && !fresh.active ? { active_since: now, deactivated_reason: null } : {}),
      // Previous secrets that expired leave storage with any write.
      ...(fresh.previous_secrets?.length ? { previous_secrets: liveSecrets(fresh.previous_secrets, now) } : {}),
    }));
    return { id, ...sent, updated_at: iso(now) };
  }

  async remove(who: Who, id: string) {
    await this.load(who.teamId, id);
    await this.deps.webhooks.remove(who.teamId, id);
    return exact<WebhookDeleted>()({ id, deleted: true });
  }

  private shape(r: WebhookRecord) {
    const { url, events, description, active } = r;
    return {
      id: r._id,
      url,
      events,
      description,
      active,
      rate_limit: r.rate_limit ?? null,
      created_at: iso(r.created_at),
      updated_at: iso(r.updated_at),
    };
  }
}

/** The state of a webhook's secret as its read shape shows it: never a secret. */
function rotationOf(r: Pick<WebhookRecord, 'secret_rotated_at' | 'previous_secrets'>, now: Date) {
  return { secret_rotated_at: iso(r.secret_rotated_at), previous_secret_expires_at: iso(previousExpiresAt(r, now)) };
}

/** Counters over delivery attempts (the signed ping is not one), those of test sends apart. */
function stats(c: WebhookCounters): WebhookStats {
  const { total_deliveries: total, failed_deliveries: failed } = c;
  return {
    last_triggered_at: iso(c.last_triggered_at),
    success_rate: total === 0 ? 100 : Math.round(((total - failed) / total) * 1000) / 10,
    total_deliveries: total,
    failed_deliveries: failed,
    test_deliveries: c.test_deliveries,
    test_failed_deliveries: c.test_failed_deliveries,
  };
}
