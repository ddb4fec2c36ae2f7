// The outbox relay: events written with a record go out exactly once and in order,
// through broker and store outages (the drain of kicked documents and concurrent
// relays: outbox-drain.test.ts).
import { Broker } from '../src/messaging/broker.ts';
import { type DomainEvent } from '../src/events.ts';
import { createOutboxIndexes, outboxOnInsert, outboxUpdate } from '../src/outbox/fields.ts';
import { withDocumentLock } from '../src/store/lock.ts';
import { brokerBehindProxy } from '@lpm/test-kit/broker-behind-proxy';
import { captureLogger, waitFor } from '@lpm/test-kit/wait';
import {
  EXCHANGE,
  broker,
  db,
  events,
  observer,
  outboxSuite,
  ownObserver,
  relays,
  storeOutage,
} from './outbox-suite.ts';

const AMQP_URL = process.env.AMQP_URL!;

outboxSuite('a');

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
  it('when events are written with a record, then each is published exactly once, in order, with its properties', async () => {
    const col = db.collection('clients_a');
    await createOutboxIndexes(db, ['clients_a']);
    const [e1, e2, e3] = events(3, 'a');
    await col.insertOne({ _id: 'cli_a' as never, name: 'a', v: 1, ...outboxOnInsert([e1, e2]) });
    await col.updateOne({ _id: 'cli_a' as never }, outboxUpdate({ $set: { name: 'b' }, $inc: { v: 1 } }, [e3]));
    const written = await col.findOne({ _id: 'cli_a' as never });
    expect(written).toMatchObject({ name: 'b', v: 2, outbox_pending: true });
    expect((written!.outbox as DomainEvent[]).map((e) => e.id)).toEqual([e1.id, e2.id, e3.id]);

    const relay = relays.scanning('clients_a', { intervalMs: 50 });
    relay.start();
    relay.kick();
    await waitFor('3 events', () => observer.received.length >= 3);
    await waitFor(
      'outbox cleared',
      async () => (await col.findOne({ _id: 'cli_a' as never }))!.outbox_pending === false,
    );
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
    const outageLog = captureLogger();
    const behind = await brokerBehindProxy(EXCHANGE, {
      logger: outageLog,
      reconnectMinMs: 50,
      reconnectMaxMs: 300,
      publishTimeoutMs: 2000,
    });
    const { proxy, broker: viaProxy } = behind;
    const relay = relays.scanning('clients_b', { publisher: viaProxy, logger: outageLog, intervalMs: 50 });
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
      const outboxWarnings = outageLog.lines.filter(
        (l) => l.level === 'warn' && /outbox publish failed/.test(l.msg ?? ''),
      );
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
      const b1 = observer.received.filter(
        (r) =>
          (r.event.data.object as { label: string }).label.startsWith('during1') ||
          (r.event.data.object as { label: string }).label === 'during-update',
      );
      expect(b1.map((r) => (r.event.data.object as { label: string }).label)).toEqual([
        'during1',
        'during1',
        'during-update',
      ]);
    } finally {
      await relay.stop();
      await behind.close();
      observer.received = [];
    }
  });

  it('when a write hands its events over, then they go out from memory while the store is away, are removed once it is back, and a scanning relay leaves them alone', async () => {
    const { own, publisher, proxy, viaDb, end } = await storeOutage('outbox-test.memory');
    const writer = relays.kicked('clients_m', { db: viaDb, publisher, intervalMs: 50 });
    // Another replica's relay, scanning often: the young pending documents are the writer's to finish.
    const scanner = relays.scanning('clients_m', {
      publisher,
      logger: captureLogger(),
      intervalMs: 50,
      scanGraceMs: 60_000,
    });
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
      await end(writer, scanner);
    }
  }, 40_000);

  it("when a publish from memory fails, then the document's later events wait for it and all go out in write order once the broker is back", async () => {
    const own = await ownObserver('outbox-test.memory-order');
    const col = db.collection('clients_o');
    let refusing = true;
    const flaky = {
      publish: async (e: DomainEvent) => (refusing ? Promise.reject(new Error('broker away')) : broker.publish(e)),
    };
    const relay = relays.kicked('clients_o', { publisher: flaky, intervalMs: 50 });
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
    }
  });

  it('when a write kicks the relay with its document, then it is published at once without a scan; an unkicked one waits for the scan', async () => {
    const own = await ownObserver('outbox-test.kicked');
    const broker = await Broker.connect({ url: AMQP_URL, exchange: EXCHANGE, logger: captureLogger() });
    const col = db.collection('clients_k');
    const relay = relays.kicked('clients_k', { publisher: broker, intervalMs: 20, scanGraceMs: 0 });
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
    }
  });
});
