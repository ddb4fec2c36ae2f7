// JSON-schema building blocks with the limits of decisions §9.
export const NAME_MAX = 500;
export const LONG_TEXT_MAX = 20_000;
export const TEXT_MAX = 1000;

type Schema = Record<string, unknown>;

export const nullable = (schema: Schema): Schema => ({
  ...schema,
  type: [schema.type as string, 'null'],
  ...(schema.enum ? { enum: [...(schema.enum as unknown[]), null] } : {}),
});

export const text = (max = TEXT_MAX, extra: Schema = {}): Schema => ({ type: 'string', maxLength: max, ...extra });
export const name = (): Schema => ({ type: 'string', minLength: 1, maxLength: NAME_MAX });
export const longText = (): Schema => text(LONG_TEXT_MAX);
export const email = (): Schema => ({ type: 'string', maxLength: TEXT_MAX, format: 'email' });
export const date = (extra: Schema = {}): Schema => ({ type: 'string', format: 'date', ...extra });
export const enumOf = (values: readonly string[], message: string): Schema => ({
  type: 'string',
  enum: [...values],
  'x-message': message,
});
export const stringList = (): Schema => ({
  type: 'array',
  maxItems: 50,
  items: { type: 'string', maxLength: 100 },
});
export const metadata = (): Schema => ({
  type: 'object',
  maxProperties: 50,
  propertyNames: { pattern: '^[^$][^.]*$', 'x-message': 'metadata keys may not start with $ or contain .' },
  'x-max-json-bytes': 16 * 1024,
});

export const object = (properties: Record<string, Schema>, required: string[] = []): Schema => ({
  type: 'object',
  additionalProperties: false,
  properties,
  ...(required.length ? { required } : {}),
});

/** Error envelope schema, shared by every route's error responses. */
const errorResponse: Schema = {
  type: 'object',
  properties: {
    success: { type: 'boolean' },
    error: {
      type: 'object',
      properties: {
        code: { type: 'string' },
        message: { type: 'string' },
        details: { type: 'object', additionalProperties: true },
      },
    },
  },
};

// Response schemas: they document each route and make the serializer emit only
// the fields of the read shape (never a stored field such as the outbox).
const pageBlock: Schema = {
  type: 'object',
  properties: { page: { type: 'integer' }, limit: { type: 'integer' }, total: { type: 'integer' }, pages: { type: 'integer' } },
};

export const errorResponses = { '4xx': errorResponse, '5xx': errorResponse };

export const okResponse = (status: 200 | 201, data: Schema) => ({
  [status]: { type: 'object', properties: { success: { type: 'boolean' }, data } },
  ...errorResponses,
});

export const pageResponse = (item: Schema) => ({
  200: { type: 'object', properties: { success: { type: 'boolean' }, data: { type: 'array', items: item }, pagination: pageBlock } },
  ...errorResponses,
});

/** An object whose fields are all optional in output (absent ones are left out). */
export const shape = (properties: Record<string, Schema>): Schema => ({ type: 'object', properties });

export const out = {
  string: { type: 'string' } as Schema,
  nullableString: { type: ['string', 'null'] } as Schema,
  integer: { type: 'integer' } as Schema,
  strings: { type: 'array', items: { type: 'string' } } as Schema,
  freeObject: { type: 'object', additionalProperties: true } as Schema,
};
