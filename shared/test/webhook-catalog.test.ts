// The event catalog against the committed API document (which test/openapi.test.ts
// holds equal to the one the gateway builds): it lists every event, each example is
// a valid delivery by its own schema, and each entry says what the document's
// webhooks section says.
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { OPENAPI_PATH } from '@lpm/test-kit/contract';
import type { JsonAnswer } from '@lpm/test-kit/json';
import { EVENT_TYPES } from '../src/events.ts';
import { DOCUMENT_COMPONENTS, eventCatalog } from '../src/webhook-catalog.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
const doc: JsonAnswer = JSON.parse(readFileSync(OPENAPI_PATH, 'utf8'));
/** Where the API answers, as a client would resolve the catalog's references against it. */
const API = 'https://api.example.com';

/** A validator that resolves `/v1/openapi.json#/...` against the API's address, as a client does. */
function validatorOf(schema: object) {
  const ajv = new Ajv2020({ strict: false, allErrors: true, allowUnionTypes: true });
  addFormats(ajv);
  ajv.addSchema({ $id: `${API}/v1/openapi.json`, components: doc.components });
  return ajv.compile({ ...schema, $id: `${API}/v1/webhooks/event-types` });
}

const catalog = eventCatalog();

test('when the catalog is read, then it lists exactly the events of EVENT_TYPES, each once', () => {
  expect(catalog.map((e) => e.type)).toEqual([...EVENT_TYPES]);
  for (const entry of catalog) {
    expect(entry.description.length).toBeGreaterThan(0);
    expect(entry.example.type).toBe(entry.type);
  }
});

test.each(catalog.map((e) => [e.type, e] as const))(
  'when the example of %s is validated against its schema, then it is valid',
  (_, entry) => {
    const validate = validatorOf(entry.schema);
    const valid = validate(entry.example);
    expect(validate.errors ?? []).toEqual([]);
    expect(valid).toBe(true);
  },
);

test('when an example misses a field of its resource, then its schema refuses it', () => {
  const entry = catalog.find((e) => e.type === 'deal.won')!;
  const { title: _, ...object } = (entry.example.data as { object: Record<string, unknown> }).object;
  const validate = validatorOf(entry.schema);
  expect(validate({ ...entry.example, data: { object, previous_attributes: null } })).toBe(false);
});

test.each(catalog.map((e) => [e.type, e] as const))(
  'when %s is compared with the webhooks section of the API document, then both say the same',
  (type, entry) => {
    const post = doc.webhooks[type].post;
    expect(post.description.startsWith(`${entry.description}\n\n`)).toBe(true);
    const media = post.requestBody.content['application/json'];
    expect(media.example).toEqual(entry.example);
    const component: string = media.schema.$ref.replace('#/components/schemas/', '');
    const asServed = JSON.parse(
      JSON.stringify(doc.components.schemas[component]).replaceAll('"#/components/schemas/', `"${DOCUMENT_COMPONENTS}`),
    );
    expect(entry.schema).toEqual(asServed);
  },
);
