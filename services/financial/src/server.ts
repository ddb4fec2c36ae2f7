import { consumerTask, runService } from '@lpm/shared/service/runner';
import { runProcess } from '@lpm/shared/service/process';
import { listsBackfill, signalSweep, teamSyncs } from '@lpm/shared/service/background-work';
import { appRuntimeOptions } from '@lpm/shared/service/domain-app';
import { caseLinksOf, clientLinksOf } from '@lpm/shared/service/neighbours';
import { CaseViewEntity } from '@lpm/shared/views/case-view-entity';
import { ClientViewEntity } from '@lpm/shared/views/client-view-entity';
import { consumeViewEvents } from '@lpm/shared/views/view-consumer';
import { FinancialEntity } from './data/financial-entity.ts';
import { FinancialRepository } from './data/financial-repository.ts';
import { Financial } from './domain/financial.ts';
import { overdueSignals } from './jobs/overdue-signals.ts';
import { buildFinancialApp } from './app.ts';

// Started only as the process's entry point: importing it (scripts/warm-compile-cache.ts) starts nothing.
async function main(): Promise<void> {
  await runService({
    name: 'financial',
    entities: [FinancialEntity, ClientViewEntity, CaseViewEntity],
    outboxCollections: ['financial_records'],
    build: (rt) => {
      const { config, logger, db, broker, relay } = rt;
      const repository = new FinancialRepository(db, relay, logger);
      const clientLinks = clientLinksOf(config, db);
      const caseLinks = caseLinksOf(config, db);
      const financial = new Financial({ records: repository, clientLinks, caseLinks });
      const syncs = teamSyncs(rt, financial.syncWork());
      return {
        app: buildFinancialApp({ financial, syncs, ...appRuntimeOptions(rt) }),
        background: [
          listsBackfill(rt, repository.lists),
          signalSweep(rt, 'financial', overdueSignals(financial)),
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
