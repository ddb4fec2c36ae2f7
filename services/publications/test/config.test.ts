import { expect, test } from '@jest/globals';
import { ConfigError } from '@lpm/shared/config';
import { DEFAULT_DJEN_URL, readPublicationsConfig } from '../src/config.ts';

const UA = 'lpm-publications/1.0 (ops@escritorio.example)';

test('when only the User-Agent is set, then the poll runs hourly against the public Comunica API', () => {
  expect(readPublicationsConfig({ DJEN_USER_AGENT: UA })).toEqual({
    pollIntervalMs: 3_600_000,
    djenUrl: DEFAULT_DJEN_URL,
    djenUserAgent: UA,
  });
});

test('when the User-Agent is missing or names no contact, or the interval or URL is bad, then the start is refused naming each', () => {
  expect(() => readPublicationsConfig({})).toThrow(ConfigError);
  expect(() => readPublicationsConfig({ DJEN_USER_AGENT: 'lpm-publications/1.0' })).toThrow(
    /DJEN_USER_AGENT: must include the operator's contact/,
  );
  const bad = {
    DJEN_USER_AGENT: `lpm (https://escritorio.example/contato)`,
    PUBLICATIONS_POLL_INTERVAL: '30s',
    DJEN_URL: 'ftp://x',
  };
  expect(() => readPublicationsConfig(bad)).toThrow(
    /PUBLICATIONS_POLL_INTERVAL: must be at least 1m[\s\S]*DJEN_URL: must use http: or https:/,
  );
  expect(
    readPublicationsConfig({ ...bad, PUBLICATIONS_POLL_INTERVAL: '15m', DJEN_URL: 'http://127.0.0.1:9/api/v1' }),
  ).toMatchObject({ pollIntervalMs: 900_000 });
});
