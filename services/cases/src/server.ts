import { consumerTask, runService } from '@lpm/shared/service/runner';
import { TimeSignals } from '@lpm/shared/jobs/time-signals';
import { ServiceClient } from '@lpm/shared/upstream/service-client';
import { UserDirectory } from '@lpm/shared/upstream/user-directory';
import { CaseEntity, ClientViewEntity } from './data/case-entity.ts';
import { CasesRepository } from './data/cases-repository.ts';
import { ClientViewsRepository } from './data/client-views-repository.ts';
import { Cases } from './domain/cases.ts';
import { ClientLinks } from './domain/client-links.ts';
import { consumeClientEvents } from './consumers/client-events.ts';
import { consumeActivityEvents } from './consumers/activity-events.ts';
import { slaSignals } from './jobs/sla-signals.ts';
import { ActivitiesService } from './upstream/activities-service.ts';
import { ClientsService } from './upstream/clients-service.ts';
import { buildCasesApp } from './app.ts';

await runService({
  name: 'cases',
  entities: [CaseEntity, ClientViewEntity],
  outboxCollections: ['cases'],
  build: ({ config, logger, db, broker, relay }) => {
    const service = (name: 'clients' | 'activities') => new ServiceClient({ name, baseUrl: config.urls[name], internalToken: config.internalToken });
    const clientLinks = new ClientLinks(new ClientsService(service('clients')), new ClientViewsRepository(db));
    const cases = new Cases({
      cases: new CasesRepository(db, relay),
      clientLinks,
      users: new UserDirectory({ gatewayUrl: config.gatewayUrl, internalToken: config.internalToken }),
      activities: new ActivitiesService(service('activities')),
    });
    const signals = new TimeSignals({
      db,
      intervalMs: config.schedulerIntervalMs,
      signals: slaSignals(cases),
      relay,
      logger,
      name: 'cases',
    });
    return {
      app: buildCasesApp({ cases, db, internalToken: config.internalToken, loggerInstance: logger }),
      background: [signals, consumerTask(() => consumeClientEvents(broker, clientLinks)), consumerTask(() => consumeActivityEvents(broker, db, cases))],
    };
  },
});
