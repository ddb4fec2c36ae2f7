// The floor of an API write for the `writes` scenario, run as a child process as a
// service is, with its Node flags and malloc settings: what any write behind the
// gateway must do at the least, and nothing more. POST /v1/clients stores the body
// with one insertOne through the raw driver (no batching, no ORM, no validation, no
// outbox), answers 201 once it is stored, and publishes it as one persistent,
// mandatory message to a topic exchange with a publisher confirm (not waited for, as
// the services' relay publishes after the answer). A consumer on the quorum queue
// bound to it acks each message, as the webhooks service's fan-out does, on a
// connection of its own as another service's would be: the broker spends about
// twice as much a message when the publisher and the consumer of a quorum queue do
// not share a connection. Prints
// `listening <port>` once it listens on 127.0.0.1.
//   WRITE_FLOOR_STORE_URL  a MongoDB URL; the floor writes to its `write_floor` database
//   WRITE_FLOOR_AMQP_URL   the broker, with its vhost
import { randomUUID } from 'node:crypto';
import amqp from 'amqplib';
import Fastify from 'fastify';
import { MongoClient } from 'mongodb';

const EXCHANGE = 'write-floor';
const QUEUE = 'write-floor.events';

const store = new MongoClient(process.env.WRITE_FLOOR_STORE_URL!, { maxPoolSize: 10 });
await store.connect();
const records = store.db('write_floor').collection<{ _id: string }>('clients');

const broker = await amqp.connect(process.env.WRITE_FLOOR_AMQP_URL!);
const publishing = await broker.createConfirmChannel();
await publishing.assertExchange(EXCHANGE, 'topic', { durable: true });
await publishing.assertQueue(QUEUE, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
await publishing.bindQueue(QUEUE, EXCHANGE, '#');
const consumer = await amqp.connect(process.env.WRITE_FLOOR_AMQP_URL!);
const consuming = await consumer.createChannel();
await consuming.prefetch(50);
await consuming.consume(QUEUE, (msg) => msg && consuming.ack(msg));

const publish = (id: string, content: Buffer) =>
  new Promise<void>((resolve, reject) =>
    publishing.publish(
      EXCHANGE,
      'client.created',
      content,
      { persistent: true, mandatory: true, messageId: id, contentType: 'application/json' },
      (err: unknown) => (err ? reject(new Error('nacked')) : resolve()),
    ),
  );

/** Publishes the broker refused (GET /unconfirmed): the floor then did less than a write does. */
let unconfirmed = 0;

const app = Fastify({ logger: false });
app.post('/v1/clients', async (req, reply) => {
  const record = { _id: randomUUID(), ...(req.body as object), created_at: new Date().toISOString() };
  await records.insertOne(record);
  publish(record._id, Buffer.from(JSON.stringify({ type: 'client.created', data: record }))).catch(() => {
    unconfirmed++;
  });
  return reply.code(201).send({ data: record });
});
app.get('/unconfirmed', async () => ({ unconfirmed }));
await app.listen({ host: '127.0.0.1', port: 0 });
const address = app.server.address();
process.stdout.write(`listening ${typeof address === 'object' && address ? address.port : ''}\n`);
for (const signal of ['SIGTERM', 'SIGINT'] as const)
  process.once(signal, () => {
    void (async () => {
      await app.close();
      await publishing.deleteQueue(QUEUE).catch(() => {});
      await consumer.close().catch(() => {});
      await broker.close().catch(() => {});
      await store
        .db('write_floor')
        .dropDatabase()
        .catch(() => {});
      await store.close();
      process.exit(0);
    })();
  });
