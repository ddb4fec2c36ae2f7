import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from '@jest/globals';
import { freePort, isListening, dropPostgresDatabase, localStoreForCommand } from '../../scripts/local-store.ts';
import { openCliStore } from '../src/cli/store.ts';
import { runCli, teamCreateArgs, userCreateArgs, type CliRun } from '@lpm/test-kit/cli';
import { accountsOf, call, gatewayForSuite, newTeam, sleep, testDbPrefix, type TestGateway } from './support.ts';
import type { JsonAnswer } from '@lpm/test-kit/json';
import type { IssuedTeam } from '@lpm/test-kit/running-system';

const admin = (...args: string[]) =>
  runCli({ MONGO_URL: process.env.MONGO_URL, MONGO_DB_PREFIX: testDbPrefix('cli') }, ...args);

/** Exactly one JSON object on stdout and nothing else. */
function onlyJson(run: CliRun): JsonAnswer {
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  expect(run.stdout.endsWith('\n')).toBe(true);
  expect(run.stdout.trim().split('\n')).toHaveLength(1);
  const parsed = JSON.parse(run.stdout);
  expect(typeof parsed).toBe('object');
  return parsed;
}

/** `user create` of `name` and `email` in team `teamId`, with --json. */
const createUser = (teamId: string, name: string, email: string) =>
  admin(...userCreateArgs(teamId, name, email), '--json');
/** `key create` for user `userId` of team `teamId` with `scopes`, with --json. */
const createKey = (teamId: string, userId: string, scopes: string) =>
  admin('key', 'create', '--team', teamId, '--user', userId, '--scopes', scopes, '--json');

const ID = (kind: string) => expect.stringMatching(new RegExp(`^${kind}_[0-9a-z]{26}$`));
const API_KEY = expect.stringMatching(/^lpk_[0-9A-Za-z]{40}$/);

let gw: TestGateway;

gatewayForSuite('cli', (started) => void (gw = started.gw));

const createTeam = (...extra: string[]) =>
  admin(
    ...teamCreateArgs({
      name: 'Silva Advogados',
      plan: 'starter',
      ownerName: 'Ana Silva',
      ownerEmail: 'Ana@Silva.adv.br',
    }),
    ...extra,
    '--json',
  );

describe('team create', () => {
  test('when run with --json, then it prints the team, owner, key and key id, and the key works at once', async () => {
    const out = onlyJson(await createTeam());
    expect(out).toEqual({
      team: { id: ID('team'), name: 'Silva Advogados', plan: 'starter', timezone: 'America/Sao_Paulo' },
      user: { id: ID('user'), name: 'Ana Silva', email: 'ana@silva.adv.br' },
      api_key: API_KEY,
      key_id: ID('key'),
    });
    const res = await call(gw.url, '/v1/webhooks', { method: 'POST', key: out.api_key, body: '{}' });
    expect(res.status).toBe(200);
    expect(res.body.data.headers['x-lpm-scopes']).toBe('read,write,admin');
    expect(res.body.data.headers['x-lpm-team-id']).toBe(out.team.id);
    expect(res.body.data.headers['x-lpm-user-id']).toBe(out.user.id);
  });

  test('when --timezone is given, then the team has it', async () => {
    const out = onlyJson(await createTeam('--timezone', 'Europe/Lisbon'));
    expect(out.team.timezone).toBe('Europe/Lisbon');
  });

  test('when run without --json, then it prints readable lines with the key', async () => {
    const run = await admin(
      ...teamCreateArgs({ name: 'Plain', plan: 'enterprise', ownerName: 'P', ownerEmail: 'p@plain.io' }),
    );
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^team: +team_\w+ Plain \(plan enterprise/m);
    expect(run.stdout).toMatch(/^api key: +lpk_[0-9A-Za-z]{40}$/m);
    expect(() => JSON.parse(run.stdout)).toThrow();
  });

  test.each([
    ['an unknown plan', ['--plan', 'gold'], /Invalid plan: gold/],
    ['a bad e-mail', ['--owner-email', 'not-an-email'], /Invalid email/],
    ['an unknown time zone', ['--timezone', 'Mars/Olympus'], /Invalid time zone/],
  ])(
    'when given %s, then it fails on stderr with a non-zero exit and prints nothing on stdout',
    async (_what, override, message) => {
      const args = ['--name', 'X', '--plan', 'starter', '--owner-name', 'A', '--owner-email', 'a@b.co'];
      const i = args.indexOf(override[0]);
      if (i >= 0) args.splice(i, 2, ...override);
      else args.push(...override);
      const run = await admin('team', 'create', ...args, '--json');
      expect(run.code).not.toBe(0);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(message);
    },
  );

  test('when a required option is missing, then it names the option and exits non-zero', async () => {
    const run = await admin('team', 'create', '--name', 'X', '--plan', 'starter', '--owner-email', 'a@b.co', '--json');
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/--owner-name is required/);
  });
});

describe('users and keys', () => {
  let team: IssuedTeam;

  beforeAll(async () => {
    team = onlyJson(await createTeam());
  });

  test('when a user is created, then it prints exactly the user', async () => {
    const out = onlyJson(await createUser(team.team.id, 'Bruno', 'bruno@silva.adv.br'));
    expect(out).toEqual({ user: { id: ID('user'), name: 'Bruno', email: 'bruno@silva.adv.br' } });
  });

  test('when the e-mail is taken in the team or the team is unknown, then it fails non-zero', async () => {
    const taken = await createUser(team.team.id, 'Ana 2', 'ana@silva.adv.br');
    expect(taken.code).not.toBe(0);
    expect(taken.stdout).toBe('');
    expect(taken.stderr).toBe('error: Email already registered in this team\n');
    const unknown = await createUser('team_01aaaaaaaaaaaaaaaaaaaaaaaa', 'N', 'n@x.io');
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toMatch(/Team not found/);
  });

  test('when the e-mail is taken in the team, then the user is refused with 409 DUPLICATE_ENTRY, whatever its case and spaces', async () => {
    const taken = gw.accounts.createUser({ teamId: team.team.id, name: 'Ana 3', email: ' ANA@Silva.adv.br ' });
    await expect(taken).rejects.toMatchObject({
      status: 409,
      code: 'DUPLICATE_ENTRY',
      message: 'Email already registered in this team',
      details: { reason: 'duplicate_email' },
    });
  });

  test('when a key is created with read only, then it prints key, id and scopes and can only read', async () => {
    const user = onlyJson(await createUser(team.team.id, 'Carla', 'carla@silva.adv.br'));
    const out = onlyJson(await createKey(team.team.id, user.user.id, 'read'));
    expect(out).toEqual({ api_key: API_KEY, key_id: ID('key'), scopes: ['read'] });
    const read = await call(gw.url, '/v1/deals', { key: out.api_key });
    expect(read.status).toBe(200);
    expect(read.body.data.headers['x-lpm-user-id']).toBe(user.user.id);
    expect((await call(gw.url, '/v1/deals', { method: 'POST', key: out.api_key, body: '{}' })).status).toBe(403);
  });

  test('when scopes are unknown or the user is of another team, then it fails non-zero', async () => {
    const bad = await createKey(team.team.id, team.user.id, 'read,root');
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/Invalid scope: root/);
    const other = onlyJson(await createTeam());
    const foreign = await createKey(team.team.id, other.user.id, 'read');
    expect(foreign.code).not.toBe(0);
    expect(foreign.stderr).toMatch(/User not found/);
  });

  test('when a key is revoked, then it prints the revocation and the gateway refuses the key within 1 s', async () => {
    const out = onlyJson(await createKey(team.team.id, team.user.id, 'read,write'));
    expect((await call(gw.url, '/v1/deals', { key: out.api_key })).status).toBe(200);
    const revoked = onlyJson(await admin('key', 'revoke', '--key', out.key_id, '--json'));
    expect(revoked).toEqual({ key_id: out.key_id, revoked: true });
    await sleep(1000);
    const res = await call(gw.url, '/v1/deals', { key: out.api_key });
    expect(res.status).toBe(401);
    expect(res.body.error.message).toBe('Invalid API key');
    const unknown = await admin('key', 'revoke', '--key', 'key_01aaaaaaaaaaaaaaaaaaaaaaaa', '--json');
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toMatch(/Key not found/);
  });
});

describe('team plan', () => {
  test('when the plan changes, then it prints the team and the gateway applies the new limit', async () => {
    const team = onlyJson(await createTeam());
    expect((await call(gw.url, '/v1/deals', { key: team.api_key })).headers.get('ratelimit-limit')).toBe('60');
    const out = onlyJson(await admin('team', 'plan', '--team', team.team.id, '--plan', 'enterprise', '--json'));
    expect(out).toEqual({ team: { ...team.team, plan: 'enterprise' } });
    await sleep(1000);
    expect((await call(gw.url, '/v1/deals', { key: team.api_key })).headers.get('ratelimit-limit')).toBe('1000');
  });

  test('when the plan or team is unknown, then it fails non-zero', async () => {
    const team = onlyJson(await createTeam());
    const plan = await admin('team', 'plan', '--team', team.team.id, '--plan', 'platinum', '--json');
    expect(plan.code).not.toBe(0);
    expect(plan.stdout).toBe('');
    const unknown = await admin(
      'team',
      'plan',
      '--team',
      'team_01aaaaaaaaaaaaaaaaaaaaaaaa',
      '--plan',
      'starter',
      '--json',
    );
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toMatch(/Team not found/);
  });
});

describe('command line', () => {
  test('when --help is given, then it lists every command', async () => {
    const run = await admin('--help');
    expect(run.code).toBe(0);
    for (const c of ['team create', 'user create', 'key create', 'key revoke', 'team plan'])
      expect(run.stdout).toContain(c);
  });

  test('when the command or an option is unknown, then it exits non-zero with a message', async () => {
    for (const args of [
      ['frobnicate'],
      ['key', 'revoke', '--key', 'k', '--bogus', 'x'],
      ['key', 'revoke', '--key', 'k', '--plan', 'starter'],
      [],
    ]) {
      const run = await admin(...args, '--json');
      expect([args, run.code]).toEqual([args, 2]);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(/^error: /);
    }
  });
});

describe('local store', () => {
  test('when MONGO_URL is not set and no store is given to start, then the CLI refuses, naming MONGO_URL', async () => {
    await expect(openCliStore({ dbPrefix: testDbPrefix('cli_none') })).rejects.toThrow('MONGO_URL is required');
  });

  test('when no store is running, then the CLI starts one for the command and stops it afterwards', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'lpm-gw-cli-store-'));
    const port = await freePort();
    const database = `${process.env.MONGO_DB_PREFIX}cli_local`;
    try {
      const store = await openCliStore({ dbPrefix: testDbPrefix('cli_local') }, () =>
        localStoreForCommand({ port, dataDir, database }),
      );
      expect(await isListening(port)).toBe(true);
      const created = await newTeam(accountsOf(store));
      await store.close();
      expect(await isListening(port)).toBe(false);
      const again = await openCliStore({ dbPrefix: testDbPrefix('cli_local') }, () =>
        localStoreForCommand({ port, dataDir, database }),
      );
      try {
        expect((await accountsOf(again).getTeam(created.team.id)).name).toBe(created.team.name);
      } finally {
        await again.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
      await dropPostgresDatabase(database);
    }
  });
});
