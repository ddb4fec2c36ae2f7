// Asks the service owning a kind of phase (cases, deals) which of some phases the
// team's records use, at its POST /internal/phases-in-use. A service this
// deployment does not run has no records, so it is not asked.
import { serviceUnavailable } from '@lpm/shared/errors';
import { ServiceClient } from '@lpm/shared/upstream/service-client';
import type { PhaseKind, PhasesInUse } from '../domain/settings.ts';
import type { UpstreamName, Upstreams } from '../http/proxy.ts';

export interface PhasesInUseOptions {
  upstreams: Upstreams;
  deployed: readonly UpstreamName[];
  internalToken: string;
  timeoutMs: number;
}

const OWNER: Record<PhaseKind, UpstreamName> = { case: 'cases', deal: 'deals' };

export function upstreamPhasesInUse(opts: PhasesInUseOptions): PhasesInUse {
  const owners = Object.fromEntries(
    Object.entries(OWNER).map(([kind, name]) => [
      kind,
      new ServiceClient({ name, baseUrl: opts.upstreams[name], internalToken: opts.internalToken, timeoutMs: opts.timeoutMs }),
    ]),
  ) as Record<PhaseKind, ServiceClient>;
  return async (who, kind, phases) => {
    if (!opts.deployed.includes(OWNER[kind])) return [];
    const res = await owners[kind].request<{ data?: { in_use?: unknown } }>(who, 'POST', '/internal/phases-in-use', { kind, phases });
    const inUse = res.status === 200 ? res.body?.data?.in_use : undefined;
    if (!Array.isArray(inUse)) {
      throw serviceUnavailable('Service unavailable', { cause: new Error(`${OWNER[kind]} answered ${res.status} without an in_use list`) });
    }
    return phases.filter((p) => inUse.includes(p));
  };
}
