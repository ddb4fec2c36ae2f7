// The schemas of the document's operations with every titled subschema moved into
// the named components, and read shapes that require all their fields.
import { REF, ref, type Json } from './refs.ts';

const SUBSCHEMAS = [
  'items',
  'additionalProperties',
  'not',
  'propertyNames',
  'oneOf',
  'anyOf',
  'allOf',
  'prefixItems',
  'if',
  'then',
  'else',
];

/** A complete read shape: every field of each of its objects is present (decisions §10). */
function requireAll(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(requireAll);
  if (schema === null || typeof schema !== 'object' || '$ref' in schema) return schema;
  const out: Json = { ...(schema as Json) };
  if (out.properties) {
    const properties = Object.fromEntries(Object.entries(out.properties as Json).map(([p, s]) => [p, requireAll(s)]));
    out.properties = properties;
    out.required = Object.keys(properties);
  }
  for (const k of SUBSCHEMAS) if (out[k] !== undefined && typeof out[k] === 'object') out[k] = requireAll(out[k]);
  return out;
}

/**
 * Walks a schema, moving every titled subschema into `components`, and returns it
 * with $refs in their place. In a response (`read`), a named shape requires all
 * its fields, or those `x-required` names, or none when marked `x-partial`
 * (schemas.ts `named`).
 */
export function hoist(schema: unknown, components: Json, read = false): unknown {
  if (Array.isArray(schema)) return schema.map((s) => hoist(s, components, read));
  if (schema === null || typeof schema !== 'object') return schema;
  let out: Json = {};
  for (const [k, v] of Object.entries(schema as Json)) {
    if (k === 'properties' || k === '$defs')
      out[k] = Object.fromEntries(Object.entries(v as Json).map(([p, s]) => [p, hoist(s, components, read)]));
    else if (SUBSCHEMAS.includes(k)) out[k] = hoist(v, components, read);
    else out[k] = v;
  }
  const name = out.title;
  if (typeof name !== 'string') return out;
  const { 'x-partial': partial, 'x-required': required, ...rest } = out;
  out = read && !partial ? (requireAll(rest) as Json) : rest;
  if (read && required) out.required = required;
  const existing = components[name];
  if (existing && JSON.stringify(existing) !== JSON.stringify(out))
    throw new Error(`two different schemas are named ${name}`);
  components[name] = out;
  return ref(name);
}

export function firstRequired(body: Json | undefined, components: Json): string | undefined {
  const schema = (typeof body?.$ref === 'string' ? components[body.$ref.slice(REF.length)] : body) as
    { required?: string[] } | undefined;
  return schema?.required?.[0];
}
