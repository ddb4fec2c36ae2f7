// Scenario `store`: the local store's floor, with the raw driver in this process and
// no system running: findOne by `_id` among BENCH_STORE_DOCS documents (client-sized,
// of 20 teams), one at a time, so each figure is one operation's latency.
import { MongoClient } from 'mongodb';
import { newId } from './internals.ts';
import { DURATION_S, quantile, type Bench } from './support.ts';

const DOCS = Number(process.env.BENCH_STORE_DOCS ?? 100_000);
const DATABASE = 'bench_store';
/** Reads before any is timed (the connection, the store's plan cache). */
const WARM_UP = 50;
const MAX_READS = 5000;

function storedDocument(n: number) {
  const name = `Cliente Bench ${n}`;
  return {
    _id: newId('cli'),
    team_id: `team_bench_${n % 20}`,
    type: 'PF',
    name,
    email: `cliente${n}@bench.example`,
    phone: '+55 11 3333-4444',
    status: 'active',
    address: {
      street: 'Rua Augusta',
      number: String(n % 2000),
      city: 'São Paulo',
      state: 'SP',
      zip_code: '01305-000',
      country: 'BR',
    },
    tags: ['bench'],
    metadata: { source: 'bench' },
    created_at: new Date(),
    updated_at: new Date(),
    version: 1,
    search_text: `${name.toLowerCase()} | cliente${n}@bench.example`,
    outbox: [],
    outbox_pending: false,
  };
}

export async function storeSection(b: Bench): Promise<void> {
  const client = await MongoClient.connect(b.store.url);
  const db = client.db(DATABASE);
  try {
    const docs = db.collection<{ _id: string }>('clients');
    const ids: string[] = [];
    const seedStarted = Date.now();
    for (let from = 0; from < DOCS; from += 1000) {
      const batch = Array.from({ length: Math.min(1000, DOCS - from) }, (_, k) => storedDocument(from + k));
      await docs.insertMany(batch, { ordered: false });
      ids.push(...batch.map((d) => d._id));
    }
    const seedSeconds = (Date.now() - seedStarted) / 1000;
    console.log(
      `store: ${DOCS.toLocaleString('en')} documents in ${DATABASE}.clients, inserted in batches of 1,000 in ${seedSeconds.toFixed(1)} s; FerretDB over ${b.store.backend}`,
    );

    // Ids in a fixed pseudo-random order over the whole collection.
    const idAt = (i: number) => ids[(i * 7919) % ids.length];
    for (let i = 0; i < WARM_UP; i++) await docs.findOne({ _id: idAt(i) });
    const times: number[] = [];
    let missing = 0;
    const until = Date.now() + DURATION_S * 1000;
    for (let i = WARM_UP; times.length < 20 || (Date.now() < until && times.length < MAX_READS); i++) {
      const started = performance.now();
      const found = await docs.findOne({ _id: idAt(i) });
      times.push(performance.now() - started);
      if (!found) missing++;
    }
    times.sort((x, y) => x - y);
    const [p50, p99] = [quantile(times, 0.5), quantile(times, 0.99)];
    console.log(
      `findOne({ _id }) among ${DOCS.toLocaleString('en')} documents, one at a time: ${times.length} reads, p50 ${p50.toFixed(2)} ms, p99 ${p99.toFixed(2)} ms` +
        `${missing ? `, ${missing} found nothing` : ''}`,
    );
    b.record('store.find_by_id_100k.p50_ms', p50);
    b.record('store.find_by_id_100k.p99_ms', p99);
    b.record('store.find_by_id_100k.docs', DOCS);
    b.record('store.insert_many.docs_per_s', DOCS / seedSeconds);
  } finally {
    await db.dropDatabase().catch(() => {});
    await client.close();
  }
}
