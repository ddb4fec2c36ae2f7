// The publications app in process on its own database, beside the real activities
// app (its deadline computation and deadline activities, over HTTP on loopback) and a
// stand-in of the Comunica API; the teams the poll reads are the test's list.
import { afterAll, beforeAll } from '@jest/globals';
import type { Identity } from '@lpm/shared/identity';
import { DEFAULT_DEADLINE, type DeadlineSettings, type Watch } from '@lpm/shared/publication-settings';
import { ServiceClient } from '@lpm/shared/upstream/service-client';
import { listenOnLoopback } from '@lpm/test-kit/listen';
import { INTERNAL_TOKEN, startServiceUnderTest, type ServiceUnderTest } from '@lpm/test-kit/service-under-test';
import { startActivities, type ActivitiesUnderTest } from '../../activities/test/helper.ts';
import { buildPublicationsApp } from '../src/app.ts';
import {
  CaseNumberEntity,
  PollStateEntity,
  PublicationEntity,
  PublicationTeamEntity,
} from '../src/data/publication-entity.ts';
import { PublicationsRepository } from '../src/data/publications-repository.ts';
import { CaseNumbersRepository } from '../src/data/case-numbers-repository.ts';
import { PollRepository } from '../src/data/poll-repository.ts';
import { Publications } from '../src/domain/publications.ts';
import { Poller } from '../src/domain/poller.ts';
import { PollJob } from '../src/jobs/poll-job.ts';
import { ActivitiesService } from '../src/upstream/activities-service.ts';
import { DjenClient, type DjenWaits } from '../src/upstream/djen-client.ts';
import type { WatchedTeam } from '@lpm/shared/publication-settings';
import { DjenStandIn } from './djen-stand-in.ts';
import { NO_RELAY_MARKED } from '@lpm/test-kit/service-parts';

/** Waits shortened for tests only; the service's are a minute after a 429 and at x-ratelimit-remaining 0. */
export const TEST_WAITS: DjenWaits = {
  afterRateLimitMs: 300,
  remainingZeroMs: 200,
  backoff: { firstMs: 20, maxMs: 40 },
};

export interface PublicationsUnderTest extends ServiceUnderTest {
  publications: Publications;
  repository: PublicationsRepository;
  poll: PollRepository;
  /** The poll's teams become this one alone. */
  watchOnly(team: WatchedTeam): void;
  /** A poller of its own (a replica, or the process after a restart) on the same store. */
  poller(): Poller;
  /** A poll job of its own (a replica) on the same store; `intervalMs` its schedule (default an hour: started by hand). */
  job(intervalMs?: number): PollJob;
  activities: ActivitiesUnderTest;
}

export function watchedTeam(
  who: Identity,
  watches: Omit<Watch, 'name'>[],
  deadline: Partial<DeadlineSettings> = {},
  backfill_days = 7,
): WatchedTeam {
  return {
    team_id: who.teamId,
    user_id: who.userId,
    settings: who.settings,
    publications: {
      watches: watches.map((w) => ({ ...w, name: null })),
      deadline: { ...DEFAULT_DEADLINE, ...deadline },
      backfill_days,
    },
  };
}

export async function startPublications(
  djenUrl: string,
  opts: { dbName?: string; activities?: ActivitiesUnderTest } = {},
): Promise<PublicationsUnderTest> {
  const activities = opts.activities ?? (await startActivities());
  const port = opts.activities ? null : await listenOnLoopback(activities.app.server, 'activities');
  const activitiesUrl = port ? `http://127.0.0.1:${port}` : (activities as ActivitiesUnderTest & { url?: string }).url!;
  Object.assign(activities, { url: activitiesUrl });
  const teams: WatchedTeam[] = [];
  const started = await startServiceUnderTest({
    name: 'publications',
    entities: [PublicationEntity, PollStateEntity, PublicationTeamEntity, CaseNumberEntity],
    dbName: opts.dbName,
    build: async ({ db, internalToken, logger }) => {
      const repository = new PublicationsRepository(db, NO_RELAY_MARKED);
      const caseNumbers = new CaseNumbersRepository(db);
      const poll = new PollRepository(db);
      const deadlines = new ActivitiesService(
        new ServiceClient({ name: 'activities', baseUrl: activitiesUrl, internalToken }),
      );
      const publications = new Publications({
        publications: repository,
        caseNumbers,
        poll,
        deadlines,
        cases: activities.world.caseLookup,
      });
      const poller = () =>
        new Poller({
          source: { teams: async () => teams },
          djen: new DjenClient({
            baseUrl: djenUrl,
            userAgent: 'lpm-publications/test (ops@example.com)',
            waits: TEST_WAITS,
            attempts: 3,
            timeoutMs: 2000,
          }),
          poll,
          publications: repository,
          caseNumbers,
          domain: publications,
        });
      const jobs: PollJob[] = [];
      const job = (intervalMs = 3_600_000) => {
        const made = new PollJob({ db, poller: poller(), intervalMs, leaseMs: 5_000 });
        jobs.push(made);
        return made;
      };
      const app = buildPublicationsApp({ publications, sync: () => job().trigger(), db, internalToken, logger });
      // Polls a sync started still running are awaited before the store closes.
      const stop = async () => void (await Promise.all(jobs.map((j) => j.stop())));
      const watchOnly = (team: WatchedTeam) => void teams.splice(0, teams.length, team);
      return { app, parts: { publications, repository, poll, watchOnly, poller, job, activities }, stop };
    },
  });
  return {
    ...started,
    close: async () => {
      await started.close();
      if (!opts.activities) {
        const server = activities.app.server;
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
        await activities.close();
      }
    },
  };
}

/** Starts a stand-in of the Comunica API and the app on it before the file's tests, and stops both after. */
export function publicationsSuite(ready: (started: { djen: DjenStandIn; svc: PublicationsUnderTest }) => void): void {
  let djen: DjenStandIn | undefined;
  let svc: PublicationsUnderTest | undefined;
  beforeAll(async () => {
    djen = new DjenStandIn();
    await djen.start();
    svc = await startPublications(djen.url);
    ready({ djen, svc });
  });
  afterAll(async () => {
    await svc?.close();
    await djen?.stop();
  });
}

export { INTERNAL_TOKEN };
