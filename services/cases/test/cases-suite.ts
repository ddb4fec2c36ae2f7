// A running system (gateway, clients, cases as processes on the run's FerretDB and
// RabbitMQ) with a team, its lawyer and a client, for the files that call the cases
// endpoints through the gateway with real keys, and their calls.
import { userCreateArgs } from '@lpm/test-kit/cli';
import { systemForSuite, type IssuedTeam, type RunningSystem } from '@lpm/test-kit/running-system';
import { tapEvents, type EventTap } from '@lpm/test-kit/event-tap';

export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export let sys: RunningSystem;
export let tap: EventTap;
export let t: IssuedTeam;
export let other: IssuedTeam;
export let lawyer: { id: string; name: string; email: string };
export let client: { id: string; name: string };

export const call = (method: string, path: string, body?: unknown, key = t.api_key) =>
  sys.call(key, method, path, body);
export const createCase = async (body: Record<string, unknown>, key = t.api_key) => {
  const res = await call('POST', '/v1/cases', body, key);
  expect(res.status).toBe(201);
  return res.body.data;
};

/** Starts the system as `name` before the file's tests, with the team, a second team and a tap on case events, and stops them after. */
export function casesSuite(name: string): void {
  systemForSuite(name, {}, async (started) => {
    sys = started;
    tap = await tapEvents(sys.env.AMQP_EXCHANGE!, ['case.*']);
    t = sys.team('Silva Advogados');
    other = sys.team('Outro Escritório');
    lawyer = sys.admin(...userCreateArgs(t.team.id, 'Beatriz Souza', 'bia@silva.adv.br')).user;
    client = (
      await call('POST', '/v1/clients', {
        type: 'PJ',
        name: 'Padaria São José',
        email: 'contato@padaria.com',
        phone: '11 5555-0000',
      })
    ).body.data;
  });
  afterAll(async () => {
    await tap?.close();
  });
}
