// The webhooks service's settings: WEBHOOK_ALLOWED_PORTS, read and checked at start.
import { randomBytes } from 'node:crypto';
import { ConfigError } from '@lpm/shared/config';
import { parsePortRanges, readWebhooksConfig } from '../src/config.ts';

const env = (extra: Record<string, string>) => ({ WEBHOOK_SECRET_KEY: randomBytes(32).toString('hex'), ...extra });

test('when WEBHOOK_ALLOWED_PORTS is unset or empty, then 443 and 1024-65535 are allowed', () => {
  expect(readWebhooksConfig(env({})).allowedPorts).toEqual([
    [443, 443],
    [1024, 65535],
  ]);
  expect(readWebhooksConfig(env({ WEBHOOK_ALLOWED_PORTS: '' })).allowedPorts).toEqual([
    [443, 443],
    [1024, 65535],
  ]);
});

test('when WEBHOOK_ALLOWED_PORTS lists ports and ranges, then those are allowed', () => {
  expect(readWebhooksConfig(env({ WEBHOOK_ALLOWED_PORTS: '80, 443,1024 - 65535' })).allowedPorts).toEqual([
    [80, 80],
    [443, 443],
    [1024, 65535],
  ]);
  expect(parsePortRanges('1-65535')).toEqual([[1, 65535]]);
});

test.each(['0', '65536', '443,', ',443', '1024-80', 'https', '443;8443', '80-', '-80', '1.5', '443,,8443'])(
  'when WEBHOOK_ALLOWED_PORTS is %j, then the service refuses to start, naming the setting',
  (value) => {
    let err: unknown;
    try {
      readWebhooksConfig(env({ WEBHOOK_ALLOWED_PORTS: value }));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toMatch(/WEBHOOK_ALLOWED_PORTS: must be ports from 1 to 65535/);
  },
);

test('when WEBHOOK_HISTORY_RETENTION is unset, then deliveries and attempts are kept 30 days; a duration sets it', () => {
  expect(readWebhooksConfig(env({})).historyRetentionMs).toBe(30 * 86_400_000);
  expect(readWebhooksConfig(env({ WEBHOOK_HISTORY_RETENTION: '7d' })).historyRetentionMs).toBe(7 * 86_400_000);
  expect(readWebhooksConfig(env({ WEBHOOK_HISTORY_RETENTION: '48h' })).historyRetentionMs).toBe(2 * 86_400_000);
});

test.each(['soon', '1h', '-5d', '30 days'])(
  'when WEBHOOK_HISTORY_RETENTION is %j, then the service refuses to start, naming the setting',
  (value) => {
    expect(() => readWebhooksConfig(env({ WEBHOOK_HISTORY_RETENTION: value }))).toThrow(ConfigError);
    expect(() => readWebhooksConfig(env({ WEBHOOK_HISTORY_RETENTION: value }))).toThrow(/WEBHOOK_HISTORY_RETENTION: /);
  },
);
