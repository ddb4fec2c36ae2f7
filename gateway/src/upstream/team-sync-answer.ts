// How a service answers the gateway's team sync requests (shared/src/jobs/team-syncs.ts):
// 200 once its run of the change is done, 202 while records are left to rewrite.
import { isObject, type Caller, type ServiceClient } from '@lpm/shared/upstream/service-client';

/** Asks `client` to apply a team's change (or how its run stands): true once done, false while it runs; 503 on any other answer. */
export async function syncDone(
  client: ServiceClient,
  who: Caller,
  path: string,
  body: Record<string, unknown>,
): Promise<boolean> {
  const res = await client.request<{ data?: unknown } | null>(who, 'POST', path, body);
  const data = res.body?.data;
  const done = isObject(data) && typeof data.done === 'boolean' && typeof data.changed === 'number' ? data.done : null;
  if ((res.status === 200 && done === true) || (res.status === 202 && done === false)) return done;
  throw client.unavailable(new Error(`POST ${path} answered ${res.status} without a sync state`));
}
