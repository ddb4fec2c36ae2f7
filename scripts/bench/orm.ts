// Section `orm`: the two ways a repository could use MikroORM 7 for the same work, in
// this process on the bench's FerretDB (no system needed): the EntityManager, or the
// driver's Db the same ORM connected (`orm.em.getConnection().getDb()`). Same
// documents, same concurrency, the ways measured in turn and the turn repeated
// (driver, ORM, driver, ORM) so that drift of the shared machine favours none.
import { MikroORM, Utils } from '@mikro-orm/mongodb';
import type { Collection } from 'mongodb';
import { ClientEntity, newId, type ClientRecord } from './internals.ts';
import { drive, ms, quantile, type Bench, type Operation, type Sample } from './support.ts';

const DURATION_S = Number(process.env.BENCH_ORM_DURATION ?? 5);
const CONCURRENCY = Number(process.env.BENCH_ORM_CONCURRENCY ?? 16);
const ROUNDS = 2;
/** Documents read by id, spread over TEAMS teams; every way reads them in the same order. */
const DOCUMENTS = 2000;
const TEAMS = 20;
/** Operations of each way before any is measured (JIT, the ORM's metadata and hydrators, the connection pool). */
const WARM_UP = 200;
const DATABASE = 'bench_orm';

/**
 * A client as the service stores it, every property ClientEntity declares: the
 * outbox empty (em.flush refuses an entity without its required `outbox`).
 */
type ClientDocument = ClientRecord & { outbox: []; outbox_pending: false; outbox_mark: null; outbox_events: null };

function clientDocument(teamId: string, n: number): ClientDocument {
  const _id = newId('cli');
  const now = new Date();
  const name = `Cliente Bench ${n}`;
  return {
    _id,
    team_id: teamId,
    type: 'PF',
    name,
    email: `cliente${n}@bench.example`,
    phone: '+55 11 3333-4444',
    whatsapp: null,
    segment: 'regular',
    status: 'active',
    address: {
      street: 'Rua Augusta',
      number: String(n % 2000),
      complement: null,
      neighborhood: 'Consolação',
      city: 'São Paulo',
      state: 'SP',
      zip_code: '01305-000',
      country: 'BR',
    },
    notes: null,
    tags: ['bench'],
    metadata: { source: 'bench' },
    cpf: null,
    rg: null,
    birth_date: '1980-05-17',
    gender: null,
    marital_status: null,
    nationality: 'brasileira',
    profession: 'advogada',
    legal_name: null,
    trade_name: null,
    cnpj: null,
    state_registration: null,
    contact_person: null,
    deactivated_at: null,
    created_at: now,
    updated_at: now,
    version: 1,
    cases_count: 0,
    cases_counted_at: now,
    search_text: `${name.toLowerCase()} | cliente${n}@bench.example`,
    document_digits: null,
    name_sort: name.toLowerCase(),
    document_key: `none:${_id}`,
    outbox: [],
    outbox_pending: false,
    outbox_mark: null,
    outbox_events: null,
  };
}

interface Way<A> extends Operation<A> {
  name: string;
  /** Its part of the JSON keys, e.g. `driver`. */
  key: string;
}

interface Result {
  name: string;
  key: string;
  opsPerSecond: number;
  p50: number;
  p99: number;
  errors: number;
  byRound: number[];
}

/** Each way warmed up, then measured ROUNDS times, the ways in turn within each round, in reverse order every other round. */
async function compare<A>(label: string, ways: Way<A>[]): Promise<Result[]> {
  for (const way of ways) await drive(way, CONCURRENCY, 60, WARM_UP);
  const samples: Sample[][] = ways.map(() => []);
  for (let round = 0; round < ROUNDS; round++) {
    const order = [...ways.entries()];
    if (round % 2 === 1) order.reverse();
    for (const [k, way] of order) {
      const s = await drive(way, CONCURRENCY, DURATION_S);
      samples[k].push(s);
      console.log(
        `  ${label}, round ${round + 1}, ${way.name}: ${(s.ops / s.seconds).toFixed(0)} ops/s${s.errors ? `, ${s.errors} errors` : ''}`,
      );
    }
  }
  return ways.map((way, k) => {
    const all = samples[k].flatMap((s) => s.latencies).sort((x, y) => x - y);
    const ops = samples[k].reduce((sum, s) => sum + s.ops, 0);
    const seconds = samples[k].reduce((sum, s) => sum + s.seconds, 0);
    return {
      name: way.name,
      key: way.key,
      opsPerSecond: ops / seconds,
      p50: all.length ? quantile(all, 0.5) : NaN,
      p99: all.length ? quantile(all, 0.99) : NaN,
      errors: samples[k].reduce((sum, s) => sum + s.errors, 0),
      byRound: samples[k].map((s) => s.ops / s.seconds),
    };
  });
}

export async function ormSection(b: Bench): Promise<void> {
  // As the services open it (shared/src/store/orm.ts), on a database of its own.
  const orm = await MikroORM.init({
    clientUrl: b.store.url,
    dbName: DATABASE,
    entities: [ClientEntity],
    allowGlobalContext: false,
    debug: false,
  });
  try {
    await orm.schema.ensureIndexes();
    const declared = declaredProperties(orm);
    const db = orm.em.getConnection().getDb();
    const clients = db.collection<ClientDocument>('clients');
    const teams = Array.from({ length: TEAMS }, () => newId('team'));
    const seeded = await seedClients(clients, teams);
    console.log(
      `orm: MikroORM ${Utils.getORMVersion()} against the driver it connected, ${DATABASE}.clients (${DOCUMENTS.toLocaleString('en')} documents of ${TEAMS} teams, ` +
        `${declared} properties each), ${CONCURRENCY} operations at once, ${ROUNDS} rounds of ${DURATION_S} s per way, the ways in turn`,
    );

    const key = (i: number) => {
      const d = seeded[i % seeded.length];
      return { _id: d._id, team_id: d.team_id };
    };
    const gets = await compare('GET by id', [
      {
        name: 'driver: collection.findOne',
        key: 'driver',
        input: key,
        run: async (k) => (await clients.findOne(k)) !== null,
      },
      {
        name: 'ORM: em.fork().findOne',
        key: 'em_find_one',
        input: key,
        run: async (k) => (await orm.em.fork().findOne(ClientEntity, k)) !== null,
      },
    ]);
    const fresh = (i: number) => clientDocument(teams[i % TEAMS], DOCUMENTS + i);
    const inserts = await compare('insert one', [
      {
        name: 'driver: collection.insertOne',
        key: 'driver',
        input: fresh,
        run: async (d) => (await clients.insertOne(d)).acknowledged,
      },
      {
        name: 'ORM: em.fork().insert',
        key: 'em_insert',
        input: fresh,
        run: async (d) => (await orm.em.fork().insert(ClientEntity, d)) === d._id,
      },
      {
        name: 'ORM: em.create + em.flush',
        key: 'em_create_flush',
        input: fresh,
        run: async (d) => {
          const em = orm.em.fork();
          em.create(ClientEntity, d);
          await em.flush();
          return true;
        },
      },
    ]);

    const print = () => printComparison(gets, inserts);
    print();
    b.closing.push(print);
    recordComparison(b, gets, inserts);
  } finally {
    await orm.em
      .getConnection()
      .getDb()
      .dropDatabase()
      .catch(() => {});
    await orm.close();
  }
}

/** How many properties ClientEntity declares; throws when the bench's client document has other ones. */
function declaredProperties(orm: MikroORM): number {
  const declared = Object.keys(orm.getMetadata().get(ClientEntity).properties).sort();
  const built = Object.keys(clientDocument('team_x', 0)).sort();
  const missing = declared.filter((p) => !built.includes(p));
  const undeclared = built.filter((p) => !declared.includes(p));
  if (missing.length || undeclared.length) {
    throw new Error(
      `the bench's client document does not match ClientEntity: missing ${missing.join(', ') || '-'}; not declared ${undeclared.join(', ') || '-'}`,
    );
  }
  return declared.length;
}

async function seedClients(clients: Collection<ClientDocument>, teams: string[]): Promise<ClientDocument[]> {
  const seeded: ClientDocument[] = [];
  for (let from = 0; from < DOCUMENTS; from += 500) {
    const batch = Array.from({ length: Math.min(500, DOCUMENTS - from) }, (_, k) =>
      clientDocument(teams[(from + k) % TEAMS], from + k),
    );
    await clients.insertMany(batch);
    seeded.push(...batch);
  }
  return seeded;
}

function printComparison(gets: Result[], inserts: Result[]): void {
  console.log(
    `\n| operation (MikroORM ${Utils.getORMVersion()}, ${CONCURRENCY} at once) | way | ops/s | by round | p50 ms | p99 ms | errors |`,
  );
  console.log('|---|---|---:|---|---:|---:|---:|');
  for (const [op, rows] of [
    ['GET by id', gets],
    ['insert one client', inserts],
  ] as const) {
    for (const r of rows) {
      console.log(
        `| ${op} | ${r.name} | ${r.opsPerSecond.toFixed(0)} | ${r.byRound.map((x) => x.toFixed(0)).join(', ')} | ${ms(r.p50)} | ${ms(r.p99)} | ${r.errors} |`,
      );
    }
  }
  for (const [op, [driver, ...ormWays]] of [
    ['GET by id', gets],
    ['insert one', inserts],
  ] as const) {
    const parts = ormWays.map(
      (r) =>
        `${r.name.replace('ORM: ', '')} throughput ${(r.opsPerSecond / driver.opsPerSecond).toFixed(2)}, p50 ${(r.p50 / driver.p50).toFixed(2)}x, p99 ${(r.p99 / driver.p99).toFixed(2)}x`,
    );
    console.log(`ORM/driver, ${op}: ${parts.join('; ')}`);
  }
}

function recordComparison(b: Bench, gets: Result[], inserts: Result[]): void {
  for (const [op, [driver, ...ormWays]] of [
    ['get_by_id', gets],
    ['insert', inserts],
  ] as const) {
    for (const r of [driver, ...ormWays]) {
      b.record(`orm.${op}.${r.key}_ops_per_s`, r.opsPerSecond);
      b.record(`orm.${op}.${r.key}_p50_ms`, r.p50);
      b.record(`orm.${op}.${r.key}_p99_ms`, r.p99);
    }
    for (const r of ormWays) b.record(`orm.${op}.${r.key}_vs_driver_throughput`, r.opsPerSecond / driver.opsPerSecond);
  }
}
