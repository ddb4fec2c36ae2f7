import { consumerTask, periodicTask, runService } from '@lpm/shared/service/runner';
import { runProcess } from '@lpm/shared/service/process';
import { ServiceClient } from '@lpm/shared/upstream/service-client';
import { UserDirectory } from '@lpm/shared/upstream/user-directory';
import { consumeViewEvents } from '@lpm/shared/views/view-consumer';
import { ClientLinks } from '@lpm/shared/views/client-links';
import { CLIENT_VIEWS, ClientViewEntity, type ClientView } from '@lpm/shared/views/client-view-entity';
import { ViewsRepository } from '@lpm/shared/views/views-repository';
import { ClientsService } from '@lpm/shared/upstream/clients-service';
import { listBackfillTask } from '@lpm/shared/store/list-buckets';
import { DealEntity } from './data/deal-entity.ts';
import { DealsRepository } from './data/deals-repository.ts';
import { Deals } from './domain/deals.ts';
import { ActivitiesService } from './upstream/activities-service.ts';
import { DealCasesService } from './upstream/cases-service.ts';
import { buildDealsApp } from './app.ts';

// Started only as the process's entry point: importing it (scripts/warm-compile-cache.ts) starts nothing.
async function main(): Promise<void> {
  await runService({
    name: 'deals',
    entities: [DealEntity, ClientViewEntity],
    outboxCollections: ['deals'],
    build: ({ config, logger, db, broker, relay }) => {
      const service = (name: 'clients' | 'activities') =>
        new ServiceClient({ name, baseUrl: config.urls[name], internalToken: config.internalToken });
      const clients = new ClientsService(service('clients'));
      const clientLinks = new ClientLinks(clients, new ViewsRepository<ClientView>(db, CLIENT_VIEWS));
      const repository = new DealsRepository(db, relay, logger);
      const deals = new Deals({
        deals: repository,
        clientLinks,
        users: new UserDirectory({ gatewayUrl: config.gatewayUrl, internalToken: config.internalToken }),
        cases: new DealCasesService({ baseUrl: config.urls.cases, internalToken: config.internalToken }),
        activities: new ActivitiesService(service('activities')),
        logger,
      });
      return {
        app: buildDealsApp({ deals, db, internalToken: config.internalToken, loggerInstance: logger }),
        background: [
          listBackfillTask([repository.lists], logger, config.schedulerIntervalMs),
          consumerTask(() => consumeViewEvents(broker, 'deals.client-views', { clients: clientLinks })),
          periodicTask({
            name: 'case archive repair',
            intervalMs: config.schedulerIntervalMs,
            logger,
            run: async () => void (await deals.settleCaseArchives()),
          }),
        ],
      };
    },
  });
}

if (import.meta.main) await runProcess('deals', main);
