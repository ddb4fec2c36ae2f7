// A won with create_case whose first attempt did not complete, the path a won takes,
// DELETE, and the internal endpoints, on the deals app in process (deals-suite.ts).
import type { CommandStartedEvent } from 'mongodb';
import type { DomainEvent } from '@lpm/shared/events';
import { newId } from '@lpm/shared/ids';
import type { ClientFacts } from '@lpm/shared/upstream/clients-service';
import { LOCKS_COLLECTION, lockKey } from '@lpm/shared/store/lock';
import { expectNotFound } from '@lpm/test-kit/error-answers';
import { identity } from '@lpm/test-kit/teams';
import { startDeals, type DealsUnderTest } from './helper.ts';
import { call, client, create, dealsSuite, eventsOf, ISO_MS, lawyer, users, who } from './deals-suite.ts';
import { afterBusyWon, createOn, wonWithCase } from './own-deals-app.ts';

dealsSuite();

describe('won without create_case after a won with create_case that did not complete', () => {
  test('when the first attempt ends in 503 after the case exists and the retry asks for no case, then the deal is won without one and the case made for it is archived', async () => {
    await afterBusyWon('Ganho sem processo', async (own, deal, fake) => {
      const retry = await own.call(who, { method: 'PUT', url: `/v1/deals/${deal.id}/won`, payload: {} });
      expect(retry.statusCode).toBe(200);
      expect(retry.json().data.case_created).toBeUndefined();
      expect(fake.archived).toEqual([fake.made.get(deal.id)]);
      const stored = await own.db.collection('deals').findOne({ _id: deal.id });
      expect(stored?.case_archive_pending ?? 0).toBe(0);
    });
  }, 20_000);
});

describe('won with create_case: the path', () => {
  test('when a deal is won with create_case, then the deal is read once and written once, under one lock, and the cases service is asked once', async () => {
    const asked: string[] = [];
    const own: DealsUnderTest = await startDeals({
      cases: {
        createForDeal: async (_caller, dealId, request) => {
          asked.push(dealId);
          return { id: newId('case'), title: request.title };
        },
        archiveForDeal: async () => null,
      },
    });
    const deal = await createOn(own, 'Um caminho curto');
    // The deal's own commands: its record, and its lock (the list counts take locks of their own).
    const commands: string[] = [];
    const count = (e: CommandStartedEvent) => {
      const target = e.command[e.commandName];
      if (
        target === 'deals' ||
        (target === LOCKS_COLLECTION && JSON.stringify(e.command).includes(lockKey('deals', deal.id)))
      )
        commands.push(`${e.commandName} ${target}`);
    };
    try {
      own.db.client.on('commandStarted', count);
      const res = await wonWithCase(own, deal.id);
      own.db.client.off('commandStarted', count);
      expect(res.statusCode).toBe(200);
      expect(asked).toEqual([deal.id]);
      expect(commands.sort()).toEqual(['delete document_locks', 'find deals', 'insert document_locks', 'update deals']);
    } finally {
      own.db.client.off('commandStarted', count);
      await own.close();
    }
  });

  test("when the cases service answers with the client its check found, then the deal's event shows that client and the local client view is not read", async () => {
    const checked: ClientFacts = {
      ...client,
      name: 'Padaria São José Ltda',
      updated_at: new Date(Date.now() + 1000).toISOString(),
    };
    const own: DealsUnderTest = await startDeals({
      clients: { facts: async (caller, id) => (id === client.id && caller.teamId === who.teamId ? client : null) },
      users: {
        find: async (teamId, ids) =>
          new Map(ids.filter((id) => users.get(id)?.team === teamId).map((id) => [id, users.get(id)!])),
      },
      cases: {
        createForDeal: async (_caller, _dealId, request) => ({
          id: newId('case'),
          title: request.title,
          client: checked,
        }),
        archiveForDeal: async () => null,
      },
    });
    const deal = (
      await own.call(who, {
        method: 'POST',
        url: '/v1/deals',
        payload: { title: 'Com cliente', client_id: client.id, responsible_id: lawyer.id },
      })
    ).json().data;
    const collections: string[] = [];
    const count = (e: CommandStartedEvent) => collections.push(`${e.commandName} ${e.command[e.commandName]}`);
    try {
      own.db.client.on('commandStarted', count);
      const res = await wonWithCase(own, deal.id);
      own.db.client.off('commandStarted', count);
      expect(res.statusCode).toBe(200);
      expect(res.json().data.case_created).toEqual({ id: expect.stringMatching(/^case_/), title: 'Com cliente' });
      expect(collections).not.toContain('find client_views');
      const stored = await own.db.collection('deals').findOne({ _id: deal.id });
      const won = (stored?.outbox as DomainEvent[]).find((e) => e.type === 'deal.won')!;
      expect(won.data.object.client).toMatchObject({ id: client.id, name: 'Padaria São José Ltda', type: 'PJ' });
      expect(stored?.case_created).toEqual(res.json().data.case_created);
    } finally {
      own.db.client.off('commandStarted', count);
      await own.close();
    }
  });
});

describe('DELETE /v1/deals/{id}', () => {
  test('when a deal is archived, then status arquivado and archived_at; again, then the same archived_at', async () => {
    const created = await create({ title: 'Arquivar' });
    await call('PUT', `/v1/deals/${created.id}/won`, {});
    const first = await call('DELETE', `/v1/deals/${created.id}`);
    expect(first.json().data).toEqual({
      id: created.id,
      status: 'arquivado',
      archived_at: expect.stringMatching(ISO_MS),
    });
    const again = await call('DELETE', `/v1/deals/${created.id}`);
    expect(again.json().data).toEqual(first.json().data);
    const events = (await eventsOf(created.id)).filter((e) => e.type === 'deal.updated');
    expect(events).toHaveLength(1);
    expect(events[0].data.previous_attributes).toEqual({ status: 'ganho', archived_at: null });
  });

  test('when the deal is unknown, then 404 Deal not found', async () => {
    expectNotFound(await call('DELETE', `/v1/deals/${newId('deal')}`), 'Deal not found');
  });
});

describe('POST /internal/phases-in-use', () => {
  test("when the gateway asks about deal phases, then the team's phases in use are named", async () => {
    const team = identity();
    await create({ title: 'Em proposta', phase: 'proposta' }, team);
    const res = await call(
      'POST',
      '/internal/phases-in-use',
      { kind: 'deal', phases: ['lead', 'proposta', 'fechamento'] },
      team,
    );
    expect(res.json().data).toEqual({ in_use: ['proposta'] });
  });
});

describe('GET /internal/deals/{id}', () => {
  test("when another service checks a deal, then the team's deal answers with its facts; another team's or an unknown one is 404", async () => {
    const deal = await create({ title: 'Conferido' });
    const res = await call('GET', `/internal/deals/${deal.id}`);
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual({ id: deal.id, title: 'Conferido', status: 'ativo', updated_at: deal.updated_at });
    expectNotFound(await call('GET', `/internal/deals/${deal.id}`, undefined, identity()), 'Deal not found');
    expectNotFound(await call('GET', `/internal/deals/${newId('deal')}`), 'Deal not found');
  });
});
