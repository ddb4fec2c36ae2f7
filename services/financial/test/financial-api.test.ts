// The financial record endpoints in process: shapes, each error row with its exact
// code and message, and status moves (the lists: financial-lists.test.ts).
import { newId } from '@lpm/shared/ids';
import { expectInvalid, expectNotFound, expectRefused } from '@lpm/test-kit/error-answers';
import { identity } from '@lpm/test-kit/teams';
import {
  base,
  create,
  del,
  financialSuite,
  get,
  ISO_MS,
  post,
  put,
  storedOutbox,
  sut,
  today,
  who,
  ZONE,
} from './financial-suite.ts';

financialSuite();

describe('POST /v1/financial', () => {
  test('when a record is created with links, then 201 returns the full record with flat ids and financial.created carries the detail', async () => {
    const client = sut.neighbours.addClient(who.teamId, 'Maria Souza', 'maria@example.com');
    const kase = sut.neighbours.addCase(who.teamId, 'Ação de cobrança', '0001-23');
    const r = await create({
      client_id: client.id,
      case_id: kase.id,
      due_date: '2026-04-10',
      payment_method: 'pix',
      invoice_number: 'NF-1',
      notes: 'n',
      metadata: { k: 1 },
    });
    expect(r.id).toMatch(/^fin_[0-9a-z]{26}$/);
    expect(r).toEqual({
      id: r.id,
      type: 'revenue',
      category: 'honorarios',
      description: 'Honorários iniciais',
      amount: 1500.5,
      currency: 'BRL',
      date: '2026-03-10',
      due_date: '2026-04-10',
      paid_date: null,
      status: 'pending',
      case_id: kase.id,
      client_id: client.id,
      payment_method: 'pix',
      invoice_number: 'NF-1',
      notes: 'n',
      metadata: { k: 1 },
      cancelled_at: null,
      created_at: expect.stringMatching(ISO_MS),
      updated_at: r.created_at,
    });
    const [event] = await storedOutbox(r.id);
    expect(event).toMatchObject({
      type: 'financial.created',
      team_id: who.teamId,
      actor_id: who.userId,
      data: {
        previous_attributes: null,
        object: {
          id: r.id,
          amount: 1500.5,
          case: { id: kase.id, title: 'Ação de cobrança', number: '0001-23' },
          client: { id: client.id, name: 'Maria Souza', email: 'maria@example.com' },
        },
      },
    });
  });

  test('when created with status paid and no paid_date, then paid_date is today in the team zone', async () => {
    const r = await create({ status: 'paid' });
    expect(r).toMatchObject({ status: 'paid', paid_date: today() });
  });

  test.each(['type', 'category', 'description', 'amount', 'date'])(
    'when %s is missing, then 400 names it',
    async (field) => {
      const { [field]: _, ...rest } = base as Record<string, unknown>;
      const err = expectInvalid(await post(rest), `${field} is required`);
      expect(err.details).toEqual({ field, type: 'required' });
    },
  );

  test('when the type is not revenue, expense or cost, then 400 Invalid type', async () => {
    expectInvalid(await post({ ...base, type: 'income' }), 'Invalid type');
  });

  test.each([0, -1, '10', 0.001, 10.123, 1e-7])('when the amount is %j, then 400 Invalid amount', async (amount) => {
    const err = expectInvalid(await post({ ...base, amount }), 'Invalid amount');
    expect(err.details.field).toBe('amount');
  });

  test.each([
    ['date', '2026-02-30'],
    ['date', '10/03/2026'],
    ['date', '2026-3-1'],
    ['due_date', '2026-13-01'],
    ['paid_date', '2026-02-29T00:00:00Z'],
    ['date', 20260301],
  ] as const)('when %s is %j, not a real YYYY-MM-DD day, then 400 Invalid date format', async (field, value) => {
    const err = expectInvalid(await post({ ...base, [field]: value }), 'Invalid date format');
    expect(err.details.field).toBe(field);
  });

  test('when status is cancelled on create, then 400 Invalid status; an unknown field is 400 Unknown field', async () => {
    expectInvalid(await post({ ...base, status: 'cancelled' }), 'Invalid status');
    expectInvalid(await post({ ...base, id: 'fin_x' }), 'Unknown field: id');
  });

  test("when the client or case is not the team's, then 404 Client not found / Case not found", async () => {
    const other = identity(ZONE);
    const foreignClient = sut.neighbours.addClient(other.teamId, 'Outro');
    const foreignCase = sut.neighbours.addCase(other.teamId, 'Outro caso');
    expectNotFound(await post({ ...base, client_id: foreignClient.id }), 'Client not found');
    expectNotFound(await post({ ...base, client_id: 'not-an-id' }), 'Client not found');
    expectNotFound(await post({ ...base, case_id: foreignCase.id }), 'Case not found');
    expectNotFound(await post({ ...base, case_id: newId('case') }), 'Case not found');
  });
});

describe('GET /v1/financial/{id}', () => {
  test('when read, then the detail has nested case and client (with email) and every field', async () => {
    const client = sut.neighbours.addClient(who.teamId, 'Ana', 'ana@example.com');
    const r = await create({ client_id: client.id });
    const res = await get(`/v1/financial/${r.id}`);
    expect(res.statusCode).toBe(200);
    const d = res.json().data;
    expect(d).toMatchObject({
      id: r.id,
      amount: 1500.5,
      case: null,
      client: { id: client.id, name: 'Ana', email: 'ana@example.com' },
      metadata: {},
      cancelled_at: null,
    });
    expect(Object.keys(d).sort()).toEqual(
      [
        'id',
        'type',
        'category',
        'description',
        'amount',
        'currency',
        'date',
        'due_date',
        'paid_date',
        'status',
        'case',
        'client',
        'payment_method',
        'invoice_number',
        'notes',
        'metadata',
        'cancelled_at',
        'created_at',
        'updated_at',
      ].sort(),
    );
  });

  test("when the id is unknown, of another kind or another team's, then 404 Record not found", async () => {
    const r = await create();
    expectNotFound(await get(`/v1/financial/${newId('fin')}`), 'Record not found');
    expectNotFound(await get(`/v1/financial/${newId('case')}`), 'Record not found');
    expectNotFound(await get(`/v1/financial/${r.id}`, identity(ZONE)), 'Record not found');
  });
});

describe('PUT /v1/financial/{id}', () => {
  test('when a pending record is paid without paid_date, then paid_date is today (team zone), and financial.paid is emitted once', async () => {
    const r = await create();
    const res = await put(r.id, { status: 'paid', payment_method: 'boleto', invoice_number: 'NF-9' });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual({
      id: r.id,
      status: 'paid',
      paid_date: today(),
      payment_method: 'boleto',
      invoice_number: 'NF-9',
      updated_at: expect.stringMatching(ISO_MS),
    });
    const events = await storedOutbox(r.id);
    expect(events.map((e) => e.type)).toEqual(['financial.created', 'financial.paid']);
    expect(events[1].data).toMatchObject({
      object: { id: r.id, status: 'paid', paid_date: today() },
      previous_attributes: { status: 'pending', paid_date: null },
    });
    // Paying again changes nothing and emits nothing.
    expect((await put(r.id, { status: 'paid' })).statusCode).toBe(200);
    expect((await storedOutbox(r.id)).map((e) => e.type)).toEqual(['financial.created', 'financial.paid']);
  });

  test('when paid with a paid_date, then it is kept', async () => {
    const r = await create();
    expect((await put(r.id, { status: 'paid', paid_date: '2026-03-15' })).json().data).toMatchObject({
      status: 'paid',
      paid_date: '2026-03-15',
    });
  });

  test('when fields of a pending record change, then the answer has id, the sent fields normalized and updated_at', async () => {
    const r = await create();
    const res = await put(r.id, { amount: 0.3, category: '  custas ', currency: 'usd', due_date: null });
    expect(res.json().data).toEqual({
      id: r.id,
      amount: 0.3,
      category: 'custas',
      currency: 'USD',
      due_date: null,
      updated_at: expect.stringMatching(ISO_MS),
    });
    expect((await get(`/v1/financial/${r.id}`)).json().data).toMatchObject({
      amount: 0.3,
      category: 'custas',
      currency: 'USD',
    });
  });

  test('when amount, type or date of a paid record change, then 422 Cannot modify paid record; notes and invoice may change', async () => {
    const r = await create({ status: 'paid' });
    for (const change of [{ amount: 1 }, { type: 'expense' }, { date: '2026-01-01' }]) {
      const err = expectRefused(await put(r.id, change), 'Cannot modify paid record');
      expect(err.details).toEqual({ reason: 'cannot_modify_paid_record', fields: Object.keys(change) });
    }
    expect(
      (await put(r.id, { amount: 1500.5, notes: 'ok', invoice_number: 'NF-2', description: 'Nova' })).statusCode,
    ).toBe(200);
  });

  test('when any field but notes, description, invoice_number and metadata of a paid record changes, then 422 naming the refused fields, and the record stays where it was', async () => {
    const c = sut.neighbours.addClient(who.teamId, 'Cliente pago');
    const r = await create({ status: 'paid', client_id: c.id, paid_date: '2026-03-12', payment_method: 'pix' });
    const refused = [
      [{ currency: 'USD', category: 'outra' }, ['category', 'currency']],
      [{ client_id: null }, ['client_id']],
      [{ paid_date: '2026-03-20', notes: 'junto' }, ['paid_date']],
      [{ due_date: '2026-04-01' }, ['due_date']],
      [{ payment_method: 'boleto' }, ['payment_method']],
      [{ case_id: null, amount: 2 }, ['amount']],
    ] as const;
    for (const [change, fields] of refused) {
      const err = expectRefused(await put(r.id, change), 'Cannot modify paid record');
      expect(err.details).toEqual({ reason: 'cannot_modify_paid_record', fields });
    }
    expect((await get(`/v1/financial/${r.id}`)).json().data).toMatchObject({
      currency: 'BRL',
      category: 'honorarios',
      client: { id: c.id },
      paid_date: '2026-03-12',
      payment_method: 'pix',
      notes: null,
    });
    // The same values again change nothing; the four free fields change.
    const free = {
      currency: 'brl',
      client_id: c.id,
      status: 'paid',
      notes: 'Recebido',
      description: 'Honorários finais',
      invoice_number: 'NF-7',
      metadata: { lote: 3 },
    };
    expect((await put(r.id, free)).statusCode).toBe(200);
    expect((await get(`/v1/financial/${r.id}`)).json().data).toMatchObject({
      notes: 'Recebido',
      description: 'Honorários finais',
      invoice_number: 'NF-7',
      metadata: { lote: 3 },
    });
  });

  test('when a paid or cancelled record is moved to another status, then 422 Invalid status transition', async () => {
    const paid = await create({ status: 'paid' });
    for (const status of ['pending', 'cancelled']) {
      const err = expectRefused(await put(paid.id, { status }), 'Invalid status transition');
      expect(err.details.reason).toBe('invalid_status_transition');
    }
    const cancelled = await create();
    const res = await put(cancelled.id, { status: 'cancelled' });
    expect(res.json().data).toMatchObject({ status: 'cancelled', cancelled_at: expect.stringMatching(ISO_MS) });
    for (const status of ['pending', 'paid'])
      expectRefused(await put(cancelled.id, { status }), 'Invalid status transition');
  });

  test('when the body is empty, invalid or the id unknown, then 400 / 404 with the exact message', async () => {
    const r = await create();
    expectInvalid(await put(r.id, {}), 'No fields to update');
    expectInvalid(await put(r.id, { status: 'done' }), 'Invalid status');
    expectInvalid(await put(r.id, { amount: 2.555 }), 'Invalid amount');
    expectInvalid(await put(r.id, { due_date: '2026-02-29' }), 'Invalid date format');
    expectInvalid(await put(r.id, { payment_method: 'bitcoin' }), 'Invalid payment method');
    expectInvalid(await put(r.id, { created_at: '2026-01-01' }), 'Unknown field: created_at');
    expectNotFound(await put(newId('fin'), { notes: 'x' }), 'Record not found');
    expectNotFound(await put(r.id, { client_id: newId('cli') }), 'Client not found');
  });
});

describe('DELETE /v1/financial/{id}', () => {
  test('when a pending record is cancelled, then status cancelled with cancelled_at; again answers the same (idempotent)', async () => {
    const r = await create();
    const first = await del(r.id);
    expect(first.statusCode).toBe(200);
    expect(first.json().data).toEqual({ id: r.id, status: 'cancelled', cancelled_at: expect.stringMatching(ISO_MS) });
    const again = await del(r.id);
    expect(again.statusCode).toBe(200);
    expect(again.json().data).toEqual(first.json().data);
    expect((await get(`/v1/financial/${r.id}`)).json().data).toMatchObject({
      status: 'cancelled',
      cancelled_at: first.json().data.cancelled_at,
    });
  });

  test('when the record is paid, then 422 Cannot cancel paid record; unknown is 404', async () => {
    const r = await create({ status: 'paid' });
    const err = expectRefused(await del(r.id), 'Cannot cancel paid record');
    expect(err.details.reason).toBe('cannot_cancel_paid_record');
    expectNotFound(await del(newId('fin')), 'Record not found');
  });
});
