// `--replicas cases=2,webhooks=2`: how many processes `npm start` runs of each service.
import { SERVICE_NAMES, type ServiceName } from '../shared/src/service/names.ts';

/** The most replicas of one service on one machine. */
const MAX_REPLICAS = 8;

/** The replica counts named by `--replicas a=N,b=M` (or `--replicas=...`) in `argv`; services not named run once. */
export function parseReplicas(argv: string[]): Partial<Record<ServiceName, number>> {
  const at = argv.findIndex((a) => a === '--replicas' || a.startsWith('--replicas='));
  if (at === -1) return {};
  const value = argv[at].includes('=') ? argv[at].slice('--replicas='.length) : argv[at + 1];
  if (!value) throw new Error('--replicas needs a list, e.g. --replicas cases=2,webhooks=2');
  const counts: Partial<Record<ServiceName, number>> = {};
  for (const item of value.split(',')) {
    const [name, count] = item.split('=').map((s) => s.trim());
    if (!(SERVICE_NAMES as readonly string[]).includes(name))
      throw new Error(`--replicas: unknown service ${JSON.stringify(name)} (known: ${SERVICE_NAMES.join(', ')})`);
    const n = Number(count);
    if (!Number.isInteger(n) || n < 1 || n > MAX_REPLICAS)
      throw new Error(`--replicas: ${name} needs a count from 1 to ${MAX_REPLICAS}, not ${JSON.stringify(count)}`);
    counts[name as ServiceName] = n;
  }
  return counts;
}
