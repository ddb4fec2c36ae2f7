import { consumerTask, runService } from '@lpm/shared/service/runner';
import { runProcess } from '@lpm/shared/service/process';
import { serviceClient } from '@lpm/shared/service/neighbours';
import { listsBackfill } from '@lpm/shared/service/background-work';
import { appRuntimeOptions } from '@lpm/shared/service/domain-app';
import { ClientEntity } from './data/client-entity.ts';
import { ClientsRepository } from './data/clients-repository.ts';
import { Clients } from './domain/clients.ts';
import { consumeCaseCounts } from './consumers/case-events.ts';
import { ClientCasesService } from './upstream/cases-service.ts';
import { buildClientsApp } from './app.ts';

// Started only as the process's entry point: importing it (scripts/warm-compile-cache.ts) starts nothing.
async function main(): Promise<void> {
  await runService({
    name: 'clients',
    entities: [ClientEntity],
    outboxCollections: ['clients'],
    build: (rt) => {
      const { config, logger, db, broker, relay } = rt;
      const cases = new ClientCasesService(serviceClient(config, 'cases'));
      const repository = new ClientsRepository(db, relay, logger);
      const clients = new Clients({ clients: repository, cases });
      return {
        app: buildClientsApp({ clients, ...appRuntimeOptions(rt) }),
        background: [listsBackfill(rt, repository.lists), consumerTask(() => consumeCaseCounts(broker, clients))],
      };
    },
  });
}

if (import.meta.main) await runProcess('clients', main);
