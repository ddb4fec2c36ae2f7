// RecordLinks over ClientLinks and CaseLinks on the local store, with the owners
// faked: a check asks the owner, keeps the facts as the view and answers with what
// it found, so the shape of the record it let through reads none of it back; links
// not the team's are the spec's 404s.
import { MongoClient, type CommandStartedEvent, type Db } from 'mongodb';
import { newId } from '../src/ids.ts';
import type { CaseFacts } from '../src/upstream/cases-service.ts';
import type { ClientFacts } from '../src/upstream/clients-service.ts';
import { CaseLinks } from '../src/views/case-links.ts';
import { CASE_VIEWS, type CaseView } from '../src/views/case-view-entity.ts';
import { ClientLinks } from '../src/views/client-links.ts';
import { CLIENT_VIEWS, type ClientView } from '../src/views/client-view-entity.ts';
import { RecordLinks } from '../src/views/record-links.ts';
import { ViewsRepository } from '../src/views/views-repository.ts';

const TEAM = 'team_links';
const who = { teamId: TEAM, userId: newId('user') };
const client: ClientFacts = {
  id: newId('cli'),
  name: 'Padaria Central',
  type: 'PJ',
  email: null,
  phone: null,
  status: 'active',
  updated_at: '2026-11-27T10:00:00.000Z',
};
const kase: CaseFacts = {
  id: newId('case'),
  title: 'Revisional',
  number: null,
  updated_at: '2026-11-27T10:00:00.000Z',
};
const lawyer = { id: newId('user'), name: 'Marina Rocha', email: 'marina@example.com' };

let mongo: MongoClient;
let db: Db;
let links: RecordLinks;
const commands: string[] = [];

beforeAll(async () => {
  mongo = await MongoClient.connect(process.env.MONGO_URL!, { monitorCommands: true });
  db = mongo.db(`${process.env.MONGO_DB_PREFIX}record_links`);
  mongo.on('commandStarted', (e: CommandStartedEvent) => commands.push(`${e.commandName} ${e.command[e.commandName]}`));
  links = new RecordLinks({
    clients: new ClientLinks(
      { facts: async (caller, id) => (caller.teamId === TEAM && id === client.id ? client : null) },
      new ViewsRepository<ClientView>(db, CLIENT_VIEWS),
    ),
    cases: new CaseLinks(
      { facts: async (caller, id) => (caller.teamId === TEAM && id === kase.id ? kase : null) },
      new ViewsRepository<CaseView>(db, CASE_VIEWS),
    ),
    users: {
      find: async (teamId, ids) => new Map(teamId === TEAM && ids.includes(lawyer.id) ? [[lawyer.id, lawyer]] : []),
    },
  });
});

afterAll(async () => {
  await db.dropDatabase();
  await mongo.close();
});

describe('RecordLinks', () => {
  it('when a write links a client, a case and a user of the team, then the check keeps the views and answers with them, and the shape needs no read of its own', async () => {
    const body = { client_id: client.id, case_id: kase.id, responsible_id: lawyer.id };
    const checked = await links.check(who, body);
    expect(checked.clients.get(client.id)).toMatchObject({ _id: client.id, name: 'Padaria Central' });
    expect(checked.cases.get(kase.id)).toMatchObject({ _id: kase.id, title: 'Revisional' });
    expect(checked.users.get(lawyer.id)).toEqual(lawyer);
    expect(await db.collection(CLIENT_VIEWS).findOne({ _id: client.id as never })).toMatchObject({
      name: 'Padaria Central',
      team_id: TEAM,
    });

    commands.length = 0;
    const shown = await links.of(TEAM, [body], checked);
    expect(commands).toEqual([]);
    expect(shown).toEqual(checked);
    // Without what the check found, the views are read.
    expect((await links.of(TEAM, [body])).cases.get(kase.id)).toMatchObject({ title: 'Revisional' });
    expect(commands.filter((c) => c.startsWith('find')).sort()).toEqual([`find ${CASE_VIEWS}`, `find ${CLIENT_VIEWS}`]);
  });

  it("when a link is not the team's, or not an id of its kind, then 404 with the spec's message", async () => {
    const other = { teamId: 'team_other', userId: who.userId };
    await expect(links.check(other, { client_id: client.id })).rejects.toMatchObject({
      status: 404,
      message: 'Client not found',
    });
    await expect(links.check(other, { case_id: kase.id })).rejects.toMatchObject({
      status: 404,
      message: 'Case not found',
    });
    await expect(links.check(who, { case_id: client.id })).rejects.toMatchObject({
      status: 404,
      message: 'Case not found',
    });
    await expect(links.check(who, { responsible_id: newId('user') })).rejects.toMatchObject({
      status: 404,
      message: 'User not found',
    });
  });
});
