// With WEBHOOK_ALLOW_PRIVATE_URLS off (the default), a webhook URL whose host is
// or resolves to a private or special address is refused before anything is sent
// to it. The webhooks app in process, over the test run's store.
import { startHttpsReceiver, type HttpsReceiver } from '@lpm/test-kit/https-receiver';
import { identity } from '@lpm/test-kit/teams';
import { startWebhooks, type WebhooksUnderTest } from './helper.ts';
import { PRIVATE_URLS } from './private-urls.ts';

const team = identity();

let sut: WebhooksUnderTest;
let receiver: HttpsReceiver;

beforeAll(async () => {
  sut = await startWebhooks({ allowPrivateUrls: false });
  receiver = await startHttpsReceiver();
});

afterAll(async () => {
  await sut.close();
  await receiver.close();
});

const subscribe = (url: string) =>
  sut.call(team, { method: 'POST', url: '/v1/webhooks', payload: { url, events: ['client.created'] } });

test.each([...PRIVATE_URLS, 'https://192.168.0.10/hook', 'https://[fd00::1]/hook', 'https://224.0.0.1/hook'])(
  'when the URL is %s, then 400 Invalid URL',
  async (url) => {
    const res = await subscribe(url);
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({
      code: 'VALIDATION_ERROR',
      message: 'Invalid URL',
      details: { field: 'url' },
    });
  },
);

test('when the host is a name that resolves to 127.0.0.1, then 400 Invalid URL and the listener there gets nothing', async () => {
  const res = await subscribe(`https://localhost:${receiver.port}/hook`);
  expect(res.statusCode).toBe(400);
  expect(res.json().error.message).toBe('Invalid URL');
  expect(receiver.requests).toHaveLength(0);
});
