// Every module of the platform the bench imports, in one place: these paths move
// when shared/, gateway/ and services/ are restructured, so a move is fixed here.
// Teams and keys are made with the operator CLI (teams.ts), not with the gateway's code.

// The local document store: a private FerretDB per run, and its PostgreSQL database dropped after.
export { dropPostgresDatabase, startFerretdb, type RunningStore } from '../../shared/src/local-store.ts';
// The identity headers of a request straight to a service (the gateway's internal credential).
export { DEFAULT_CASE_PHASES, defaultTeamSettings, identityHeaders, type Identity } from '../../shared/src/identity.ts';
export { newId } from '../../shared/src/ids.ts';
// The outbox relay measured alone (relay.ts).
export { newEvent } from '../../shared/src/events.ts';
export { outboxOnInsert } from '../../shared/src/outbox/fields.ts';
export { OutboxRelay } from '../../shared/src/outbox/relay.ts';
export { Broker } from '../../shared/src/messaging/broker.ts';
// The clients' entity, for MikroORM against the driver (orm.ts).
export { ClientEntity, type ClientRecord } from '../../services/clients/src/data/client-entity.ts';
// Cases stored straight into the cases service's collection as it stores them (cases-store.ts).
export type { CasePriority, CaseRecord, CaseStatus } from '../../services/cases/src/data/case-entity.ts';
export { derivedFields } from '../../services/cases/src/domain/case-shape.ts';
// HTTPS webhook receivers and the throwaway CA they are trusted through (webhooks.ts, main.ts).
export { startHttpsReceiver, type HttpsReceiver, type ReceivedRequest, type ReceiverHandler } from '../../shared/test/support/https-receiver.ts';
export { createTestTls } from '../../test/support/test-ca.ts';
// Deals stored straight into the deals service's collection as it stores them (deals.ts).
export type { DealRecord, DealStatus } from '../../services/deals/src/data/deal-entity.ts';
export { derivedFields as dealDerivedFields } from '../../services/deals/src/domain/deal-shape.ts';
export { DEFAULT_DEAL_PHASES } from '../../shared/src/identity.ts';
