// Section `roundtrips`: the store commands one request makes before its answer, in
// every process of the system (the gateway and each service count the commands
// they send with the driver's command monitoring: store_commands_total on /metrics).
// Measured: PUT /v1/deals/{id}/won with create_case through the gateway, for a deal
// with a client and a responsible (gateway -> deals -> cases -> deals). A warm-up
// won fills the caches a first request of a team pays for once (users, client views);
// then each trial reads every process's counts, sends the request and reads them
// again as soon as it is answered. Work that runs beside the request (a relay's
// drain, a consumer, a timer) can add to a trial, never take away: the least trial
// is the figure, printed with what it was made of.
import { commandsBetween, storeCommandsOf } from './webhook-support.ts';
import { sleep, type Bench, type System } from './support.ts';
import { createTeams } from './teams.ts';

const TRIALS = 5;
/** Between trials: the previous request's events published and consumed. */
const QUIET_MS = 1500;

type Counts = Map<string, Map<string, number>>;

/** Every process's store commands so far, by process and `<command> <collection>`. */
async function countsOf(sys: System): Promise<Counts> {
  const urls: [string, string][] = [
    ['gateway', sys.gatewayInternalUrl],
    ['deals', sys.dealsUrl],
    ['clients', sys.clientsUrl],
    ['cases', sys.casesUrl],
    ['activities', sys.activitiesUrl],
    ['financial', sys.financialUrl],
    ['webhooks', sys.webhooksUrl],
  ];
  return new Map(await Promise.all(urls.map(async ([name, url]): Promise<[string, Map<string, number>]> => [name, await storeCommandsOf(url)])));
}

/** The commands each process sent between two readings, and their sum. */
function between(before: Counts, after: Counts): { total: number; by: [string, [string, number][]][] } {
  const by = [...after].map(([name, counts]): [string, [string, number][]] => [name, commandsBetween(before.get(name) ?? new Map<string, number>(), counts)]).filter(([, c]) => c.length > 0);
  return { total: by.reduce((n, [, c]) => n + c.reduce((m, [, k]) => m + k, 0), 0), by };
}

export async function roundtripsSection(b: Bench): Promise<void> {
  const sys = await b.system();
  const [team] = await createTeams(b, sys.tree, ['Bench roundtrips']);
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${sys.gatewayUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${team.api_key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const answer = (await res.json()) as { data?: { id: string } };
    if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${JSON.stringify(answer)}`);
    return answer.data!;
  };
  const client = await call('POST', '/v1/clients', { type: 'PJ', name: 'Ida e Volta Ltda' });
  const deal = (n: number) => call('POST', '/v1/deals', { title: `Ida e volta ${n}`, value: 1000, client_id: client.id, responsible_id: team.user.id });
  const won = (id: string) => call('PUT', `/v1/deals/${id}/won`, { create_case: true, case_data: { area: 'Cível' } });

  await won((await deal(0)).id);
  let least: ReturnType<typeof between> | null = null;
  for (let trial = 1; trial <= TRIALS; trial++) {
    const { id } = await deal(trial);
    await sleep(QUIET_MS);
    const before = await countsOf(sys);
    await won(id);
    const made = between(before, await countsOf(sys));
    if (!least || made.total < least.total) least = made;
  }
  console.log(`\nPUT /v1/deals/{id}/won with create_case: ${least!.total} store commands before the answer (least of ${TRIALS} trials)`);
  for (const [name, commands] of least!.by) console.log(`  ${name.padEnd(10)} ${commands.map(([k, n]) => `${k} x${n}`).join(', ')}`);
  b.record('roundtrips.won_with_case', least!.total);
  for (const [name, commands] of least!.by) b.record(`roundtrips.won_with_case_by.${name}`, commands.reduce((n, [, k]) => n + k, 0));
}
