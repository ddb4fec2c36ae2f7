// What the gateway asks the services owning a kind of phase (cases for case
// phases, deals for deal phases): which of some phases the team's records use, at
// their POST /internal/phases-in-use. A service this deployment does not run has
// no records, so it is not asked.
import type { ServiceName } from '@lpm/shared/service/names';
import { isObject, type Caller, type ServiceClient } from '@lpm/shared/upstream/service-client';
import type { Identity } from '@lpm/shared/identity';

export type PhaseKind = 'case' | 'deal';

/** The services owning each kind of phase, as the settings use case asks them. */
export interface PhaseOwners {
  /** Which of these phases the team's records use, as the service owning that kind of phase says. */
  phasesInUse(who: Identity, kind: PhaseKind, phases: string[]): Promise<string[]>;
}

const OWNER = { case: 'cases', deal: 'deals' } as const satisfies Record<PhaseKind, ServiceName>;

const isInUse = (d: unknown): d is { in_use: unknown[] } => isObject(d) && Array.isArray(d.in_use);

export interface CasesAndDealsServicesOptions {
  cases: ServiceClient;
  deals: ServiceClient;
  /** The services this deployment runs. */
  deployed: readonly ServiceName[];
}

export class CasesAndDealsServices implements PhaseOwners {
  private readonly opts: CasesAndDealsServicesOptions;

  constructor(opts: CasesAndDealsServicesOptions) {
    this.opts = opts;
  }

  async phasesInUse(who: Caller, kind: PhaseKind, phases: string[]): Promise<string[]> {
    const owner = OWNER[kind];
    if (!this.opts.deployed.includes(owner)) return [];
    const { in_use } = await this.opts[owner].data(who, 'POST', '/internal/phases-in-use', isInUse, { kind, phases });
    return phases.filter((p) => in_use.includes(p));
  }
}
