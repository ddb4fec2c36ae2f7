// The clients app in process for the files that write clients as a new team each test
// (clients-write.test.ts, clients-update.test.ts), with the cases service faked.
import { identity } from '@lpm/test-kit/teams';
import { startClients, type ClientsUnderTest } from './helper.ts';
import type { ClientCases } from '../src/upstream/cases-service.ts';
import type { Identity } from '@lpm/shared/identity';

export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export const withActiveCases = new Set<string>();
export const cases: ClientCases = {
  countByClient: async (_team, ids) => new Map(ids.map((id) => [id, withActiveCases.has(id) ? 1 : 0])),
  hasActiveCases: async (_team, id) => withActiveCases.has(id),
  listForClient: async () => ({ items: [], total: 0 }),
};

export let sut: ClientsUnderTest;
export let who: Identity;

export const post = (payload: unknown, as = who) =>
  sut.call(as, { method: 'POST', url: '/v1/clients', payload: payload as object });
/** POST /v1/clients of `body` as sent, a JSON text (valid or not). */
export const postText = (body: string) =>
  sut.call(who, {
    method: 'POST',
    url: '/v1/clients',
    payload: body,
    headers: { 'content-type': 'application/json' },
  });
export const put = (id: string, payload: unknown, as = who) =>
  sut.call(as, { method: 'PUT', url: `/v1/clients/${id}`, payload: payload as object });

/** Starts the clients app before the file's tests, a new team before each, and closes the app after. */
export function clientsWriteSuite(): void {
  beforeAll(async () => {
    sut = await startClients({ cases });
  });
  beforeEach(() => {
    who = identity();
  });
  afterAll(async () => {
    await sut.close();
  });
}
