// The operator CLI run as a process, as an operator runs it.
import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../..');

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `node gateway/src/cli/main.ts ...args` with the test's environment plus `env`. */
export function runCli(env: NodeJS.ProcessEnv, ...args: string[]): Promise<CliRun> {
  return new Promise((done, reject) => {
    const child = spawn(process.execPath, [join(ROOT, 'gateway/src/cli/main.ts'), ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env, NODE_OPTIONS: '' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

export interface TeamArgs {
  name: string;
  plan: string;
  ownerName: string;
  ownerEmail: string;
}

/** The arguments of `team create` for a team and its owner (an option such as --json may follow). */
export function teamCreateArgs(t: TeamArgs): string[] {
  return [
    'team',
    'create',
    '--name',
    t.name,
    '--plan',
    t.plan,
    '--owner-name',
    t.ownerName,
    '--owner-email',
    t.ownerEmail,
  ];
}

/** The arguments of `user create` of `name` and `email` in team `teamId`. */
export function userCreateArgs(teamId: string, name: string, email: string): string[] {
  return ['user', 'create', '--team', teamId, '--name', name, '--email', email];
}
