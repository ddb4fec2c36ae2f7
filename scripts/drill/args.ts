// The drill's command line (`npm run drill -- [--writes N] [--json FILE] [--short] [--cluster N]`)
// and the fault durations `--short` chooses between.
import type { FaultDurations } from './faults.ts';

export interface DrillArgs {
  writes: number;
  json?: string;
  short: boolean;
  /** Nodes of the drill's own RabbitMQ cluster; 0: the machine's broker through a proxy. */
  cluster: number;
}

const FULL: FaultDurations = { brokerDownMs: 10_000, storeCutMs: 60_000, storeHangMs: 20_000 };
const SHORT: FaultDurations = { brokerDownMs: 3000, storeCutMs: 8000, storeHangMs: 8000 };

export function faultDurations(args: DrillArgs): FaultDurations {
  return args.short ? SHORT : FULL;
}

export function parseArgs(argv: string[]): DrillArgs {
  const args: DrillArgs = { writes: 10_000, short: false, cluster: 0 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--writes') args.writes = Number(argv[++i]);
    else if (a === '--json') args.json = argv[++i];
    else if (a === '--short') args.short = true;
    else if (a === '--cluster') args.cluster = Number(argv[++i]);
    else
      throw new Error(
        `unknown option ${a}; usage: npm run drill -- [--writes N] [--json FILE] [--short] [--cluster N]`,
      );
  }
  if (!Number.isInteger(args.writes) || args.writes < 100)
    throw new Error('--writes must be an integer of at least 100');
  if (args.json === undefined && argv.includes('--json')) throw new Error('--json needs a file name');
  if (
    !Number.isInteger(args.cluster) ||
    args.cluster === 1 ||
    args.cluster === 2 ||
    args.cluster < 0 ||
    args.cluster > 9
  )
    throw new Error('--cluster needs 3 to 9 nodes');
  return args;
}
