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
export const errorResponse: Schema = {
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
