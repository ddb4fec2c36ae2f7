// The drill's report after the wait for quiet: the state checked through the API (given
// time to settle), the messages left dead-lettered or parked in the system's queues,
// and the report's keys.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { FaultLog } from './faults.ts';
import { stateDisagreements, type EventCount } from './verdict.ts';
import type { DrillTeam, Story, Workload } from './workload.ts';

export interface StateCheck {
  /** Where the state disagrees with the acknowledged writes. */
  problems: string[];
  /** Webhooks deactivated, as `<team> <webhook>`. */
  inactive: string[];
}

export async function checkState(
  state: StateCheck,
  gatewayUrl: string,
  teams: DrillTeam[],
  stories: Story[],
): Promise<void> {
  state.problems = await settledDisagreements(gatewayUrl, teams, stories);
  for (const team of teams) {
    const hooks = await fetch(`${gatewayUrl}/v1/webhooks`, {
      headers: { authorization: `Bearer ${team.apiKey}` },
    }).then((r) => r.json() as Promise<{ data?: { id: string; active: boolean }[] }>);
    for (const h of hooks.data ?? []) if (h.active === false) state.inactive.push(`${team.id} ${h.id}`);
  }
}

/** Derived state (counts kept from events, owed occurrences a repair job stores) settles after the events: asked again for a while. */
async function settledDisagreements(gatewayUrl: string, teams: DrillTeam[], stories: Story[]): Promise<string[]> {
  let found = await stateDisagreements(gatewayUrl, teams, stories);
  for (const settleBy = Date.now() + 120_000; found.length > 0 && Date.now() < settleBy;) {
    await new Promise((r) => setTimeout(r, 10_000));
    found = await stateDisagreements(gatewayUrl, teams, stories);
  }
  return found;
}

export function reportOf(r: {
  launcherEnded: string | null;
  workload: Workload;
  writeSeconds: number;
  events: EventCount;
  dead: Record<string, number>;
  state: StateCheck;
  faultLog: FaultLog[];
}) {
  const { tally, stories } = r.workload;
  return {
    'launcher.ended': r.launcherEnded,
    'writes.acknowledged': tally.acknowledged,
    'writes.refused': Object.values(tally.refused).reduce((a, b) => a + b, 0),
    'writes.refused_by_status': tally.refused,
    'writes.refused_sample': tally.refusedSamples,
    'writes.retried_by_status': tally.retried,
    'writes.seconds': r.writeSeconds,
    'events.expected': tally.expected.size,
    'events.delivered': r.events.delivered,
    'events.duplicated': r.events.duplicated,
    'events.lost': r.events.lost.length,
    'events.lost_sample': r.events.lost.slice(0, 20),
    'events.dead_lettered': Object.values(r.dead).reduce((a, b) => a + b, 0),
    'events.dead_lettered_by_queue': r.dead,
    'webhooks.deactivated': r.state.inactive,
    'answers.outside_envelope': tally.outsideEnvelope,
    'answers.outside_sample': tally.outsideSamples,
    'stories.total': stories.length,
    'stories.uncertain': stories.filter((s) => s.uncertain).length,
    'state.agrees': r.state.problems.length === 0,
    'state.disagreements': r.state.problems.slice(0, 50),
    faults: r.faultLog,
  };
}

/** The broker the system ran on: the machine's (one node) or the drill's cluster (asked through `node`). */
export interface BrokerSide {
  vhost: string;
  node?: string;
  nodes: number;
  failovers(): number;
}

/** Messages left in the system's dead-letter and parking queues (names under `prefix`), by queue: work a consumer never did. */
export async function deadLettered(broker: BrokerSide, prefix: string): Promise<Record<string, number>> {
  const target = broker.node ? ['-n', broker.node] : [];
  const args = [...target, 'list_queues', '-p', broker.vhost, '-q', '--no-table-headers', 'name', 'messages'];
  const { stdout } = await promisify(execFile)('rabbitmqctl', args, { encoding: 'utf8' });
  const dead: Record<string, number> = {};
  for (const line of stdout.split('\n')) {
    const [name, count] = line.trim().split(/\s+/);
    if (name?.startsWith(prefix) && (name.endsWith('.dlq') || name.endsWith('.unrouted')) && Number(count) > 0)
      dead[name] = Number(count);
  }
  return dead;
}
