// What some tests need from the machine beyond Node, Go and the servers: Debian
// packages, installed here when missing and this process may (root with apt-get),
// as a new user's `npm test` and CI's alike need.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

export interface Prerequisite {
  /** The Debian package that provides it. */
  pkg: string;
  /** The test that needs it. */
  neededBy: string;
  /** True when it is there. */
  present(): boolean;
}

const onPath = (command: string) => spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;

export const PREREQUISITES: readonly Prerequisite[] = [
  {
    pkg: 'chromium',
    neededBy:
      'test/openapi.test.ts and test/portal.test.ts (the docs page and the webhooks portal, through playwright-core)',
    present: () => (process.env.CHROMIUM_PATH ? existsSync(process.env.CHROMIUM_PATH) : onPath('chromium')),
  },
  {
    pkg: 'prometheus',
    neededBy: 'test/monitoring.test.ts (promtool checks the alert rules)',
    present: () => onPath('promtool'),
  },
];

const canInstall = () => process.getuid?.() === 0 && onPath('apt-get');

/**
 * Installs what is missing; answers the one line that says what could not be had
 * (null when everything is there).
 */
export function ensurePrerequisites(
  list: readonly Prerequisite[] = PREREQUISITES,
  install = canInstall(),
): string | null {
  const missing = list.filter((p) => !p.present());
  if (missing.length === 0) return null;
  const names = missing.map((p) => p.pkg);
  if (!install) {
    return `npm test needs Debian's ${names.join(' and ')} (${missing.map((p) => p.neededBy).join('; ')}): run \`apt-get install --no-install-recommends ${names.join(' ')}\` as root`;
  }
  console.log(`[test] installing ${names.join(', ')} (apt-get)`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const update = spawnSync('apt-get', ['update', '-qq'], { stdio: ['ignore', 'ignore', 'inherit'], env });
  const installed =
    update.status === 0 &&
    spawnSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...names], {
      stdio: ['ignore', 'ignore', 'inherit'],
      env,
    }).status === 0;
  const still = missing.filter((p) => !p.present()).map((p) => p.pkg);
  if (installed && still.length === 0) return null;
  return `npm test needs Debian's ${(still.length ? still : names).join(' and ')}, and apt-get could not install it: run \`apt-get install --no-install-recommends ${(still.length ? still : names).join(' ')}\``;
}
