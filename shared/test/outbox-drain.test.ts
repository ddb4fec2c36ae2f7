// The outbox relay's drain of kicked documents, its locks, concurrent relays and
// writers, and a stalled relay (the rest: outbox.test.ts).
import { MongoClient, type Db } from 'mongodb';
import { type DomainEvent } from '../src/events.ts';
import { createOutboxIndexes, outboxOnInsert, outboxUpdate } from '../src/outbox/fields.ts';
import { tryDocumentLock, tryDocumentLocks, withDocumentLock } from '../src/store/lock.ts';
import { captureLogger, waitFor } from '@lpm/test-kit/wait';
import { broker, db, events, observer, outboxSuite, ownObserver, relays, storeOutage } from './outbox-suite.ts';

outboxSuite('b');

/** A relay of `collection` on `on` that publishes to the broker only when kicked: its passes and scans wait an hour. */
const kickedOnlyRelay = (on: Db, collection: string) =>
  relays.kicked(collection, { db: on, intervalMs: 3_600_000, scanGraceMs: 0 });

describe('OutboxRelay drain', () => {
  it('when the store fails while kicked documents are drained, then they stay named and go out once it is back, without a scan', async () => {
    const { own, publisher, proxy, viaDb, end } = await storeOutage('outbox-test.store-cut');
    const logger = captureLogger();
    const relay = relays.kicked('clients_s', {
      db: viaDb,
      publisher,
      logger,
      intervalMs: 50,
      concurrency: 2,
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
      await end(relay);
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
    const own = await ownObserver('outbox-test.batch');
    const relay = kickedOnlyRelay(watched.db(db.databaseName), name);
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
    }
  });

  it('when a document holds events another process wrote beside those published from memory, then the drain reads it and publishes only the others', async () => {
    const name = 'clients_mixed';
    const col = db.collection(name);
    const [mine, theirs] = [events(1, 'mine'), events(1, 'theirs')];
    await col.insertOne({ _id: 'mixed' as never, ...outboxOnInsert([theirs[0], mine[0]]) });
    const own = await ownObserver('outbox-test.mixed');
    const relay = kickedOnlyRelay(db, name);
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
    const counting = {
      publish: async (e: DomainEvent) => {
        published.push(e.id);
        await broker.publish(e);
      },
    };
    const r1 = relays.scanning('clients_c', { publisher: counting, intervalMs: 20 });
    const r2 = relays.scanning('clients_c', { db: db2, publisher: counting, intervalMs: 20 });
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
    const stalled = relays.scanning('clients_d', { publisher: stalledPublisher });
    const other = relays.scanning('clients_d');
    const stalledPass = stalled.runOnce();
    await waitFor('the stalled relay to hold the document', () => stalledCalls.length === 1);
    expect(await other.runOnce()).toBe(0);
    await waitFor(
      'events from the other relay once the lease expired',
      async () => {
        await other.runOnce();
        return observer.received.length >= 3;
      },
      30_000,
    );
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
    const relay = relays.scanning('clients_e', { intervalMs: 5 });
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
              () =>
                d.collection('clients_e').updateOne({ _id: 'cli_e' as never }, outboxUpdate({ $inc: { n: 1 } }, [e])),
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
