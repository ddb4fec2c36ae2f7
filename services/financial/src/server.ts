import { consumerTask, runService } from '@lpm/shared/service/runner';
import { runProcess } from '@lpm/shared/service/process';
import { TimeSignals } from '@lpm/shared/jobs/time-signals';
import { TeamSyncs } from '@lpm/shared/jobs/team-syncs';
import { caseLinksOf, clientLinksOf } from '@lpm/shared/service/neighbours';
import { CaseViewEntity } from '@lpm/shared/views/case-view-entity';
import { ClientViewEntity } from '@lpm/shared/views/client-view-entity';
import { consumeViewEvents } from '@lpm/shared/views/view-consumer';
import { FinancialEntity } from './data/financial-entity.ts';
import { FinancialRepository } from './data/financial-repository.ts';
import { listBackfillTask } from '@lpm/shared/store/list-buckets';
import { Financial } from './domain/financial.ts';
import { overdueSignals } from './jobs/overdue-signals.ts';
import { buildFinancialApp } from './app.ts';

// Started only as the process's entry point: importing it (scripts/warm-compile-cache.ts) starts nothing.
async function main(): Promise<void> {
  await runService({
    name: 'financial',
    entities: [FinancialEntity, ClientViewEntity, CaseViewEntity],
    outboxCollections: ['financial_records'],
    build: ({ config, logger, db, broker, relay }) => {
      const repository = new FinancialRepository(db, relay, logger);
      const clientLinks = clientLinksOf(config, db);
      const caseLinks = caseLinksOf(config, db);
      const financial = new Financial({ records: repository, clientLinks, caseLinks });
      const signals = new TimeSignals({
        db,
        intervalMs: config.schedulerIntervalMs,
        signals: overdueSignals(financial),
        relay,
        logger,
        name: 'financial',
      });
      const syncs = new TeamSyncs({ db, logger, work: financial.syncWork() });
      return {
        app: buildFinancialApp({ financial, syncs, db, internalToken: config.internalToken, loggerInstance: logger }),
        background: [
          listBackfillTask([repository.lists], logger, config.schedulerIntervalMs),
          signals,
          syncs,
          // Two queues, as deployed: one per kind of view.
          consumerTask(() => consumeViewEvents(broker, 'financial.client-views', { clients: clientLinks })),
          consumerTask(() => consumeViewEvents(broker, 'financial.case-views', { cases: caseLinks })),
        ],
      };
    },
  });
}

if (import.meta.main) await runProcess('financial', main);
