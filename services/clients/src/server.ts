import { runService } from '@lpm/shared/service-runner';
import { ClientEntity } from './domain/client-entity.ts';
import { noCasesYet } from './domain/case-directory.ts';
import { buildClientsApp } from './app.ts';

await runService({
  name: 'clients',
  entities: [ClientEntity],
  outboxCollections: ['clients'],
  build: ({ config, logger, orm, relay }) =>
    buildClientsApp({ orm, relay, cases: noCasesYet, internalToken: config.internalToken, loggerInstance: logger }),
});
