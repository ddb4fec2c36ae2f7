// Teams and their keys, made with the operator CLI of the checkout measured (its
// `team create --json` is stable across versions; the gateway's code is not).
import { defaultTeamSettings, type Identity } from './internals.ts';
import { execFileAsync, type Bench, type Tree } from './support.ts';

/** Operator CLI processes at once (each is a Node process opening the store: CPU-bound on 2 cores). */
const CLI_PARALLEL = 4;

/** What `team create --json` of the operator CLI prints. */
export interface IssuedTeam {
  team: { id: string; name: string };
  user: { id: string; name: string; email: string };
  api_key: string;
  key_id: string;
}

/**
 * Enterprise teams (1,000 requests a minute each), one per name, made by `tree`'s own
 * operator CLI (stable across versions, unlike the gateway's code) on the run's store,
 * CLI_PARALLEL processes at once.
 */
export async function createTeams(b: Bench, tree: Tree, names: string[]): Promise<IssuedTeam[]> {
  const env = { ...process.env, MONGO_URL: b.store.url, MONGO_DB_PREFIX: tree.dbPrefix };
  const teams = new Array<IssuedTeam>(names.length);
  let next = 0;
  let failed = false;
  const one = async (name: string): Promise<IssuedTeam> => {
    if (b.stopping()) throw new Error('the bench is stopping');
    const email = `${name.toLowerCase().replace(/[^a-z0-9]+/g, '-')}@bench.example`;
    const args = [
      'gateway/src/cli/main.ts',
      'team',
      'create',
      '--name',
      name,
      '--plan',
      'enterprise',
      '--owner-name',
      name,
      '--owner-email',
      email,
      '--json',
    ];
    const command = execFileAsync(process.execPath, args, { cwd: tree.root, env, encoding: 'utf8' });
    b.commands.add(command.child);
    try {
      const { stdout } = await command;
      return JSON.parse(stdout.trim().split('\n').pop()!) as IssuedTeam;
    } catch (e) {
      failed = true;
      const err = e as Error & { stderr?: string };
      throw new Error(`team create --name "${name}" in ${tree.root} failed: ${err.stderr?.trim() || err.message}`);
    } finally {
      b.commands.delete(command.child);
    }
  };
  await Promise.all(
    Array.from({ length: Math.min(CLI_PARALLEL, names.length) }, async () => {
      for (let i = next++; i < names.length && !failed; i = next++) teams[i] = await one(names[i]);
    }),
  );
  return teams;
}

/** The identity the gateway would pass for the team's owner (every scope), for requests straight to a service. */
export function identityOf(t: IssuedTeam): Identity {
  return { teamId: t.team.id, userId: t.user.id, scopes: ['read', 'write', 'admin'], settings: defaultTeamSettings() };
}
