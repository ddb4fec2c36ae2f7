// The `writes` scenario's load: requests sent open loop (each at its instant, whether
// the ones before were answered or not) through undici's request on a pool of
// kept-alive connections, which costs this process about a third of what fetch does
// a request, CPU the system under test shares on this machine.
import { Pool } from 'undici';
import { sleep } from './support.ts';

const pools = new Map<string, Pool>();

export async function call(
  baseUrl: string,
  key: string,
  method: string,
  path: string,
  body: unknown,
): Promise<{ status: number; text: () => Promise<string> }> {
  let pool = pools.get(baseUrl);
  if (!pool) pools.set(baseUrl, (pool = new Pool(baseUrl, { connections: 512 })));
  const res = await pool.request({
    method,
    path,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify(body),
  });
  const text = await res.body.text();
  return { status: res.statusCode, text: async () => text };
}

/** Closes every pool `call` opened. */
export async function closeCalls(): Promise<void> {
  await Promise.all([...pools.values()].map((pool) => pool.close()));
  pools.clear();
}

export interface OpenLoopResult {
  /** Latencies of the requests answered as asked, ms, sorted. */
  latencies: number[];
  /** Requests answered otherwise, or not at all. */
  refused: number;
  total: number;
  /** When each request over `slowMs` was sent, ms into the run. */
  slowSentAt: number[];
  /** When the first request was sent (epoch ms). */
  startedAt: number;
}

/** `send(i)` for i below rate × seconds, the i-th at i / rate s, open loop; `send` resolves whether it was answered as asked. */
export async function openLoop(
  rate: number,
  seconds: number,
  slowMs: number,
  send: (i: number) => Promise<boolean>,
): Promise<OpenLoopResult> {
  const latencies: number[] = [];
  const slowSentAt: number[] = [];
  let refused = 0;
  const total = Math.round(rate * seconds);
  const started = performance.now();
  const startedAt = Date.now();
  const one = async (i: number) => {
    const sent = performance.now();
    try {
      const answered = await send(i);
      const took = performance.now() - sent;
      if (took > slowMs) slowSentAt.push(sent - started);
      if (answered) latencies.push(took);
      else refused++;
    } catch {
      refused++;
    }
  };
  const requests: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const wait = started + (i * 1000) / rate - performance.now();
    if (wait > 0) await sleep(wait);
    requests.push(one(i));
  }
  await Promise.all(requests);
  latencies.sort((x, y) => x - y);
  return { latencies, refused, total, slowSentAt, startedAt };
}
