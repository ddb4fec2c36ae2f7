// Writes whose events go under their writer's outbox mark (outbox/marks.ts) through a
// RecordStore and a real relay, broker and store: grouped inserts, no write of the
// record after its own, each event once and in order, and nothing lost when the
// writer dies or a write's fate is unknown.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { MongoClient, type Db } from 'mongodb';
import { notFound } from '../src/errors.ts';
import { newEvent, type DomainEvent } from '../src/events.ts';
import { newId } from '../src/ids.ts';
import type { EventPublisher } from '../src/outbox/drain.ts';
import { createOutboxIndexes, outboxMarked } from '../src/outbox/fields.ts';
import { MARK_SLOT_MS, OUTBOX_MARKS } from '../src/outbox/marks.ts';
import { OutboxRelay } from '../src/outbox/relay.ts';
import { RecordStore } from '../src/store/record-store.ts';
import { tapEvents, type EventTap } from '@lpm/test-kit/event-tap';
import { scratchBroker, type ScratchBroker } from '@lpm/test-kit/scratch-broker';
import { captureLogger, waitFor } from '@lpm/test-kit/wait';

interface Note {
  _id: string;
  team_id: string;
  version: number;
  text: string;
}

const TEAM = 'team_marks';
const exchange = `outbox-marks-${Date.now().toString(36)}`;
let client: MongoClient;
let db: Db;
/** Every command this test's store client sends, by `<command> <collection>`. */
let sent: string[] = [];
let scratch: ScratchBroker;
let tap: EventTap;

const notesOf = (collection: string, relay: OutboxRelay | { kick: () => void }) =>
  new RecordStore<Note>({
    db,
    collection,
    relay,
    idKind: 'cli',
    noun: 'note',
    notFound: () => notFound('Note not found'),
  });
const noted = (text: string, id = newId('cli')): Note => ({ _id: id, team_id: TEAM, version: 1, text });
const eventOf = (note: Note, type = 'client.created') =>
  newEvent(type, TEAM, { id: note._id, text: note.text }, null, null);
const relayOn = (collections: string[], publisher: EventPublisher = scratch.broker) =>
  new OutboxRelay({ db, collections, publisher, logger: captureLogger(), intervalMs: 100, scanIntervalMs: 3_600_000 });
const count = (prefix: string) => sent.filter((c) => c.startsWith(prefix)).length;

/** A relay on `collection` (its outbox indexes made), started for `run` with the notes written through it, and stopped after. */
async function withRelay(collection: string, run: (relay: OutboxRelay, notes: RecordStore<Note>) => Promise<void>) {
  await createOutboxIndexes(db, [collection]);
  const relay = relayOn([collection]);
  relay.start();
  try {
    await run(relay, notesOf(collection, relay));
  } finally {
    await relay.stop();
  }
}

beforeAll(async () => {
  client = await MongoClient.connect(process.env.MONGO_URL!, { monitorCommands: true });
  client.on('commandStarted', (e) => sent.push(`${e.commandName} ${String(e.command[e.commandName])}`));
  db = client.db(`${process.env.MONGO_DB_PREFIX}outbox_marks`);
  scratch = await scratchBroker(exchange);
  tap = await tapEvents(exchange, ['#']);
});

afterAll(async () => {
  await tap.close();
  await scratch.close();
  await db.dropDatabase();
  await client.close();
});

test(
  'when records are created at once and then updated, then their inserts share commands, each event goes out once in write order, and nothing writes a record again',
  () =>
    withRelay('notes_a', async (_relay, notes) => {
      const written = Array.from({ length: 40 }, (_, i) => noted(`n${i}`));
      sent = [];
      await Promise.all(written.map((n) => notes.insert(n, [eventOf(n)])));
      // One insertMany for the 40 records (and one for the mark's marker).
      expect(count('insert notes_a')).toBe(1);
      expect(count('insert outbox_marks')).toBe(1);
      for (const n of written)
        await notes.update(TEAM, n._id, async (current) => ({
          result: null,
          write: { set: { text: `${current.text}!` }, events: [eventOf(current, 'client.updated')] },
        }));
      await waitFor('every event', () => tap.events.filter((e) => e.team_id === TEAM).length >= 80);
      await new Promise((r) => setTimeout(r, 300));
      const mine = tap.events.filter(
        (e) =>
          (e.data.object as { id: string }).id.startsWith('cli_') &&
          written.some((n) => n._id === (e.data.object as { id: string }).id),
      );
      expect(mine).toHaveLength(80);
      expect(new Set(mine.map((e) => e.id)).size).toBe(80);
      for (const n of written) {
        expect(mine.filter((e) => (e.data.object as { id: string }).id === n._id).map((e) => e.type)).toEqual([
          'client.created',
          'client.updated',
        ]);
      }
      // Each record: its insert, one update (the change and its events), its lock; no drain.
      expect(count('update notes_a')).toBe(40);
      expect(sent.filter((c) => c.startsWith('insert document_locks'))).toHaveLength(40);
      const stored = await db.collection('notes_a').findOne({ _id: written[0]._id as never });
      expect(stored).toMatchObject({ text: 'n0!', version: 2 });
      expect(stored).not.toHaveProperty('outbox_pending');
      expect(JSON.parse(stored!.outbox_events as string).map((e: DomainEvent) => e.type)).toEqual(['client.updated']);
      // Once its slot is over and its events are out, each mark's marker goes.
      await waitFor(
        'markers deleted',
        async () => (await db.collection(OUTBOX_MARKS).countDocuments({ collection: 'notes_a' })) === 0,
        4 * MARK_SLOT_MS,
      );
      // Reads never show the outbox.
      expect(await notes.get(TEAM, written[0]._id)).toEqual({
        _id: written[0]._id,
        team_id: TEAM,
        version: 2,
        text: 'n0!',
      });
    }),
  40_000,
);

test('when the writer is killed after its records are stored and before their events are published, then another relay publishes them from its marks', async () => {
  await createOutboxIndexes(db, ['notes_b']);
  const written = Array.from({ length: 5 }, (_, i) => noted(`dead${i}`));
  const events = written.map((n) => eventOf(n));
  // A writer process whose broker never confirms: its records are stored, their events wait in its memory.
  const source = `import { MongoClient } from 'mongodb';
import { RecordStore } from ${JSON.stringify(fileURLToPath(new URL('../src/store/record-store.ts', import.meta.url)))};
import { OutboxRelay } from ${JSON.stringify(fileURLToPath(new URL('../src/outbox/relay.ts', import.meta.url)))};
const quiet = { warn() {}, info() {}, error() {}, debug() {} };
const client = await MongoClient.connect(process.env.MONGO_URL);
const db = client.db(${JSON.stringify(db.databaseName)});
const relay = new OutboxRelay({ db, collections: ['notes_b'], publisher: { publish: () => new Promise(() => {}) }, logger: quiet, scanIntervalMs: 3600000 });
relay.start();
const notes = new RecordStore({ db, collection: 'notes_b', relay, idKind: 'cli', noun: 'note', notFound: () => new Error('not found') });
const written = ${JSON.stringify(written)};
const events = ${JSON.stringify(events)};
await Promise.all(written.map((n, i) => notes.insert(n, [events[i]])));
console.log('stored');
setInterval(() => {}, 1000);`;
  const writer = spawn(process.execPath, ['--input-type=module', '-e', source], {
    env: { ...process.env, NODE_OPTIONS: '' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  writer.stdout.on('data', (d: Buffer) => (out += d.toString()));
  await waitFor('the writer stored its records', () => out.includes('stored'), 30_000);
  writer.kill('SIGKILL');
  await new Promise((r) => writer.once('exit', r));
  expect(await db.collection('notes_b').countDocuments({})).toBe(5);
  expect(await db.collection(OUTBOX_MARKS).countDocuments({ collection: 'notes_b' })).toBeGreaterThan(0);

  const survivor = new OutboxRelay({
    db,
    collections: ['notes_b'],
    publisher: scratch.broker,
    logger: captureLogger(),
    intervalMs: 100,
    scanIntervalMs: 100,
    markSweepAfterMs: 1000,
  });
  survivor.start();
  try {
    const ids = new Set(events.map((e) => e.id));
    const of = () => tap.events.filter((e) => ids.has(e.id));
    await waitFor("the killed writer's events", () => of().length === 5, 4 * MARK_SLOT_MS);
    await waitFor(
      'its markers deleted',
      async () => (await db.collection(OUTBOX_MARKS).countDocuments({ collection: 'notes_b' })) === 0,
    );
    expect(
      of()
        .map((e) => e.id)
        .sort(),
    ).toEqual([...ids].sort());
    expect(await survivor.runOnce()).toBe(0);
  } finally {
    await survivor.stop();
  }
}, 60_000);

test(
  "when a write under a mark fails without the store's answer and landed all the same, then its events are published from the store once the mark closes",
  () =>
    withRelay('notes_c', async (relay) => {
      const note = noted('uncertain');
      const event = eventOf(note);
      const ticket = await relay.marks.take('notes_c', note._id);
      expect(ticket).not.toBeNull();
      // What the store did with a write whose answer was lost.
      await db.collection('notes_c').insertOne({ ...note, ...outboxMarked(ticket!.mark, [event]) } as never);
      ticket!.failed();
      // Meanwhile the record is owed: a write over it keeps its events.
      expect(await relay.marks.settled('notes_c', note._id, ticket!.mark)).toBe(false);
      await waitFor('the event, from the store', () => tap.events.some((e) => e.id === event.id), 30_000);
      await waitFor(
        'the marker deleted',
        async () => (await db.collection(OUTBOX_MARKS).countDocuments({ _id: ticket!.mark as never })) === 0,
      );
      expect(await relay.marks.settled('notes_c', note._id, ticket!.mark)).toBe(true);
      expect(tap.events.filter((e) => e.id === event.id)).toHaveLength(1);
    }),
  40_000,
);

test("when a record's last events, under another writer's mark, may not be out yet, then an update keeps them and adds its own to the per-document outbox", async () => {
  await createOutboxIndexes(db, ['notes_d']);
  const down: EventPublisher = { publish: async () => Promise.reject(new Error('broker unreachable')) };
  const stuck = relayOn(['notes_d'], down);
  stuck.start();
  const other = relayOn(['notes_d']);
  other.start();
  try {
    const note = noted('kept');
    const created = eventOf(note);
    await notesOf('notes_d', stuck).insert(note, [created]);
    const updated = eventOf(note, 'client.updated');
    const notes = notesOf('notes_d', other);
    await notes.update(TEAM, note._id, async () => ({
      result: null,
      write: { set: { text: 'kept!' }, events: [updated] },
    }));
    const stored = await db.collection('notes_d').findOne({ _id: note._id as never });
    expect(JSON.parse(stored!.outbox_events as string).map((e: DomainEvent) => e.id)).toEqual([created.id]);
    expect((stored!.outbox as DomainEvent[]).map((e) => e.id)).toEqual([updated.id]);
    await waitFor('the update', () => tap.events.some((e) => e.id === updated.id));
    // The stuck writer dies; its mark is swept.
    stuck.marks.halt();
    expect(await other.runOnce()).toBe(1);
    expect(tap.events.filter((e) => e.id === created.id)).toHaveLength(1);
    // Its mark now closed, the next write replaces the record's events under its own.
    const again = eventOf(note, 'client.updated');
    await notes.update(TEAM, note._id, async () => ({
      result: null,
      write: { set: { text: 'kept!!' }, events: [again] },
    }));
    const after = await db.collection('notes_d').findOne({ _id: note._id as never });
    expect(JSON.parse(after!.outbox_events as string).map((e: DomainEvent) => e.id)).toEqual([again.id]);
    expect(after!.outbox_mark).not.toBe(stored!.outbox_mark);
  } finally {
    await other.stop();
    await stuck.stop();
  }
}, 40_000);

test("when a create runs again for a record its first run stored (an Idempotency-Key retry), then it resolves, the record is stored once and only the first run's event goes out", () =>
  withRelay('notes_f', async (relay, notes) => {
    const note = noted('once');
    const first = eventOf(note);
    const again = eventOf(note);
    await notes.insert(note, [first]);
    await notes.insert(note, [again]);
    await expect(notes.insert({ ...note, team_id: 'team_other' }, [eventOf(note)])).rejects.toMatchObject({
      code: 11000,
    });
    await waitFor('the first event', () => tap.events.some((e) => e.id === first.id));
    await new Promise((r) => setTimeout(r, 300));
    expect(await db.collection('notes_f').countDocuments({})).toBe(1);
    expect(tap.events.filter((e) => e.id === first.id)).toHaveLength(1);
    expect(tap.events.some((e) => e.id === again.id)).toBe(false);
    expect(
      await relay.marks.settled(
        'notes_f',
        note._id,
        (await db.collection('notes_f').findOne({ _id: note._id as never }))!.outbox_mark as string,
      ),
    ).toBe(true);
  }));

test(
  'when a run reads records by readUnmarked and rewrites them with updateReads, then their events go under a mark and nothing drains a per-document outbox',
  () =>
    withRelay('notes_g', async (_relay, notes) => {
      const written = Array.from({ length: 12 }, (_, i) => noted(`g${i}`));
      await Promise.all(written.map((n) => notes.insert(n, [eventOf(n)])));
      await waitFor(
        'created events',
        () =>
          tap.events.filter(
            (e) => e.type === 'client.created' && written.some((n) => n._id === (e.data.object as { id: string }).id),
          ).length === 12,
      );
      sent = [];
      const reads = await notes.readUnmarked(TEAM, {}, { sync_g: 'run-1' }, 20);
      expect(reads).toHaveLength(12);
      const { failed } = await notes.updateReads(
        reads,
        async (current) => ({
          result: true,
          write: { set: { text: `${current.text}~` }, events: [eventOf(current, 'client.updated')] },
        }),
        { sync_g: 'run-1' },
      );
      expect(failed).toBeUndefined();
      const updated = () =>
        tap.events.filter(
          (e) => e.type === 'client.updated' && written.some((n) => n._id === (e.data.object as { id: string }).id),
        );
      await waitFor('updated events', () => updated().length === 12);
      expect(new Set(updated().map((e) => (e.data.object as { id: string }).id)).size).toBe(12);
      // One update a record, carrying its change, its events and the run's mark.
      expect(count('update notes_g')).toBe(12);
      const stored = await db
        .collection<{ _id: string; [field: string]: unknown }>('notes_g')
        .find({ _id: { $in: written.map((n) => n._id) } })
        .toArray();
      for (const doc of stored) {
        expect(doc).toMatchObject({ text: `${written.find((n) => n._id === doc._id)!.text}~`, sync_g: 'run-1' });
        expect(doc.outbox ?? []).toEqual([]);
        expect(JSON.parse(doc.outbox_events as string).map((e: DomainEvent) => e.type)).toEqual(['client.updated']);
      }
    }),
  40_000,
);

test('when a relay has no marks (a stub), then writes keep the per-document outbox', async () => {
  const notes = notesOf('notes_e', { kick: () => {} });
  const note = noted('plain');
  const event = eventOf(note);
  await notes.insert(note, [event]);
  const stored = await db.collection('notes_e').findOne({ _id: note._id as never });
  expect(stored).toMatchObject({ outbox: [event], outbox_pending: true });
  expect(stored).not.toHaveProperty('outbox_mark');
});
