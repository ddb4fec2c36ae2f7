// Schema-first validation: one Ajv for bodies (no coercion: a number sent as a
// string is 400) and one for query strings and params (coerced from strings).
// A property's `x-message` gives the spec's text for any failure of that field.
import { Ajv, type ErrorObject, type AnySchema } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { AppError, badRequest, invalidField, requiredField, unknownField } from '../errors.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv, formats: string[]) => Ajv;

function makeAjv(coerce: boolean): Ajv {
  const ajv = new Ajv({
    allErrors: false,
    coerceTypes: coerce ? 'array' : false,
    useDefaults: true,
    removeAdditional: false,
    verbose: true,
    strict: true,
    allowUnionTypes: true,
  });
  addFormats(ajv, ['date', 'email', 'uri', 'date-time']);
  ajv.addKeyword({ keyword: 'x-message', schemaType: 'string' });
  ajv.addKeyword({
    keyword: 'x-max-json-bytes',
    schemaType: 'number',
    validate: (max: number, data: unknown) => Buffer.byteLength(JSON.stringify(data)) <= max,
    errors: false,
  });
  return ajv;
}

const bodyAjv = makeAjv(false);
const queryAjv = makeAjv(true);

export type ValidatorFor = (schema: AnySchema, httpPart?: string) => (data: unknown) => boolean;

export const compileValidator: ValidatorFor = (schema, httpPart) =>
  (httpPart === 'body' ? bodyAjv : queryAjv).compile(schema) as (data: unknown) => boolean;

function fieldOf(err: ErrorObject): string {
  return err.instancePath.replace(/^\//, '').replace(/\//g, '.');
}

const typeNames: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  integer: 'an integer',
  boolean: 'a boolean',
  object: 'an object',
  array: 'an array',
};

/** The API error for the first Ajv error of a request part. */
export function fromAjvError(err: ErrorObject, part: string): AppError {
  const parent = (err.parentSchema ?? {}) as Record<string, unknown>;
  const child = (name: string) => (err.instancePath ? `${fieldOf(err)}.${name}` : name);
  if (err.keyword === 'required') return requiredField(child(String(err.params.missingProperty)));
  if (err.keyword === 'additionalProperties') return unknownField(child(String(err.params.additionalProperty)));
  const field = fieldOf(err) || part;
  if (!err.instancePath && part === 'body' && err.keyword === 'type') {
    return badRequest('Request body must be a JSON object', { type: 'invalid' });
  }
  if (typeof parent['x-message'] === 'string') return invalidField(field, parent['x-message']);
  switch (err.keyword) {
    case 'type': {
      const t = String(err.params.type).split(',')[0];
      return invalidField(field, `${field} must be ${typeNames[t] ?? t}`, { expected: err.params.type });
    }
    case 'format':
      return err.params.format === 'date'
        ? invalidField(field, `${field} must be a date (YYYY-MM-DD)`, { expected: 'YYYY-MM-DD' })
        : invalidField(field, `${field} must be a valid ${err.params.format}`, { expected: err.params.format });
    case 'enum':
      return invalidField(field, `Invalid ${field}`, { expected: err.params.allowedValues });
    case 'maxLength':
      return invalidField(field, `${field} must be at most ${err.params.limit} characters`);
    case 'minLength':
      return err.params.limit === 1
        ? invalidField(field, `${field} must not be empty`)
        : invalidField(field, `${field} must be at least ${err.params.limit} characters`);
    case 'maxItems':
      return invalidField(field, `${field} must have at most ${err.params.limit} items`);
    case 'maxProperties':
      return invalidField(field, `${field} must have at most ${err.params.limit} keys`);
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return invalidField(field, `${field} must be ${err.params.comparison} ${err.params.limit}`);
    case 'pattern':
      return invalidField(field, `Invalid ${field} format`);
    case 'x-max-json-bytes':
      return invalidField(field, `${field} must be at most ${parent['x-max-json-bytes']} bytes as JSON`);
    case 'propertyNames':
      return invalidField(field, `${field} keys may not start with $ or contain .`);
    default:
      return invalidField(field, `Invalid ${field}`);
  }
}
