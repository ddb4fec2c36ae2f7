import { hidePasswordOf, redactUrl } from '../src/redact-url.ts';

describe('redactUrl', () => {
  test.each([
    ['mongodb://lpm:s3cret@h1:27017,h2:27017/db?replicaSet=rs', 'mongodb://lpm:***@h1:27017,h2:27017/db?replicaSet=rs'],
    ['mongodb+srv://lpm:s3cret@cluster0.example.net/db', 'mongodb+srv://lpm:***@cluster0.example.net/db'],
    ['amqp://guest:guest@127.0.0.1:5672/lpm', 'amqp://guest:***@127.0.0.1:5672/lpm'],
    ['redis://:s3cret@cache:6379', 'redis://:***@cache:6379'],
    ['mongodb://lpm:p%23ss%2Fw@h/db', 'mongodb://lpm:***@h/db'],
  ])('when a URL has a password (%s), then it is shown as ***', (url, shown) => {
    expect(redactUrl(url)).toBe(shown);
  });

  test.each([
    ['mongodb://lpm:pa#ss/w@rd@h1:27017,h2:x/db', 'mongodb://lpm:***@h1:27017,h2:x/db'],
    ['amqps://guest:s3c ret?@[bad/vhost', 'amqps://guest:***@[bad/vhost'],
  ])('when a URL does not parse (%s), then its password is hidden all the same, whatever it holds', (url, shown) => {
    expect(redactUrl(url)).toBe(shown);
  });

  test.each(['mongodb://127.0.0.1:27017/db', 'redis://cache:6379', 'amqp://guest@broker/vhost', 'not a url', ''])(
    'when a URL has no password (%j), then it is shown as it is',
    (url) => {
      expect(redactUrl(url)).toBe(url);
    },
  );
});

test('when a message repeats the password of a URL, written or decoded, then it is hidden there too', () => {
  const url = 'mongodb://lpm:pa%2Fss%3Dword@h/db';
  expect(hidePasswordOf(url, 'bad password pa%2Fss%3Dword, that is pa/ss=word')).toBe('bad password ***, that is ***');
  expect(hidePasswordOf('mongodb://h/db', 'option foo is not supported')).toBe('option foo is not supported');
});
