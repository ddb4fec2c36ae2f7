// The document builder's own rules, on paths written by hand.
import { describe, expect, test } from '@jest/globals';
import { buildDocument, type Paths } from '../src/openapi/document.ts';
import type { JsonAnswer } from '@lpm/test-kit/json';

const json = (schema: object) => ({ content: { 'application/json': { schema } } });
const scopeOf = () => 'read' as const;
const tags = [
  { name: 'Deals', description: 'Deals.', 'x-prefix': '/v1/deals', 'x-id-example': 'deal_01jd3k7w2m4q6s8u0x2z4b6d8f' },
];
/** An operation's documentation as its service publishes it. */
const documented = (operationId: string, errors = {}) => ({
  operationId,
  summary: operationId,
  description: operationId,
  'x-errors': errors,
});
const detail = {
  title: 'Deal',
  description: 'A deal.',
  type: 'object',
  properties: { id: { type: 'string' }, client: { type: 'object', properties: { id: { type: 'string' } } } },
};

describe('buildDocument', () => {
  test('when a response uses a titled schema, then it is a named component, required whole unless marked partial', () => {
    const paths: Paths = {
      '/v1/deals/{id}': {
        get: {
          ...documented('getDeal'),
          parameters: [{ in: 'path', name: 'id', required: true, schema: { type: 'string' } }],
          responses: { 200: json({ type: 'object', properties: { data: detail } }) },
        },
        put: {
          ...documented('updateDeal', { 404: ['Deal not found'] }),
          requestBody: json({
            title: 'UpdateDealRequest',
            description: 'x',
            type: 'object',
            properties: { title: { type: 'string' } },
          }),
          responses: {
            200: json({ type: 'object', properties: { data: { ...detail, title: 'DealChanges', 'x-partial': true } } }),
          },
        },
      },
    };
    // Read as a parsed answer: the expectations walk it by path.
    const doc: JsonAnswer = buildDocument({ paths, tags, scopeOf });
    expect(doc.paths['/v1/deals/{id}'].get.responses['200'].content['application/json'].schema.properties.data).toEqual(
      { $ref: '#/components/schemas/Deal' },
    );
    expect(doc.components.schemas.Deal).toMatchObject({
      required: ['id', 'client'],
      properties: { client: { required: ['id'] } },
    });
    expect(doc.components.schemas.DealChanges.required).toBeUndefined();
    expect(doc.components.schemas.DealChanges).not.toHaveProperty('x-partial');
    expect(doc.components.schemas.UpdateDealRequest.required).toBeUndefined();
    expect(doc.paths['/v1/deals/{id}'].get.parameters[0].example).toMatch(/^deal_/);
    expect(doc.paths['/v1/deals/{id}'].put).toMatchObject({
      operationId: 'updateDeal',
      summary: 'updateDeal',
      description: 'updateDeal\n\n**Scope:** `read`.',
    });
    expect(doc.paths['/v1/deals/{id}'].put).not.toHaveProperty('x-errors');
    expect(
      doc.paths['/v1/deals/{id}'].put.responses['404'].content['application/json'].examples.dealNotFound.value,
    ).toEqual({ success: false, error: { code: 'NOT_FOUND', message: 'Deal not found', details: {} } });
  });

  test('when two different schemas share a title, then the document is refused', () => {
    const paths: Paths = {
      '/v1/deals/{id}': { get: { ...documented('getDeal'), responses: { 200: json(detail) } } },
      '/v1/deals': { get: { ...documented('listDeals'), responses: { 200: json({ ...detail, properties: {} }) } } },
    };
    expect(() => buildDocument({ paths, tags, scopeOf })).toThrow('two different schemas are named Deal');
  });

  test('when an operation has no documentation, then the document is refused, naming it', () => {
    expect(() =>
      buildDocument({ paths: { '/v1/deals/{id}/notes': { get: { responses: {} } } }, tags, scopeOf }),
    ).toThrow('GET /v1/deals/{id}/notes');
  });
});
