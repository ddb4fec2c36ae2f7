// Secret rotation with overlap: a rotated-out secret keeps signing beside the new
// one until its expiry, so receivers can switch at their own pace. At most
// MAX_PREVIOUS_SECRETS live at once (the one retired longest ago goes first); an
// expired one stops signing at once (checked when signing) and leaves storage at
// the webhook's next write.
import type { PreviousSecret, WebhookRecord } from '../data/webhook-entity.ts';

export const MAX_PREVIOUS_SECRETS = 3;

const HOUR_MS = 3_600_000;

/** The previous secrets that still sign at `now`, the most recently retired first. */
export function liveSecrets(previous: readonly PreviousSecret[] | null | undefined, now: Date): PreviousSecret[] {
  return (previous ?? []).filter((s) => s.expires_at.getTime() > now.getTime());
}

/** The previous secrets once `currentSealed` is retired at `now` for `hours`: expired ones dropped, at most MAX_PREVIOUS_SECRETS kept. */
export function retire(
  currentSealed: string,
  previous: readonly PreviousSecret[] | null | undefined,
  hours: number,
  now: Date,
): PreviousSecret[] {
  const retired = { sealed: currentSealed, expires_at: new Date(now.getTime() + hours * HOUR_MS) };
  return liveSecrets([retired, ...(previous ?? [])], now).slice(0, MAX_PREVIOUS_SECRETS);
}

/** The latest expiry among the previous secrets live at `now`, or null. */
export function previousExpiresAt(webhook: Pick<WebhookRecord, 'previous_secrets'>, now: Date): Date | null {
  const live = liveSecrets(webhook.previous_secrets, now);
  return live.length === 0 ? null : new Date(Math.max(...live.map((s) => s.expires_at.getTime())));
}
