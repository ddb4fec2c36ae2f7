// Section `cases`: how long a client's rename takes to show on its case, then GET
// /v1/cases on one team with CASES cases (no filter, a filter, a search), straight
// to the cases service and through the gateway. On this checkout's system, last
// (the seeded cases stay in the store).
import autocannon from 'autocannon';
import { identityHeaders } from './internals.ts';
import { CASES, describeCasesStore, seedCases } from './cases-store.ts';
import { DURATION_S, quantile, type Bench, type Figures } from './support.ts';
import { createTeams, identityOf } from './teams.ts';

// Few connections, so the case list figures show a request's latency rather than queueing.
const CASE_CONNECTIONS = Number(process.env.BENCH_CASE_CONNECTIONS ?? 4);
const RENAMES = Number(process.env.BENCH_RENAMES ?? 50);
/** A search term present in some seeded titles (folded as the service folds it: "Guimarães" matches). */
const SEARCH = 'guimaraes';

export interface ListRun {
  label: string;
  path: string;
}

/**
 * One list query measured with autocannon, after one request alone (a warm-up, printed).
 * Quick requests: CASE_CONNECTIONS connections for the duration. Slow ones (as on FerretDB
 * with 100,000 cases, seconds each): one connection and a fixed number of requests,
 * about the duration's worth but at least two, so the figures are a request's latency and
 * not queueing on the store, and no request is left running into the next run. A warm-up
 * the server refuses or times out is reported as it is, without a run.
 */
export async function measureList(name: string, baseUrl: string, run: ListRun, headers: Record<string, string>): Promise<Figures> {
  const probeStarted = Date.now();
  const probe = await fetch(`${baseUrl}${run.path}`, { headers });
  const body = (await probe.json()) as { pagination?: { total: number }; data?: unknown[]; error?: { message: string } };
  const probeMs = Date.now() - probeStarted;
  console.log(
    `  ${name}: one request alone ${probeMs} ms, status ${probe.status}, ` +
      (probe.ok ? `${body.data?.length ?? 0} items of ${body.pagination?.total ?? '?'}` : `"${body.error?.message ?? ''}"`),
  );
  if (!probe.ok) return { name: `${name} (1 request)`, rps: 1000 / probeMs, p50: probeMs, p99: probeMs, errors: 1, created: 0 };
  // Slow: fewer than about four requests per connection in the duration, were they queued on the store.
  const slow = probeMs * CASE_CONNECTIONS * 4 > DURATION_S * 1000;
  const connections = slow ? 1 : CASE_CONNECTIONS;
  const amount = slow ? Math.max(2, Math.round((DURATION_S * 1000) / probeMs)) : undefined;
  const result = await autocannon({
    url: `${baseUrl}${run.path}`,
    connections,
    ...(amount ? { amount } : { duration: DURATION_S }),
    timeout: Math.max(30, Math.ceil((probeMs * 3) / 1000)),
    headers,
  });
  const statuses = (result as unknown as { statusCodeStats?: Record<string, { count: number }> }).statusCodeStats ?? {};
  const refused = statuses['429']?.count ?? 0;
  const label = amount ? `${name} (1 connection, ${amount} requests)` : name;
  console.log(
    `  ${label}: ${result.requests.total} responses in ${result.duration} s` +
      `${Object.keys(statuses).length ? `, statuses ${Object.entries(statuses).map(([c, v]) => `${c}x${v.count}`).join(' ')}` : ''}` +
      `${refused ? ` (${refused} rate limited)` : ''}${result.errors ? `, ${result.errors} errors (${result.timeouts} timeouts)` : ''}`,
  );
  return {
    name: label,
    rps: result.requests.total / Math.max(result.duration, 0.001),
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.non2xx + result.errors,
    created: 0,
  };
}

// ---- A client's new name shown on its case ----

const RENAME_PATIENCE_MS = 60_000;

/**
 * Links a new client to a new case, renames the client RENAMES times, and each time
 * measures ms from the PUT's response to the first GET of the case showing the new name
 * (a GET every 10 ms). Prints p50, p99 and max.
 */
async function renameLatency(label: string, clientsUrl: string, casesUrl: string, headers: Record<string, string>): Promise<void> {
  const json = { 'content-type': 'application/json', ...headers };
  const post = async (url: string, body: unknown) => {
    const res = await fetch(url, { method: 'POST', headers: json, body: JSON.stringify(body) });
    if (res.status !== 201) throw new Error(`POST ${url} answered ${res.status}: ${await res.text()}`);
    return ((await res.json()) as { data: { id: string } }).data.id;
  };
  const clientId = await post(`${clientsUrl}/v1/clients`, { type: 'PF', name: 'Renomeada 0' });
  const caseId = await post(`${casesUrl}/v1/cases`, { title: 'Ação de cobrança renomeada', client_id: clientId });
  const latencies: number[] = [];
  let unseen = 0;
  for (let n = 1; n <= RENAMES; n++) {
    const name = `Renomeada ${n}`;
    const put = await fetch(`${clientsUrl}/v1/clients/${clientId}`, { method: 'PUT', headers: json, body: JSON.stringify({ name }) });
    if (put.status !== 200) throw new Error(`PUT client answered ${put.status}: ${await put.text()}`);
    await put.arrayBuffer();
    const answered = performance.now();
    for (;;) {
      const res = await fetch(`${casesUrl}/v1/cases/${caseId}`, { headers });
      const shown = ((await res.json()) as { data?: { client?: { name: string | null } | null } }).data?.client?.name;
      if (shown === name) {
        latencies.push(performance.now() - answered);
        break;
      }
      if (performance.now() - answered > RENAME_PATIENCE_MS) {
        unseen++;
        break;
      }
      await new Promise((r) => setTimeout(r, 10));
    }
  }
  latencies.sort((x, y) => x - y);
  const ms = (q: number) => (latencies.length ? quantile(latencies, q).toFixed(0) : '-');
  console.log(
    `client rename -> visible on its case, ${label} (${RENAMES} sequential renames, direct, GET every 10 ms): ` +
      `p50 ${ms(0.5)} ms, p99 ${ms(0.99)} ms, max ${ms(1)} ms` +
      `${latencies.filter((l) => l > 1000).length ? `, ${latencies.filter((l) => l > 1000).length} over 1 s` : ''}` +
      `${unseen ? `, ${unseen} not seen within ${RENAME_PATIENCE_MS / 1000} s` : ''}`,
  );
}

export async function casesSection(b: Bench): Promise<void> {
  const sys = await b.system();
  const database = `${sys.tree.dbPrefix}cases`;
  const [caseTeam, renameTeam] = await createTeams(b, sys.tree, ['Bench cases', 'Bench rename']);
  const caseHeaders = identityHeaders(identityOf(caseTeam), b.token);
  const renameHeaders = identityHeaders(identityOf(renameTeam), b.token);
  await renameLatency('before seeding', sys.clientsUrl, sys.casesUrl, renameHeaders);

  const caseClients: string[] = [];
  for (let n = 0; n < 5; n++) {
    const res = await fetch(`${sys.clientsUrl}/v1/clients`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...caseHeaders },
      body: JSON.stringify({ type: 'PJ', name: `Cliente dos casos ${n}`, segment: 'regular' }),
    });
    if (res.status !== 201) throw new Error(`POST /v1/clients answered ${res.status}: ${await res.text()}`);
    caseClients.push(((await res.json()) as { data: { id: string } }).data.id);
  }
  const seconds = await seedCases(b.store.url, database, caseTeam.team.id, caseClients);
  console.log(`\nseeded ${CASES.toLocaleString('en')} cases of one team with insertMany (batches of 1,000) in ${seconds.toFixed(1)} s (${(CASES / seconds).toFixed(0)} cases/s)`);
  await describeCasesStore(b.store.url, database, [
    { label: 'no filter', filter: { team_id: caseTeam.team.id } },
    { label: 'filter', filter: { team_id: caseTeam.team.id, status: 'ativo', priority: 'alta' } },
    { label: 'search', filter: { team_id: caseTeam.team.id, search_text: new RegExp(SEARCH) } },
  ]);
  // Before the list runs: a list request the gateway gave up on keeps running in the store.
  await renameLatency(`with ${CASES.toLocaleString('en')} cases stored`, sys.clientsUrl, sys.casesUrl, renameHeaders);

  console.log(`\nGET /v1/cases, ${CASES.toLocaleString('en')} cases of one team, 20 per page:`);
  const listRuns: ListRun[] = [
    { label: 'no filter', path: '/v1/cases?limit=20' },
    { label: 'filter', path: '/v1/cases?limit=20&status=ativo&priority=alta' },
    { label: 'search', path: `/v1/cases?limit=20&search=${SEARCH}` },
  ];
  const figures: Figures[] = [];
  for (const r of listRuns) figures.push(await measureList(`GET /v1/cases ${r.label} direct`, sys.casesUrl, r, caseHeaders));
  // Through the gateway only without a filter: its minute limit is per team, and it gives up on an upstream after 30 s.
  figures.push(await measureList(`GET /v1/cases ${listRuns[0].label} gateway`, sys.gatewayUrl, listRuns[0], { authorization: `Bearer ${caseTeam.api_key}` }));
  b.figures.push(...figures);
}
