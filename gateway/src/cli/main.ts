// The operator CLI (README, "Operator CLI"): `npm run -s admin -- <command> [--json]`
// (scripts/admin.ts, which adds the local store), or `node gateway/src/cli/main.ts <command>` with MONGO_URL.
import { parseArgs } from 'node:util';
import { amqpUrl, mongoUrl, optional, readConfig, str } from '@lpm/shared/config';
import { AppError } from '@lpm/shared/errors';
import type { Store } from '@lpm/shared/store/orm';
import { gatewayRepositories } from '../data/store.ts';
import { Accounts } from '../domain/accounts.ts';
import { openCliStore, type StartStore } from './store.ts';
import { ALL_OPTIONS, HELP, resolveCommand, UsageError, type Options } from './commands.ts';

/** Runs one command; the exit code. `startStore`: the store to start when MONGO_URL is not set. */
export async function runCli(argv: string[], startStore?: StartStore): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
        ...Object.fromEntries(ALL_OPTIONS.map((o) => [o, { type: 'string' as const }])),
      },
    });
  } catch (e) {
    return fail(new UsageError((e as Error).message));
  }
  const { json, help, ...given } = parsed.values as Options & { json?: boolean; help?: boolean };
  if (help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }

  let store: Store | undefined;
  try {
    const { command, options } = resolveCommand(parsed.positionals, given);
    if (command.uses === 'broker') {
      const broker = readConfig({ url: ['AMQP_URL', amqpUrl] });
      const out = await command.run(broker.url, options as Record<string, string>);
      process.stdout.write(json ? `${JSON.stringify(out.json)}\n` : `${out.text.join('\n')}\n`);
      return 0;
    }
    const config = readConfig({
      mongoUrl: ['MONGO_URL', (raw, name) => (raw === undefined ? optional(raw, name) : mongoUrl(raw, name))],
      dbPrefix: ['MONGO_DB_PREFIX', str('lpm_')],
      defaultTimezone: ['DEFAULT_TIMEZONE', str('America/Sao_Paulo')],
    });
    store = await openCliStore(config, startStore);
    const accounts = new Accounts({ ...gatewayRepositories(store.db), defaultTimezone: config.defaultTimezone });
    const out = await command.run(accounts, options as Record<string, string>);
    process.stdout.write(json ? `${JSON.stringify(out.json)}\n` : `${out.text.join('\n')}\n`);
    return 0;
  } catch (e) {
    return fail(e);
  } finally {
    await store?.close().catch(() => {});
  }
}

/** Exit 2 when the command line is wrong (usage or an invalid value), 1 when the command could not be done. */
function fail(e: unknown): number {
  if (e instanceof UsageError) {
    process.stderr.write(`error: ${e.message}\nRun with --help for the commands.\n`);
    return 2;
  }
  process.stderr.write(`error: ${e instanceof Error ? e.message : String(e)}\n`);
  return e instanceof AppError && e.code === 'VALIDATION_ERROR' ? 2 : 1;
}

// Run only as the process's entry point: importing it (scripts/warm-compile-cache.ts) runs nothing.
if (import.meta.main) process.exit(await runCli(process.argv.slice(2)));
