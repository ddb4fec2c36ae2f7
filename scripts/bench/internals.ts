// Every module of the platform the bench imports, in one place: these paths move
// when shared/, gateway/ and services/ are restructured, so a move is fixed here.
// Teams and keys are made with the operator CLI (teams.ts), not with the gateway's code.

// The local document store: a private FerretDB per run, and its PostgreSQL database dropped after.
export { dropPostgresDatabase, startFerretdb, type RunningStore } from '../local-store.ts';
// The identity headers of a request straight to a service (the gateway's internal credential).
export {
  DEFAULT_CASE_PHASES,
  HEADER,
  defaultTeamSettings,
  identityHeaders,
  type Identity,
} from '../../shared/src/identity.ts';
export { newId } from '../../shared/src/ids.ts';
// The priorities the seeded cases and activities take in turn (cases-store.ts, activities.ts).
export { PRIORITIES } from '../../shared/src/priority.ts';
// The services of a system, for the CPU of its processes (writes.ts).
export { SERVICE_NAMES, type ServiceName } from '../../shared/src/service/names.ts';
// Where the launcher puts each process of a system (bench-run.ts).
export { internalPort, portBlockSize, serviceUrls } from '../../shared/src/service/port-layout.ts';
// The outbox relay measured alone (relay.ts).
export { newEvent } from '../../shared/src/events.ts';
export { outboxOnInsert } from '../../shared/src/outbox/fields.ts';
export { OutboxRelay } from '../../shared/src/outbox/relay.ts';
export { Broker } from '../../shared/src/messaging/broker.ts';
// The clients' entity, for MikroORM against the driver (orm.ts).
export { ClientEntity, type ClientRecord } from '../../services/clients/src/data/client-entity.ts';
// Clients stored straight into the clients service's collection as it stores them (lists.ts).
export { derivedFields as clientDerivedFields } from '../../services/clients/src/domain/client-shape.ts';
// The lists read by day buckets: seeded with their markers and day counts (list-seed.ts).
export type { ListBuckets } from '../../shared/src/store/list-buckets.ts';
// Cases stored straight into the cases service's collection as it stores them (cases-store.ts).
export type { CaseRecord, CaseStatus } from '../../services/cases/src/data/case-entity.ts';
export { derivedFields } from '../../services/cases/src/domain/case-shape.ts';
// HTTPS webhook receivers and the throwaway CA they are trusted through (webhooks.ts, main.ts).
export {
  startHttpsReceiver,
  type HttpsReceiver,
  type ReceivedRequest,
  type ReceiverHandler,
} from '@lpm/test-kit/https-receiver';
export { createTestTls } from '@lpm/test-kit/test-ca';
export { busiestSecond } from '@lpm/test-kit/arrivals';
// Deals stored straight into the deals service's collection as it stores them (deals.ts).
export type { DealRecord, DealStatus } from '../../services/deals/src/data/deal-entity.ts';
export { derivedFields as dealDerivedFields } from '../../services/deals/src/domain/deal-shape.ts';
export { DEFAULT_DEAL_PHASES } from '../../shared/src/identity.ts';
// Activities stored straight into the activities service's collection as it stores them (activities.ts).
export type { ActivityRecord } from '../../services/activities/src/data/activity-entity.ts';
export { derivedFields as activityDerivedFields } from '../../services/activities/src/domain/activity-timing.ts';
// Rule-based deadlines stored as Activities.create computes them (calendar.ts).
export { deadlineOf } from '../../services/activities/src/domain/deadlines/deadlines.ts';
export { storedDeadline } from '../../services/activities/src/domain/deadlines/stored-deadline.ts';
export { defaultCourtCalendar } from '../../shared/src/court-calendar.ts';
// The financial summary measured in process, as the service builds it (financial.ts).
export { openStore } from '../../shared/src/store/orm.ts';
export { ClientViewEntity, type ClientView } from '../../shared/src/views/client-view-entity.ts';
export { CASE_VIEWS, CaseViewEntity, type CaseView } from '../../shared/src/views/case-view-entity.ts';
export { ViewsRepository } from '../../shared/src/views/views-repository.ts';
export { ClientLinks } from '../../shared/src/views/client-links.ts';
export { CaseLinks } from '../../shared/src/views/case-links.ts';
export { FinancialEntity, type FinancialRecord } from '../../services/financial/src/data/financial-entity.ts';
export { FinancialRepository } from '../../services/financial/src/data/financial-repository.ts';
export { Financial } from '../../services/financial/src/domain/financial.ts';
export { derivedFields as financialDerivedFields } from '../../services/financial/src/domain/financial-shape.ts';
// The SLA instants of a seeded case and their slot markers (cases-store.ts): armed as Cases and its record store arm them.
export { armDeadline, signalSlots } from '../../shared/src/jobs/time-signals.ts';
// The days seeded records are dated by.
export { DAY_MS, zonedMoment } from '../../shared/src/time.ts';

import type { Db } from 'mongodb';
import { pino } from 'pino';
import { TimeSignals } from '../../shared/src/jobs/time-signals.ts';
import { ServiceClient } from '../../shared/src/upstream/service-client.ts';
import { UserDirectory } from '../../shared/src/upstream/user-directory.ts';
import { ClientsService } from '../../shared/src/upstream/clients-service.ts';
import { ClientLinks } from '../../shared/src/views/client-links.ts';
import { CLIENT_VIEWS, type ClientView as ClientViewRecord } from '../../shared/src/views/client-view-entity.ts';
import { ViewsRepository as Views } from '../../shared/src/views/views-repository.ts';
import type { ListBuckets } from '../../shared/src/store/list-buckets.ts';
import { CasesRepository } from '../../services/cases/src/data/cases-repository.ts';
import { DealsRepository } from '../../services/deals/src/data/deals-repository.ts';
import { ClientsRepository } from '../../services/clients/src/data/clients-repository.ts';
import { ActivitiesRepository } from '../../services/activities/src/data/activities-repository.ts';
import { FinancialRepository } from '../../services/financial/src/data/financial-repository.ts';
import { Cases } from '../../services/cases/src/domain/cases.ts';
import { slaSignals } from '../../services/cases/src/jobs/sla-signals.ts';
import { ActivitiesService } from '../../services/cases/src/upstream/activities-service.ts';

/** The services' list buckets on their databases (markers and day counts written as their record stores write them). */
export const casesLists = (db: Db): ListBuckets => new CasesRepository(db, { kick: () => {} }).lists;
export const dealsLists = (db: Db): ListBuckets => new DealsRepository(db, { kick: () => {} }).lists;
export const clientsLists = (db: Db): ListBuckets => new ClientsRepository(db, { kick: () => {} }).lists;
export const activitiesLists = (db: Db): ListBuckets => new ActivitiesRepository(db, { kick: () => {} }).lists;
export const financialLists = (db: Db): ListBuckets => new FinancialRepository(db, { kick: () => {} }).lists;

/**
 * The cases service's SLA time signals as services/cases/src/server.ts builds them, on the
 * service's database and asking the running system's neighbours, for timing `sweep(now)`
 * in the bench's process (its scheduler is never started). Events it emits go into the
 * records' outbox; the service's relay publishes them at its next scan.
 */
export function casesSlaSignals(opts: {
  db: Db;
  urls: { clients: string; activities: string; gateway: string };
  internalToken: string;
}): TimeSignals {
  const { db, urls, internalToken } = opts;
  const service = (name: 'clients' | 'activities') => new ServiceClient({ name, baseUrl: urls[name], internalToken });
  const relay = { kick: () => {} };
  const cases = new Cases({
    cases: new CasesRepository(db, relay),
    clientLinks: new ClientLinks(new ClientsService(service('clients')), new Views<ClientViewRecord>(db, CLIENT_VIEWS)),
    users: new UserDirectory({ gatewayUrl: urls.gateway, internalToken }),
    activities: new ActivitiesService(service('activities')),
  });
  return new TimeSignals({
    db,
    intervalMs: 60_000,
    signals: slaSignals(cases),
    relay,
    logger: pino({ level: 'silent' }),
    name: 'bench-cases',
  });
}
// Deliveries stored straight into the webhooks service's collection with the delivery log's markers, and their hours counted (delivery-log.ts).
export { DeliveryLogCounts, logMarkers } from '../../services/webhooks/src/data/delivery-log-counts.ts';
export type { DeliveryRecord, WebhookCountersRecord } from '../../services/webhooks/src/data/webhook-entity.ts';
// The DJEN poll of the publications service in process, against its stand-in of the Comunica API (publications.ts).
export { ServiceClient } from '../../shared/src/upstream/service-client.ts';
export {
  CaseNumberEntity,
  PollStateEntity,
  PublicationEntity,
  PublicationTeamEntity,
} from '../../services/publications/src/data/publication-entity.ts';
export { PublicationsRepository } from '../../services/publications/src/data/publications-repository.ts';
export { CaseNumbersRepository } from '../../services/publications/src/data/case-numbers-repository.ts';
export { PollRepository } from '../../services/publications/src/data/poll-repository.ts';
export { Publications } from '../../services/publications/src/domain/publications.ts';
export { Poller } from '../../services/publications/src/domain/poller.ts';
export { ActivitiesService as PublicationActivities } from '../../services/publications/src/upstream/activities-service.ts';
export { DjenClient } from '../../services/publications/src/upstream/djen-client.ts';
export { DjenStandIn } from '../../services/publications/test/djen-stand-in.ts';
