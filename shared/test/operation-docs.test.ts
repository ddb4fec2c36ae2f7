import { describe, expect, test } from '@jest/globals';
import { businessRule, notFound } from '../src/errors.ts';
import { documentedSchema, schemaMessage, type OperationDocs } from '../src/http/operation-docs.ts';

const body = {
  type: 'object',
  properties: {
    phase: { type: 'string', 'x-message': 'Invalid phase' },
    nested: { type: 'object', properties: { rate: { type: 'number', 'x-message': 'Invalid rate' } } },
  },
};
const docs: OperationDocs = {
  'PUT /v1/things/{id}': {
    operationId: 'updateThing',
    summary: 'Update a thing',
    description: 'Changes it.',
    errors: [
      schemaMessage('phase'),
      notFound('Thing not found'),
      schemaMessage('rate'),
      businessRule('Thing is closed', 'thing_closed'),
    ],
  },
  'POST /v1/things': {
    operationId: 'createThing',
    summary: 'Create',
    description: 'Creates.',
    errors: [schemaMessage('colour')],
  },
};

describe('documentedSchema', () => {
  test('when a route has documentation, then its schema carries it, errors by status in the order given, schema messages looked up in the request schema', () => {
    const schema = documentedSchema({ method: 'PUT', url: '/v1/things/:id', schema: { body } }, docs) as Record<
      string,
      unknown
    >;
    expect(schema).toMatchObject({
      body,
      operationId: 'updateThing',
      summary: 'Update a thing',
      description: 'Changes it.',
    });
    expect(schema['x-errors']).toEqual({
      400: ['Invalid phase', 'Invalid rate'],
      404: ['Thing not found'],
      422: ['Thing is closed'],
    });
  });

  test('when a route has no documentation, then its schema is left as it is', () => {
    const route = { method: 'GET', url: '/v1/things/:id', schema: { body } };
    expect(documentedSchema(route, docs)).toBe(route.schema);
  });

  test('when an error names a field the request schema has no message for, then documenting the route fails, naming both', () => {
    expect(() => documentedSchema({ method: 'POST', url: '/v1/things', schema: { body } }, docs)).toThrow(
      'POST /v1/things: no schema message for colour',
    );
  });
});
