// The teams that watch lawyers on the DJEN, with their settings: the gateway owns
// team settings and answers GET /internal/publication-watches.
import { isObject, type ServiceClient } from '@lpm/shared/upstream/service-client';
import type { WatchedTeam } from '@lpm/shared/publication-settings';

/** Where the poller finds the teams to poll for. */
export interface WatchSource {
  teams(): Promise<WatchedTeam[]>;
}

const isTeam = (t: unknown): t is WatchedTeam =>
  isObject(t) &&
  typeof t.team_id === 'string' &&
  typeof t.user_id === 'string' &&
  isObject(t.settings) &&
  isObject(t.publications) &&
  Array.isArray(t.publications.watches);

const isTeams = (d: unknown): d is WatchedTeam[] => Array.isArray(d) && d.every(isTeam);

export class GatewayWatches implements WatchSource {
  private readonly gateway: ServiceClient;

  constructor(gateway: ServiceClient) {
    this.gateway = gateway;
  }

  teams(): Promise<WatchedTeam[]> {
    // The list is of every team: no team is named, as no caller's team is in question.
    return this.gateway.data({ teamId: '-' }, 'GET', '/internal/publication-watches', isTeams);
  }
}
