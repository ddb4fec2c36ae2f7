import {
  ConfigError,
  amqpUrl,
  bool,
  duration,
  durationList,
  int,
  oneOf,
  parseDuration,
  platformSettings,
  readConfig,
  redisSettings,
  secret,
  str,
  url,
} from '../src/config.ts';

test('when settings are valid or absent, then values are parsed and defaults apply', () => {
  const config = readConfig(
    {
      port: ['PORT', int(8080, 0, 65535)],
      host: ['HOST', str('127.0.0.1')],
      token: ['TOKEN', secret],
      allow: ['ALLOW', bool(false)],
      every: ['EVERY', duration('1m')],
      delays: ['DELAYS', durationList('5m,30m,2h,12h,24h')],
      level: ['LEVEL', oneOf(['info', 'warn'], 'info')],
      amqp: ['AMQP', url('amqp://127.0.0.1:5672', ['amqp:'])],
    },
    { PORT: '9000', TOKEN: '0123456789abcdef', ALLOW: 'true', EVERY: '' },
  );
  expect(config).toEqual({
    port: 9000,
    host: '127.0.0.1',
    token: '0123456789abcdef',
    allow: true,
    every: 60_000,
    delays: [300_000, 1_800_000, 7_200_000, 43_200_000, 86_400_000],
    level: 'info',
    amqp: 'amqp://127.0.0.1:5672',
  });
});

test('when several settings are bad, then one error names every one of them', () => {
  let error: unknown;
  try {
    readConfig(
      {
        port: ['PORT', int(8080, 0, 65535)],
        token: ['TOKEN', secret],
        allow: ['ALLOW', bool(false)],
        level: ['LEVEL', oneOf(['info', 'warn'], 'info')],
        amqp: ['AMQP', url(undefined, ['amqp:'])],
      },
      { PORT: '70000', TOKEN: 'short', ALLOW: 'yes', LEVEL: 'loud', AMQP: 'http://x' },
    );
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(ConfigError);
  const message = (error as Error).message;
  for (const name of ['PORT', 'TOKEN', 'ALLOW', 'LEVEL', 'AMQP']) expect(message).toContain(`${name}:`);
  expect(message).toContain('must be at least 16 characters');
});

test.each([
  ['1500', 1500],
  ['1500ms', 1500],
  ['30s', 30_000],
  ['5m', 300_000],
  ['2h', 7_200_000],
  ['1d', 86_400_000],
  ['0.5s', 500],
])('when a duration is %s, then it is %d ms', (text, ms) => {
  expect(parseDuration(text)).toBe(ms);
});

test.each(['', 'soon', '5 minutes', '-5m', '5w'])('when a duration is %j, then it is refused', (text) => {
  expect(() => parseDuration(text)).toThrow(/is not a duration/);
});

test.each([
  ['16 characters, as once allowed', '0123456789abcdef'],
  ['31 bytes as hex', 'ab'.repeat(31)],
  ['a phrase of 40 characters', 'this is the internal token of the system'],
])('when INTERNAL_TOKEN is %s, then the process refuses to start saying how to make one', (_case, token) => {
  expect(() =>
    readConfig(platformSettings(8080), { INTERNAL_TOKEN: token, MONGO_URL: 'mongodb://127.0.0.1:27017/' }),
  ).toThrow(
    'INTERNAL_TOKEN: must be at least 32 random bytes, written as hex (64 characters) or base64: generate one with `openssl rand -hex 32`',
  );
});

test.each([
  ['32 bytes as hex', 'ab'.repeat(32)],
  ['32 bytes as base64', Buffer.alloc(32, 7).toString('base64')],
])('when INTERNAL_TOKEN is %s, then it is taken', (_case, token) => {
  expect(
    readConfig(platformSettings(8080), { INTERNAL_TOKEN: token, MONGO_URL: 'mongodb://127.0.0.1:27017/' })
      .internalToken,
  ).toBe(token);
});

describe('connection URLs', () => {
  const token = 'ab'.repeat(32);
  const mongo = (MONGO_URL: string) =>
    readConfig(platformSettings(8080), { INTERNAL_TOKEN: token, MONGO_URL }).mongoUrl;
  const refusal = (read: () => unknown): string => {
    try {
      read();
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      return (e as Error).message;
    }
    throw new Error('not refused');
  };

  test.each([
    ['a replica set', 'mongodb://lpm:s3cret@h1:27017,h2:27017/db?replicaSet=rs'],
    [
      'a replica set with options',
      'mongodb://lpm:s3cret@h1:27017,h2:27017,h3/db?replicaSet=rs&authSource=admin&maxPoolSize=6&tls=true',
    ],
    ['mongodb+srv (Atlas)', 'mongodb+srv://lpm:s3cret@cluster0.example.net/db?retryWrites=true&w=majority'],
    ['a password with # and / percent-encoded', 'mongodb://lpm:pa%23ss%2Fw%40rd@h1:27017/db'],
    ['a standalone server', 'mongodb://127.0.0.1:27017/'],
  ])('when MONGO_URL is %s, then the driver parser takes it as given', (_case, value) => {
    expect(mongo(value)).toBe(value);
  });

  test.each([
    ['a password with # unescaped', 'mongodb://lpm:s3cr#t-pw@h1:27017,h2:27017/db?replicaSet=rs', 's3cr#t-pw'],
    ['a password with / unescaped', 'mongodb://lpm:s3cr/t-pw@h1:27017/db', 's3cr/t-pw'],
    ['a port out of range', 'mongodb://lpm:s3cret-pw@h1:99999/db', 's3cret-pw'],
    ['an option the driver does not know', 'mongodb://lpm:s3cret-pw@h1/db?replicaSett=rs', 's3cret-pw'],
    ['mongodb+srv with a port', 'mongodb+srv://lpm:s3cret-pw@cluster0.example.net:27017/db', 's3cret-pw'],
  ])(
    'when MONGO_URL has %s, then it is refused, and the message shows the URL with its password as ***',
    (_case, value, password) => {
      const message = refusal(() => mongo(value));
      expect(message).toMatch(
        /^invalid configuration:\n {2}MONGO_URL: is not a URL \(.+\): mongodb(\+srv)?:\/\/lpm:\*\*\*@/,
      );
      expect(message).not.toContain(password);
      expect(message).not.toContain(encodeURIComponent(password));
    },
  );

  test('when AMQP_URL or REDIS_URL does not parse, then the message shows the URL with its password as ***', () => {
    const message = refusal(() =>
      readConfig(
        { amqp: ['AMQP_URL', amqpUrl], ...redisSettings },
        { AMQP_URL: 'amqp://lpm:hunter2-pw@[broker/vhost', REDIS_URL: 'redis://:hunter3-pw@cache:6379x' },
      ),
    );
    expect(message).toContain('AMQP_URL: is not a URL (Invalid URL): amqp://lpm:***@[broker/vhost');
    expect(message).toContain('REDIS_URL: is not a URL (Invalid URL): redis://:***@cache:6379x');
    expect(message).not.toMatch(/hunter/);
  });

  test('when a URL has the wrong scheme or none, then it is refused naming the schemes, without its password', () => {
    expect(refusal(() => mongo('postgres://lpm:s3cret-pw@db/lpm'))).toContain(
      'MONGO_URL: must use mongodb: or mongodb+srv:',
    );
    const message = refusal(() => mongo('lpm:s3cret-pw@db'));
    expect(message).toContain('MONGO_URL: must use mongodb: or mongodb+srv:');
    expect(message).not.toContain('s3cret');
  });
});
