// A list's search through the gateway on a team of seeded records (cases.ts, lists.ts):
// a term that matches about 1% of them and one that matches about 30%, one request
// at a time. The team's first search reads its records into the service's index
// (shared/src/store/search-index.ts); it is timed alone, apart from the runs.
import { quantile, type Bench, type Figures } from './support.ts';

/** Requests per term, one at a time (the gateway allows a team 1,000 a minute). */
const SEARCH_REQUESTS = Number(process.env.BENCH_SEARCH_REQUESTS ?? 40);

export interface SearchTerms {
  /** Matches about 1% of the seeded records. */
  rare: string;
  /** Matches about 30%. */
  common: string;
}

interface Answer {
  ms: number;
  status: number;
  total: number | null;
}

async function searchOnce(url: string, apiKey: string): Promise<Answer> {
  const started = performance.now();
  const res = await fetch(url, { headers: { authorization: `Bearer ${apiKey}` } });
  const body = (await res.json()) as { pagination?: { total: number } };
  return { ms: performance.now() - started, status: res.status, total: body.pagination?.total ?? null };
}

/**
 * `GET <path>?search=<term>&limit=20` through the gateway for each term: the first
 * search of the team alone (`<service>.search_100k.first_ms`), then SEARCH_REQUESTS
 * one after another per term: `<service>.search_100k.{rare,common}_{p50_ms,p99_ms,share,errors}`,
 * the share being the total the API gave over `records`.
 */
export async function measureSearch(
  b: Bench,
  service: 'cases' | 'clients',
  gatewayUrl: string,
  apiKey: string,
  records: number,
  terms: SearchTerms,
): Promise<Figures[]> {
  const key = `${service}.search_100k`;
  const url = (term: string) => `${gatewayUrl}/v1/${service}?search=${encodeURIComponent(term)}&limit=20`;
  console.log(
    `\nGET /v1/${service}?search= through the gateway, ${records.toLocaleString('en')} records of one team, 20 per page:`,
  );
  const first = await searchOnce(url(terms.rare), apiKey);
  console.log(
    `  first search of the team (its records read into the index): ${first.ms.toFixed(0)} ms, status ${first.status}`,
  );
  b.record(`${key}.first_ms`, first.ms);
  const figures: Figures[] = [];
  for (const which of ['rare', 'common'] as const) {
    const term = terms[which];
    const answers: Answer[] = [];
    for (let n = 0; n < SEARCH_REQUESTS; n++) answers.push(await searchOnce(url(term), apiKey));
    const ok = answers.filter((a) => a.status === 200);
    const times = ok.map((a) => a.ms).sort((x, y) => x - y);
    const total = ok[0]?.total ?? null;
    const errors = answers.length - ok.length;
    const p50 = times.length ? quantile(times, 0.5) : NaN;
    const p99 = times.length ? quantile(times, 0.99) : NaN;
    console.log(
      `  "${term}" (${which}): ${total === null ? 'no answer' : `${total.toLocaleString('en')} matches (${((100 * total) / records).toFixed(1)}%)`}, ` +
        `${SEARCH_REQUESTS} requests one at a time: p50 ${p50.toFixed(0)} ms, p99 ${p99.toFixed(0)} ms${errors ? `, ${errors} not 200 (${[...new Set(answers.map((a) => a.status))].join(', ')})` : ''}`,
    );
    if (times.length) {
      b.record(`${key}.${which}_p50_ms`, p50);
      b.record(`${key}.${which}_p99_ms`, p99);
    } else console.log(`  ${key}.${which}_p50_ms not measured: no request answered 200`);
    if (total !== null) b.record(`${key}.${which}_share`, total / records);
    b.record(`${key}.${which}_errors`, errors);
    figures.push({
      name: `GET /v1/${service} search "${term}" gateway (${SEARCH_REQUESTS} one at a time)`,
      rps: times.length ? 1000 / p50 : 0,
      p50,
      p99,
      errors,
      created: 0,
    });
  }
  return figures;
}
