// The deals app in process for the files of deals-*.test.ts that call every endpoint
// as one team: its clients service, user directory and activities' counts faked
// from the maps below. The bindings are exported live: each test file reads them
// after dealsSuite()'s beforeAll has set them.
import type { Db } from 'mongodb';
import type { DomainEvent } from '@lpm/shared/events';
import { DOCUMENT_LOCK_MS, LOCKS_COLLECTION, lockKey } from '@lpm/shared/store/lock';
import type { Identity } from '@lpm/shared/identity';
import { newId } from '@lpm/shared/ids';
import type { ClientFacts } from '@lpm/shared/upstream/clients-service';
import { expectError } from '@lpm/test-kit/api';
import { teamCalls } from '@lpm/test-kit/team-calls';
import { identity } from '@lpm/test-kit/teams';
import { startDeals, type DealsUnderTest } from './helper.ts';

export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export let sut: DealsUnderTest;
export let who: Identity;
export const clients = new Map<string, ClientFacts & { team: string }>();
export const users = new Map<string, { id: string; name: string; email: string; team: string }>();
export let client: ClientFacts;
export let lawyer: { id: string; name: string; email: string };

export const { call, create } = teamCalls(
  () => sut,
  () => who,
  '/v1/deals',
);
/** The events a deal's document holds in its outbox (no relay runs here). */
export const eventsOf = async (id: string): Promise<DomainEvent[]> =>
  ((await sut.db.collection('deals').findOne({ _id: id as never }))?.outbox ?? []) as DomainEvent[];

export const activityCounts = new Map<string, number>();

/** Another writer holding deal `dealId` past a write's lock wait: its next four lock slots taken. */
export async function holdDealLock(db: Db, dealId: string): Promise<void> {
  const slot = Math.floor(Date.now() / DOCUMENT_LOCK_MS);
  const held = Array.from({ length: 4 }, (_, i) => ({
    _id: `${lockKey('deals', dealId)}:${slot + i}`,
    owner: 'test',
    expires_at: new Date((slot + i + 1) * DOCUMENT_LOCK_MS),
  }));
  await db.collection<{ _id: string; owner: string; expires_at: Date }>(LOCKS_COLLECTION).insertMany(held);
}

/** Lets go of every lock holdDealLock took. */
export async function releaseDealLocks(db: Db): Promise<void> {
  await db.collection(LOCKS_COLLECTION).deleteMany({ owner: 'test' });
}

/** A deal `title` created, as `who`, on a deals app of the test's own. */
export const createOn = async (own: DealsUnderTest, title: string) =>
  (await own.call(who, { method: 'POST', url: '/v1/deals', payload: { title } })).json().data;

/** PUT won with create_case, as `who`, on a deals app of the test's own. */
export const wonWithCase = (own: DealsUnderTest, dealId: string) =>
  own.call(who, { method: 'PUT', url: `/v1/deals/${dealId}/won`, payload: { create_case: true } });

/**
 * A deal `title` created on `own` whose first won with create_case ended in 503, the
 * record busy (its cases service holds the lock with holdDealLock); the lock is released.
 */
export async function dealAfterBusyWon(own: DealsUnderTest, title: string) {
  const deal = await createOn(own, title);
  expectError(await wonWithCase(own, deal.id), 503, 'SERVICE_UNAVAILABLE', 'The record is busy; retry');
  await releaseDealLocks(own.db);
  return deal;
}

/** Starts the deals app before the file's tests, with a team, its client and its lawyer, and closes it after. */
export function dealsSuite(): void {
  beforeAll(async () => {
    sut = await startDeals({
      clients: { facts: async (caller, id) => (clients.get(id)?.team === caller.teamId ? clients.get(id)! : null) },
      users: {
        find: async (teamId, ids) =>
          new Map(ids.filter((id) => users.get(id)?.team === teamId).map((id) => [id, users.get(id)!])),
      },
      // The activities service's count for a deal (asked when the detail is read).
      activities: {
        countsFor: async (_caller, dealId) => ({ count: activityCounts.get(dealId) ?? 0, open: 1, overdue: 0 }),
      },
    });
    who = identity();
    client = {
      id: newId('cli'),
      name: 'Padaria São José',
      type: 'PJ',
      email: 'contato@padaria.com',
      phone: null,
      status: 'active',
      updated_at: new Date().toISOString(),
    };
    clients.set(client.id, { ...client, team: who.teamId });
    lawyer = { id: newId('user'), name: 'Beatriz Souza', email: 'bia@silva.adv.br' };
    users.set(lawyer.id, { ...lawyer, team: who.teamId });
  });

  afterAll(async () => {
    await sut?.close();
  });
}
