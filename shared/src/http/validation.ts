// Schema-first validation: one Ajv for bodies (no coercion: a number sent as a
// string is 400) and one for query strings and params (coerced from strings).
// A property's `x-message` gives the fixed text for any failure of that field.
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
  // Keywords without a type run before the object keywords, in the order added
  // here, and the first failure is the one reported: depth, then keys, then size.
  // None of them recurses, so no input can overflow the stack.
  ajv.addKeyword({
    keyword: 'x-max-depth',
    schemaType: 'number',
    validate: (max: number, data: unknown) => depthAtMost(data, max),
    errors: false,
  });
  ajv.addKeyword({
    keyword: 'x-store-keys',
    schemaType: 'boolean',
    validate: (on: boolean, data: unknown) => !on || badStoreKey(data) === undefined,
    errors: false,
  });
  ajv.addKeyword({
    keyword: 'x-no-nested-arrays',
    schemaType: 'boolean',
    validate: (on: boolean, data: unknown) => !on || !hasNestedArray(data),
    errors: false,
  });
  ajv.addKeyword({
    keyword: 'x-max-json-bytes',
    schemaType: 'number',
    validate: (max: number, data: unknown) => jsonBytes(data, max) <= max,
    errors: false,
  });
  ajv.addKeyword({
    keyword: 'x-finite',
    schemaType: 'boolean',
    validate: (on: boolean, data: unknown) => !on || typeof data !== 'number' || Number.isFinite(data),
    errors: false,
  });
  ajv.addKeyword({
    keyword: 'x-day-range',
    schemaType: 'array',
    // Only a YYYY-MM-DD string is placed in the range: `format` reports anything else.
    validate: ([first, last]: string[], data: unknown) =>
      typeof data !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(data) || (data >= first && data <= last),
    errors: false,
  });
  return ajv;
}

/** The objects and arrays inside a value, breadth first, each with its depth (the value itself is 1). */
function* containers(value: unknown): Generator<{ node: object; depth: number }> {
  if (value === null || typeof value !== 'object') return;
  const queue: { node: object; depth: number }[] = [{ node: value, depth: 1 }];
  for (let i = 0; i < queue.length; i++) {
    const item = queue[i];
    yield item;
    for (const child of Object.values(item.node as Record<string, unknown>)) {
      if (child !== null && typeof child === 'object') queue.push({ node: child, depth: item.depth + 1 });
    }
  }
}

/** Whether objects and arrays nest at most `max` levels (an object of scalars is 1); stops at the first one too deep. */
export function depthAtMost(value: unknown, max: number): boolean {
  for (const { depth } of containers(value)) if (depth > max) return false;
  return true;
}

/**
 * A key the store accepts at any level: not empty, not starting with $ (an
 * operator), no dot (a path) and no NUL (BSON ends a key there; the driver throws).
 */
export const STORE_KEY = /^[^$.\0][^.\0]*$/;

/** The first key, at any level inside a value, that is not a STORE_KEY. */
export function badStoreKey(value: unknown): string | undefined {
  for (const { node } of containers(value)) {
    if (!Array.isArray(node)) {
      const bad = Object.keys(node).find((k) => !STORE_KEY.test(k));
      if (bad !== undefined) return bad;
    }
  }
  return undefined;
}

/** Whether an array sits directly inside an array anywhere in a value (FerretDB cannot store one). */
export function hasNestedArray(value: unknown): boolean {
  for (const { node } of containers(value)) if (Array.isArray(node) && node.some(Array.isArray)) return true;
  return false;
}

/**
 * The path (`a.b.0`) of the first string inside a parsed body that holds a NUL
 * character, which the local store cannot keep; the body itself is ''.
 */
export function nulStringPath(value: unknown): string | undefined {
  const pending: [unknown, string][] = [[value, '']];
  while (pending.length > 0) {
    const [v, path] = pending.pop()!;
    if (typeof v === 'string') {
      if (v.includes('\0')) return path;
    } else if (v !== null && typeof v === 'object') {
      for (const [k, child] of Object.entries(v)) pending.push([child, path ? `${path}.${k}` : k]);
    }
  }
  return undefined;
}

function storeKeyMessage(field: string, key: string | undefined): string {
  if (key === '') return `${field} keys may not be empty`;
  if (key?.includes('\0') && !key.startsWith('$') && !key.includes('.'))
    return `${field} keys may not contain a null character`;
  return `${field} keys may not start with $ or contain .`;
}

/**
 * The UTF-8 length of JSON.stringify(value) for a value parsed from JSON, measured
 * without recursion; once past `limit` it stops with a number above it.
 */
export function jsonBytes(value: unknown, limit = Infinity): number {
  const bytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v) ?? 'null');
  let total = 0;
  const pending: unknown[] = [value];
  while (pending.length > 0 && total <= limit) {
    const v = pending.pop();
    if (v === null || typeof v !== 'object' || typeof (v as { toJSON?: unknown }).toJSON === 'function') {
      total += bytes(v); // a scalar, or an object that is its toJSON() (a Date)
      continue;
    }
    const entries = Array.isArray(v) ? v.map((item): [null, unknown] => [null, item]) : Object.entries(v);
    let count = 0;
    for (const [key, item] of entries) {
      const skipped = item === undefined || typeof item === 'function' || typeof item === 'symbol';
      if (key !== null) {
        if (skipped) continue; // left out of an object
        total += bytes(key) + 1; // "key":
      }
      pending.push(skipped ? null : item); // null in an array
      count++;
    }
    total += 2 + Math.max(count - 1, 0); // brackets and commas
  }
  return total;
}

const bodyAjv = makeAjv(false);
const queryAjv = makeAjv(true);

/**
 * The schema with `x-finite` on every number and integer in it. Ajv lets Infinity
 * through both (`limit=1e309` coerces to it, and so does 1e309 in JSON) and skips
 * minimum and maximum for it; refused here once for every route.
 */
export function finiteNumbers(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(finiteNumbers);
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema))
    out[k] = k === 'enum' || k === 'default' || k === 'examples' ? v : finiteNumbers(v);
  const types = [out.type].flat();
  if (types.includes('number') || types.includes('integer')) out['x-finite'] = true;
  return out;
}

export type ValidatorFor = (schema: AnySchema, httpPart?: string) => (data: unknown) => boolean;

export const compileValidator: ValidatorFor = (schema, httpPart) =>
  (httpPart === 'body' ? bodyAjv : queryAjv).compile(finiteNumbers(schema) as AnySchema) as (data: unknown) => boolean;

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
  if (err.keyword === 'x-day-range') {
    const [first, last] = parent['x-day-range'] as string[];
    return invalidField(field, `${field} must be a date from ${first} to ${last}`, { expected: `${first}..${last}` });
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
    case 'x-finite': {
      const t = [parent.type].flat().includes('integer') ? 'integer' : 'number';
      return invalidField(field, `${field} must be ${typeNames[t]}`, { expected: t });
    }
    case 'x-max-json-bytes':
      return invalidField(field, `${field} must be at most ${String(parent['x-max-json-bytes'])} bytes as JSON`);
    case 'x-max-depth':
      return invalidField(field, `${field} must be nested at most ${String(parent['x-max-depth'])} levels`);
    case 'x-store-keys':
      return invalidField(field, storeKeyMessage(field, badStoreKey(err.data)));
    case 'x-no-nested-arrays':
      return invalidField(field, `${field} may not hold an array directly inside an array`);
    case 'propertyNames':
      return invalidField(field, `${field} keys may not start with $ or contain .`);
    default:
      return invalidField(field, `Invalid ${field}`);
  }
}
