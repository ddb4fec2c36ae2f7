import { consumerTask, runService } from '@lpm/shared/service/runner';
import { runProcess } from '@lpm/shared/service/process';
import { gatewayClient, serviceClient } from '@lpm/shared/service/neighbours';
import { CasesService } from '@lpm/shared/upstream/cases-service';
import { readPublicationsConfig } from './config.ts';
import {
  CaseNumberEntity,
  PollStateEntity,
  PublicationEntity,
  PublicationTeamEntity,
} from './data/publication-entity.ts';
import { PublicationsRepository } from './data/publications-repository.ts';
import { CaseNumbersRepository } from './data/case-numbers-repository.ts';
import { PollRepository } from './data/poll-repository.ts';
import { Publications } from './domain/publications.ts';
import { Poller } from './domain/poller.ts';
import { ActivitiesService } from './upstream/activities-service.ts';
import { DjenClient } from './upstream/djen-client.ts';
import { GatewayWatches } from './upstream/gateway-watches.ts';
import { consumeCaseEvents } from './consumers/case-events.ts';
import { PollJob } from './jobs/poll-job.ts';
import { CaseNumbersBackfill } from './jobs/case-numbers-backfill.ts';
import { CasesNumbers } from './upstream/cases-numbers.ts';
import { buildPublicationsApp } from './app.ts';
import { appRuntimeOptions } from '@lpm/shared/service/domain-app';

// Started only as the process's entry point: importing it (scripts/warm-compile-cache.ts) starts nothing.
async function main(): Promise<void> {
  // Read before the store is touched: a bad setting stops the process at once.
  const own = readPublicationsConfig();
  await runService({
    name: 'publications',
    entities: [PublicationEntity, PollStateEntity, PublicationTeamEntity, CaseNumberEntity],
    outboxCollections: ['publications'],
    build: (rt) => {
      const { config, logger, db, broker, relay } = rt;
      const repository = new PublicationsRepository(db, relay);
      const caseNumbers = new CaseNumbersRepository(db);
      const poll = new PollRepository(db);
      const publications = new Publications({
        publications: repository,
        caseNumbers,
        poll,
        deadlines: new ActivitiesService(serviceClient(config, 'activities')),
        cases: new CasesService(serviceClient(config, 'cases')),
        logger,
      });
      const poller = new Poller({
        source: new GatewayWatches(gatewayClient(config)),
        djen: new DjenClient({ baseUrl: own.djenUrl, userAgent: own.djenUserAgent }),
        poll,
        publications: repository,
        caseNumbers,
        domain: publications,
        logger,
      });
      const job = new PollJob({ db, poller, intervalMs: own.pollIntervalMs, logger });
      // After the consumer (tasks start in order): its queue is bound before the backfill reads a case.
      const backfill = new CaseNumbersBackfill({
        db,
        // A page of every team's cases is one read over the whole collection on FerretDB.
        source: new CasesNumbers(serviceClient(config, 'cases', { timeoutMs: 60_000 })),
        caseNumbers,
        publications,
        logger,
      });
      return {
        app: buildPublicationsApp({ publications, sync: () => job.trigger(), ...appRuntimeOptions(rt) }),
        background: [job, consumerTask(() => consumeCaseEvents(broker, publications)), backfill],
      };
    },
  });
}

if (import.meta.main) await runProcess('publications', main);
