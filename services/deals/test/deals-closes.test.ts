// Won and lost on the deals app in process, and a won with create_case that meets a
// concurrent close or an attempt that did not complete (deals-suite.ts).
import { newId } from '@lpm/shared/ids';
import { AppError } from '@lpm/shared/errors';
import { expectInvalid, expectNotFound, expectRefused } from '@lpm/test-kit/error-answers';
import { startDeals, type DealsUnderTest } from './helper.ts';
import { call, create, dealsSuite, eventsOf, ISO_MS } from './deals-suite.ts';
import { afterBusyWon, createOn, wonWithCase } from './own-deals-app.ts';

dealsSuite();

describe('PUT /v1/deals/{id}/won and /lost', () => {
  test('when won without final_value, then final_value is the value; deal.won carries the deal with the previous status', async () => {
    const created = await create({ title: 'Ganhar', value: 1234.56 });
    const res = await call('PUT', `/v1/deals/${created.id}/won`, { notes: 'Assinado' });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual({
      id: created.id,
      status: 'ganho',
      final_value: 1234.56,
      won_at: expect.stringMatching(ISO_MS),
    });
    const won = (await eventsOf(created.id)).find((e) => e.type === 'deal.won')!;
    expect(won.data.object).toMatchObject({
      id: created.id,
      status: 'ganho',
      final_value: 1234.56,
      won_at: res.json().data.won_at,
    });
    expect(won.data.previous_attributes).toEqual({ status: 'ativo', final_value: null, won_at: null });
  });

  test('when won with a final_value, then it is stored to the cent', async () => {
    const created = await create({ title: 'Ganhar com valor', value: 1000 });
    const res = await call('PUT', `/v1/deals/${created.id}/won`, { final_value: 999.99 });
    expect(res.json().data.final_value).toBe(999.99);
    expect((await call('GET', `/v1/deals/${created.id}`)).json().data).toMatchObject({
      status: 'ganho',
      final_value: 999.99,
      value: 1000,
    });
  });

  test('when won or lost again, then 422 Deal already closed with its reason', async () => {
    const created = await create({ title: 'Duas vezes' });
    await call('PUT', `/v1/deals/${created.id}/won`, {});
    const err = expectRefused(await call('PUT', `/v1/deals/${created.id}/won`, {}), 'Deal already closed');
    expect(err.details).toEqual({ reason: 'deal_already_closed' });
    expectRefused(await call('PUT', `/v1/deals/${created.id}/lost`, {}), 'Deal already closed');
  });

  test('when the deal is archived, then won and lost are 422 Deal is archived', async () => {
    const created = await create({ title: 'Arquivado antes' });
    await call('DELETE', `/v1/deals/${created.id}`);
    expectRefused(await call('PUT', `/v1/deals/${created.id}/won`, {}), 'Deal is archived');
    expectRefused(await call('PUT', `/v1/deals/${created.id}/lost`, {}), 'Deal is archived');
  });

  test('when the deal is unknown, then 404; a final_value with 3 decimals, then 400', async () => {
    expectNotFound(await call('PUT', `/v1/deals/${newId('deal')}/won`, {}), 'Deal not found');
    expectNotFound(await call('PUT', `/v1/deals/${newId('deal')}/lost`, {}), 'Deal not found');
    const created = await create({ title: 'Decimais' });
    expectInvalid(
      await call('PUT', `/v1/deals/${created.id}/won`, { final_value: 1.001 }),
      'final_value must have at most 2 decimals',
    );
  });

  test('when lost, then the answer has the reason, competitor and lost_at, and deal.lost is emitted', async () => {
    const created = await create({ title: 'Perder' });
    const res = await call('PUT', `/v1/deals/${created.id}/lost`, {
      loss_reason: 'Preço',
      competitor: 'Escritório X',
      notes: 'Preferiu outro',
    });
    expect(res.json().data).toEqual({
      id: created.id,
      status: 'perdido',
      loss_reason: 'Preço',
      competitor: 'Escritório X',
      lost_at: expect.stringMatching(ISO_MS),
    });
    const lost = (await eventsOf(created.id)).find((e) => e.type === 'deal.lost')!;
    expect(lost.data.object).toMatchObject({ status: 'perdido', loss_reason: 'Preço', competitor: 'Escritório X' });
    expect(lost.data.previous_attributes).toEqual({
      status: 'ativo',
      loss_reason: null,
      competitor: null,
      lost_at: null,
    });
  });

  test('when 20 won and lost requests on one deal arrive at once, then exactly one succeeds and 19 get 422 Deal already closed', async () => {
    const created = await create({ title: 'Corrida', value: 10 });
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => call('PUT', `/v1/deals/${created.id}/${i % 2 ? 'lost' : 'won'}`, {})),
    );
    const statuses = answers.map((a) => a.statusCode);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 422)).toHaveLength(19);
    for (const a of answers.filter((x) => x.statusCode === 422))
      expect(a.json().error.message).toBe('Deal already closed');
    const closing = (await eventsOf(created.id)).filter((e) => e.type === 'deal.won' || e.type === 'deal.lost');
    expect(closing).toHaveLength(1);
  });
});

describe('won with create_case, while another request closes the deal', () => {
  test('when the deal is lost while its won makes the case, then the won is 422 and that case is archived; when another request wins it meanwhile, the case stays', async () => {
    const made = new Map<string, { id: string; archived: boolean }>();
    const meanwhile = new Map<string, string>();
    const own: DealsUnderTest = await startDeals({
      cases: {
        // The cases service makes the deal's case while another request closes the deal.
        createForDeal: async (caller, dealId, request) => {
          const close = meanwhile.get(dealId);
          meanwhile.delete(dealId);
          // (A won sent meanwhile asks for the deal's case too, and gets the same one.)
          if (close)
            expect(
              (await own.call(caller, { method: 'PUT', url: `/v1/deals/${dealId}/${close}`, payload: {} })).statusCode,
            ).toBe(200);
          const kase = made.get(dealId) ?? { id: newId('case'), archived: false };
          made.set(dealId, kase);
          return { id: kase.id, title: request.title };
        },
        archiveForDeal: async (_caller, dealId) => {
          const kase = made.get(dealId);
          if (kase) kase.archived = true;
          return kase?.id ?? null;
        },
      },
    });
    try {
      const open = async (title: string, close: 'lost' | 'won') => {
        const deal = await createOn(own, title);
        meanwhile.set(deal.id, close);
        return deal.id as string;
      };
      const lost = await open('Perdido enquanto o caso nascia', 'lost');
      expectRefused(await wonWithCase(own, lost), 'Deal already closed');
      expect(made.get(lost)).toEqual({ id: expect.stringMatching(/^case_/), archived: true });

      const won = await open('Ganho por outro pedido', 'won');
      expectRefused(await wonWithCase(own, won), 'Deal already closed');
      expect(made.get(won)).toEqual({ id: expect.stringMatching(/^case_/), archived: false });
    } finally {
      await own.close();
    }
  });
});

describe('a deal closed unwon whose case was not archived', () => {
  /** A cases service that keeps each deal's case (made once), whose archive fails while `down`. */
  const casesService = () => {
    const made = new Map<string, { id: string; archived: boolean }>();
    const state = { down: false, archiveCalls: 0 };
    return {
      made,
      state,
      make: (dealId: string) => {
        const kase = made.get(dealId) ?? { id: newId('case'), archived: false };
        made.set(dealId, kase);
        return kase;
      },
      archiveForDeal: async (_caller: unknown, dealId: string) => {
        state.archiveCalls++;
        if (state.down) throw new AppError(503, 'SERVICE_UNAVAILABLE', 'cases unavailable');
        const kase = made.get(dealId);
        if (kase) kase.archived = true;
        return kase?.id ?? null;
      },
    };
  };
  const owes = async (own: DealsUnderTest, id: string) =>
    (await own.db.collection('deals').findOne({ _id: id as never }))?.case_archive_pending;

  test('when the won that makes the case dies after the lost found no case to archive, then the case archive repair archives it, once', async () => {
    const cases = casesService();
    const own: DealsUnderTest = await startDeals({
      cases: {
        createForDeal: async (caller, dealId) => {
          // The deal is lost while the case is being made: the lost finds no case yet.
          expect(
            (await own.call(caller, { method: 'PUT', url: `/v1/deals/${dealId}/lost`, payload: {} })).statusCode,
          ).toBe(200);
          cases.make(dealId);
          // Then the won's process dies: its last step (finding the deal lost, archiving the case) never runs.
          throw new Error('the deals process died');
        },
        archiveForDeal: cases.archiveForDeal,
      },
    });
    try {
      const deal = await createOn(own, 'Perdido, caso órfão');
      expect((await wonWithCase(own, deal.id)).statusCode).toBe(500);
      expect(cases.made.get(deal.id)).toEqual({ id: expect.stringMatching(/^case_/), archived: false });

      await Promise.all([own.deals.settleCaseArchives(), own.deals.settleCaseArchives()]);
      expect(cases.made.get(deal.id)?.archived).toBe(true);
      expect(await owes(own, deal.id)).toBe(0);
      const calls = cases.state.archiveCalls;
      await own.deals.settleCaseArchives();
      expect(cases.state.archiveCalls).toBe(calls);
    } finally {
      await own.close();
    }
  });

  test('when the cases service fails the archive after a lost, then the lost still answers 200 and the repair archives the case once the cases service is back', async () => {
    const cases = casesService();
    const own: DealsUnderTest = await startDeals({
      cases: {
        createForDeal: async (caller, dealId, request) => {
          const close = (await own.call(caller, { method: 'PUT', url: `/v1/deals/${dealId}/lost`, payload: {} }))
            .statusCode;
          expect(close).toBe(200);
          return { id: cases.make(dealId).id, title: request.title };
        },
        archiveForDeal: cases.archiveForDeal,
      },
    });
    try {
      const deal = await createOn(own, 'Perdido com casos fora');
      // The won makes the case after the lost; both archives it asks for fail.
      cases.state.down = true;
      expectRefused(await wonWithCase(own, deal.id), 'Deal already closed');
      expect(cases.made.get(deal.id)?.archived).toBe(false);
      expect(await owes(own, deal.id)).toBe(1);
      await own.deals.settleCaseArchives();
      expect(cases.made.get(deal.id)?.archived).toBe(false);

      cases.state.down = false;
      await own.deals.settleCaseArchives();
      expect(cases.made.get(deal.id)?.archived).toBe(true);
      expect(await owes(own, deal.id)).toBe(0);
    } finally {
      await own.close();
    }
  });
});

describe('won after a won with create_case that did not complete', () => {
  test('when the first attempt ends in 503 after the case exists, then the retry gets that case, and the cases service made one', async () => {
    await afterBusyWon('Ganho em duas vezes', async (own, deal, fake) => {
      const retry = await wonWithCase(own, deal.id);
      expect(retry.statusCode).toBe(200);
      expect(retry.json().data.case_created).toEqual({ id: fake.made.get(deal.id), title: 'Ganho em duas vezes' });
      expect(fake.asked).toEqual([deal.id, deal.id]);
    });
  }, 20_000);
});
