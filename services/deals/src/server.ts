import { consumerTask, periodicTask, runService } from '@lpm/shared/service/runner';
import { runProcess } from '@lpm/shared/service/process';
import { clientLinksOf, serviceClient, userDirectory } from '@lpm/shared/service/neighbours';
import { consumeViewEvents } from '@lpm/shared/views/view-consumer';
import { ClientViewEntity } from '@lpm/shared/views/client-view-entity';
import { listsBackfill } from '@lpm/shared/service/background-work';
import { appRuntimeOptions } from '@lpm/shared/service/domain-app';
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
    build: (rt) => {
      const { config, logger, db, broker, relay } = rt;
      const clientLinks = clientLinksOf(config, db);
      const repository = new DealsRepository(db, relay, logger);
      const deals = new Deals({
        deals: repository,
        clientLinks,
        users: userDirectory(config),
        cases: new DealCasesService({ baseUrl: config.urls.cases, internalToken: config.internalToken }),
        activities: new ActivitiesService(serviceClient(config, 'activities')),
        logger,
      });
      return {
        app: buildDealsApp({ deals, ...appRuntimeOptions(rt) }),
        background: [
          listsBackfill(rt, repository.lists),
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
