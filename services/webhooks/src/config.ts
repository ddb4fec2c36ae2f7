// The webhooks service's own settings (operations.md), validated at start beside
// the platform's (readServiceConfig).
import { bool, durationList, int, mailSettings, readConfig } from '@lpm/shared/config';

/** A 32-byte AES key, base64 or hex: webhook secrets are stored encrypted with it. */
const encryptionKey = (raw: string | undefined): Buffer => {
  if (!raw) throw new Error('is required (32 bytes as base64 or hex; `openssl rand -base64 32`)');
  const key = /^[0-9a-f]{64}$/i.test(raw) ? Buffer.from(raw, 'hex') : Buffer.from(raw, 'base64');
  if (key.length !== 32) throw new Error('must be 32 bytes as base64 or hex');
  return key;
};

export function readWebhooksConfig(env: NodeJS.ProcessEnv = process.env) {
  return readConfig(
    {
      retryDelaysMs: ['WEBHOOK_RETRY_DELAYS', durationList('5m,30m,2h,12h,24h')],
      timeoutMs: ['WEBHOOK_TIMEOUT_MS', int(5000, 100, 60_000)],
      allowPrivateUrls: ['WEBHOOK_ALLOW_PRIVATE_URLS', bool(false)],
      secretKey: ['WEBHOOK_SECRET_KEY', encryptionKey],
      concurrency: ['WEBHOOK_CONCURRENCY', int(128, 1, 1000)],
      ...mailSettings,
    },
    env,
  );
}

export type WebhooksConfig = ReturnType<typeof readWebhooksConfig>;
