import { consumerTask, runService } from '@lpm/shared/service/runner';
import { runProcess } from '@lpm/shared/service/process';
import { listsBackfill, signalSweep, teamSyncs } from '@lpm/shared/service/background-work';
import { appRuntimeOptions } from '@lpm/shared/service/domain-app';
import { clientLinksOf, serviceClient, userDirectory } from '@lpm/shared/service/neighbours';
import { ClientViewEntity } from '@lpm/shared/views/client-view-entity';
import { consumeViewEvents } from '@lpm/shared/views/view-consumer';
import { CaseEntity } from './data/case-entity.ts';
import { CasesRepository } from './data/cases-repository.ts';
import { Cases } from './domain/cases.ts';
import { consumeActivityEvents } from './consumers/activity-events.ts';
import { consumePublicationEvents } from './consumers/publication-events.ts';
import { slaSignals } from './jobs/sla-signals.ts';
import { ActivitiesService } from './upstream/activities-service.ts';
import { buildCasesApp } from './app.ts';

// Started only as the process's entry point: importing it (scripts/warm-compile-cache.ts) starts nothing.
async function main(): Promise<void> {
  await runService({
    name: 'cases',
    entities: [CaseEntity, ClientViewEntity],
    outboxCollections: ['cases'],
    build: (rt) => {
      const { config, logger, db, broker, relay } = rt;
      const clientLinks = clientLinksOf(config, db);
      const repository = new CasesRepository(db, relay, logger);
      const cases = new Cases({
        cases: repository,
        clientLinks,
        users: userDirectory(config),
        activities: new ActivitiesService(serviceClient(config, 'activities')),
      });
      const syncs = teamSyncs(rt, cases.syncWork());
      return {
        app: buildCasesApp({ cases, syncs, ...appRuntimeOptions(rt) }),
        background: [
          listsBackfill(rt, repository.lists),
          signalSweep(rt, 'cases', slaSignals(cases)),
          syncs,
          consumerTask(() => consumeViewEvents(broker, 'cases.client-views', { clients: clientLinks })),
          consumerTask(() => consumeActivityEvents(broker, db, cases)),
          consumerTask(() => consumePublicationEvents(broker, repository)),
        ],
      };
    },
  });
}

if (import.meta.main) await runProcess('cases', main);
