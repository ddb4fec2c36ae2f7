// Asks the service owning a kind of phase (cases, deals) which of some phases the
// team's records use, at its POST /internal/phases-in-use. A service this
// deployment does not run has no records, so it is not asked.
import { serviceUnavailable } from '@lpm/shared/errors';
import { identityHeaders } from '@lpm/shared/identity';
import { injectTraceHeaders } from '@lpm/shared/telemetry';
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
  return async (who, kind, phases) => {
    const service = OWNER[kind];
    if (!opts.deployed.includes(service)) return [];
    let inUse: unknown;
    try {
      const res = await fetch(new URL('/internal/phases-in-use', opts.upstreams[service]), {
        method: 'POST',
        headers: injectTraceHeaders({ 'content-type': 'application/json', ...identityHeaders(who, opts.internalToken) }),
        body: JSON.stringify({ kind, phases }),
        signal: AbortSignal.timeout(opts.timeoutMs),
      });
      if (!res.ok) throw new Error(`${service} POST /internal/phases-in-use answered ${res.status}`);
      inUse = ((await res.json()) as { data?: { in_use?: unknown } } | null)?.data?.in_use;
    } catch (e) {
      throw serviceUnavailable('Service unavailable', { cause: e });
    }
    if (!Array.isArray(inUse)) throw serviceUnavailable('Service unavailable', { cause: new Error(`${service}: no in_use list`) });
    return phases.filter((p) => inUse.includes(p));
  };
}
