// The API's document from the services' documents, with the gateway's own documented
// routes built in process (nothing listens, no store is opened): what `npm run
// openapi` writes (scripts/openapi.ts). The one gateway module scripts/ imports.
import { createHttpApp } from '@lpm/shared/http/app';
import { apiDocument, gatewayOperations } from '../routes/openapi.ts';
import { settingsRoutes } from '../routes/settings.ts';
import { portalSessionRoutes } from '../routes/portal-sessions.ts';
import type { ServiceDocument } from './document.ts';

export type { ServiceDocument };

/** Route registration only captures these: no method of theirs runs here. */
const unused = {} as never;

export async function documentOver(services: ServiceDocument[]): Promise<unknown> {
  const gateway = createHttpApp({ name: 'gateway', logger: false, documented: false });
  const own = gatewayOperations(gateway);
  settingsRoutes(gateway, { settings: unused, principals: unused });
  portalSessionRoutes(gateway, unused);
  await gateway.ready();
  await gateway.close();
  return apiDocument(services, own);
}
