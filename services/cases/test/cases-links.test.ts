// The links between cases and the domains around them, through a running system:
// clients (existence at write time, names kept current by events, counts and the
// deactivation rule), the gateway's users and the team settings.
import { MongoClient } from 'mongodb';
import { systemForSuite, type IssuedTeam, type RunningSystem } from '@lpm/test-kit/running-system';
import { waitFor } from '@lpm/test-kit/wait';

let sys: RunningSystem;
let t: IssuedTeam;

const call = (method: string, path: string, body?: unknown, key = t.api_key) => sys.call(key, method, path, body);
const newClient = async (name: string, key = t.api_key) => {
  const res = await call('POST', '/v1/clients', { type: 'PF', name }, key);
  expect(res.status).toBe(201);
  return res.body.data as { id: string; name: string };
};
const newCase = async (body: Record<string, unknown>, key = t.api_key) => {
  const res = await call('POST', '/v1/cases', body, key);
  expect(res.status).toBe(201);
  return res.body.data as { id: string; title: string; phase: string };
};

systemForSuite('caseslinks', {}, (started) => {
  sys = started;
  t = sys.team('Vínculos');
});

describe('clients on cases', () => {
  test('when a client is created, then the cases service stores no view of it until a case links to it', async () => {
    const mongo = await MongoClient.connect(process.env.MONGO_URL!);
    try {
      const views = mongo.db(`${sys.env.MONGO_DB_PREFIX}cases`).collection('client_views');
      const unlinked = await newClient('Ninguém Vinculado');
      const other = await newClient('Outra Pessoa');
      // client.updated is still bound: once the later rename is in the view, the earlier creation would be too.
      expect((await call('PUT', `/v1/clients/${other.id}`, { name: 'Outra Pessoa Renomeada' })).status).toBe(200);
      await waitFor(
        'the rename in the view',
        async () => (await views.findOne({ _id: other.id } as object))?.name === 'Outra Pessoa Renomeada',
        10_000,
      );
      expect(await views.findOne({ _id: unlinked.id } as object)).toBeNull();

      await newCase({ title: 'Inventário', client_id: unlinked.id });
      expect(await views.findOne({ _id: unlinked.id } as object)).toMatchObject({
        name: 'Ninguém Vinculado',
        team_id: t.team.id,
      });
    } finally {
      await mongo.close();
    }
  });

  test('when a client is renamed, then its cases show the new name, in detail and list', async () => {
    const c = await newClient('Maria Oliveira');
    const k = await newCase({ title: 'Divórcio', client_id: c.id });
    expect((await call('GET', `/v1/cases/${k.id}`)).body.data.client).toMatchObject({
      name: 'Maria Oliveira',
      type: 'PF',
    });

    const renamed = await call('PUT', `/v1/clients/${c.id}`, {
      name: 'Maria Oliveira Santos',
      email: 'maria@exemplo.com',
    });
    expect(renamed.status).toBe(200);
    // How fast is measured by `npm run bench` (under a second); here, that it arrives.
    await waitFor(
      'the rename on the case',
      async () => (await call('GET', `/v1/cases/${k.id}`)).body.data.client.name === 'Maria Oliveira Santos',
      10_000,
    );
    expect((await call('GET', `/v1/cases/${k.id}`)).body.data.client).toEqual({
      id: c.id,
      name: 'Maria Oliveira Santos',
      type: 'PF',
      email: 'maria@exemplo.com',
      phone: null,
    });
    const listed = (await call('GET', `/v1/cases?client_id=${c.id}`)).body.data;
    expect(listed.map((x: { client: { name: string } }) => x.client.name)).toEqual(['Maria Oliveira Santos']);
  });

  test('when a case is created and its client deleted right after, then 422 Client has active cases', async () => {
    const c = await newClient('Cliente Apressado');
    await newCase({ title: 'Urgente', client_id: c.id });
    const res = await call('DELETE', `/v1/clients/${c.id}`);
    expect(res.status).toBe(422);
    expect(res.body.error).toMatchObject({
      code: 'VALIDATION_ERROR',
      message: 'Client has active cases',
      details: { reason: 'client_has_active_cases' },
    });
    const viaPut = await call('PUT', `/v1/clients/${c.id}`, { status: 'inactive' });
    expect(viaPut.body.error.message).toBe('Client has active cases');
  });

  test('when every case of a client is archived, then the client can be deactivated', async () => {
    const c = await newClient('Cliente Encerrado');
    const k = await newCase({ title: 'Concluído', client_id: c.id });
    await call('DELETE', `/v1/cases/${k.id}`);
    const res = await call('DELETE', `/v1/clients/${c.id}`);
    expect(res.status).toBe(200);
    expect(res.body.data.status).toBe('inactive');
  });

  const casesCount = async (clientId: string) =>
    (await call('GET', `/v1/clients/${clientId}`)).body.data.cases_count as number;

  test('when a client has cases in any status, then cases_count counts them all, in detail and list', async () => {
    const c = await newClient('Cliente Contado');
    expect(await casesCount(c.id)).toBe(0);
    await newCase({ title: 'Um', client_id: c.id });
    const two = await newCase({ title: 'Dois', client_id: c.id });
    await call('DELETE', `/v1/cases/${two.id}`);
    // Kept on the client from case events: it follows within moments.
    await waitFor('both cases counted', async () => (await casesCount(c.id)) === 2, 10_000);
    const listed = (await call('GET', '/v1/clients?search=contado')).body.data;
    expect(listed).toEqual([expect.objectContaining({ id: c.id, cases_count: 2 })]);
  });

  test("when a case moves to another client, then both clients' cases_count follow", async () => {
    const from = await newClient('Cliente De Origem');
    const to = await newClient('Cliente De Destino');
    const k = await newCase({ title: 'Mudança', client_id: from.id });
    await newCase({ title: 'Fica', client_id: from.id });
    await waitFor('the origin counted', async () => (await casesCount(from.id)) === 2, 10_000);
    expect((await call('PUT', `/v1/cases/${k.id}`, { client_id: to.id })).status).toBe(200);
    await waitFor(
      'the move counted',
      async () => (await casesCount(from.id)) === 1 && (await casesCount(to.id)) === 1,
      10_000,
    );
  });

  test('when a client stored before counts were kept is read, then the cases service counts it and the client keeps the count', async () => {
    const mongo = await MongoClient.connect(process.env.MONGO_URL!);
    try {
      const clients = mongo.db(`${sys.env.MONGO_DB_PREFIX}clients`).collection('clients');
      const c = await newClient('Cliente Antigo');
      await newCase({ title: 'Antigo', client_id: c.id });
      await waitFor('the case counted', async () => (await casesCount(c.id)) === 1, 10_000);
      await clients.updateOne({ _id: c.id } as object, { $unset: { cases_count: '', cases_counted_at: '' } });

      await newCase({ title: 'Novo', client_id: c.id });
      const listed = (await call('GET', '/v1/clients?search=antigo')).body.data;
      // Asked at the read: the case created a moment ago counts.
      expect(listed).toEqual([expect.objectContaining({ id: c.id, cases_count: 2 })]);
      await waitFor(
        'the count kept',
        async () => (await clients.findOne({ _id: c.id } as object))?.cases_count === 2,
        10_000,
      );
      expect(await casesCount(c.id)).toBe(2);
    } finally {
      await mongo.close();
    }
  });

  test("when a client's cases are listed, then they come from the cases service, paged and sorted", async () => {
    const c = await newClient('Cliente Listado');
    const first = await newCase({ title: 'Primeiro', client_id: c.id, number: 'CL-1', priority: 'baixa' });
    const second = await newCase({ title: 'Segundo', client_id: c.id, priority: 'alta' });
    await newCase({ title: 'De outro cliente' });
    const res = await call('GET', `/v1/clients/${c.id}/cases`);
    expect(res.status).toBe(200);
    expect(res.body.pagination).toEqual({ page: 1, limit: 20, total: 2, pages: 1 });
    expect(res.body.data.map((x: { id: string }) => x.id)).toEqual([second.id, first.id]);
    expect(res.body.data[1]).toEqual({
      id: first.id,
      title: 'Primeiro',
      number: 'CL-1',
      area: null,
      phase: 'recebido',
      priority: 'baixa',
      status: 'ativo',
      created_at: expect.any(String),
    });
    expect(
      (await call('GET', `/v1/clients/${c.id}/cases?sort=priority&limit=1`)).body.data.map((x: { id: string }) => x.id),
    ).toEqual([first.id]);
    const missing = await call('GET', '/v1/clients/cli_01jd3k0000000000000000000/cases');
    expect(missing.status).toBe(404);
    expect(missing.body.error.message).toBe('Client not found');
  });
});

describe('team settings', () => {
  test('when the kanban is replaced, then the very next case request uses it', async () => {
    const team = sys.team('Kanban Próprio');
    const put = await call('PUT', '/v1/settings', { case_phases: ['novo', 'em-curso', 'encerrado'] }, team.api_key);
    expect(put.status).toBe(200);
    expect(put.body.data.case_phases).toEqual(['novo', 'em-curso', 'encerrado']);

    const created = await newCase({ title: 'No novo quadro' }, team.api_key);
    expect(created.phase).toBe('novo');
    const moved = await call('PUT', `/v1/cases/${created.id}`, { phase: 'em-curso' }, team.api_key);
    expect(moved.body.data.phase).toBe('em-curso');
    const old = await call('POST', '/v1/cases', { title: 'Fase antiga', phase: 'triagem' }, team.api_key);
    expect(old.status).toBe(400);
    expect(old.body.error.message).toBe('Invalid phase');
  });

  test('when a phase in use is removed, then 422 Phase in use and the kanban stays', async () => {
    const team = sys.team('Fase Ocupada');
    await newCase({ title: 'Em triagem', phase: 'triagem' }, team.api_key);
    const res = await call(
      'PUT',
      '/v1/settings',
      { case_phases: ['recebido', 'em-andamento', 'finalizado'] },
      team.api_key,
    );
    expect(res.status).toBe(422);
    expect(res.body.error).toMatchObject({
      code: 'VALIDATION_ERROR',
      message: 'Phase in use',
      details: { phases: ['triagem'] },
    });
    expect((await call('GET', '/v1/settings', undefined, team.api_key)).body.data.case_phases).toContain('triagem');
    // A phase no case uses can go.
    const ok = await call(
      'PUT',
      '/v1/settings',
      { case_phases: ['recebido', 'triagem', 'em-andamento', 'finalizado'] },
      team.api_key,
    );
    expect(ok.status).toBe(200);
  });

  test('when the time zone changes, then from/to on the very next list use it', async () => {
    const team = sys.team('Fuso');
    await newCase({ title: 'Hoje' }, team.api_key);
    // At any instant, Pacific/Kiritimati (UTC+14) and Pacific/Pago_Pago (UTC-11) are on different calendar days.
    const dayIn = (tz: string) => new Intl.DateTimeFormat('en-CA', { timeZone: tz }).format(new Date());
    for (const tz of ['Pacific/Kiritimati', 'Pacific/Pago_Pago']) {
      expect((await call('PUT', '/v1/settings', { timezone: tz }, team.api_key)).status).toBe(200);
      const today = dayIn(tz);
      expect(
        (await call('GET', `/v1/cases?from=${today}&to=${today}`, undefined, team.api_key)).body.pagination!.total,
      ).toBe(1);
    }
    const pagoToday = dayIn('Pacific/Pago_Pago');
    expect(dayIn('Pacific/Kiritimati')).not.toBe(pagoToday);
    expect((await call('PUT', '/v1/settings', { timezone: 'Pacific/Kiritimati' }, team.api_key)).status).toBe(200);
    expect(
      (await call('GET', `/v1/cases?from=${pagoToday}&to=${pagoToday}`, undefined, team.api_key)).body.pagination!
        .total,
    ).toBe(0);
  });
});
