// Section `relay`: one outbox relay draining documents that each carry one event,
// in this process, with nothing else of the bench running (no system needed).
import { MongoClient } from 'mongodb';
import { pino } from 'pino';
import { Broker, OutboxRelay, newEvent, outboxOnInsert } from './internals.ts';
import type { Bench } from './support.ts';

const DOCUMENTS = 2000;

async function relayThroughput(mongoUrl: string, amqpUrl: string, documents: number): Promise<number> {
  const client = await MongoClient.connect(mongoUrl);
  const logger = pino({ level: 'silent' });
  const broker = await Broker.connect({ url: amqpUrl, exchange: 'bench.relay', logger });
  try {
    const db = client.db('bench_relay');
    const object = { id: 'cli_x', name: 'x'.repeat(300) };
    const docs = Array.from({ length: documents }, (_, i) => ({
      _id: `cli_${i}`,
      ...object,
      ...outboxOnInsert([newEvent('client.created', 'team_bench', object)]),
    }));
    await db.collection<{ _id: string }>('clients').insertMany(docs);
    const relay = new OutboxRelay({
      db,
      collections: ['clients'],
      publisher: broker,
      logger,
      scanIntervalMs: 3_600_000,
    });
    for (const d of docs) relay.kick('clients', d._id);
    const started = Date.now();
    await relay.runOnce();
    return documents / ((Date.now() - started) / 1000);
  } finally {
    await broker.close();
    await client.close();
  }
}

export async function relaySection(b: Bench): Promise<void> {
  const rate = await relayThroughput(b.store.url, b.amqpUrl, DOCUMENTS);
  console.log(
    `outbox relay alone: ${DOCUMENTS.toLocaleString('en')} documents with one event each, ${rate.toFixed(0)} events/s`,
  );
  b.record('relay.alone.events_per_s', rate);
}
