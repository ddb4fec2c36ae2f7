// The webhooks service's own settings (README, "Configuration"), validated at start beside
// the platform's (readServiceConfig).
import { bool, durationList, int, mailSettings, readConfig, redisSettings, retention } from '@lpm/shared/config';

/** Ports, or ranges of them, that webhook URLs may name: `from-to` or one port, comma-separated. */
export type PortRange = readonly [from: number, to: number];

/** 443 and the unprivileged ports: a webhook URL cannot aim at SSH, SMTP, DNS... of a public host. */
export const DEFAULT_ALLOWED_PORTS = '443,1024-65535';

/** `443,1024-65535` -> [[443, 443], [1024, 65535]]; throws on anything else. */
export function parsePortRanges(text: string): PortRange[] {
  return text.split(',').map((part) => {
    const m = /^\s*(\d{1,5})(?:\s*-\s*(\d{1,5}))?\s*$/.exec(part);
    const from = m ? Number(m[1]) : NaN;
    const to = m?.[2] === undefined ? from : Number(m[2]);
    if (!(from >= 1 && to <= 65535 && from <= to)) {
      throw new Error(
        `must be ports from 1 to 65535 or ranges of them (low-high), comma-separated, e.g. ${DEFAULT_ALLOWED_PORTS}: "${part.trim()}" is not`,
      );
    }
    return [from, to] as const;
  });
}

const portRanges =
  (fallback: string) =>
  (raw: string | undefined): PortRange[] =>
    parsePortRanges(raw ?? fallback);

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
      allowedPorts: ['WEBHOOK_ALLOWED_PORTS', portRanges(DEFAULT_ALLOWED_PORTS)],
      secretKey: ['WEBHOOK_SECRET_KEY', encryptionKey],
      concurrency: ['WEBHOOK_CONCURRENCY', int(128, 1, 1000)],
      // A day at least: a delivery still being retried is changed at least once a day.
      historyRetentionMs: ['WEBHOOK_HISTORY_RETENTION', retention('30d')],
      ...mailSettings,
      ...redisSettings,
    },
    env,
  );
}

export type WebhooksConfig = ReturnType<typeof readWebhooksConfig>;
