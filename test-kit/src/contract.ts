// The committed OpenAPI document as a test oracle: every answer a system test gets
// through the shared client (running-system.ts `call`) is checked against the
// response schema of its operation and status. Objects are read as closed, so a
// field the code sends and the document lacks fails; the document requires every
// field of a complete read shape, so one it has and the code does not send fails too.
import { readFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

type Json = Record<string, unknown>;

/** A JSON body of an operation or event: its schema. */
interface Media {
  schema: unknown;
}

interface Response {
  content: { 'application/json': Media };
}

interface Operation {
  responses: Record<string, Response | { $ref: string } | undefined>;
}

/** The parts of the OpenAPI document the contract reads. */
export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Json; responses?: Record<string, Response> };
  webhooks?: Record<string, { post: { requestBody: { content: { 'application/json': Media } } } } | undefined>;
}

export const OPENAPI_PATH = new URL('../../openapi/openapi.json', import.meta.url);

const ROOT = 'lpm:openapi';

/** The schema with every object closed to the properties it lists. */
function strict(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(strict);
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Json = {};
  for (const [k, v] of Object.entries(schema as Json)) {
    if (k === 'properties') out[k] = Object.fromEntries(Object.entries(v as Json).map(([p, s]) => [p, strict(s)]));
    else if (k === 'examples' || k === 'example' || k === 'enum' || k === 'const') out[k] = v;
    else out[k] = strict(v);
  }
  if (out.properties && out.additionalProperties === undefined) out.additionalProperties = false;
  return out;
}

const localRefs = (schema: unknown) =>
  JSON.parse(JSON.stringify(schema).replaceAll('"#/components/schemas/', `"${ROOT}#/$defs/`));

export class Contract {
  readonly document: OpenApiDocument;
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true, allowUnionTypes: true });
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly routes: { method: string; template: string; pattern: RegExp }[] = [];

  constructor(document = JSON.parse(readFileSync(OPENAPI_PATH, 'utf8')) as OpenApiDocument) {
    this.document = document;
    addFormats(this.ajv);
    const defs = Object.fromEntries(Object.entries(document.components.schemas).map(([name, s]) => [name, strict(s)]));
    this.ajv.addSchema({ $id: ROOT, $defs: localRefs(defs) });
    for (const [template, item] of Object.entries(document.paths)) {
      // Literal segments match before parameters (/v1/deals/summary before /v1/deals/{id}).
      const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`);
      for (const method of Object.keys(item)) this.routes.push({ method: method.toUpperCase(), template, pattern });
    }
    this.routes.sort((a, b) => (a.template.match(/\{/g)?.length ?? 0) - (b.template.match(/\{/g)?.length ?? 0));
  }

  /** The operation a request reaches, or undefined when the document has none. */
  operation(method: string, path: string): { template: string; operation: Operation } | undefined {
    const bare = path.split('?')[0];
    const route = this.routes.find((r) => r.method === method && r.pattern.test(bare));
    return route && { template: route.template, operation: this.document.paths[route.template][method.toLowerCase()] };
  }

  /** Why `body` is not what the document says `method path` answers with `status`; null when it is. */
  check(method: string, path: string, status: number, body: unknown): string | null {
    const found = this.operation(method, path);
    if (!found) return `${method} ${path}: no operation in the document`;
    const answer = found.operation.responses[String(status)];
    if (!answer) return `${method} ${found.template}: status ${status} is not in the document`;
    // A shared response is a $ref to components.responses, which the document has.
    const response = '$ref' in answer ? this.document.components.responses![answer.$ref.split('/').pop()!] : answer;
    const key = `${method} ${found.template} ${status}`;
    let validate = this.validators.get(key);
    if (!validate) {
      const schema = response.content['application/json'].schema;
      validate = this.ajv.compile(localRefs(strict(schema)));
      this.validators.set(key, validate);
    }
    if (validate(body)) return null;
    return `${key}: ${this.ajv.errorsText(validate.errors, { separator: '; ' })}`;
  }

  /** Why a webhook delivery body does not match its event's payload schema; null when it does. */
  checkEvent(body: { type: string }): string | null {
    const event = this.document.webhooks?.[body.type];
    if (!event) return `event ${body.type}: not in the document`;
    const key = `event ${body.type}`;
    let validate = this.validators.get(key);
    if (!validate) {
      validate = this.ajv.compile(localRefs(event.post.requestBody.content['application/json'].schema));
      this.validators.set(key, validate);
    }
    return validate(body) ? null : `${key}: ${this.ajv.errorsText(validate.errors, { separator: '; ' })}`;
  }
}

let shared: Contract | undefined;
/** The committed document's contract, read once per test file. */
export const contract = () => (shared ??= new Contract());
