// The webhooks service's settings: WEBHOOK_ALLOWED_PORTS, read and checked at start.
import { randomBytes } from 'node:crypto';
import { ConfigError } from '@lpm/shared/config';
import { parsePortRanges, readWebhooksConfig } from '../src/config.ts';

const env = (extra: Record<string, string>) => ({ WEBHOOK_SECRET_KEY: randomBytes(32).toString('hex'), ...extra });

test('when WEBHOOK_ALLOWED_PORTS is unset or empty, then 443 and 1024-65535 are allowed', () => {
  expect(readWebhooksConfig(env({})).allowedPorts).toEqual([[443, 443], [1024, 65535]]);
  expect(readWebhooksConfig(env({ WEBHOOK_ALLOWED_PORTS: '' })).allowedPorts).toEqual([[443, 443], [1024, 65535]]);
});

test('when WEBHOOK_ALLOWED_PORTS lists ports and ranges, then those are allowed', () => {
  expect(readWebhooksConfig(env({ WEBHOOK_ALLOWED_PORTS: '80, 443,1024 - 65535' })).allowedPorts).toEqual([[80, 80], [443, 443], [1024, 65535]]);
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
