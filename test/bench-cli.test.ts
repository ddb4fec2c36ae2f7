// The bench's command line: names picked with --only or alone, --json's file, and a
// wrong command refused (exit 2, with the known scenarios) before anything starts.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseBenchArgs } from '../scripts/bench/args.ts';

const KNOWN = ['store', 'gateway', 'service', 'webhooks', 'rss'];
const root = fileURLToPath(new URL('..', import.meta.url));

describe('bench arguments', () => {
  test('when --only lists names, then those are chosen, once each', () => {
    expect(parseBenchArgs(['--only', 'gateway,store', '--only=store'], KNOWN)).toEqual({
      ok: true,
      args: { names: ['gateway', 'store'], json: undefined, help: false },
    });
  });

  test('when names are given alone, then they are chosen as with --only', () => {
    expect(parseBenchArgs(['rss', 'service'], KNOWN)).toEqual({
      ok: true,
      args: { names: ['rss', 'service'], json: undefined, help: false },
    });
  });

  test('when --json names a file, then the figures go there', () => {
    expect(parseBenchArgs(['--json', '/tmp/figures.json', '--only', 'rss'], KNOWN)).toEqual({
      ok: true,
      args: { names: ['rss'], json: '/tmp/figures.json', help: false },
    });
  });

  test('when --json has no file, or an option is unknown, then the command is refused', () => {
    expect(parseBenchArgs(['--json'], KNOWN)).toEqual({ ok: false, error: '--json needs a file name' });
    expect(parseBenchArgs(['--fast'], KNOWN)).toEqual({ ok: false, error: 'unknown option --fast' });
  });

  test('when a name is unknown, then the error names it and lists the known ones', () => {
    expect(parseBenchArgs(['--only', 'store,nope'], KNOWN)).toEqual({
      ok: false,
      error: 'unknown scenario: nope. Known scenarios: store, gateway, service, webhooks, rss.',
    });
  });

  test('when npm run bench gets an unknown scenario, then it exits 2 with the known list and starts nothing', () => {
    const run = spawnSync(process.execPath, ['scripts/bench/main.ts', '--only', 'nope'], {
      cwd: root,
      encoding: 'utf8',
    });
    expect(run.status).toBe(2);
    expect(run.stderr).toContain(
      'unknown scenario: nope. Known scenarios: machine, orm, relay, store, rss, clients, gateway, webhooks',
    );
    expect(run.stdout).not.toContain('FerretDB');
  });
});
