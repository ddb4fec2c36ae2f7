// Section `roundtrips`: the store commands one request makes before its answer, in
// every process of the system, counted with the driver's command monitoring.
// Measured: PUT /v1/deals/{id}/won with create_case through the gateway, for a deal
// with a client and a responsible (gateway -> deals -> cases -> clients). A warm-up
// won fills the caches a first request of a team pays for once (users, client views).
// Each trial sends the request with a trace of its own and the header that has every
// process count the request's commands under that trace (shared/src/counted-requests.ts;
// the gateway honours it beside the internal credential only):
// those of its handlers, in whichever process, until each one's answer; not the work
// it only sets going (relays draining its events, consumers). That is
// `roundtrips.won_with_case`. Beside it, the window: every process's
// store_commands_total read before the request and again as soon as it is answered,
// which also holds the work that runs beside the request (a relay's drain, a
// consumer, a timer) and can only add to a trial: `roundtrips.won_with_case_window`.
// Each figure is the least of the trials, printed with what it was made of.
import { randomBytes } from 'node:crypto';
import { COUNT_COMMANDS_HEADER } from '../../shared/src/counted-requests.ts';
import { HEADER } from './internals.ts';
import { commandsBetween, storeCommandsOf, traceCommandsOf } from './webhook-support.ts';
import { sleep, type Bench, type System } from './support.ts';
import { createTeams } from './teams.ts';

const TRIALS = 5;
/** Between trials: the previous request's events published and consumed. */
const QUIET_MS = 1500;

type Counts = Map<string, Map<string, number>>;
type Made = { total: number; by: [string, [string, number][]][] };

const processesOf = (sys: System): [string, string][] => [
  ['gateway', sys.gatewayInternalUrl],
  ...Object.entries(sys.serviceUrls),
];

/** What `read` answers for every process, by process. */
async function countsOf(sys: System, read: (url: string) => Promise<Map<string, number>>): Promise<Counts> {
  return new Map(
    await Promise.all(
      processesOf(sys).map(async ([name, url]): Promise<[string, Map<string, number>]> => [name, await read(url)]),
    ),
  );
}

/** The commands each process sent between two readings (or counted, from none), and their sum. */
function between(before: Counts, after: Counts): Made {
  const by = [...after]
    .map(([name, counts]): [string, [string, number][]] => [
      name,
      commandsBetween(before.get(name) ?? new Map<string, number>(), counts),
    ])
    .filter(([, c]) => c.length > 0);
  return { total: by.reduce((n, [, c]) => n + c.reduce((m, [, k]) => m + k, 0), 0), by };
}

function report(b: Bench, key: string, what: string, trials: Made[]): void {
  const least = trials.reduce((a, m) => (m.total < a.total ? m : a));
  console.log(
    `\nPUT /v1/deals/{id}/won with create_case, ${what}: ${least.total} store commands (least of ${TRIALS} trials: ${trials.map((m) => m.total).join(', ')})`,
  );
  for (const [name, commands] of least.by)
    console.log(`  ${name.padEnd(10)} ${commands.map(([k, n]) => `${k} x${n}`).join(', ')}`);
  b.record(key, least.total);
  for (const [name, commands] of least.by)
    b.record(
      `${key}_by.${name}`,
      commands.reduce((n, [, k]) => n + k, 0),
    );
}

export async function roundtripsSection(b: Bench): Promise<void> {
  const sys = await b.system();
  const [team] = await createTeams(b, sys.tree, ['Bench roundtrips']);
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${sys.gatewayUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${team.api_key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const answer = (await res.json()) as { data?: { id: string } };
    if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${JSON.stringify(answer)}`);
    return answer.data!;
  };
  const client = await call('POST', '/v1/clients', { type: 'PJ', name: 'Ida e Volta Ltda' });
  const deal = (n: number) =>
    call('POST', '/v1/deals', {
      title: `Ida e volta ${n}`,
      value: 1000,
      client_id: client.id,
      responsible_id: team.user.id,
    });
  const won = (id: string, headers?: Record<string, string>) =>
    call('PUT', `/v1/deals/${id}/won`, { create_case: true, case_data: { area: 'Cível' } }, headers);

  await won((await deal(0)).id);
  const own: Made[] = [];
  const window: Made[] = [];
  for (let trial = 1; trial <= TRIALS; trial++) {
    const { id } = await deal(trial);
    await sleep(QUIET_MS);
    const traceId = randomBytes(16).toString('hex');
    const before = await countsOf(sys, storeCommandsOf);
    // The gateway counts a request, and passes the header on, only beside the internal credential.
    await won(id, {
      traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01`,
      [COUNT_COMMANDS_HEADER]: '1',
      [HEADER.internalToken]: b.token,
    });
    window.push(between(before, await countsOf(sys, storeCommandsOf)));
    own.push(between(new Map(), await countsOf(sys, (url) => traceCommandsOf(url, traceId))));
  }
  report(b, 'roundtrips.won_with_case', "the request's own, before each process's answer", own);
  report(b, 'roundtrips.won_with_case_window', 'every process, from the request sent to its answer read', window);
}
