import type { LightMyRequestResponse } from 'fastify';
import type { SyncState } from '@lpm/shared/jobs/team-syncs';

/**
 * Sends a team sync request as the gateway does (`ask`), again every 50 ms while the
 * service answers 202, until it answers 200; resolves with that answer's state and
 * every status seen. Anything else rejects.
 */
export async function askUntilDone(
  ask: () => Promise<LightMyRequestResponse>,
  timeoutMs = 30_000,
): Promise<SyncState & { statuses: number[] }> {
  const deadline = Date.now() + timeoutMs;
  const statuses: number[] = [];
  for (;;) {
    const res = await ask();
    statuses.push(res.statusCode);
    if (res.statusCode === 200) return { ...(res.json().data as SyncState), statuses };
    if (res.statusCode !== 202) throw new Error(`team sync answered ${res.statusCode}: ${res.body}`);
    if (Date.now() > deadline) throw new Error(`team sync not done within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
