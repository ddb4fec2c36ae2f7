// Section `cases`: how long a client's rename takes to show on its case, then GET
// /v1/cases on one team with CASES cases (no filter, a filter, a search), straight
// to the cases service and through the gateway, and its search through the gateway
// (search.ts). On this checkout's system, last (the seeded cases stay in the store).
import autocannon from 'autocannon';
import { MongoClient } from 'mongodb';
import { casesSlaSignals, identityHeaders } from './internals.ts';
import { CASES, casesSeeded, describeCasesStore, rearmDueNow, seededCaseTeam } from './cases-store.ts';
import { measureSearch, type SearchTerms } from './search.ts';
import { DURATION_S, quantile, recordRun, type Bench, type Figures, type System } from './support.ts';
import { createTeams, identityOf } from './teams.ts';

// Few connections, so the case list figures show a request's latency rather than queueing.
const CASE_CONNECTIONS = Number(process.env.BENCH_CASE_CONNECTIONS ?? 4);
const RENAMES = Number(process.env.BENCH_RENAMES ?? 50);
/** SLA sweeps timed (the median is the figure). */
const SWEEPS = 3;
/** A search term present in some seeded titles (folded as the service folds it: "Guimarães" matches). */
const SEARCH = 'guimaraes';
/** Search terms of the seeded cases (folded as the service folds them): "José S" is in 1.0% of their titles, "ta" in 27.5%. */
const SEARCH_TERMS: SearchTerms = { rare: 'José S', common: 'ta' };
/** The phase of the filtered page (a fifth of the seeded cases, all ativo). */
const FILTERED_PHASE = 'em-andamento';
/** The issue's targets: the default page and the status + phase page, straight to the service. */
const LIST_TARGET_KEYS: Record<string, string> = {
  list_no_filter: 'cases.list_100k.p50_ms',
  list_status_phase: 'cases.list_100k_filtered.p50_ms',
};

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
export async function measureList(
  name: string,
  baseUrl: string,
  run: ListRun,
  headers: Record<string, string>,
): Promise<Figures> {
  const probeStarted = Date.now();
  const probe = await fetch(`${baseUrl}${run.path}`, { headers });
  const body = (await probe.json()) as {
    pagination?: { total: number };
    data?: unknown[];
    error?: { message: string };
  };
  const probeMs = Date.now() - probeStarted;
  console.log(
    `  ${name}: one request alone ${probeMs} ms, status ${probe.status}, ` +
      (probe.ok
        ? `${body.data?.length ?? 0} items of ${body.pagination?.total ?? '?'}`
        : `"${body.error?.message ?? ''}"`),
  );
  if (!probe.ok)
    return { name: `${name} (1 request)`, rps: 1000 / probeMs, p50: probeMs, p99: probeMs, errors: 1, created: 0 };
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
      `${
        Object.keys(statuses).length
          ? `, statuses ${Object.entries(statuses)
              .map(([c, v]) => `${c}x${v.count}`)
              .join(' ')}`
          : ''
      }` +
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
 * (a GET every 10 ms). Prints and returns p50, p99 and max.
 */
interface RenameFigures {
  p50: number;
  p99: number;
  max: number;
}

async function renameLatency(
  label: string,
  clientsUrl: string,
  casesUrl: string,
  headers: Record<string, string>,
): Promise<RenameFigures> {
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
    const put = await fetch(`${clientsUrl}/v1/clients/${clientId}`, {
      method: 'PUT',
      headers: json,
      body: JSON.stringify({ name }),
    });
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
  const at = (q: number) => (latencies.length ? quantile(latencies, q) : NaN);
  return { p50: at(0.5), p99: at(0.99), max: at(1) };
}

/**
 * One SLA sweep as the cases service runs it: its signal definitions on its database,
 * in this process (casesSlaSignals). One sweep first, untimed (the service's first:
 * with no cursor yet it passes over the whole collection once); then, SWEEPS times,
 * the cases due now armed again and `sweep(now)` timed; the median.
 */
async function slaSweep(b: Bench, sys: System, database: string, dueNow: string[]): Promise<void> {
  const client = await MongoClient.connect(b.store.url);
  try {
    const db = client.db(database);
    const signals = casesSlaSignals({
      db,
      urls: {
        clients: sys.serviceUrls.clients,
        activities: sys.serviceUrls.activities,
        gateway: sys.gatewayInternalUrl,
      },
      internalToken: b.token,
    });
    await signals.createIndexes();
    const timed = async () => {
      const started = performance.now();
      const emitted = await signals.sweep(new Date());
      return { ms: performance.now() - started, emitted };
    };
    const first = await timed();
    const runs: { ms: number; emitted: number }[] = [];
    for (let n = 0; n < SWEEPS; n++) {
      await rearmDueNow(db, dueNow);
      runs.push(await timed());
    }
    const median = runs.map((r) => r.ms).sort((x, y) => x - y)[Math.floor(SWEEPS / 2)];
    console.log(
      `SLA sweep (case.sla_warning and case.sla_overdue) over ${CASES.toLocaleString('en')} cases, in this process: ` +
        `first ${first.ms.toFixed(0)} ms (${first.emitted} emitted); then with ${dueNow.length} cases due each time ` +
        `${runs.map((r) => `${r.ms.toFixed(0)} ms (${r.emitted} emitted)`).join(', ')}; median ${median.toFixed(0)} ms`,
    );
    b.record('cases.sla_sweep_100k.ms', median);
    b.record('cases.sla_sweep_100k.first_ms', first.ms);
    b.record('cases.sla_sweep_100k.cases', CASES);
  } finally {
    await client.close();
  }
}

export async function casesSection(b: Bench): Promise<void> {
  const sys = await b.system();
  const [renameTeam] = await createTeams(b, sys.tree, ['Bench rename']);
  const renameHeaders = identityHeaders(identityOf(renameTeam), b.token);
  const recordRename = (key: string, r: RenameFigures) => {
    b.record(`cases.${key}.p50_ms`, r.p50);
    b.record(`cases.${key}.p99_ms`, r.p99);
    b.record(`cases.${key}.max_ms`, r.max);
  };
  if (!casesSeeded(sys))
    recordRename(
      'rename_before_seeding',
      await renameLatency('before seeding', sys.serviceUrls.clients, sys.serviceUrls.cases, renameHeaders),
    );
  const { team: caseTeam, headers: caseHeaders, database, dueNow } = await seededCaseTeam(b, sys);
  await describeCasesStore(b.store.url, database, [
    { label: 'no filter', filter: { team_id: caseTeam.team.id } },
    { label: 'filter', filter: { team_id: caseTeam.team.id, status: 'ativo', priority: 'alta' } },
    { label: 'status and phase', filter: { team_id: caseTeam.team.id, status: 'ativo', phase: FILTERED_PHASE } },
    { label: 'search', filter: { team_id: caseTeam.team.id, search_text: new RegExp(SEARCH) } },
  ]);
  await slaSweep(b, sys, database, dueNow);
  // Before the list runs: a list request the gateway gave up on keeps running in the store.
  recordRename(
    'rename_seeded',
    await renameLatency(
      `with ${CASES.toLocaleString('en')} cases stored`,
      sys.serviceUrls.clients,
      sys.serviceUrls.cases,
      renameHeaders,
    ),
  );

  // The team's first search reads its cases into the service's index: before the direct search run, so that it is the one timed alone.
  const searched = await measureSearch(b, 'cases', sys.gatewayUrl, caseTeam.api_key, CASES, SEARCH_TERMS);
  console.log(`\nGET /v1/cases, ${CASES.toLocaleString('en')} cases of one team, 20 per page:`);
  const listRuns: (ListRun & { key: string })[] = [
    { key: 'list_no_filter', label: 'no filter', path: '/v1/cases?limit=20' },
    { key: 'list_filter', label: 'filter', path: '/v1/cases?limit=20&status=ativo&priority=alta' },
    {
      key: 'list_status_phase',
      label: 'status and phase',
      path: `/v1/cases?limit=20&status=ativo&phase=${FILTERED_PHASE}`,
    },
    { key: 'list_search', label: 'search', path: `/v1/cases?limit=20&search=${SEARCH}` },
  ];
  const figures: Figures[] = [...searched];
  for (const r of listRuns) {
    const f = await measureList(`GET /v1/cases ${r.label} direct`, sys.serviceUrls.cases, r, caseHeaders);
    recordRun(b, `cases.${r.key}.direct`, f);
    figures.push(f);
    const target = LIST_TARGET_KEYS[r.key];
    if (target) b.record(target, f.p50);
  }
  // Through the gateway only without a filter: its minute limit is per team, and it gives up on an upstream after 30 s.
  const gated = await measureList(`GET /v1/cases ${listRuns[0].label} gateway`, sys.gatewayUrl, listRuns[0], {
    authorization: `Bearer ${caseTeam.api_key}`,
  });
  recordRun(b, `cases.${listRuns[0].key}.gateway`, gated);
  figures.push(gated);
  b.figures.push(...figures);
}
