import { createMailer } from '@lpm/shared/mailer';
import { mailSettings, readConfig } from '@lpm/shared/config';
import { consumerTask, periodicTask, runService, type BackgroundTask } from '@lpm/shared/service/runner';
import { runProcess } from '@lpm/shared/service/process';
import { DAY_MS } from '@lpm/shared/time';
import { listsBackfill, signalSweep, teamSyncs } from '@lpm/shared/service/background-work';
import { appRuntimeOptions } from '@lpm/shared/service/domain-app';
import { caseLinksOf, clientLinksOf, serviceClient, userDirectory } from '@lpm/shared/service/neighbours';
import { CaseViewEntity } from '@lpm/shared/views/case-view-entity';
import { ClientViewEntity } from '@lpm/shared/views/client-view-entity';
import { consumeViewEvents } from '@lpm/shared/views/view-consumer';
import { ActivityEntity } from './data/activity-entity.ts';
import { ActivitiesRepository, TOMBSTONES } from './data/activities-repository.ts';
import { Activities } from './domain/activities.ts';
import { Reminders } from './domain/reminders.ts';
import { consumeReminders } from './consumers/reminders.ts';
import { dueSignals } from './jobs/due-signals.ts';
import { DealsService } from './upstream/deals-service.ts';
import { buildActivitiesApp } from './app.ts';

// Started only as the process's entry point: importing it (scripts/warm-compile-cache.ts) starts nothing.
async function main(): Promise<void> {
  const mail = readConfig(mailSettings);

  await runService({
    name: 'activities',
    entities: [ActivityEntity, CaseViewEntity, ClientViewEntity],
    outboxCollections: ['activities', TOMBSTONES],
    build: (rt) => {
      const { config, logger, db, broker, relay } = rt;
      const repository = new ActivitiesRepository(db, relay, logger);
      const caseLinks = caseLinksOf(config, db);
      const clientLinks = clientLinksOf(config, db);
      const activities = new Activities({
        activities: repository,
        caseLinks,
        clientLinks,
        deals: new DealsService(serviceClient(config, 'deals')),
        users: userDirectory(config),
        logger,
      });
      const mailer = createMailer({ smtpUrl: mail.smtpUrl, from: mail.mailFrom, logger });
      const closing: BackgroundTask = { start: async () => {}, stop: () => mailer.close() };
      const syncs = teamSyncs(rt, activities.syncWork());
      return {
        app: buildActivitiesApp({ activities, syncs, ...appRuntimeOptions(rt) }),
        background: [
          closing,
          syncs,
          listsBackfill(rt, repository.lists),
          signalSweep(rt, 'activities', dueSignals(activities)),
          consumerTask(() =>
            consumeViewEvents(broker, 'activities.link-views', { clients: clientLinks, cases: caseLinks }),
          ),
          consumerTask(() => consumeReminders(broker, db, new Reminders(mailer))),
          periodicTask({
            name: 'series repair',
            intervalMs: config.schedulerIntervalMs,
            logger,
            run: async () => void (await activities.settleOwedOccurrences()),
          }),
          periodicTask({
            name: 'tombstone purge',
            intervalMs: config.schedulerIntervalMs,
            atMostEveryMs: 3_600_000,
            logger,
            run: async () => void (await repository.purgeTombstones(new Date(Date.now() - DAY_MS))),
          }),
        ],
      };
    },
  });
}

if (import.meta.main) await runProcess('activities', main);
