import { connect as amqpConnect, type Channel, type ChannelModel, type ConsumeMessage } from 'amqplib';
import { MongoClient, type Db } from 'mongodb';
import { Broker } from '../src/messaging/broker.ts';
import { newEvent, type DomainEvent } from '../src/events.ts';
import { OutboxRelay } from '../src/outbox/relay.ts';
import { createOutboxIndexes, outboxOnInsert, outboxUpdate } from '../src/outbox/fields.ts';
import { tryDocumentLock, tryDocumentLocks, withDocumentLock } from '../src/store/lock.ts';
import { startTcpProxy, type TcpProxy } from '@lpm/test-kit/tcp-proxy';
import { captureLogger, waitFor } from '@lpm/test-kit/wait';
import { scratchDatabase } from '@lpm/test-kit/scratch-database';

const EXCHANGE = 'outbox-test.events';
const AMQP_URL = process.env.AMQP_URL!;

/** Reads straight from RabbitMQ (no proxy, no Broker): what really went out. */
class Observer {
  received: { event: DomainEvent; msg: ConsumeMessage }[] = [];
  private conn!: ChannelModel;
  private ch!: Channel;
  static async start(queue: string): Promise<Observer> {
    const o = new Observer();
    o.conn = await amqpConnect(AMQP_URL);
    o.ch = await o.conn.createChannel();
    await o.ch.assertExchange(EXCHANGE, 'topic', { durable: true });
    await o.ch.assertQueue(queue, { durable: false, exclusive: true });
    await o.ch.bindQueue(queue, EXCHANGE, '#');
    await o.ch.consume(queue, (msg) => {
      if (msg) o.received.push({ event: JSON.parse(msg.content.toString()), msg });
    }, { noAck: true });
    return o;
  }
  ids(): string[] {
    return this.received.map((r) => r.event.id);
  }
  async close(): Promise<void> {
    await this.conn.close();
  }
}

function events(n: number, label: string): DomainEvent[] {
  return Array.from({ length: n }, (_, i) => newEvent('client.updated', 'team_1', { label, i }, { i: i - 1 }, 'user_1'));
}

let db: Db;

scratchDatabase('outbox', (opened) => (db = opened));

describe('outboxUpdate', () => {
  it('when an update has $set and $push already, then the events are added beside them', () => {
    const evs = events(2, 'u');
    const u = outboxUpdate({ $set: { name: 'b' }, $push: { tags: 'x' }, $inc: { v: 1 } }, evs);
    expect(u).toEqual({
      $set: { name: 'b', outbox_pending: true },
      $push: { tags: 'x', outbox: { $each: evs } },
      $inc: { v: 1 },
    });
  });

  it('when the update is a replacement document, then it throws', () => {
    expect(() => outboxUpdate({ name: 'b' }, events(1, 'r'))).toThrow(/operator update/);
  });
});

describe('OutboxRelay', () => {
  let broker: Broker;
  let observer: Observer;
  const log = captureLogger();

  beforeAll(async () => {
    observer = await Observer.start('outbox-test.observer');
    broker = await Broker.connect({ url: AMQP_URL, exchange: EXCHANGE, logger: log, connectionName: 'outbox-test' });
  });

  afterAll(async () => {
    await broker.close();
    await observer.close();
  });

  it('when events are written with a record, then each is published exactly once, in order, with its properties', async () => {
    const col = db.collection('clients_a');
    await createOutboxIndexes(db, ['clients_a']);
    const [e1, e2, e3] = events(3, 'a');
    await col.insertOne({ _id: 'cli_a' as never, name: 'a', v: 1, ...outboxOnInsert([e1, e2]) });
    await col.updateOne({ _id: 'cli_a' as never }, outboxUpdate({ $set: { name: 'b' }, $inc: { v: 1 } }, [e3]));
    const written = await col.findOne({ _id: 'cli_a' as never });
    expect(written).toMatchObject({ name: 'b', v: 2, outbox_pending: true });
    expect((written!.outbox as DomainEvent[]).map((e) => e.id)).toEqual([e1.id, e2.id, e3.id]);

    const relay = new OutboxRelay({ scanIntervalMs: 50, scanGraceMs: 0, db, collections: ['clients_a'], publisher: broker, logger: log, intervalMs: 50 });
    relay.start();
    relay.kick();
    await waitFor('3 events', () => observer.received.length >= 3);
    await waitFor('outbox cleared', async () => (await col.findOne({ _id: 'cli_a' as never }))!.outbox_pending === false);
    expect(await relay.runOnce()).toBe(0);
    await relay.stop();

    expect(observer.ids()).toEqual([e1.id, e2.id, e3.id]);
    const { msg, event } = observer.received[0];
    expect(event).toEqual(e1);
    expect(msg.fields.routingKey).toBe('client.updated');
    expect(msg.properties).toMatchObject({
      messageId: e1.id,
      type: 'client.updated',
      contentType: 'application/json',
      deliveryMode: 2,
    });
    const after = await col.findOne({ _id: 'cli_a' as never });
    expect(after).toMatchObject({ name: 'b', v: 2, outbox: [], outbox_pending: false });
    expect(after).not.toHaveProperty('outbox_lease');
    observer.received = [];
  });

  it('when the broker is unreachable, then writes succeed and the events arrive once it is back, none lost, none doubled', async () => {
    const proxy: TcpProxy = await startTcpProxy('127.0.0.1', 5672);
    const url = new URL(AMQP_URL);
    url.host = `127.0.0.1:${proxy.port}`;
    const outageLog = captureLogger();
    const viaProxy = await Broker.connect({
      url: url.toString(),
      exchange: EXCHANGE,
      logger: outageLog,
      reconnectMinMs: 50,
      reconnectMaxMs: 300,
      publishTimeoutMs: 2000,
    });
    const relay = new OutboxRelay({ scanIntervalMs: 50, scanGraceMs: 0, db, collections: ['clients_b'], publisher: viaProxy, logger: outageLog, intervalMs: 50 });
    try {
      expect(viaProxy.isConnected()).toBe(true);
      relay.start();
      const col = db.collection('clients_b');
      const before = events(2, 'before');
      await col.insertOne({ _id: 'cli_b0' as never, ...outboxOnInsert(before) });
      relay.kick();
      await waitFor('events before the outage', () => observer.received.length >= 2);

      proxy.cut();
      await waitFor('broker disconnected', () => !viaProxy.isConnected());
      const during: DomainEvent[] = [];
      for (let i = 1; i <= 5; i++) {
        const evs = events(2, `during${i}`);
        during.push(...evs);
        await col.insertOne({ _id: `cli_b${i}` as never, ...outboxOnInsert(evs) });
        relay.kick();
      }
      await col.updateOne({ _id: 'cli_b1' as never }, outboxUpdate({ $set: { x: 1 } }, events(1, 'during-update')));
      const extra = (await col.findOne({ _id: 'cli_b1' as never }))!.outbox as DomainEvent[];
      during.push(extra[2]);
      // Several passes fail while the broker is away.
      for (let i = 0; i < 3; i++) expect(await relay.runOnce()).toBe(0);
      expect(await col.countDocuments({ outbox_pending: true })).toBe(5);
      expect(observer.received.length).toBe(2);
      const outboxWarnings = outageLog.lines.filter((l) => l.level === 'warn' && /outbox publish failed/.test(l.msg ?? ''));
      expect(outboxWarnings).toHaveLength(1);

      proxy.restore();
      await viaProxy.waitForConnection(15_000);
      relay.kick();
      await waitFor('all events after the outage', () => observer.received.length >= 2 + during.length);
      await waitFor('outboxes drained', async () => (await col.countDocuments({ outbox_pending: true })) === 0);
      expect(await relay.runOnce()).toBe(0);

      const ids = observer.ids();
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids.sort()).toEqual([...before, ...during].map((e) => e.id).sort());
      // Per document, in write order.
      const b1 = observer.received.filter((r) => (r.event.data.object as { label: string }).label.startsWith('during1') || (r.event.data.object as { label: string }).label === 'during-update');
      expect(b1.map((r) => (r.event.data.object as { label: string }).label)).toEqual(['during1', 'during1', 'during-update']);
    } finally {
      await relay.stop();
      await viaProxy.close();
      await proxy.close();
      observer.received = [];
    }
  });

  it('when a write hands its events over, then they go out from memory while the store is away, are removed once it is back, and a scanning relay leaves them alone', async () => {
    const own = await Observer.start('outbox-test.memory');
    const broker = await Broker.connect({ url: AMQP_URL, exchange: EXCHANGE, logger: captureLogger() });
    const store = new URL(process.env.MONGO_URL!);
    const proxy = await startTcpProxy(store.hostname, Number(store.port));
    store.port = String(proxy.port);
    const viaProxy = await MongoClient.connect(store.toString(), { serverSelectionTimeoutMS: 500 });
    const writer = new OutboxRelay({ db: viaProxy.db(db.databaseName), collections: ['clients_m'], publisher: broker, logger: captureLogger(), intervalMs: 50, scanIntervalMs: 3_600_000 });
    // Another replica's relay, scanning often: the young pending documents are the writer's to finish.
    const scanner = new OutboxRelay({ db, collections: ['clients_m'], publisher: broker, logger: captureLogger(), intervalMs: 50, scanIntervalMs: 50, scanGraceMs: 60_000 });
    const col = db.collection('clients_m');
    try {
      writer.start();
      scanner.start();
      await new Promise((r) => setTimeout(r, 100)); // the first passes are over
      const written = events(4, 'memory');
      for (const [i, e] of written.entries()) await col.insertOne({ _id: `m${i}` as never, ...outboxOnInsert([e]) });
      proxy.cut();
      for (const [i, e] of written.entries()) writer.kick('clients_m', `m${i}`, [e]);

      await waitFor('every event, from memory', () => own.ids().length === written.length);
      expect(own.ids()).toEqual(written.map((e) => e.id));
      expect(await col.countDocuments({ outbox_pending: true })).toBe(written.length);
      await new Promise((r) => setTimeout(r, 300)); // several scans of the other relay

      proxy.restore();
      await waitFor('outboxes emptied', async () => (await col.countDocuments({ outbox_pending: true })) === 0, 20_000);
      expect(await col.findOne({ _id: 'm0' as never })).toMatchObject({ outbox: [], outbox_pending: false });
      expect(await scanner.runOnce()).toBe(0);
      expect(own.ids()).toEqual(written.map((e) => e.id));
    } finally {
      proxy.restore();
      await writer.stop();
      await scanner.stop();
      await viaProxy.close();
      await proxy.close();
      await broker.close();
      await own.close();
      await new Promise((r) => setTimeout(r, 100));
      observer.received = [];
    }
  }, 40_000);

  it('when a publish from memory fails, then the document\'s later events wait for it and all go out in write order once the broker is back', async () => {
    const own = await Observer.start('outbox-test.memory-order');
    const col = db.collection('clients_o');
    let refusing = true;
    const flaky = { publish: async (e: DomainEvent) => (refusing ? Promise.reject(new Error('broker away')) : broker.publish(e)) };
    const relay = new OutboxRelay({ db, collections: ['clients_o'], publisher: flaky, logger: captureLogger(), intervalMs: 50, scanIntervalMs: 3_600_000 });
    try {
      relay.start();
      const [first, second, third] = events(3, 'order');
      await col.insertOne({ _id: 'o1' as never, n: 0, ...outboxOnInsert([first]) });
      relay.kick('clients_o', 'o1', [first]);
      await new Promise((r) => setTimeout(r, 200)); // the publish failed
      refusing = false;
      for (const e of [second, third]) {
        await withDocumentLock(db, 'clients_o', 'o1', async () => {
          await col.updateOne({ _id: 'o1' as never }, outboxUpdate({ $inc: { n: 1 } }, [e]));
          relay.kick('clients_o', 'o1', [e]);
        });
      }
      await waitFor('all three events', () => own.ids().length === 3);
      await waitFor('outbox emptied', async () => (await col.countDocuments({ outbox_pending: true })) === 0);
      expect(own.ids()).toEqual([first.id, second.id, third.id]);
    } finally {
      await relay.stop();
      await own.close();
      await new Promise((r) => setTimeout(r, 100));
      observer.received = [];
    }
  });

  it('when a write kicks the relay with its document, then it is published at once without a scan; an unkicked one waits for the scan', async () => {
    const own = await Observer.start('outbox-test.kicked');
    const broker = await Broker.connect({ url: AMQP_URL, exchange: EXCHANGE, logger: captureLogger() });
    const col = db.collection('clients_k');
    const relay = new OutboxRelay({ db, collections: ['clients_k'], publisher: broker, logger: captureLogger(), intervalMs: 20, scanIntervalMs: 3_600_000, scanGraceMs: 0 });
    try {
      relay.start();
      await new Promise((r) => setTimeout(r, 100)); // the first pass (with its scan) is over
      const [kicked, orphan] = [events(1, 'kicked'), events(1, 'orphan')];
      await col.insertOne({ _id: 'orphan' as never, ...outboxOnInsert(orphan) });
      await col.insertOne({ _id: 'kicked' as never, ...outboxOnInsert(kicked) });
      relay.kick('clients_k', 'kicked');
      await waitFor('the kicked event', () => own.ids().includes(kicked[0].id));
      await new Promise((r) => setTimeout(r, 300));
      expect(own.ids()).toEqual([kicked[0].id]);
      await relay.runOnce();
      await waitFor('the orphan event', () => own.ids().includes(orphan[0].id));
      expect(own.ids()).toEqual([kicked[0].id, orphan[0].id]);
    } finally {
      await relay.stop();
      await broker.close();
      await own.close();
      // The suite's observer saw these events too.
      await new Promise((r) => setTimeout(r, 100));
      observer.received = [];
    }
  });

  it('when the store fails while kicked documents are drained, then they stay named and go out once it is back, without a scan', async () => {
    const own = await Observer.start('outbox-test.store-cut');
    const broker = await Broker.connect({ url: AMQP_URL, exchange: EXCHANGE, logger: captureLogger() });
    const store = new URL(process.env.MONGO_URL!);
    const proxy = await startTcpProxy(store.hostname, Number(store.port));
    store.port = String(proxy.port);
    const viaProxy = await MongoClient.connect(store.toString(), { serverSelectionTimeoutMS: 500 });
    const logger = captureLogger();
    const relay = new OutboxRelay({
      db: viaProxy.db(db.databaseName),
      collections: ['clients_s'],
      publisher: broker,
      logger,
      intervalMs: 50,
      concurrency: 2,
      scanIntervalMs: 3_600_000,
      scanGraceMs: 0,
    });
    try {
      relay.start();
      await new Promise((r) => setTimeout(r, 100)); // the first pass (with its scan) is over
      const written = events(6, 'store-cut');
      proxy.cut();
      for (const [i, e] of written.entries()) {
        await db.collection('clients_s').insertOne({ _id: `s${i}` as never, ...outboxOnInsert([e]) });
        relay.kick('clients_s', `s${i}`);
      }
      await waitFor('a pass failing', () => logger.lines.some((l) => l.msg === 'outbox pass failed'), 10_000);
      expect(own.ids()).toEqual([]);
      proxy.restore();
      await waitFor('every kicked event', () => own.ids().length === written.length, 20_000);
      expect(own.ids().sort()).toEqual(written.map((e) => e.id).sort());
    } finally {
      proxy.restore();
      await relay.stop();
      await viaProxy.close();
      await proxy.close();
      await broker.close();
      await own.close();
      await new Promise((r) => setTimeout(r, 100));
      observer.received = [];
    }
  }, 40_000);

  it('when kicked documents are drained, then their locks are taken and given back once per batch, a document whose events went out from memory costs one update, and one a writer holds goes out once it is free', async () => {
    const name = 'clients_batch';
    await createOutboxIndexes(db, [name]);
    const col = db.collection(name);
    const written = Array.from({ length: 30 }, (_, i) => ({ id: `bat${i}`, events: events(2, `batch${i}`) }));
    await col.insertMany(written.map(({ id, events }) => ({ _id: id, ...outboxOnInsert(events) })) as never[]);
    // A client whose commands are counted, so only the relay's are.
    const watched = await MongoClient.connect(process.env.MONGO_URL!, { monitorCommands: true });
    const commands: string[] = [];
    watched.on('commandStarted', (e) => commands.push(e.commandName));
    const own = await Observer.start('outbox-test.batch');
    const relay = new OutboxRelay({ db: watched.db(db.databaseName), collections: [name], publisher: broker, logger: captureLogger(), intervalMs: 3_600_000, scanIntervalMs: 3_600_000, scanGraceMs: 0 });
    // Writers hold every document while the events go out from memory, so no pass drains one yet.
    const held = written.map(({ id }) => id).filter((id) => id !== 'bat7');
    const writers = await tryDocumentLocks(db, name, held);
    const last = await tryDocumentLock(db, name, 'bat7');
    let lastReleased = false;
    try {
      expect(writers.held).toEqual(held);
      relay.start();
      for (const { id, events } of written) relay.kick(name, id, events);
      await waitFor('every event, from memory', () => own.ids().length === 60);
      // No more passes of its own: those below are the test's.
      await relay.stop();
      expect(await col.countDocuments({ outbox_pending: true })).toBe(30);

      await writers.release();
      commands.length = 0;
      expect(await relay.runOnce()).toBe(0);
      const drain = commands.filter((c) => c !== 'ismaster' && c !== 'hello');
      // The kicked batch: its locks (one insert), one update each but bat7's, its locks given
      // back (one delete); then the scan: its find, and bat7's lock refused (one insert, one delete);
      // then the sweep of dead writers' marks: one find of the markers (there are none).
      expect(drain.filter((c) => c === 'update')).toHaveLength(29);
      expect(drain.filter((c) => c === 'insert')).toHaveLength(2);
      expect(drain.filter((c) => c === 'delete')).toHaveLength(2);
      expect(drain.filter((c) => c === 'find')).toHaveLength(2);
      expect(await col.countDocuments({ outbox_pending: true })).toBe(1);

      await last!.release();
      lastReleased = true;
      // Still named: the next pass drains it.
      commands.length = 0;
      await relay.runOnce();
      expect(commands.filter((c) => c === 'update')).toHaveLength(1);
      expect(await col.countDocuments({ outbox_pending: true })).toBe(0);
      expect(own.ids().sort()).toEqual(written.flatMap(({ events }) => events.map((e) => e.id)).sort());
      expect(await col.findOne({ _id: 'bat7' as never })).toMatchObject({ outbox: [], outbox_pending: false });
    } finally {
      await writers.release();
      if (!lastReleased) await last?.release();
      await relay.stop();
      await watched.close();
      await own.close();
      await new Promise((r) => setTimeout(r, 100));
      observer.received = [];
    }
  });

  it('when a document holds events another process wrote beside those published from memory, then the drain reads it and publishes only the others', async () => {
    const name = 'clients_mixed';
    const col = db.collection(name);
    const [mine, theirs] = [events(1, 'mine'), events(1, 'theirs')];
    await col.insertOne({ _id: 'mixed' as never, ...outboxOnInsert([theirs[0], mine[0]]) });
    const own = await Observer.start('outbox-test.mixed');
    const relay = new OutboxRelay({ db, collections: [name], publisher: broker, logger: captureLogger(), intervalMs: 3_600_000, scanIntervalMs: 3_600_000, scanGraceMs: 0 });
    try {
      relay.start();
      relay.kick(name, 'mixed', mine);
      await waitFor('both events', () => own.ids().length === 2);
      await waitFor('the outbox emptied', async () => (await col.countDocuments({ outbox_pending: true })) === 0);
      await relay.runOnce();
      expect(own.ids().sort()).toEqual([mine[0].id, theirs[0].id].sort());
    } finally {
      await relay.stop();
      await own.close();
      await new Promise((r) => setTimeout(r, 100));
      observer.received = [];
    }
  });

  it('when two relays drain the same collection, then no event is published twice', async () => {
    const col = db.collection('clients_c');
    const all: DomainEvent[] = [];
    const docs = Array.from({ length: 40 }, (_, i) => {
      const evs = events(3, `c${i}`);
      all.push(...evs);
      return { _id: `cli_c${i}`, ...outboxOnInsert(evs) };
    });
    await col.insertMany(docs as never[]);
    // Separate store clients, so the two relays really race on the server.
    const client2 = await MongoClient.connect(process.env.MONGO_URL!);
    const db2 = client2.db(db.databaseName);
    const published: string[] = [];
    const counting = { publish: async (e: DomainEvent) => { published.push(e.id); await broker.publish(e); } };
    const r1 = new OutboxRelay({ scanIntervalMs: 50, scanGraceMs: 0, db, collections: ['clients_c'], publisher: counting, logger: log, intervalMs: 20 });
    const r2 = new OutboxRelay({ scanIntervalMs: 50, scanGraceMs: 0, db: db2, collections: ['clients_c'], publisher: counting, logger: log, intervalMs: 20 });
    try {
      await Promise.all([r1.runOnce(), r2.runOnce(), r1.runOnce(), r2.runOnce()]);
      r1.start();
      r2.start();
      await waitFor('all events', () => observer.received.length >= all.length);
      await waitFor('outboxes drained', async () => (await col.countDocuments({ outbox_pending: true })) === 0);
    } finally {
      await Promise.all([r1.stop(), r2.stop()]);
      await client2.close();
    }
    expect(published.length).toBe(all.length);
    expect(new Set(published).size).toBe(all.length);
    const ids = observer.ids();
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.sort()).toEqual(all.map((e) => e.id).sort());
    observer.received = [];
  });

  it('when a relay stalls holding a lease, then another relay publishes the events after the lease and the stalled one publishes no more', async () => {
    const col = db.collection('clients_d');
    const evs = events(3, 'd');
    await col.insertOne({ _id: 'cli_d' as never, ...outboxOnInsert(evs) });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const stalledCalls: string[] = [];
    // Stands in for a relay whose process hangs: its first publish never comes back until released.
    const stalledPublisher = {
      publish: async (e: DomainEvent) => {
        stalledCalls.push(e.id);
        await gate;
      },
    };
    const stalled = new OutboxRelay({ scanIntervalMs: 50, scanGraceMs: 0, db, collections: ['clients_d'], publisher: stalledPublisher, logger: log });
    const other = new OutboxRelay({ scanIntervalMs: 50, scanGraceMs: 0, db, collections: ['clients_d'], publisher: broker, logger: log });
    const stalledPass = stalled.runOnce();
    await waitFor('the stalled relay to hold the document', () => stalledCalls.length === 1);
    expect(await other.runOnce()).toBe(0);
    await waitFor('events from the other relay once the lease expired', async () => {
      await other.runOnce();
      return observer.received.length >= 3;
    }, 30_000);
    release();
    await stalledPass;
    expect(stalledCalls).toEqual([evs[0].id]);
    expect(observer.ids()).toEqual(evs.map((e) => e.id));
    expect(await col.findOne({ _id: 'cli_d' as never })).toMatchObject({ outbox: [], outbox_pending: false });
    observer.received = [];
  });
  it('when writers and the relay update one document concurrently under the document lock, then no change and no event is lost', async () => {
    const col = db.collection('clients_e');
    await col.insertOne({ _id: 'cli_e' as never, n: 0, ...outboxOnInsert([]) });
    const client2 = await MongoClient.connect(process.env.MONGO_URL!);
    const db2 = client2.db(db.databaseName);
    const relay = new OutboxRelay({ scanIntervalMs: 50, scanGraceMs: 0, db, collections: ['clients_e'], publisher: broker, logger: log, intervalMs: 5 });
    const written: string[] = [];
    try {
      relay.start();
      // Four writers on two store clients, each write queuing one event, while the relay drains.
      await Promise.all(
        [db, db2, db, db2].map(async (d, w) => {
          for (let i = 0; i < 15; i++) {
            const [e] = events(1, `e${w}-${i}`);
            written.push(e.id);
            // What is checked is that nothing is lost, not how long a writer waits: the lock is
            // polled, not queued, so on a busy machine one of four writers can wait past the 5 s default.
            await withDocumentLock(
              d,
              'clients_e',
              'cli_e',
              () => d.collection('clients_e').updateOne({ _id: 'cli_e' as never }, outboxUpdate({ $inc: { n: 1 } }, [e])),
              { waitMs: 60_000 },
            );
            relay.kick();
          }
        }),
      );
      await waitFor('all events', () => observer.received.length >= written.length);
      await waitFor('outbox drained', async () => (await col.countDocuments({ outbox_pending: true })) === 0);
    } finally {
      await relay.stop();
      await client2.close();
    }
    expect((await col.findOne({ _id: 'cli_e' as never }))!.n).toBe(written.length);
    const ids = observer.ids();
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.sort()).toEqual(written.sort());
    observer.received = [];
  });
});
