// Credentials the store refuses are a configuration error (the process exits 78 and
// the launcher does not restart it), not a store that is down (retried until it
// answers): isAuthenticationFailure on the driver's own errors, and startStore
// against the local store, which refuses a URL that carries credentials.
import { describe, expect, test } from '@jest/globals';
import { defineEntity, p } from '@mikro-orm/mongodb';
import { MongoNetworkError, MongoServerError, MongoServerSelectionError, type TopologyDescription } from 'mongodb';
import { ConfigError } from '../src/config.ts';
import { startStore } from '../src/store/orm.ts';
import { isAuthenticationFailure, isStoreError } from '../src/store/store-errors.ts';

const ThingEntity = defineEntity({ name: 'Thing', collection: 'things', properties: { _id: p.string().primary() } });

const serverError = (code: number, codeName: string, errmsg: string) =>
  new MongoServerError({ ok: 0, code, codeName, errmsg });

describe('isAuthenticationFailure', () => {
  test.each([
    [
      'MongoDB refusing a password (AuthenticationFailed)',
      serverError(18, 'AuthenticationFailed', 'Authentication failed.'),
    ],
    [
      'FerretDB refusing the mechanism (as seen on 1.24)',
      serverError(18, 'AuthenticationFailed', 'Unsupported authentication mechanism "SCRAM-SHA-1".'),
    ],
    [
      "FerretDB passing on PostgreSQL's refusal (PLAIN, as seen on 1.24)",
      serverError(
        1,
        'InternalError',
        'failed to connect to `user=nobody database=lpm`: 127.0.0.1:5432 (127.0.0.1): server error: FATAL: role "nobody" does not exist (SQLSTATE 28000)',
      ),
    ],
    [
      'a wrong password behind PostgreSQL',
      serverError(
        1,
        'InternalError',
        'server error: FATAL: password authentication failed for user "lpm" (SQLSTATE 28P01)',
      ),
    ],
    [
      'a refusal wrapped as the cause of another error',
      new Error('store set-up failed', { cause: serverError(18, 'AuthenticationFailed', 'Authentication failed.') }),
    ],
  ])('when the error is %s, then it is a refusal of the credentials (and a store error)', (_what, err) => {
    expect([isAuthenticationFailure(err), isStoreError(err)]).toEqual([true, true]);
  });

  test.each([
    [
      'a store that does not answer',
      new MongoServerSelectionError('Server selection timed out after 5000 ms', {} as TopologyDescription),
    ],
    ['a connection reset', new MongoNetworkError('connection 3 to 127.0.0.1:27017 closed')],
    ['a duplicate key', serverError(11000, 'DuplicateKey', 'E11000 duplicate key error')],
    [
      'another internal error of the backend',
      serverError(1, 'InternalError', 'unsupported Unicode escape sequence (SQLSTATE 22P05)'),
    ],
    [
      "an error that is not the driver's, with code 18",
      Object.assign(new Error('Authentication failed.'), { code: 18 }),
    ],
  ])('when the error is %s, then it is not', (_what, err) => {
    expect(isAuthenticationFailure(err)).toBe(false);
  });
});

describe('startStore', () => {
  test('when the store refuses the credentials, then ready rejects with a configuration error at once, holding no password', async () => {
    const url = new URL(process.env.MONGO_URL!);
    url.username = 'lpm';
    url.password = 's3cret-pw';
    const store = await startStore({
      url: url.toString(),
      dbName: `${process.env.MONGO_DB_PREFIX}credentials`,
      entities: [ThingEntity],
    });
    let timer: NodeJS.Timeout | undefined;
    try {
      // Retrying (the old code) leaves ready pending: the race then answers 'still retrying'.
      const retrying = new Promise((resolve) => (timer = setTimeout(() => resolve('still retrying'), 15_000)));
      const outcome = await Promise.race([
        store.ready.then(
          () => 'ready',
          (e: unknown) => e,
        ),
        retrying,
      ]);
      expect(outcome).toBeInstanceOf(ConfigError);
      expect((outcome as Error).message).toMatch(
        /^invalid configuration:\n {2}MONGO_URL: the store refused the credentials \(.+\)$/s,
      );
      expect((outcome as Error).message).not.toContain('s3cret-pw');
    } finally {
      clearTimeout(timer);
      await store.close();
    }
  }, 30_000);
});
