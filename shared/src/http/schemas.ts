// JSON-schema building blocks with the limits of docs/decisions.md §9. Each input schema
// carries, as a phantom type, the TypeScript type of the values it accepts, and
// the `SchemaTypes` provider hands that type to route handlers: request bodies,
// query strings and params are typed from the very schemas that validate them,
// with nothing written twice and nothing cast. The JSON the builders produce is
// plain JSON Schema (Ajv and the OpenAPI document see no difference).
import type { FastifyTypeProvider } from 'fastify';
import { ERROR_CODES } from '../errors.ts';
import { FIRST_DAY, LAST_DAY } from '../time.ts';

export const NAME_MAX = 500;
export const LONG_TEXT_MAX = 20_000;
export const TEXT_MAX = 1000;

declare const accepts: unique symbol;

/** A JSON schema of values of type T. */
export type Schema<T = unknown> = Record<string, unknown> & { readonly [accepts]?: T };

/** The type of the values a schema accepts. */
export type Static<S> = S extends { readonly [accepts]?: infer T } ? T : unknown;

/** Route handlers see `req.body`, `req.query` and `req.params` as their schemas' Static types. */
export interface SchemaTypes extends FastifyTypeProvider {
  readonly validator: Static<this['schema']>;
  readonly serializer: unknown;
}

type Extra = Record<string, unknown>;
type Prettify<T> = { [K in keyof T]: T[K] } & {};

/** A schema written out by hand, declared to accept T. */
export const typed = <T>(schema: Extra): Schema<T> => schema;

export const nullable = <T>(schema: Schema<T>): Schema<T | null> => ({
  ...schema,
  type: [schema.type as string, 'null'],
  ...(schema.enum ? { enum: [...(schema.enum as unknown[]), null] } : {}),
});

export const text = (max = TEXT_MAX, extra: Extra = {}): Schema<string> => ({
  type: 'string',
  maxLength: max,
  ...extra,
});
export const name = (): Schema<string> => ({ type: 'string', minLength: 1, maxLength: NAME_MAX });
export const longText = (): Schema<string> => text(LONG_TEXT_MAX);
export const email = (): Schema<string> => ({ type: 'string', maxLength: TEXT_MAX, format: 'email' });
export const date = (extra: Extra = {}): Schema<string> => ({
  type: 'string',
  format: 'date',
  'x-day-range': [FIRST_DAY, LAST_DAY],
  ...extra,
});
export const integer = (extra: Extra = {}): Schema<number> => ({ type: 'integer', ...extra });
export const boolean = (): Schema<boolean> => ({ type: 'boolean' });
export const enumOf = <const V extends readonly string[]>(values: V, message: string): Schema<V[number]> => ({
  type: 'string',
  enum: [...values],
  'x-message': message,
});
export const arrayOf = <T>(items: Schema<T>, extra: Extra = {}): Schema<T[]> => ({ type: 'array', items, ...extra });
export const stringList = (): Schema<string[]> => arrayOf(text(100), { maxItems: 50 });
export const METADATA_MAX_DEPTH = 32;
export const METADATA_MAX_BYTES = 16 * 1024;
/**
 * Free-form custom data the store keeps as given: at most 50 keys, objects and
 * arrays nested at most 32 levels (metadata itself is level 1; MongoDB refuses a
 * document nested past 100), no key at any level that is empty, starts with `$`
 * or contains `.` or NUL, no array directly inside an array (FerretDB cannot
 * store one), 16 KiB as JSON. The `x-` keywords are checked without
 * recursion, depth first (validation.ts), so deep input never overflows.
 */
export const metadata = (): Schema<Record<string, unknown>> => ({
  type: 'object',
  maxProperties: 50,
  propertyNames: {
    pattern: '^[^$.\\u0000][^.\\u0000]*$',
    'x-message': 'metadata keys may not start with $ or contain .',
  },
  'x-max-depth': METADATA_MAX_DEPTH,
  'x-store-keys': true,
  'x-no-nested-arrays': true,
  'x-max-json-bytes': METADATA_MAX_BYTES,
});

type Properties = Record<string, Schema<unknown>>;

/** The type of an object whose `required` keys are present and the others optional. */
export type ObjectOf<P extends Properties, R extends keyof P> = Prettify<
  { [K in R]: Static<P[K]> } & { [K in Exclude<keyof P, R>]?: Static<P[K]> }
>;

/** A closed object: unknown fields are refused (400 Unknown field). */
export const object = <P extends Properties, R extends keyof P & string = never>(
  properties: P,
  required: readonly R[] = [],
): Schema<ObjectOf<P, R>> => ({
  type: 'object',
  additionalProperties: false,
  properties,
  ...(required.length ? { required: [...required] } : {}),
});

/**
 * A schema the OpenAPI document names: it is written once, in components.schemas
 * under its `title`, and referenced wherever a route uses it (gateway/src/openapi).
 * A read shape is complete (docs/decisions.md §10), so the document requires each of its
 * fields; `partial` marks one that holds only some (a PUT answer: the fields sent;
 * its type has every field optional), `required` names the fields that are always
 * there when the others depend on the record. Neither binds the serializer, which
 * never refuses an answer.
 */
export function named<S extends Schema<unknown>>(
  title: string,
  description: string,
  schema: S,
  opts: { partial: true; required?: string[] },
): Schema<Partial<Static<S>>>;
export function named<S extends Schema<unknown>>(
  title: string,
  description: string,
  schema: S,
  opts?: { required?: string[] },
): S;
export function named(
  title: string,
  description: string,
  schema: Schema,
  opts: { partial?: boolean; required?: string[] } = {},
): Schema {
  return {
    ...schema,
    title,
    description,
    ...(opts.partial ? { 'x-partial': true } : {}),
    ...(opts.required ? { 'x-required': opts.required } : {}),
  };
}

/** Error envelope schema, shared by every route's error responses. */
const errorResponse: Schema = named('Error', 'The error envelope of every failed request.', {
  type: 'object',
  required: ['success', 'error'],
  properties: {
    success: { type: 'boolean', const: false },
    error: {
      type: 'object',
      required: ['code', 'message', 'details'],
      properties: {
        code: {
          type: 'string',
          enum: [...ERROR_CODES],
          description:
            'The status class: one code per HTTP status (422 splits into DUPLICATE_ENTRY and VALIDATION_ERROR).',
        },
        message: { type: 'string', description: "The exact text of the spec's error table for the condition." },
        details: {
          type: 'object',
          additionalProperties: true,
          description:
            'What more there is to say: `field` and `type` (required, invalid, unknown) for a field, `reason` in snake_case for a business rule; `{}` when nothing.',
        },
      },
    },
  },
});

// Response schemas: they document each route and make the serializer emit only
// the fields of the read shape (never a stored field such as the outbox).
const pageBlock: Schema = named(
  'Pagination',
  'Where a page of a list stands: pages = ceil(total / limit); a page past the end has data [] and the true total.',
  {
    type: 'object',
    required: ['page', 'limit', 'total', 'pages'],
    properties: {
      page: { type: 'integer', minimum: 1 },
      limit: { type: 'integer', minimum: 1, maximum: 100 },
      total: { type: 'integer', minimum: 0 },
      pages: { type: 'integer', minimum: 0 },
    },
  },
);

export const errorResponses = { '4xx': errorResponse, '5xx': errorResponse };

export const okResponse = (status: 200 | 201 | 202, data: Schema) => ({
  [status]: {
    type: 'object',
    required: ['success', 'data'],
    properties: { success: { type: 'boolean', const: true }, data },
  },
  ...errorResponses,
});

export const pageResponse = (item: Schema) => ({
  200: {
    type: 'object',
    required: ['success', 'data', 'pagination'],
    properties: {
      success: { type: 'boolean', const: true },
      data: { type: 'array', items: item },
      pagination: pageBlock,
    },
  },
  ...errorResponses,
});

/** The type of a read shape with these fields (`shape(properties)` accepts it). */
export type ShapeOf<P extends Properties> = Prettify<{ -readonly [K in keyof P]: Static<P[K]> }>;

/**
 * A read shape: the serializer writes the fields it lists, and its Static type has
 * each of them, so the function that builds the answer (`exact`) must too.
 */
export const shape = <P extends Properties>(properties: P): Schema<ShapeOf<P>> => ({ type: 'object', properties });

/** A read shape or null (a linked record). */
export const nullableShape = <P extends Properties>(properties: P): Schema<ShapeOf<P> | null> => ({
  type: ['object', 'null'],
  properties,
});

/** An object of any keys whose values all have one schema. */
export const mapOf = <T>(values: Schema<T>): Schema<Record<string, T>> => ({
  type: 'object',
  additionalProperties: values,
});

export const out = {
  string: { type: 'string' } as Schema<string>,
  nullableString: { type: ['string', 'null'] } as Schema<string | null>,
  integer: { type: 'integer' } as Schema<number>,
  nullableInteger: { type: ['integer', 'null'] } as Schema<number | null>,
  number: { type: 'number' } as Schema<number>,
  nullableNumber: { type: ['number', 'null'] } as Schema<number | null>,
  boolean: { type: 'boolean' } as Schema<boolean>,
  nullableBoolean: { type: ['boolean', 'null'] } as Schema<boolean | null>,
  strings: { type: 'array', items: { type: 'string' } } as Schema<string[]>,
  freeObject: { type: 'object', additionalProperties: true } as Schema<Record<string, unknown>>,
};

/** V with every key that S lacks, at any depth, typed never. */
export type NoExtraFields<V, S> = unknown extends S
  ? V // a schema written out by hand without a type: nothing to compare
  : V extends readonly (infer E)[]
    ? NonNullable<S> extends readonly (infer F)[]
      ? NoExtraFields<E, F>[]
      : V
    : V extends object
      ? { [K in keyof V]: K extends keyof NonNullable<S> ? NoExtraFields<V[K], NonNullable<S>[K]> : never }
      : V;

/**
 * An answer typed as its read shape T (a response schema's Static type): tsc
 * refuses a value that misses a field of T or has one T lacks, at any depth, so a
 * field the serializer would drop cannot be written.
 */
export const exact =
  <T>() =>
  <V extends T>(value: V & NoExtraFields<V, T>): T =>
    value;
