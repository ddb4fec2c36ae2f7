import { consumerTask, runService } from '@lpm/shared/service/runner';
import { ServiceClient } from '@lpm/shared/upstream/service-client';
import { TimeSignals, mongoDbUrl } from '@lpm/shared/jobs/time-signals';
import { UserDirectory } from '@lpm/shared/upstream/user-directory';
import { CaseEntity, ClientViewEntity } from './data/case-entity.ts';
import { ClientLinks } from './domain/client-links.ts';
import { Cases } from './domain/cases.ts';
import { activitiesServiceList } from './domain/case-activities.ts';
import { slaSignals } from './domain/sla-signals.ts';
import { consumeClientEvents } from './consumers/client-events.ts';
import { buildCasesApp } from './app.ts';

await runService({
  name: 'cases',
  entities: [CaseEntity, ClientViewEntity],
  outboxCollections: ['cases'],
  build: ({ config, logger, orm, broker, relay }) => {
    const db = orm.em.getConnection().getDb();
    const clientLinks = new ClientLinks(db, new ServiceClient({ name: 'clients', baseUrl: config.urls.clients, internalToken: config.internalToken }));
    const users = new UserDirectory({ gatewayUrl: config.gatewayUrl, internalToken: config.internalToken });
    const activities = activitiesServiceList(new ServiceClient({ name: 'activities', baseUrl: config.urls.activities, internalToken: config.internalToken }));
    const cases = new Cases({ orm, relay, clientLinks, users, activities });
    const signals = new TimeSignals({
      db,
      agendaUrl: mongoDbUrl(config.mongoUrl, `${config.dbPrefix}cases`),
      intervalMs: config.schedulerIntervalMs,
      signals: slaSignals(cases),
      relay,
      logger,
      name: 'cases',
    });
    return {
      app: buildCasesApp({ cases, db, internalToken: config.internalToken, loggerInstance: logger }),
      background: [signals, consumerTask(() => consumeClientEvents(broker, clientLinks))],
    };
  },
});
