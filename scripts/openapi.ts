// `npm run openapi`: writes openapi/openapi.json, the document GET /v1/openapi.json
// serves, built the same way from the same route schemas: each service's app and
// the gateway's own routes are built in process (nothing listens, no store is
// opened) and their paths go through the gateway's document builder. Run it after
// changing a route schema or gateway/src/openapi/*; test/openapi.test.ts fails while
// the committed file and the served document differ.
import { mkdirSync, writeFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { createHttpApp } from '../shared/src/http/app.ts';
import { apiDocument, gatewayOperations } from '../gateway/src/routes/openapi.ts';
import type { Paths } from '../gateway/src/openapi/document.ts';
import { settingsRoutes } from '../gateway/src/routes/settings.ts';
import { buildActivitiesApp } from '../services/activities/src/app.ts';
import { buildCasesApp } from '../services/cases/src/app.ts';
import { buildClientsApp } from '../services/clients/src/app.ts';
import { buildDealsApp } from '../services/deals/src/app.ts';
import { buildFinancialApp } from '../services/financial/src/app.ts';
import { buildWebhooksApp } from '../services/webhooks/src/app.ts';

export const OPENAPI_FILE = new URL('../openapi/openapi.json', import.meta.url);

/** The document as text, as the file holds it. */
export const documentText = (doc: unknown) => `${JSON.stringify(doc, null, 2)}\n`;

/** Route registration only captures these: no method of theirs runs here. */
const unused = {} as never;

export async function generateDocument(): Promise<unknown> {
  const base = { db: { collection: () => unused } as never, internalToken: 'unused', logger: false as const };
  const services: FastifyInstance[] = [
    buildDealsApp({ ...base, deals: unused }),
    buildClientsApp({ ...base, clients: unused }),
    buildCasesApp({ ...base, cases: unused, syncs: unused }),
    buildActivitiesApp({ ...base, activities: unused, syncs: unused }),
    buildFinancialApp({ ...base, financial: unused, syncs: unused }),
    buildWebhooksApp({ ...base, webhooks: unused, log: unused }),
  ];
  const paths: Paths[] = [];
  for (const app of services) {
    await app.ready();
    paths.push((app.swagger() as unknown as { paths: Paths }).paths);
    await app.close();
  }
  const gateway = createHttpApp({ name: 'gateway', logger: false, documented: false });
  const own = gatewayOperations(gateway);
  settingsRoutes(gateway, { settings: unused, principals: unused });
  await gateway.ready();
  await gateway.close();
  return apiDocument(paths, own);
}

if (import.meta.main) {
  mkdirSync(new URL('.', OPENAPI_FILE), { recursive: true });
  writeFileSync(OPENAPI_FILE, documentText(await generateDocument()));
  console.log(`wrote ${OPENAPI_FILE.pathname}`);
}
