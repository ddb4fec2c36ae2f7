// A read shape is written once, as its response schema. tsc refuses an answer
// built with a field the schema lacks or without one it lists (`exact`; each
// expected error below fails the type check of `npm test` if the refusal it marks
// goes away), and the services' test helpers check each answer against the
// document before the serializer can drop or miss a field (@lpm/test-kit/whole-answers).
import { createHttpApp } from '../shared/src/http/app.ts';
import { ok } from '../shared/src/http/envelope.ts';
import { exact, named, nullableShape, okResponse, out, shape, type Static } from '../shared/src/http/schemas.ts';
import type { DealCreated } from '../services/deals/src/contract/deal-schemas.ts';
import { Contract } from '@lpm/test-kit/contract';
import { dealDefaults } from '@lpm/test-kit/records';
import { checkWholeAnswers } from '@lpm/test-kit/whole-answers';

const party = named(
  'Party',
  'A party of a test.',
  shape({
    id: out.string,
    name: out.nullableString,
    tags: out.strings,
    owner: nullableShape({ id: out.string, email: out.nullableString }),
  }),
);
type Party = Static<typeof party>;

const whole = { id: 'p1', name: null, tags: ['a'], owner: { id: 'u1', email: null } };

describe('a read shape typed by its schema', () => {
  it('takes an answer with exactly the fields of the schema', () => {
    expect(exact<Party>()(whole)).toBe(whole);
    expect(exact<Party>()({ ...whole, owner: null })).toEqual({ ...whole, owner: null });
  });

  it('refuses, when type-checked, a field missing or extra at any depth, or of another type', () => {
    const refused = [
      // @ts-expect-error name is missing
      () => exact<Party>()({ id: 'p1', tags: [], owner: null }),
      // @ts-expect-error the owner's email is missing
      () => exact<Party>()({ ...whole, owner: { id: 'u1' } }),
      // @ts-expect-error secret is not in the schema: the serializer would drop it
      () => exact<Party>()({ ...whole, secret: 'x' }),
      // @ts-expect-error the owner's role is not in the schema
      () => exact<Party>()({ ...whole, owner: { id: 'u1', email: null, role: 'admin' } }),
      // @ts-expect-error tags are strings
      () => exact<Party>()({ ...whole, tags: [1] }),
    ];
    expect(refused).toHaveLength(5);
  });

  it("holds for the services' shapes: a created deal without currency does not type-check", () => {
    const deal = {
      id: 'deal_1',
      title: 'Contrato',
      ...dealDefaults(),
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-01T00:00:00.000Z',
    };
    // @ts-expect-error currency is missing
    const wrong: DealCreated = deal;
    expect(exact<DealCreated>()({ ...deal, currency: 'BRL' }).currency).toBe('BRL');
    expect(wrong).toBe(deal);
  });
});

describe('answers checked before the serializer writes them', () => {
  const document = new Contract({
    paths: {
      '/v1/parties/{id}': {
        get: {
          responses: {
            200: { content: { 'application/json': { schema: { $ref: '#/components/schemas/PartyAnswer' } } } },
          },
        },
      },
    },
    components: {
      schemas: {
        PartyAnswer: {
          type: 'object',
          required: ['success', 'data'],
          properties: { success: { type: 'boolean' }, data: { $ref: '#/components/schemas/Party' } },
        },
        Party: {
          type: 'object',
          required: ['id', 'name', 'tags', 'owner'],
          properties: {
            id: { type: 'string' },
            name: { type: ['string', 'null'] },
            tags: { type: 'array', items: { type: 'string' } },
            owner: {
              type: ['object', 'null'],
              required: ['id', 'email'],
              properties: { id: { type: 'string' }, email: { type: ['string', 'null'] } },
            },
          },
        },
      },
    },
  });

  async function answersOf(answer: Record<string, unknown>) {
    const app = createHttpApp({ name: 'test', logger: false, documented: false });
    const problems = checkWholeAnswers(app, document);
    app.get('/v1/parties/:id', { schema: { response: okResponse(200, party) } }, (_req, reply) =>
      reply.send(ok(answer)),
    );
    await app.ready();
    const res = await app.inject({ method: 'GET', url: '/v1/parties/p1' });
    await app.close();
    return { body: res.json<{ data: unknown }>().data, problems };
  }

  it('passes a whole answer', async () => {
    const { body, problems } = await answersOf(whole);
    expect(body).toEqual(whole);
    expect(problems).toEqual([]);
  });

  it('finds a field the serializer dropped', async () => {
    const { body, problems } = await answersOf({ ...whole, secret: 'x' });
    expect(body).toEqual(whole);
    expect(problems.join()).toMatch(/must NOT have additional properties/);
  });

  it('finds a field the answer lacks', async () => {
    const { problems } = await answersOf({ name: null, tags: ['a'], owner: null });
    expect(problems.join()).toMatch(/must have required property 'id'/);
  });
});
