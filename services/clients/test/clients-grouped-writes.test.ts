// POST /v1/clients under concurrency, with the real outbox relay, broker and store:
// the writes in flight share their store commands (records and list count deltas in
// one insertMany each, events under the relay's mark with no write of the record
// after its own), each answer comes once the record is stored, each event goes out
// once, and the list totals are exact right after the burst and after the fold.
import type { CommandStartedEvent } from 'mongodb';
import { MongoClient } from 'mongodb';
import type { EventTap } from '@lpm/test-kit/event-tap';
import { waitFor } from '@lpm/test-kit/wait';
import { identity } from '@lpm/test-kit/teams';
import { relayedClientsSuite, type ClientsUnderTest } from './helper.ts';

let sut: ClientsUnderTest;
let tap: EventTap;
/** A client of its own: its reads are not the service's commands. */
let reader: MongoClient;

relayedClientsSuite('clients-grouped', (started) => ({ sut, tap } = started));

beforeAll(async () => {
  reader = await MongoClient.connect(process.env.MONGO_URL!);
});

afterAll(async () => {
  await reader.close();
});

test('when 60 clients of 6 teams are created at once, then they share store commands, each answer follows its stored record, each event goes out once, and the list totals are exact', async () => {
  const teams = Array.from({ length: 6 }, () => identity());
  // A first write: the team-independent set-up (the lists' documents, a mark) is not the burst's.
  expect(
    (await sut.call(teams[0], { method: 'POST', url: '/v1/clients', payload: { type: 'PJ', name: 'Warm' } }))
      .statusCode,
  ).toBe(201);
  await tap.waitFor('client.created');

  const commands: string[] = [];
  const count = (e: CommandStartedEvent) => commands.push(`${e.commandName} ${String(e.command[e.commandName])}`);
  sut.db.client.on('commandStarted', count);
  const stored = reader.db(sut.db.databaseName).collection('clients');
  const answered: { id: string; team: number; found: boolean }[] = [];
  try {
    await Promise.all(
      Array.from({ length: 60 }, async (_, i) => {
        const team = i % teams.length;
        const res = await sut.call(teams[team], {
          method: 'POST',
          url: '/v1/clients',
          payload: { type: i % 3 === 0 ? 'PF' : 'PJ', name: `Burst ${i}` },
        });
        expect(res.statusCode).toBe(201);
        const id = res.json().data.id as string;
        // Read by another client the moment the answer is in.
        answered.push({
          id,
          team,
          found: (await stored.findOne({ _id: id as never }, { projection: { _id: 1 } })) !== null,
        });
      }),
    );
  } finally {
    sut.db.client.off('commandStarted', count);
  }
  expect(answered.filter((a) => !a.found)).toEqual([]);

  const of = (prefix: string) => commands.filter((c) => c.startsWith(prefix)).length;
  // Before the grouping: an insert of each record, an update clearing its outbox, a delta each (grouped
  // at times), and the drain's locks: about 2.5 a write. Now a few insertMany of records and of deltas.
  expect(of('update clients')).toBe(0);
  expect(of('insert document_locks')).toBe(0);
  expect(of('insert clients')).toBeLessThanOrEqual(6);
  expect(of('insert list_count_deltas')).toBeLessThanOrEqual(6);
  expect(commands.length / 60).toBeLessThanOrEqual(0.3);

  const ids = new Set(answered.map((a) => a.id));
  await waitFor(
    'every client.created',
    () => tap.of('client.created').filter((e) => ids.has((e.data.object as { id: string }).id)).length === 60,
  );
  await new Promise((r) => setTimeout(r, 300));
  const events = tap.of('client.created').filter((e) => ids.has((e.data.object as { id: string }).id));
  expect(events).toHaveLength(60);
  expect(new Set(events.map((e) => (e.data.object as { id: string }).id)).size).toBe(60);
  expect(await stored.countDocuments({ outbox_pending: true })).toBe(0);

  const totals = async (type?: string) =>
    Promise.all(
      teams.map(
        async (who) =>
          (await sut.call(who, { method: 'GET', url: `/v1/clients?limit=5${type ? `&type=${type}` : ''}` })).json()
            .pagination.total as number,
      ),
    );
  const expected = (type?: string) =>
    teams.map(
      (_, t) =>
        Array.from({ length: 60 }, (_, i) => i).filter(
          (i) => i % teams.length === t && (!type || (type === 'PF') === (i % 3 === 0)),
        ).length + (t === 0 && type !== 'PF' ? 1 : 0),
    );
  // Counted from the deltas, then from the counts documents once the deltas are folded (within 5 s).
  expect(await totals()).toEqual(expected());
  expect(await totals('PF')).toEqual(expected('PF'));
  await waitFor(
    'the deltas folded',
    async () => (await reader.db(sut.db.databaseName).collection('list_count_deltas').countDocuments({})) === 0,
    15_000,
  );
  expect(await totals()).toEqual(expected());
  expect(await totals('PJ')).toEqual(expected('PJ'));
}, 60_000);
