// CONSUMER_RETRY_FOR: read and validated with the other service settings at start.
import { readServiceConfig } from '../src/service/runner.ts';

const base = { INTERNAL_TOKEN: 'ab'.repeat(32), MONGO_URL: 'mongodb://127.0.0.1:27017/' };

it('defaults CONSUMER_RETRY_FOR to 24 hours and reads a duration', () => {
  expect(readServiceConfig('cases', { ...base }).consumerRetryForMs).toBe(24 * 3600_000);
  expect(readServiceConfig('cases', { ...base, CONSUMER_RETRY_FOR: '90m' }).consumerRetryForMs).toBe(90 * 60_000);
});

it('refuses a CONSUMER_RETRY_FOR that is not a duration above zero, naming it', () => {
  expect(() => readServiceConfig('cases', { ...base, CONSUMER_RETRY_FOR: 'forever' })).toThrow(/CONSUMER_RETRY_FOR/);
  expect(() => readServiceConfig('cases', { ...base, CONSUMER_RETRY_FOR: '0' })).toThrow(/CONSUMER_RETRY_FOR/);
});

it('defaults DEDUPE_RETENTION to 7 days and refuses less than a day, naming it', () => {
  expect(readServiceConfig('cases', { ...base }).dedupeRetentionMs).toBe(7 * 24 * 3600_000);
  expect(readServiceConfig('cases', { ...base, DEDUPE_RETENTION: '48h' }).dedupeRetentionMs).toBe(48 * 3600_000);
  expect(() => readServiceConfig('cases', { ...base, DEDUPE_RETENTION: '12h' })).toThrow(/DEDUPE_RETENTION/);
});
