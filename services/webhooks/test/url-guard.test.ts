// The webhook URL check (decisions §5): https only, and no host that resolves to
// an address inside the network, whatever spelling hides it.
import type { LookupAddress } from 'node:dns';
import { AppError } from '@lpm/shared/errors';
import { parsePortRanges } from '../src/config.ts';
import { isPublicAddress, UrlGuard, type Resolver } from '../src/upstream/url-guard.ts';
import { PRIVATE_URLS } from './private-urls.ts';

const names: Record<string, string[]> = {
  'internal.example.test': ['127.0.0.1'],
  'public.example.test': ['8.8.8.8'],
  'mixed.example.test': ['8.8.4.4', '10.0.0.7'],
  'dual.example.test': ['2606:4700:4700::1111', '1.1.1.1'],
};
const stub: Resolver = async (host) => {
  const addresses = names[host];
  if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
};

const guard = new UrlGuard({ allowPrivate: false, resolve: stub });

async function expectInvalid(check: Promise<unknown>) {
  const err = await check.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  expect({
    status: (err as AppError).status,
    code: (err as AppError).code,
    message: (err as AppError).message,
  }).toEqual({ status: 400, code: 'VALIDATION_ERROR', message: 'Invalid URL' });
  expect((err as AppError).details).toMatchObject({ field: 'url' });
}

const NOT_PUBLIC = [
  '0.0.0.0',
  '0.1.2.3',
  '10.1.2.3',
  '100.64.0.1',
  '100.127.255.255',
  '127.0.0.1',
  '127.255.255.254',
  '169.254.169.254',
  '172.16.0.1',
  '172.31.255.255',
  '192.0.0.8',
  '192.0.2.1',
  '192.88.99.1',
  '192.168.0.1',
  '198.18.0.1',
  '198.19.255.255',
  '198.51.100.7',
  '203.0.113.9',
  '224.0.0.1',
  '239.255.255.250',
  '240.0.0.1',
  '255.255.255.255',
  '::',
  '::1',
  'fc00::1',
  'fd12:3456::1',
  'fe80::1',
  'fe80::1%eth0',
  'febf::1',
  'fec0::1',
  'ff02::1',
  '2001:db8::1',
  '100::1',
  '2001::1',
  '2001:0:4136:e378:8000:63bf:3fff:fdd2',
  '2001:1ff::1',
  '64:ff9b:1::1',
  '::ffff:127.0.0.1',
  '::ffff:7f00:1',
  '::ffff:10.0.0.1',
  '::ffff:a9fe:a9fe',
  '0:0:0:0:0:ffff:c0a8:101',
  '::127.0.0.1',
  '::a00:1',
  '64:ff9b::7f00:1',
  '64:ff9b::10.0.0.1',
  '2002:7f00:1::',
  '2002:a9fe:a9fe::1',
  '2002:c0a8:0101::',
  // The rest of ::/8, whatever follows: IPv4 look-alikes outside the embedding forms, anything reserved.
  '1::ffff:7f00:1',
  '1::ffff:808:808',
  '1::1',
  'ff::1',
  'ff:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
  '64:ff9b:2::808:808',
  // Documentation (RFC 9637), SRv6 SIDs (RFC 9602), the dummy prefix (RFC 9780).
  '3fff::1',
  '3fff:fff:ffff:ffff::1',
  '5f00::1',
  '5f00:ffff:ffff::1',
  '100:0:0:1::1',
  'not an ip',
  '',
  '1.2.3',
  '256.1.1.1',
  'localhost',
  '[::1]',
];

const PUBLIC = [
  '8.8.8.8',
  '93.184.216.34',
  '1.1.1.1',
  '100.63.255.255',
  '100.128.0.1',
  '172.15.255.255',
  '172.32.0.1',
  '192.0.1.1',
  '198.17.255.255',
  '198.20.0.1',
  '223.255.255.255',
  '2606:4700:4700::1111',
  '2001:4860:4860::8888',
  '2001:200::1',
  '::ffff:8.8.8.8',
  '::ffff:808:808',
  '64:ff9b::808:808',
  '2002:808:808::1',
  // Just outside the blocks above.
  '3fff:1000::1',
  '3ffe:ffff::1',
  '5f01::1',
  '5eff:ffff::1',
];

describe('isPublicAddress', () => {
  for (const [addresses, isPublic] of [
    [NOT_PUBLIC, false],
    [PUBLIC, true],
  ] as const)
    test.each(addresses)(`%s is ${isPublic ? '' : 'not '}public`, (ip) => {
      expect(isPublicAddress(ip)).toBe(isPublic);
    });
});

describe('UrlGuard.parse', () => {
  test.each([
    'http://example.com/hook',
    'ftp://example.com/hook',
    'https://user:pw@example.com/hook',
    'https://user@example.com/hook',
    'not a url',
    '/relative/path',
    'https://',
    `https://example.com/${'a'.repeat(2048)}`,
  ])('when the url is %s, then it is 400 Invalid URL', async (url) => {
    await expectInvalid(Promise.resolve().then(() => guard.parse(url)));
  });

  // The URL parser would drop tab, CR and LF silently: the URL stored would not be the one checked.
  test.each([
    ['a tab in the path', 'https://example.com/ho\tok'],
    ['a CR in the host', 'https://exa\rmple.com/hook'],
    ['a LF at the end', 'https://example.com/hook\n'],
    ['a leading tab', '\thttps://example.com/hook'],
    ['a NUL', 'https://example.com/a\u0000b'],
    ['an escape', 'https://example.com/\u001b[31m'],
    ['a DEL', 'https://example.com/\u007f'],
  ])('when the url has %s, then it is 400 Invalid URL', async (_what, url) => {
    await expectInvalid(Promise.resolve().then(() => guard.parse(url)));
  });

  test.each([
    'https://example.com/hook',
    'https://example.com:443/hook',
    'https://example.com:1024/hook',
    'https://example.com:8443/hook',
    'https://example.com:65535/hook',
  ])('when the url names port 443 or one from 1024 up (%s), then it is parsed', (url) => {
    expect(guard.parse(url).hostname).toBe('example.com');
  });

  test.each([
    'https://example.com:80/hook',
    'https://example.com:22/hook',
    'https://example.com:8/hook',
    'https://example.com:1023/hook',
    'https://example.com:0/hook',
    'https://8.8.8.8:25/hook',
  ])('when the url names port %s, then it is 400 Invalid URL', async (url) => {
    await expectInvalid(Promise.resolve().then(() => guard.parse(url)));
  });

  test('when WEBHOOK_ALLOWED_PORTS widens the ports, then those ports pass and the others are still refused', async () => {
    const wider = new UrlGuard({
      allowPrivate: false,
      resolve: stub,
      allowedPorts: parsePortRanges('80,443,1024-65535'),
    });
    expect(wider.parse('https://example.com:80/hook').port).toBe('80');
    expect(wider.parse('https://example.com:8443/hook').port).toBe('8443');
    await expectInvalid(Promise.resolve().then(() => wider.parse('https://example.com:22/hook')));
    expect((await wider.check('https://public.example.test:80/hook')).addresses).toEqual(['8.8.8.8']);
  });

  test('when the url is an absolute https url of at most 2048 characters, then it is parsed', () => {
    const url = `https://example.com/${'a'.repeat(2048 - 'https://example.com/'.length)}`;
    expect(url).toHaveLength(2048);
    expect(guard.parse(url).hostname).toBe('example.com');
  });
});

describe('UrlGuard.check with private addresses off', () => {
  test.each([
    ...PRIVATE_URLS,
    'https://172.16.5.4/hook',
    'https://192.168.1.1/hook',
    'https://224.0.0.1/hook',
    'https://[fe80::1]/hook',
    'https://[fc00::1]/hook',
    'https://[64:ff9b::7f00:1]/hook',
    'https://[2002:7f00:1::]/hook',
    'https://0x7f.1/hook',
    'https://2130706433/hook',
    'https://internal.example.test/hook',
    'https://mixed.example.test/hook',
    'https://nowhere.example.test/hook',
    'http://93.184.216.34/hook',
    'http://public.example.test/hook',
    'https://user:pw@x.com',
    'not a url',
    'https://93.184.216.34:22/hook',
    'https://public.example.test:80/hook',
    'https://public.example.test/ho\nok',
  ])('when the url is %s, then it is 400 Invalid URL', async (url) => {
    await expectInvalid(guard.check(url));
  });

  test('when localhost resolves through the system resolver, then it is 400 Invalid URL', async () => {
    await expectInvalid(new UrlGuard({ allowPrivate: false }).check('https://localhost:8443/hook'));
  });

  test.each([
    ['https://93.184.216.34/hook', ['93.184.216.34']],
    ['https://[2606:4700:4700::1111]/hook', ['2606:4700:4700::1111']],
    ['https://public.example.test/hook?x=1', ['8.8.8.8']],
    ['https://dual.example.test/hook', ['2606:4700:4700::1111', '1.1.1.1']],
  ])('when the url is %s, then it passes with its addresses', async (url, addresses) => {
    const checked = await guard.check(url);
    expect(checked.url.href).toBe(url);
    expect(checked.addresses).toEqual(addresses);
  });
});

describe('UrlGuard.check with private addresses allowed', () => {
  const open = new UrlGuard({ allowPrivate: true, resolve: stub });

  test('when the host is loopback, then it passes', async () => {
    expect((await open.check('https://127.0.0.1:8443/hook')).addresses).toEqual(['127.0.0.1']);
    expect((await open.check('https://internal.example.test/hook')).addresses).toEqual(['127.0.0.1']);
  });

  test('when the url is http, then it is still 400 Invalid URL', async () => {
    await expectInvalid(open.check('http://127.0.0.1/hook'));
  });
});

describe('UrlGuard.lookup', () => {
  const lookup = (g: UrlGuard, host: string, all: boolean) =>
    new Promise<{ err: NodeJS.ErrnoException | null; address: string | LookupAddress[]; family?: number }>((resolve) =>
      g.lookup(host, { all }, (err, address, family) => resolve({ err, address, family })),
    );

  test('when a name has public and private addresses, then only the public ones are handed out', async () => {
    expect(await lookup(guard, 'mixed.example.test', false)).toEqual({ err: null, address: '8.8.4.4', family: 4 });
    expect(await lookup(guard, 'mixed.example.test', true)).toEqual({
      err: null,
      address: [{ address: '8.8.4.4', family: 4 }],
    });
  });

  test('when every address is private, then the lookup fails with EADDRBLOCKED', async () => {
    for (const all of [false, true]) {
      const { err } = await lookup(guard, 'internal.example.test', all);
      expect(err?.code).toBe('EADDRBLOCKED');
    }
  });

  test('when the name does not resolve, then the resolver error is passed on', async () => {
    expect((await lookup(guard, 'nowhere.example.test', false)).err?.code).toBe('ENOTFOUND');
  });

  test('when a family is asked for, then only addresses of that family are handed out', async () => {
    const g = new UrlGuard({ allowPrivate: false, resolve: stub });
    const v6 = await new Promise<string | LookupAddress[]>((resolve) =>
      g.lookup('dual.example.test', { family: 6, all: false }, (_e, address) => resolve(address)),
    );
    expect(v6).toBe('2606:4700:4700::1111');
  });

  test('when private addresses are allowed, then localhost resolves through the system resolver', async () => {
    const { err, address } = await lookup(new UrlGuard({ allowPrivate: true }), 'localhost', true);
    expect(err).toBeNull();
    expect((address as LookupAddress[]).map((a) => a.address)).toEqual(
      expect.arrayContaining([expect.stringMatching(/^(127\.0\.0\.1|::1)$/)]),
    );
  });
});
