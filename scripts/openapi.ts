// `npm run openapi`: writes openapi/openapi.json, the document GET /v1/openapi.json
// serves, built the same way from the same route schemas: each service of the
// registry (shared/src/service/registry.ts) is built in process from its app
// builder (nothing listens, no store is opened), and their paths, with the
// gateway's own routes, go through the gateway's document builder. Run it after
// changing a route schema, a service's contract/*-operations.ts or
// gateway/src/openapi/*; test/openapi.test.ts fails while the committed file and
// the served document differ.
import { mkdirSync, writeFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { SERVICES } from '../shared/src/service/registry.ts';
import { documentOver, type ServiceDocument } from '../gateway/src/openapi/api-document.ts';

export const OPENAPI_FILE = new URL('../openapi/openapi.json', import.meta.url);

/** The document as text, as the file holds it. */
export const documentText = (doc: unknown) => `${JSON.stringify(doc, null, 2)}\n`;

/** Route registration only captures these: no method of theirs runs here. */
const unused = {} as never;

/**
 * A builder's options: a store whose collections are never used, and for every
 * other option (the service's domain objects, which only its handlers call) a
 * placeholder. Only the store, token and logger are its own keys, so a builder
 * that spreads its options hands on no placeholder.
 */
const own: Record<string | symbol, unknown> = {
  db: { collection: () => unused },
  internalToken: 'unused',
  logger: false,
};
const builderOptions = new Proxy(own, { get: (target, key) => (key in target ? target[key] : unused) });

async function serviceDocument(entry: (typeof SERVICES)[number]): Promise<ServiceDocument> {
  const module = (await import(new URL(`../${entry.app.module}`, import.meta.url).href)) as Record<
    string,
    (opts: unknown) => FastifyInstance
  >;
  const app = module[entry.app.builder](builderOptions);
  await app.ready();
  const { paths, tags } = app.swagger() as unknown as ServiceDocument;
  await app.close();
  return { paths, tags };
}

export async function generateDocument(): Promise<unknown> {
  const documents: ServiceDocument[] = [];
  for (const entry of SERVICES) documents.push(await serviceDocument(entry));
  return documentOver(documents);
}

if (import.meta.main) {
  mkdirSync(new URL('.', OPENAPI_FILE), { recursive: true });
  writeFileSync(OPENAPI_FILE, documentText(await generateDocument()));
  console.log(`wrote ${OPENAPI_FILE.pathname}`);
}
