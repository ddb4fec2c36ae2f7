// The deals app in process for the files of deals-*.test.ts that call every endpoint
// as one team: its clients service, user directory and activities' counts faked
// from the maps below. The bindings are exported live: each test file reads them
// after dealsSuite()'s beforeAll has set them.
import type { DomainEvent } from '@lpm/shared/events';
import type { Identity } from '@lpm/shared/identity';
import { newId } from '@lpm/shared/ids';
import type { ClientFacts } from '@lpm/shared/upstream/clients-service';
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
