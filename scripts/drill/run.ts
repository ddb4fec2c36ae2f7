// The drill once its system runs: the writes beside the faults, the wait for quiet, the
// report (printed, and written to `--json`'s file) and the verdict.
import { writeFileSync } from 'node:fs';
import type { HttpsReceiver } from '@lpm/test-kit/https-receiver';
import { faultDurations, type DrillArgs } from './args.ts';
import { runFaults, type Fault, type FaultLog } from './faults.ts';
import { checkState, deadLettered, reportOf, type BrokerSide, type StateCheck } from './report.ts';
import { TEAMS, type LauncherWatch } from './setup.ts';
import { countEvents, fannedOutAt, maxEventDelayMs, waitForQuiet } from './verdict.ts';
import { Workload, type DrillTeam } from './workload.ts';

const ACTORS = 20;
const RATE = 100;
/** On a cluster, the longest a write's event may take to its delivery: a node lost is not a minute's outage. */
const MAX_EVENT_DELAY_MS = 60_000;

export interface Drill {
  args: DrillArgs;
  watch: LauncherWatch;
  gatewayUrl: string;
  teams: DrillTeam[];
  receiver: HttpsReceiver;
  faults: Fault[];
  broker: BrokerSide;
  /** The store the system writes to, without the drill's proxy. */
  storeUrl: string;
  dbPrefix: string;
}

/** The writes beside the faults, then the wait for quiet and the verdict: 0 when the drill passed, 1 when not. */
export async function drill(d: Drill): Promise<number> {
  const { args, watch, faults } = d;
  const faultLog: FaultLog[] = [];
  let faultsLeft = true;
  const workload = new Workload({
    gatewayUrl: d.gatewayUrl,
    teams: d.teams,
    writes: args.writes,
    rate: RATE,
    actors: ACTORS,
    giveUpMs: faultDurations(args).storeCutMs + 120_000,
    keepGoing: () => faultsLeft && watch.ended === null,
  });
  const started = Date.now();
  console.log(
    `drill: ${args.writes} writes at ${RATE}/s over ${TEAMS} teams; faults: ${faults.map((f) => f.name).join(', ')}`,
  );
  void watch.gone.then(() => workload.stop());
  await watch.untilGone(
    Promise.all([
      workload.run(),
      runFaults(
        faults,
        args.writes,
        () => workload.done,
        faultLog,
        () => watch.ended !== null,
        args.cluster > 0,
      ).finally(() => (faultsLeft = false)),
    ]),
  );
  const writeSeconds = (Date.now() - started) / 1000;
  console.log(`drill: ${workload.done} writes in ${writeSeconds.toFixed(0)} s; waiting for quiet`);

  const expected = workload.tally.expected;
  // Quiet: longer than the longest retry delay on the way (60 s: a consumer's transient retries, a webhook's last attempts).
  await watch.untilGone(waitForQuiet(d.receiver.requests, expected, 150_000, 900_000));
  const events = countEvents(d.receiver.requests, expected);
  const state: StateCheck = { problems: [], inactive: [] };
  if (watch.ended === null) await watch.untilGone(checkState(state, d.gatewayUrl, d.teams, workload.stories));
  if (watch.ended !== null) state.problems = ['not checked: the launcher ended'];
  const dead = await deadLettered(d.broker, `${d.dbPrefix}events.`);
  const delay = maxEventDelayMs(d.receiver.requests, workload.tally.answeredAt);
  const fannedOut = delay.eventId ? await fannedOutAt(d.storeUrl, d.dbPrefix, delay.eventId) : null;
  const report = {
    ...reportOf({ launcherEnded: watch.ended, workload, writeSeconds, events, dead, state, faultLog }),
    'broker.nodes': d.broker.nodes,
    'broker.failovers': d.broker.failovers(),
    'events.max_delay_ms': delay.ms,
    'events.max_delay_event': delay.event,
    'events.max_delay_answered_at': delay.answeredAt === null ? null : new Date(delay.answeredAt).toISOString(),
    'events.max_delay_fanned_out_after_ms':
      fannedOut === null || delay.answeredAt === null ? null : fannedOut - delay.answeredAt,
  };
  console.log(JSON.stringify(report, null, 2));
  if (args.json) writeFileSync(args.json, `${JSON.stringify(report, null, 2)}\n`);
  const ok =
    watch.ended === null &&
    events.lost.length === 0 &&
    Object.keys(dead).length === 0 &&
    workload.tally.outsideEnvelope === 0 &&
    state.problems.length === 0 &&
    faultLog.filter((f) => f.detail).length === 0 &&
    faultLog.length === faults.length;
  // A speed figure, not a loss: reported against its bound, the verdict is about what was kept.
  if (args.cluster > 0 && delay.ms > MAX_EVENT_DELAY_MS)
    console.log(`drill: events.max_delay_ms ${delay.ms} is over the ${MAX_EVENT_DELAY_MS} ms bound`);
  console.log(ok ? 'drill: passed' : 'drill: FAILED');
  return ok ? 0 : 1;
}
