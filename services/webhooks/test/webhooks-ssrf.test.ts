// With WEBHOOK_ALLOW_PRIVATE_URLS off (the default), a webhook URL whose host is
// or resolves to a private or special address is refused before anything is sent
// to it. The webhooks app in process, over the test run's store.
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { defaultTeamSettings, identityHeaders, type Identity } from '@lpm/shared/identity';
import { newId } from '@lpm/shared/ids';
import { openOrm, type Orm } from '@lpm/shared/store/orm';
import { startHttpsReceiver, type HttpsReceiver } from '../../../shared/test/support/https-receiver.ts';
import { buildWebhooksApp } from '../src/app.ts';
import { DeliveryLog } from '../src/domain/delivery-log.ts';
import { SecretBox } from '../src/domain/secret-box.ts';
import { WEBHOOK_ENTITIES } from '../src/data/webhook-entity.ts';
import { Webhooks } from '../src/domain/webhooks.ts';
import { WebhookSender } from '../src/delivery/sender.ts';
import { UrlGuard } from '../src/delivery/url-guard.ts';
import { PRIVATE_URLS } from './private-urls.ts';

const TOKEN = randomBytes(16).toString('hex');
const team: Identity = { teamId: newId('team'), userId: newId('user'), scopes: ['read', 'write', 'admin'], settings: defaultTeamSettings() };

let orm: Orm;
let app: FastifyInstance;
let sender: WebhookSender;
let receiver: HttpsReceiver;

beforeAll(async () => {
  orm = await openOrm({ url: process.env.MONGO_URL!, dbName: `${process.env.MONGO_DB_PREFIX}whssrf`, entities: WEBHOOK_ENTITIES });
  const db = orm.em.getConnection().getDb();
  const guard = new UrlGuard({ allowPrivate: false });
  sender = new WebhookSender({ guard, timeoutMs: 2000 });
  const webhooks = new Webhooks({ db, guard, sender, box: new SecretBox(randomBytes(32)) });
  const log = new DeliveryLog(db, webhooks, async () => {});
  app = buildWebhooksApp({ db, webhooks, log, internalToken: TOKEN, logger: false });
  await app.ready();
  receiver = await startHttpsReceiver();
});

afterAll(async () => {
  await app.close();
  await sender.close();
  await receiver.close();
  await orm.em.getConnection().getDb().dropDatabase();
  await orm.close();
});

const subscribe = (url: string) =>
  app.inject({ method: 'POST', url: '/v1/webhooks', headers: identityHeaders(team, TOKEN), payload: { url, events: ['client.created'] } });

test.each([
  ...PRIVATE_URLS,
  'https://192.168.0.10/hook',
  'https://[fd00::1]/hook',
  'https://224.0.0.1/hook',
])('when the URL is %s, then 400 Invalid URL', async (url) => {
  const res = await subscribe(url);
  expect(res.statusCode).toBe(400);
  expect(res.json().error).toMatchObject({ code: 'VALIDATION_ERROR', message: 'Invalid URL', details: { field: 'url' } });
});

test('when the host is a name that resolves to 127.0.0.1, then 400 Invalid URL and the listener there gets nothing', async () => {
  const res = await subscribe(`https://localhost:${receiver.port}/hook`);
  expect(res.statusCode).toBe(400);
  expect(res.json().error.message).toBe('Invalid URL');
  expect(receiver.requests).toHaveLength(0);
});
