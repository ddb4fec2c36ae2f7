// Secrets at rest: a webhook's signing secret is never stored in clear, including
// the answer kept for an Idempotency-Key replay; the replay still gives it back.
import { startHttpsReceiver, type HttpsReceiver } from '@lpm/test-kit/https-receiver';
import { identity } from '@lpm/test-kit/teams';
import { startWebhooks, type WebhooksUnderTest } from './helper.ts';

let sut: WebhooksUnderTest;
let receiver: HttpsReceiver;
const team = identity();

beforeAll(async () => {
  sut = await startWebhooks({ allowPrivateUrls: true });
  receiver = await startHttpsReceiver(() => ({ status: 200 }));
});

afterAll(async () => {
  await sut?.close();
  await receiver?.close();
});

/** Every stored document of every collection, as raw text. */
async function everythingStored(): Promise<string> {
  const texts: string[] = [];
  for (const { name } of await sut.db.listCollections().toArray()) {
    for (const doc of await sut.db.collection(name).find({}).toArray()) texts.push(JSON.stringify(doc));
  }
  return texts.join('\n');
}

test('when a webhook is created with an Idempotency-Key, then no stored document holds its secret in clear, and a replay gives the same answer', async () => {
  const create = () =>
    sut.call(team, {
      method: 'POST',
      url: '/v1/webhooks',
      headers: { 'idempotency-key': 'create-hook-1' },
      payload: { url: `${receiver.url}/hook`, events: ['client.created'] },
    });
  const first = await create();
  expect(first.statusCode).toBe(201);
  const secret: string = first.json().data.secret;
  expect(secret).toMatch(/^whsec_/);

  const stored = await everythingStored();
  expect(stored).toContain('create-hook-1'); // the idempotency record is there
  expect(stored).not.toContain(secret);
  expect(stored).not.toContain(secret.slice('whsec_'.length));

  const replay = await create();
  expect(replay.statusCode).toBe(201);
  expect(replay.headers['idempotent-replayed']).toBe('true');
  expect(replay.body).toBe(first.body);
});
