import { runService } from '@lpm/shared/service/runner';
import { ServiceClient } from '@lpm/shared/upstream/service-client';
import { ClientEntity } from './data/client-entity.ts';
import { casesServiceDirectory } from './domain/case-directory.ts';
import { buildClientsApp } from './app.ts';

await runService({
  name: 'clients',
  entities: [ClientEntity],
  outboxCollections: ['clients'],
  build: ({ config, logger, orm, relay }) => {
    const cases = casesServiceDirectory(new ServiceClient({ name: 'cases', baseUrl: config.urls.cases, internalToken: config.internalToken }));
    return { app: buildClientsApp({ orm, relay, cases, internalToken: config.internalToken, loggerInstance: logger }) };
  },
});
