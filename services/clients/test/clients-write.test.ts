// POST and GET /v1/clients/{id} in process: shapes, document checks and each error
// row (updates and deactivation: clients-update.test.ts).
import { identity } from '@lpm/test-kit/teams';
import { expectError } from '@lpm/test-kit/api';
import { expectDuplicate, expectInvalid, expectNotFound } from '@lpm/test-kit/error-answers';
import { clientsWriteSuite, ISO_MS, post, postText, sut, who } from './clients-write-suite.ts';

clientsWriteSuite();

describe('POST /v1/clients', () => {
  test('when a PF client is created, then 201 returns the full PF shape, active, with no cases', async () => {
    const res = await post({
      type: 'PF',
      name: 'José da Silva',
      email: 'Jose@Example.com',
      phone: '+55 11 99999-0000',
      cpf: '123.456.789-00',
      birth_date: '1980-02-29',
      gender: 'masculino',
      segment: 'vip',
      address: { street: 'Rua A', number: '10', city: 'São Paulo', state: 'SP' },
      tags: ['a'],
    });
    expect(res.statusCode).toBe(201);
    const c = res.json().data;
    expect(res.json().success).toBe(true);
    expect(c.id).toMatch(/^cli_[0-9a-z]{26}$/);
    expect(c).toMatchObject({
      type: 'PF',
      name: 'José da Silva',
      email: 'jose@example.com',
      status: 'active',
      cases_count: 0,
      cpf: '123.456.789-00',
      rg: null,
      birth_date: '1980-02-29',
      whatsapp: null,
      notes: null,
      metadata: {},
      tags: ['a'],
      deactivated_at: null,
    });
    expect(c.address).toEqual({
      street: 'Rua A',
      number: '10',
      complement: null,
      neighborhood: null,
      city: 'São Paulo',
      state: 'SP',
      zip_code: null,
      country: null,
    });
    expect(c).not.toHaveProperty('cnpj');
    expect(c.created_at).toMatch(ISO_MS);
    expect(c.updated_at).toBe(c.created_at);
    expect(sut.kicks).toBeGreaterThan(0);
  });

  test('when a PJ client has a 2026 alphanumeric CNPJ in lower case, then it is stored in upper case', async () => {
    const res = await post({ type: 'PJ', name: 'Acme', cnpj: '12.abc.345/01de-35', legal_name: 'Acme Ltda' });
    expect(res.statusCode).toBe(201);
    expect(res.json().data).toMatchObject({
      cnpj: '12.ABC.345/01DE-35',
      legal_name: 'Acme Ltda',
      trade_name: null,
      contact_person: null,
    });
    expect(res.json().data).not.toHaveProperty('cpf');
  });

  test.each([
    [{ name: 'x' }, 'type is required', { field: 'type', type: 'required' }],
    [{ type: 'PF' }, 'name is required', { field: 'name', type: 'required' }],
    [{ type: 'XX', name: 'x' }, 'Invalid type', { field: 'type', type: 'invalid' }],
    [{ type: 'PF', name: 'x', cpf: '12345678900' }, 'Invalid CPF format', { field: 'cpf', type: 'invalid' }],
    [{ type: 'PJ', name: 'x', cnpj: '12.345.678/0001-AB' }, 'Invalid CNPJ format', { field: 'cnpj', type: 'invalid' }],
    [{ type: 'PF', name: 'x', cnpj: '12.345.678/0001-90' }, 'Unknown field: cnpj', { field: 'cnpj', type: 'unknown' }],
    [{ type: 'PJ', name: 'x', cpf: '123.456.789-00' }, 'Unknown field: cpf', { field: 'cpf', type: 'unknown' }],
    [{ type: 'PF', name: 'x', colour: 'red' }, 'Unknown field: colour', { field: 'colour', type: 'unknown' }],
    [{ type: 'PF', name: 'x', id: 'cli_x' }, 'Unknown field: id', { field: 'id', type: 'unknown' }],
    [
      { type: 'PF', name: 'x', cases_count: 3 },
      'Unknown field: cases_count',
      { field: 'cases_count', type: 'unknown' },
    ],
    [{ type: 'PF', name: 123 }, 'name must be a string', { field: 'name', type: 'invalid' }],
    [{ type: 'PF', name: '   ' }, 'name must not be empty', { field: 'name', type: 'invalid' }],
    [{ type: 'PF', name: 'x', segment: 'gold' }, 'Invalid segment', { field: 'segment', type: 'invalid' }],
    [
      { type: 'PF', name: 'x', birth_date: '2026-02-30' },
      'birth_date must be a date (YYYY-MM-DD)',
      { field: 'birth_date', type: 'invalid' },
    ],
    [
      { type: 'PF', name: 'x', email: 'not-an-email' },
      'email must be a valid email',
      { field: 'email', type: 'invalid' },
    ],
    [
      { type: 'PF', name: 'x', address: { street: 'a', planet: 'b' } },
      'Unknown field: address.planet',
      { field: 'address.planet', type: 'unknown' },
    ],
    [
      { type: 'PF', name: 'x', metadata: { $where: 1 } },
      'metadata keys may not start with $ or contain .',
      { field: 'metadata', type: 'invalid' },
    ],
    [{ type: 'PF', name: 'x'.repeat(501) }, 'name must be at most 500 characters', { field: 'name', type: 'invalid' }],
    [
      { type: 'PF', name: 'x', tags: Array(51).fill('t') },
      'tags must have at most 50 items',
      { field: 'tags', type: 'invalid' },
    ],
  ])('when the body is %j, then 400 says "%s"', async (payload, message, details) => {
    const err = expectInvalid(await post(payload), message);
    expect(err.details).toMatchObject(details);
  });

  test('when the body is not valid JSON, then 400 Invalid JSON body', async () => {
    const res = await postText('{"type": "PF",');
    expectInvalid(res, 'Invalid JSON body');
  });

  test('when the body is over 1 MiB, then 413 PAYLOAD_TOO_LARGE in the envelope', async () => {
    const res = await post({ type: 'PF', name: 'Big', notes: 'x'.repeat(1024 * 1024 + 1) });
    expectError(res, 413, 'PAYLOAD_TOO_LARGE', 'Request body exceeds 1 MiB');
  });

  test('when the body is a JSON array, then 400 says the body must be an object', async () => {
    const res = await postText('[]');
    expectInvalid(res, 'Request body must be a JSON object');
  });

  test('when a CPF is registered twice in a team, then 422 Duplicate CPF, also against an inactive client', async () => {
    const first = await post({ type: 'PF', name: 'A', cpf: '111.222.333-44' });
    expect(first.statusCode).toBe(201);
    const err = expectDuplicate(await post({ type: 'PF', name: 'B', cpf: '111.222.333-44' }), 'Duplicate CPF');
    expect(err.details.reason).toBe('duplicate_cpf');
    await sut.call(who, { method: 'DELETE', url: `/v1/clients/${first.json().data.id}` });
    expectDuplicate(await post({ type: 'PF', name: 'C', cpf: '111.222.333-44' }), 'Duplicate CPF');
  });

  test('when a CNPJ differs only in letter case, then it is the same CNPJ', async () => {
    expect((await post({ type: 'PJ', name: 'A', cnpj: 'AB.345.678/0001-90' })).statusCode).toBe(201);
    const err = expectDuplicate(await post({ type: 'PJ', name: 'B', cnpj: 'ab.345.678/0001-90' }), 'Duplicate CNPJ');
    expect(err.details.reason).toBe('duplicate_cnpj');
  });

  test('when another team has the same CPF, then the client is created', async () => {
    expect((await post({ type: 'PF', name: 'A', cpf: '999.888.777-66' })).statusCode).toBe(201);
    expect((await post({ type: 'PF', name: 'A', cpf: '999.888.777-66' }, identity())).statusCode).toBe(201);
  });

  test('when the same CPF is posted ten times at once, then exactly one is created', async () => {
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => post({ type: 'PF', name: `P${i}`, cpf: '555.444.333-22' })),
    );
    expect(results.filter((r) => r.statusCode === 201)).toHaveLength(1);
    expect(results.filter((r) => r.statusCode === 422)).toHaveLength(9);
  });
});

describe('GET /v1/clients/{id}', () => {
  test('when the id is unknown, of another kind, or of another team, then 404 Client not found', async () => {
    const created = (await post({ type: 'PF', name: 'Mine' })).json().data;
    for (const [as, id] of [
      [who, 'cli_01jd3kzzzzzzzzzzzzzzzzzzzz'],
      [who, 'case_01jd3kzzzzzzzzzzzzzzzzzzzz'],
      [who, 'nonsense'],
      [identity(), created.id],
    ] as const) {
      expectNotFound(await sut.call(as, { method: 'GET', url: `/v1/clients/${id}` }), 'Client not found');
    }
  });

  test('when the client exists, then the detail has every field of its type', async () => {
    const id = (await post({ type: 'PJ', name: 'Beta', cnpj: '11.222.333/0001-81' })).json().data.id;
    const res = await sut.call(who, {
      method: 'GET',
      url: `/v1/clients/${id}`,
      headers: { 'content-type': 'application/json' },
    });
    expect(res.statusCode).toBe(200);
    expect(Object.keys(res.json().data).sort()).toEqual(
      [
        'id',
        'type',
        'name',
        'email',
        'phone',
        'whatsapp',
        'segment',
        'status',
        'address',
        'notes',
        'tags',
        'metadata',
        'cases_count',
        'deactivated_at',
        'created_at',
        'updated_at',
        'legal_name',
        'trade_name',
        'cnpj',
        'state_registration',
        'contact_person',
      ].sort(),
    );
  });
});
